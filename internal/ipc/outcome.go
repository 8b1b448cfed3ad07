package ipc

import (
	"context"
	"errors"
	"fmt"
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

// AbortedBecause is the outcome of a run the host stopped for reason:
// "the run was aborted: <reason>".
func AbortedBecause(reason string) *Failure {
	return &Failure{Code: CodeAborted, Message: abortPrefix + ": " + reason}
}

const abortPrefix = "the run was aborted"

// AbortMessage is the message of a run stopped because ctx ended (see
// Aborted).
func AbortMessage(ctx context.Context) string {
	msg := abortPrefix
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		msg += ": " + cause.Error()
	}
	return msg
}

// Ms returns d in the contract's unit for durations: milliseconds, with a
// fractional part.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// CheckCode returns the VALIDATION failure of a step source of n bytes
// when it is larger than MaxCodeBytes, or nil. Every side that takes code
// (the engine's validation, a worker's runtime) refuses it with this one
// check, in the same words.
func (l Limits) CheckCode(n int) *Failure {
	if n <= l.MaxCodeBytes {
		return nil
	}
	return &Failure{Code: CodeValidation, Limit: LimitCode,
		Message: fmt.Sprintf("code is %d bytes, more than maxCodeBytes=%d", n, l.MaxCodeBytes)}
}
