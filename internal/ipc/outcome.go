package ipc

import (
	"context"
	"errors"
	"time"
)

// Failed returns the terminal error event of a run that ended with f, with
// stats st.
func Failed(f *Failure, st Stats) *Event {
	f.Stats = st
	return &Event{Kind: KindError, Error: f}
}

// TerminalStats returns the stats of a terminal event, to read or replace:
// its result's or its error's.
func (e *Event) TerminalStats() *Stats {
	if e.Result != nil {
		return &e.Result.Stats
	}
	return &e.Error.Stats
}

// LimitFailure is the outcome of a run that crossed a limit: err wraps a
// *LimitError (LIMIT_EXCEEDED naming the limit); anything else is RUNTIME.
func LimitFailure(err error) *Failure {
	var le *LimitError
	if errors.As(err, &le) {
		return &Failure{Code: CodeLimitExceeded, Limit: le.Limit, Message: le.Error()}
	}
	return &Failure{Code: CodeRuntime, Message: err.Error()}
}

// Aborted is the outcome of a run stopped because ctx ended: "the run was
// aborted", followed by the context's cause when it is not plain
// cancellation.
func Aborted(ctx context.Context) *Failure {
	return &Failure{Code: CodeAborted, Message: AbortMessage(ctx)}
}

// AbortMessage is the message of a run stopped because ctx ended (see
// Aborted).
func AbortMessage(ctx context.Context) string {
	msg := "the run was aborted"
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		msg += ": " + cause.Error()
	}
	return msg
}

// Ms returns d in the contract's unit for durations: milliseconds, with a
// fractional part.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
