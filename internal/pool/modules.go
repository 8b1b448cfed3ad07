package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
)

// Modules is a worker process leased for the built-in module calls
// (DuckDB, GLPK) of one run that does not run in a worker: a Python step's,
// whose CPython process cannot load them. The calls run in the jailed
// worker, never in the host, exactly as a JavaScript run's do; the worker
// holds the run's database until the lease ends.
//
//	m := p.OpenModules(ctx, lim, []string{"duckdb"}, wallDeadline)
//	defer m.Close()                                     // the worker closes the database and is released
//	m.Call(ipc.ModuleCall{ID: 1, Op: ipc.OpDuckDBOpen}) // never blocks
//	rep := <-m.Replies()                                // {ID: 1, Value: 1}
//
// The lease takes a worker at once, in the background (waiting for a free
// one like Run), and keeps it until Close, ctx's end or the pool's abort;
// the worker is then told to end the session, and killed if it has not
// within Grace, or if it is still busy Grace after the deadline. Every
// call gets exactly one reply until Close: a Failure ends the caller's
// run (the worker's own — OOM, a result cap, the deadline — or the
// lease's: UNAVAILABLE, ABORTED, CRASHED, LIMIT_EXCEEDED "time"). A worker
// that breaks the rules of a session (an event, a reply to no call in
// flight, a terminal before the host's abort, any other frame) is killed.
//
// Notes: the caller keeps at most jsrt.MaxModuleCalls calls without a
// reply and reads Replies. Close waits until the worker is released or
// killed; Pool.Close waits for every lease.
type Modules struct {
	p        *Pool
	ctx      context.Context
	lim      ipc.Limits
	names    []string
	deadline time.Time

	calls   chan ipc.ModuleCall
	replies chan ipc.ModuleReply
	closing chan struct{} // closed by Close
	once    sync.Once
	done    chan struct{} // closed when serve has returned
}

// OpenModules leases a worker for the module calls of one run that was
// granted modules and ends at deadline (its wall-clock limit). It does not
// block.
func (p *Pool) OpenModules(ctx context.Context, lim ipc.Limits, modules []string, deadline time.Time) *Modules {
	m := &Modules{
		p: p, ctx: ctx, lim: lim, names: slices.Clone(modules), deadline: deadline,
		calls:   make(chan ipc.ModuleCall, jsrt.MaxModuleCalls),
		replies: make(chan ipc.ModuleReply, 2*jsrt.MaxModuleCalls),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
	go m.serve() // Close waits for it
	return m
}

// Call sends c to the worker; its outcome comes on Replies.
func (m *Modules) Call(c ipc.ModuleCall) {
	select {
	case m.calls <- c:
	case <-m.done:
	}
}

// Replies delivers the outcome of every call, by the call's ID.
func (m *Modules) Replies() <-chan ipc.ModuleReply { return m.replies }

// Close ends the lease and waits until its worker is released (after the
// worker closed the run's database) or killed. It is idempotent.
func (m *Modules) Close() {
	m.once.Do(func() { close(m.closing) })
	<-m.done
}

// reply hands out a reply unless the lease is closing.
func (m *Modules) reply(r ipc.ModuleReply) {
	select {
	case m.replies <- r:
	case <-m.closing:
	}
}

// failAll answers the calls in flight and every later call with f, until
// Close.
func (m *Modules) failAll(pending map[int64]bool, f *ipc.Failure) {
	for id := range pending {
		m.reply(ipc.ModuleReply{ID: id, Failure: f})
	}
	for {
		select {
		case c := <-m.calls:
			m.reply(ipc.ModuleReply{ID: c.ID, Failure: f})
		case <-m.closing:
			return
		}
	}
}

func (m *Modules) serve() {
	defer close(m.done)
	pending := map[int64]bool{}
	m.failAll(pending, m.lease(pending))
}

// lease takes a worker, holds it for the session and releases it. It
// returns the failure of the calls that come later, or are still waiting.
func (m *Modules) lease(pending map[int64]bool) *ipc.Failure {
	p := m.p
	if !p.enter() {
		return &ipc.Failure{Code: ipc.CodeUnavailable, Message: "the worker pool is closed"}
	}
	defer p.leave()
	// Waiting for a worker stops when the run ends, or its lease.
	actx, cancel := context.WithCancel(m.ctx)
	go func() {
		select {
		case <-m.closing:
			cancel()
		case <-actx.Done():
		}
	}()
	w, f := p.acquire(actx)
	cancel()
	if f != nil {
		return f
	}
	f = m.session(w, pending)
	p.release(w)
	if f == nil {
		f = &ipc.Failure{Code: ipc.CodeAborted, Message: "the run's module session has ended"}
	}
	return f
}

// session holds w for the lease and returns, once the worker has ended the
// session or been killed, the failure of the calls still waiting, if any.
func (m *Modules) session(w *proc, pending map[int64]bool) *ipc.Failure {
	p := m.p
	id := p.runSeq.Add(1)
	hardEnd := m.deadline.Add(p.cfg.Grace)
	crashed := func() *ipc.Failure {
		msg := w.lost()
		p.log.Warn("module session crashed", logRun, id, logPID, w.pid, logReason, msg)
		return &ipc.Failure{Code: ipc.CodeCrashed, Message: msg}
	}
	violation := func(format string, args ...any) *ipc.Failure {
		w.kill(fmt.Sprintf(format, args...))
		return crashed()
	}
	left := time.Until(m.deadline)
	frame, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameModules, RunID: id, Modules: &ipc.ModuleSession{
		Limits: m.lim, Modules: m.names, DeadlineMs: max(1, (left + time.Millisecond - 1).Milliseconds())}}, p.cfg.MaxFrameBytes)
	if err != nil {
		return &ipc.Failure{Code: ipc.CodeUnavailable, Message: "the module session cannot start: " + err.Error()}
	}
	w.begin(id)
	if err := w.write(frame, hardEnd); err != nil {
		return crashed()
	}
	hard := time.NewTimer(time.Until(hardEnd))
	defer hard.Stop()

	var (
		calls      = m.calls
		closing    = m.closing
		ctxDone    = m.ctx.Done()
		poolAbort  = p.abortAll
		aborted    bool
		abortTimer *time.Timer
		abortC     <-chan time.Time
	)
	defer func() {
		if abortTimer != nil {
			abortTimer.Stop()
		}
	}()
	abort := func() {
		if aborted {
			return
		}
		aborted = true
		calls, closing, ctxDone, poolAbort = nil, nil, nil, nil
		if b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameAbort, RunID: id}, p.cfg.MaxFrameBytes); err == nil {
			_ = w.write(b, hardEnd) // a dead worker shows in w.frames
		}
		abortTimer = time.NewTimer(p.cfg.Grace)
		abortC = abortTimer.C
	}
	for {
		select {
		case c := <-calls:
			if pending[c.ID] {
				m.reply(ipc.ModuleReply{ID: c.ID, Error: fmt.Sprintf("%s: call id %d is already in flight", c.Op, c.ID)})
				continue
			}
			b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameCall, RunID: id, Call: &c}, p.cfg.MaxFrameBytes)
			if err != nil {
				f := &ipc.Failure{Code: ipc.CodeRuntime, Message: fmt.Sprintf("%s: the call cannot be sent: %v", c.Op, err)}
				if errors.Is(err, ipc.ErrFrameTooLarge) {
					f = &ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: ipc.LimitFrameBytes,
						Message: fmt.Sprintf("%s: the call is larger than the worker bridge allows (%d bytes)", c.Op, p.cfg.MaxFrameBytes)}
				}
				m.reply(ipc.ModuleReply{ID: c.ID, Failure: f})
				continue
			}
			pending[c.ID] = true
			_ = w.write(b, hardEnd) // a dead or stuck worker shows in w.frames or at hardEnd
		case f, ok := <-w.frames:
			if !ok {
				return crashed()
			}
			if f.RunID != id {
				return violation("sent a %s frame of run %d during module session %d", f.Type, f.RunID, id)
			}
			switch f.Type {
			case ipc.FrameReturn:
				r := f.Return
				if !pending[r.ID] {
					return violation("sent a reply to module call %d, which is not in flight", r.ID)
				}
				delete(pending, r.ID)
				if !aborted {
					m.reply(*r)
				}
			case ipc.FrameTerminal:
				if !aborted || f.Event.Kind != ipc.KindResult {
					return violation("ended module session %d on its own", id)
				}
				w.runs.Add(1)
				return nil
			default:
				return violation("sent a %s frame during a module session", f.Type)
			}
		case <-closing:
			abort()
		case <-ctxDone:
			abort()
		case <-poolAbort:
			abort()
		case <-hard.C:
			w.kill("")
			<-w.exited
			p.log.Warn("module session killed at its deadline", logRun, id, logPID, w.pid)
			return &ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: ipc.LimitTime,
				Message: fmt.Sprintf("a module call did not stop at the wall-clock limit (wallMs=%d) nor within %v after it: its worker was killed",
					m.lim.WallMs, p.cfg.Grace)}
		case <-abortC:
			w.kill("")
			<-w.exited
			p.log.Warn("module session killed after abort", logRun, id, logPID, w.pid)
			return &ipc.Failure{Code: ipc.CodeAborted, Message: "the run was aborted"}
		}
	}
}
