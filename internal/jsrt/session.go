package jsrt

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
)

// MaxModuleCalls bounds the module calls a run may have in flight (a call
// is in flight until its reply is delivered to the guest).
const MaxModuleCalls = maxModuleCalls

// ModuleResultBytes is the most JSON one DuckDB query returns in a run
// whose memory limit is memoryMB: memoryMb/4, at least 1 MiB, at most
// 16 MiB. A Python run's module call may carry as much (its rows, say).
func ModuleResultBytes(memoryMB int) int { return duckResultBytes(memoryMB) }

// ModuleSession executes the built-in module calls of a run that does not
// run in a VM of this Runtime — a Python step's — with exactly the code,
// limits and outcomes of a JavaScript run's calls (modules.go): one call
// at a time in call order, on a goroutine of the session, with the run's
// memory shares and result caps, interrupted at the run's wall deadline;
// at most MaxModuleCalls in flight; one open database at a time. One
// difference: query results write DECIMALs exactly (duckdb's
// Config.ExactDecimals, 1250e-2 for 12.50), which Python reads as
// decimal.Decimal.
//
//	s := rt.OpenModules(ctx, lim, []string{"duckdb"}, deadline)
//	defer s.Close()                                    // closes the database
//	s.Call(ipc.ModuleCall{ID: 1, Op: ipc.OpDuckDBOpen})
//	rep := <-s.Replies()                               // {ID: 1, Value: 1}
//
// Call never blocks and never fails: every outcome, a refused argument
// included, comes back on Replies with the call's ID. A reply with a
// Failure ends the run (OOM, LIMIT_EXCEEDED, TIMEOUT, ABORTED,
// UNAVAILABLE); one with an Error is the guest's exception.
//
// Notes: the caller keeps at most MaxModuleCalls calls without a reply
// and reads Replies; Call and Close may be called from any goroutine.
// Close cancels the call in progress, waits for the session's goroutine
// and closes the database in the background (Runtime.Close waits for it).
type ModuleSession struct {
	mu     sync.Mutex
	rn     *run            // guarded by mu: a run without a VM, for modules.go
	ids    map[int64]int64 // guarded by mu: modules.go's call ids -> the caller's
	closed bool            // guarded by mu

	out  chan ipc.ModuleReply
	stop chan struct{} // closed by Close: the forwarder returns
	done chan struct{} // closed when the forwarder has returned; nil until it starts
}

// OpenModules returns a module session for a run granted modules, whose
// calls end at deadline or when ctx ends. It starts nothing: the first
// call does.
func (r *Runtime) OpenModules(ctx context.Context, lim ipc.Limits, modules []string, deadline time.Time) *ModuleSession {
	return &ModuleSession{
		rn: &run{rt: r, ctx: ctx, wall: deadline, pending: map[int64]ipc.Kind{}, exactDecimals: true,
			job: Job{Limits: lim, Modules: slices.Clone(modules)}},
		ids:  map[int64]int64{},
		out:  make(chan ipc.ModuleReply, 2*maxModuleCalls),
		stop: make(chan struct{}),
	}
}

// Replies delivers the outcome of every call, by the call's ID.
func (s *ModuleSession) Replies() <-chan ipc.ModuleReply { return s.out }

// Call starts c; its outcome comes on Replies.
func (s *ModuleSession) Call(c ipc.ModuleCall) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	id, err := s.rn.moduleCall(c.Op, callArgs(c))
	if err != nil {
		s.mu.Unlock()
		s.reply(ipc.ModuleReply{ID: c.ID, Error: err.Error()})
		return
	}
	s.ids[id.(int64)] = c.ID
	if s.done == nil {
		s.done = make(chan struct{})
		go s.forward(s.rn.mods.replies) // Close waits for it
	}
	s.mu.Unlock()
}

// callArgs are c's arguments as the bootstrap passes them to the host
// (bootstrap.js: __sbx_module).
func callArgs(c ipc.ModuleCall) []any {
	h := int(c.Handle)
	switch c.Op {
	case ipc.OpDuckDBLoad:
		return []any{c.Op, h, c.Table, string(c.Rows)}
	case ipc.OpDuckDBQuery, ipc.OpDuckDBTable:
		return []any{c.Op, h, c.SQL, string(c.Params)}
	case ipc.OpDuckDBExec:
		return []any{c.Op, h, c.SQL}
	case ipc.OpDuckDBClose:
		return []any{c.Op, h}
	case ipc.OpGLPKSolve, ipc.OpGLPKWrite:
		return []any{c.Op, string(c.Model), string(c.Options)}
	}
	return []any{c.Op}
}

// forward turns the replies of modules.go into the caller's, until Close.
func (s *ModuleSession) forward(replies <-chan modReply) {
	defer close(s.done)
	for {
		select {
		case rep := <-replies:
			s.mu.Lock()
			delete(s.rn.pending, rep.id)
			s.rn.mods.inflight--
			id := s.ids[rep.id]
			delete(s.ids, rep.id)
			s.mu.Unlock()
			out := ipc.ModuleReply{ID: id, Error: rep.err, Failure: rep.fail}
			if rep.fail == nil && rep.err == "" {
				out.Value = json.RawMessage(rep.value)
			}
			if !s.reply(out) {
				return
			}
		case <-s.stop:
			return
		}
	}
}

// reply hands out a reply, unless the session is closing.
func (s *ModuleSession) reply(r ipc.ModuleReply) bool {
	select {
	case s.out <- r:
		return true
	case <-s.stop:
		return false
	}
}

// Close ends the session: the call in progress is interrupted, the others
// are dropped, the database is closed. Replies not yet delivered are
// dropped. It is idempotent.
func (s *ModuleSession) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	done := s.done
	s.mu.Unlock()
	close(s.stop)
	s.rn.stopModules()
	if done != nil {
		<-done
	}
}
