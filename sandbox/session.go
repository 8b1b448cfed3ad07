package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/pool"
)

// errAbortedByCaller is the cause of a run ended by Session.Abort.
var errAbortedByCaller = errors.New("aborted by the caller")

// Session is the caller's handle on one run: its ordered events, answers to
// its data requests, and abort.
//
// Events must be read: a run whose caller stops reading blocks once
// Config.EventBuffer events wait, and if the caller takes none for
// Config.StallTimeout it ends ABORTED (errors.Is(err, ErrStalled)) and
// frees its slot. A slow reader slows only its own run. Wait does not read
// events.
type Session struct {
	id      string
	e       *Engine
	req     Request
	job     *jsrt.Job
	ts      *tsMapper       // nil unless the step is TypeScript
	ctx     context.Context // the run's; ends on abort, close or the caller's ctx
	cancel  context.CancelCauseFunc
	events  chan Event
	replies chan ipc.Reply
	plan    string // the plan's name, resolved

	fetches   fetcher
	finished  chan struct{} // closed when the runtime returned
	cause     error         // why the run could not start, kept for Unwrap
	abandoned atomic.Bool   // an in-process run that outlived wall+grace

	mu      sync.Mutex
	pending map[int64]bool // guarded by mu: data requests not yet answered
	ended   bool           // guarded by mu

	done   chan struct{} // closed when result and err are set
	result Result
	err    error
}

func newSession(ctx context.Context, e *Engine, req Request, job *jsrt.Job, ts *tsMapper) *Session {
	s := &Session{
		id:       newRunID(),
		e:        e,
		req:      req,
		job:      job,
		ts:       ts,
		events:   make(chan Event, e.cfg.EventBuffer),
		replies:  make(chan ipc.Reply, min(job.Limits.MaxDataRequests, maxReplyBuffer)),
		pending:  map[int64]bool{},
		done:     make(chan struct{}),
		finished: make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	job.Host = s
	job.Replies = s.replies
	return s
}

// ID returns the run's identifier: "run_" and 32 hex digits, random (not
// sequential), so unique across engines and processes.
func (s *Session) ID() string { return s.id }

// Events returns the run's events in order. The channel is closed after
// the terminal event (Result or Error).
func (s *Session) Events() <-chan Event { return s.events }

// Respond answers the data request id with value, marshalled to JSON (a
// json.RawMessage is sent as is). It fails if no such request is waiting.
func (s *Session) Respond(id int64, value any) error {
	raw, ok := value.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(value)
		if err != nil {
			return fmt.Errorf("stepbox: respond to data request %d: %w", id, err)
		}
		raw = b
	} else if !json.Valid(raw) {
		return fmt.Errorf("stepbox: respond to data request %d: value is not valid JSON", id)
	}
	return s.reply(ipc.Reply{ID: id, Value: raw})
}

// RespondError rejects the data request id: the step's await throws an
// Error with message msg.
func (s *Session) RespondError(id int64, msg string) error {
	if msg == "" {
		msg = "data request failed"
	}
	return s.reply(ipc.Reply{ID: id, Error: msg})
}

func (s *Session) reply(r ipc.Reply) error {
	s.mu.Lock()
	if !s.pending[r.ID] {
		defer s.mu.Unlock()
		if s.ended {
			return fmt.Errorf("stepbox: data request %d: the run has ended", r.ID)
		}
		return fmt.Errorf("stepbox: no data request %d is waiting for an answer", r.ID)
	}
	delete(s.pending, r.ID)
	s.mu.Unlock()
	if s.ctx.Err() != nil {
		// The run is ending ABORTED: an answer now, often the handler's
		// own "context canceled", must not reach the step and end the run
		// with the step's error instead.
		return fmt.Errorf("stepbox: data request %d: the run has ended", r.ID)
	}
	// Only a step with more than maxReplyBuffer requests in flight can fill
	// the buffer; the run drains it whenever it waits.
	select {
	case s.replies <- r:
		return nil
	case <-s.ctx.Done():
		return fmt.Errorf("stepbox: data request %d: the run has ended", r.ID)
	}
}

// maxReplyBuffer bounds the replies a session buffers for its run.
const maxReplyBuffer = 1024

// Abort ends the run with ABORTED, unless it already ended. It returns at
// once; the terminal event follows.
func (s *Session) Abort() { s.cancel(errAbortedByCaller) }

// Wait blocks until the run ends and returns its result, or its *Error.
func (s *Session) Wait() (Result, error) {
	<-s.done
	return s.result, s.err
}

// Emit implements jsrt.Host: it delivers a non-terminal event, blocking
// while the caller's buffer is full.
func (s *Session) Emit(ctx context.Context, ev *ipc.Event) (err error) {
	if s.abandoned.Load() {
		return errAbandoned
	}
	defer func() {
		// An abandoned in-process run may still be sending as its stream
		// closes; it gets an error, not a panic.
		if recover() != nil {
			err = errAbandoned
		}
	}()
	if fr := ev.FetchRequest; fr != nil {
		s.fetches.wg.Add(1) // Done when the fetch is answered.
		go s.fetch(fr)
		return nil
	}
	out := Event{Kind: EventKind(ev.Kind), Status: ev.Status, Fetch: ev.Fetch}
	if c := ev.Console; c != nil {
		out.Console = &ConsoleLine{Level: c.Level, Text: c.Text}
		if s.ts != nil {
			out.Console.Text = s.ts.stack(c.Text) // a logged Error's stack
		}
	}
	if d := ev.DataRequest; d != nil {
		out.DataRequest = &DataRequest{ID: d.ID, Method: d.Method, Params: d.Params}
		s.mu.Lock()
		s.pending[d.ID] = true
		s.mu.Unlock()
	}
	if err := s.deliver(ctx.Done(), out); err != nil {
		if err == errGaveUp {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// errGaveUp is deliver's error when its done channel closed first.
var errGaveUp = errors.New("gave up delivering an event")

// stallError is the cause of a run ended by its stall limit.
type stallError struct{ after time.Duration }

func (e *stallError) Error() string {
	return fmt.Sprintf("the caller did not read its events for %v (stallTimeout)", e.after)
}

func (e *stallError) Is(target error) bool { return target == ErrStalled }

// deliver puts a non-terminal event into the caller's buffer. While the
// buffer is full it waits, until the caller takes an event, done is closed
// (errGaveUp), or Config.StallTimeout passes: the run is then stalled, and
// deliver ends it with a *stallError as the cause, which it returns. The
// stall clock runs only here, one wait at a time: every event the caller
// takes lets the waiting one in and starts the next wait afresh.
func (s *Session) deliver(done <-chan struct{}, ev Event) error {
	select {
	case s.events <- ev:
		return nil
	default:
	}
	var stall <-chan time.Time
	d := s.e.cfg.StallTimeout
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		stall = t.C
	}
	select {
	case s.events <- ev:
		return nil
	case <-done:
		return errGaveUp
	case <-stall:
		err := &stallError{after: d}
		s.cancel(err)
		return err
	}
}

// run waits for a slot, executes the job and delivers its one terminal
// event.
func (s *Session) run(w *waiter) {
	queued := time.Now()
	start := queued
	var term *ipc.Event
	if err := s.e.sched.wait(s.ctx, w); err != nil {
		term = ipc.Failed(ipc.AbortedBecause("it was still queued"), ipc.Stats{})
	} else {
		start = time.Now()
		if s.req.Language == Python {
			var err error
			if term, err = s.e.runPython(s.ctx, s.group(), *s.job); err != nil {
				s.cause = err
			}
			s.e.sched.release(w)
		} else {
			term = s.runJS(w)
		}
	}
	close(s.finished)
	if reqs, bytes, ok := s.closeFetches(); ok {
		// The FetchProxy's counts are the host's own.
		st := term.TerminalStats()
		st.FetchRequests, st.FetchBytes = reqs, bytes
	}
	var stall *stallError
	if errors.As(context.Cause(s.ctx), &stall) {
		// The caller stopped reading, and the events after the stall were
		// dropped: whatever the runtime reported since (the worker may
		// have finished meanwhile), the run ends ABORTED, saying why.
		term = ipc.Failed(ipc.AbortedBecause(stall.Error()), *term.TerminalStats())
	}
	queueMs := ipc.Ms(start.Sub(queued))
	var ev Event
	var stats Stats
	if r := term.Result; r != nil {
		stats = statsFromWire(r.Stats)
		stats.QueueMs = queueMs
		s.result = Result{Value: r.Value, Stats: stats}
		ev = Event{Kind: EventResult, Result: &s.result}
	} else {
		if s.ts != nil {
			s.ts.failure(term.Error)
		}
		explainFailure(term.Error, s.req)
		cause := s.cause
		if term.Error.Code == ipc.CodeAborted {
			cause = context.Cause(s.ctx)
		}
		se := errorFromWire(term.Error, cause)
		se.Stats.QueueMs = queueMs
		stats = se.Stats
		s.err = se
		ev = Event{Kind: EventError, Error: se}
	}
	s.end(ev, queued, stats)
}

// fail ends a run that never started because its step is at fault (a
// TypeScript step that does not compile) with the error e, as a run that
// started ends: the terminal event, then metering.
func (s *Session) fail(e *Error) {
	close(s.finished)
	s.err = e
	s.end(Event{Kind: EventError, Error: e}, time.Now(), e.Stats)
}

// end delivers the run's terminal event ev, once s.result or s.err is set,
// and meters the run.
func (s *Session) end(ev Event, queued time.Time, stats Stats) {
	s.cancel(nil)
	s.mu.Lock()
	s.ended = true
	clear(s.pending)
	s.mu.Unlock()
	close(s.done)

	select {
	case s.events <- ev:
		close(s.events)
	default:
		// The caller's buffer is full: deliver when it reads. The run is
		// over and its slot free; only this goroutine waits.
		go func() {
			s.events <- ev
			close(s.events)
		}()
	}
	s.e.mu.Lock()
	delete(s.e.sessions, s)
	s.e.mu.Unlock()
	s.meter(queued, stats)
	s.e.wg.Done()
}

func (s *Session) meter(start time.Time, st Stats) {
	u := Usage{
		RunID: s.id, Tenant: s.req.Tenant, Plan: s.req.Plan, Language: s.req.Language,
		Start: start, Outcome: "ok", Stats: st, Metadata: s.req.Metadata,
	}.withDefaults(s.e.cfg.DefaultPlan)
	var se *Error
	if errors.As(s.err, &se) {
		u.Outcome, u.Limit = string(se.Code), se.Limit
	}
	s.e.cfg.Meter.Record(u)
}

// group is the pool group of the run (see Workers): the runs that may
// share its worker process.
func (s *Session) group() string { return s.e.cfg.workers.group(s.req.Tenant, s.id) }

var errAbandoned = errors.New("the run was abandoned")

// runJS runs a JavaScript job and releases its slot. A worker process
// ends a run it cannot stop at its CPU limit (and exits), and is killed by
// the pool when it outlives wall+Grace. In-process there is no process to
// end: a step stuck inside one native built-in call (a loop of 2^53
// iterations in Array.prototype.indexOf, say) never checks for the
// interrupt. The run is then abandoned: past its CPU limit (jsrt's
// OverrunCPU) it ends TIMEOUT (cpuMs, or the limit that stopped it
// first) for its caller; if its CPU does not get there (the thread is
// starved, or waits inside the call), at wall+Grace it ends
// LIMIT_EXCEEDED (limit "time"). Its goroutine keeps the slot, a CPU and
// the run's memory until the engine's call returns, if ever.
func (s *Session) runJS(w *waiter) *ipc.Event {
	if p, ok := s.e.js.(*pool.Pool); ok {
		defer s.e.sched.release(w)
		return p.RunGroup(s.ctx, s.group(), *s.job)
	}
	done := make(chan *ipc.Event, 1)
	overrun := make(chan *ipc.Event, 1)
	job := *s.job
	job.Overrun = func(ev *ipc.Event) { overrun <- ev } // at most once
	go func() {
		done <- s.e.js.Run(s.ctx, job)
		s.e.sched.release(w)
	}()
	t := time.NewTimer(time.Duration(s.job.Limits.WallMs)*time.Millisecond + s.e.cfg.Grace)
	defer t.Stop()
	select {
	case term := <-done:
		return term
	case term := <-overrun:
		s.abandoned.Store(true)
		return term
	case <-t.C:
	}
	s.abandoned.Store(true)
	return &ipc.Event{Kind: ipc.KindError, Error: &ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: ipc.LimitTime,
		Message: fmt.Sprintf("the step did not stop within its wall-clock limit plus the grace period (wallMs=%d, grace=%v): it is stuck in a native call, and its in-process runtime was abandoned", s.job.Limits.WallMs, s.e.cfg.Grace)}}
}
