package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
)

// moduleHost is a Runner that can hold the built-in modules of a run that
// it does not execute (a Python run's); *jsrt.Runtime is one.
type moduleHost interface {
	OpenModules(ctx context.Context, lim ipc.Limits, modules []string, deadline time.Time) *jsrt.ModuleSession
}

// modules holds a module session (see ipc.ModuleSession) until the host
// aborts it: it passes the host's calls to the runtime's session and the
// replies back as return frames, then closes the session and acknowledges
// the end with a terminal frame (a null result).
func (s *server) modules(ctx context.Context, ar *activeRun, x *ipc.ModuleSession) {
	defer s.wg.Done()
	start := time.Now()
	deadline := start.Add(time.Duration(x.DeadlineMs) * time.Millisecond)
	var sess *jsrt.ModuleSession
	var replies <-chan ipc.ModuleReply
	if h, ok := s.runner.(moduleHost); ok {
		sess = h.OpenModules(ctx, x.Limits, x.Modules, deadline)
		replies = sess.Replies()
	}
loop:
	for {
		select {
		case c := <-ar.calls:
			if sess == nil {
				s.sendReturn(ar.id, ipc.ModuleReply{ID: c.ID, Failure: &ipc.Failure{Code: ipc.CodeUnavailable,
					Message: "modules are not available in this worker"}})
				continue
			}
			sess.Call(c)
		case r := <-replies:
			s.sendReturn(ar.id, r)
		case <-ctx.Done():
			break loop
		}
	}
	if sess != nil {
		sess.Close()
	}
	ev := &ipc.Event{Kind: ipc.KindResult, Result: &ipc.Result{Value: []byte("null"),
		Stats: ipc.Stats{WallMs: float64(time.Since(start)) / float64(time.Millisecond)}}}
	b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameTerminal, RunID: ar.id, Event: ev}, s.max)
	if err != nil {
		panic(fmt.Sprintf("worker: encode the end of a module session: %v", err))
	}
	s.end(ar, b)
}

// sendReturn sends the outcome of a module call. One too large for a frame
// (a query result, beyond a small frame limit) ends the run instead.
func (s *server) sendReturn(id uint64, r ipc.ModuleReply) {
	if r.Failure != nil {
		f := *r.Failure
		f.Message, f.Name, f.Stack = validUTF8(f.Message), validUTF8(f.Name), validUTF8(f.Stack)
		r.Failure = &f
	}
	r.Error = validUTF8(r.Error)
	b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameReturn, RunID: id, Return: &r}, s.max)
	if err != nil {
		f := &ipc.Failure{Code: ipc.CodeRuntime, Message: "the module result could not be sent: " + err.Error()}
		if errors.Is(err, ipc.ErrFrameTooLarge) {
			f = &ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: ipc.LimitFrameBytes,
				Message: fmt.Sprintf("the module result is %d bytes, larger than the worker bridge allows (%d bytes)", len(r.Value), s.max)}
		}
		b, err = ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameReturn, RunID: id, Return: &ipc.ModuleReply{ID: r.ID, Failure: f}}, s.max)
		if err != nil {
			panic(fmt.Sprintf("worker: encode a failure: %v", err))
		}
	}
	s.send(b)
}
