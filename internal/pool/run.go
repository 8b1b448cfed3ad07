package pool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// errPoolClosing is the reason given to runs aborted by Close.
const errPoolClosing = "the pool is closing"

// Run executes one step in a worker process and returns its terminal
// event, with the semantics of (*jsrt.Runtime).Run: it blocks until the
// step ends, by returning or throwing, by crossing a limit, or because ctx
// ended (ABORTED); every call returns exactly one terminal event; non-
// terminal events go to job.Host.Emit in order, and job.Replies is read
// for the answers to data requests. Stats.QueueMs is left for the caller.
//
// A worker that cannot stop a run's VM (a step stuck in one native call
// past its CPU limit) ends the run itself with its limit and exits; the
// host replaces it (ipc.Frame.Exiting).
//
// On top of that, the worker's failures end the run: a worker that dies
// is CRASHED; one that breaks the protocol or reports more than the run's
// limits allow is killed (CRASHED); one that has not answered Grace after
// the wall-clock limit is killed (LIMIT_EXCEEDED, limit "time"). The
// worker is then replaced; other runs are not affected.
//
// Run waits for a free worker if all are busy, until ctx ends. It returns
// UNAVAILABLE at once if the pool is closed or no worker can be started.
func (p *Pool) Run(ctx context.Context, job jsrt.Job) *ipc.Event {
	return p.RunGroup(ctx, "", job)
}

// RunGroup is Run for a run of group: it runs on a worker that serves that
// group's runs only (see Config.Standby), never on one that has served
// another group's.
func (p *Pool) RunGroup(ctx context.Context, group string, job jsrt.Job) *ipc.Event {
	start := time.Now()
	lim := job.Limits
	python := job.Language == ipc.LanguagePython
	if !p.enter() {
		return ipc.Failed(&ipc.Failure{Code: ipc.CodeUnavailable, Message: "the worker pool is closed"}, ipc.Stats{})
	}
	defer p.leave()

	id := p.runSeq.Add(1)
	input := job.Input
	if len(bytes.TrimSpace(input)) == 0 {
		input = nil
	}
	frame, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameExecute, RunID: id,
		Execute: &ipc.Execute{Language: job.Language, Code: job.Code, Input: input, Limits: lim, Modules: job.Modules, Packages: job.Packages, TimeZone: job.TimeZone, Locale: job.Locale}}, p.cfg.MaxFrameBytes)
	if err != nil {
		f := &ipc.Failure{Code: ipc.CodeValidation, Message: "input is not valid JSON"}
		if errors.Is(err, ipc.ErrFrameTooLarge) {
			f = &ipc.Failure{Code: ipc.CodeValidation, Limit: ipc.LimitFrameBytes,
				Message: fmt.Sprintf("code and input are larger than the worker bridge allows (%d bytes)", p.cfg.MaxFrameBytes)}
		}
		return ipc.Failed(f, since(start))
	}
	for attempt := 0; ; attempt++ {
		w, f := p.acquire(ctx, group)
		if f != nil {
			return ipc.Failed(f, since(start))
		}
		if ctx.Err() != nil {
			p.release(w, nil)
			return ipc.Failed(ipc.Aborted(ctx), since(start))
		}
		// The wait for a worker (a process start, when the group had
		// none) is not the run's: its wall time starts now, in both
		// languages.
		start = time.Now()
		if python {
			ok, f := p.ensureZygote(w)
			if f != nil && !w.usable() && attempt < maxUnsentRetries {
				// The worker died while its zygote was handed to it: the
				// step never started, and the run goes to another worker.
				p.release(w, nil)
				p.log.Info("run moved to another worker: its worker was lost while its zygote started", logRun, id, logPID, w.pid)
				continue
			}
			if f != nil {
				p.release(w, nil)
				return ipc.Failed(f, since(start))
			}
			if !ok {
				// Its zygote died while it was idle: the worker is
				// retired, and the run goes to another.
				p.mu.Lock()
				p.retiredLocked(w, "its zygote died")
				p.mu.Unlock()
				w.kill("")
				p.release(w, nil)
				if attempt == maxUnsentRetries {
					return ipc.Failed(&ipc.Failure{Code: ipc.CodeCrashed, Message: "the Python zygotes of the workers died"}, since(start))
				}
				continue
			}
			// Nor is the zygote's start.
			start = time.Now()
		}
		unsent := false
		ev := p.execute(ctx, w, id, frame, job, start, &unsent)
		if python {
			p.afterPython(w, ev)
		}
		p.release(w, ev)
		// A worker that died while idle (killed from outside, say) can be
		// handed a run before the host has seen it go. It then never
		// acknowledged the run with its started frame: the step did not
		// start, so the run goes to another worker instead of failing
		// CRASHED. Bounded, in case every worker dies at once.
		if !unsent || attempt == maxUnsentRetries {
			return ev
		}
		p.log.Info("run moved to another worker: its worker was lost before the step started", logRun, id, logPID, w.pid)
	}
}

// maxUnsentRetries bounds how often Run moves a run whose frame could not
// be written to its worker.
const maxUnsentRetries = 2

// execute runs one step on w, which Run has taken. It sets *unsent when the
// worker was lost before it acknowledged the run (the started frame): the
// step never started there.
func (p *Pool) execute(ctx context.Context, w *proc, id uint64, frame []byte, job jsrt.Job, start time.Time, unsent *bool) *ipc.Event {
	lim := job.Limits
	acct := newAccount(lim)
	fail := func(f *ipc.Failure) *ipc.Event { return ipc.Failed(f, acct.stats(start)) }
	started := false // the worker acknowledged the run: the step may have run
	crashed := func() *ipc.Event {
		if !started {
			*unsent = true
		}
		msg := w.lost()
		p.log.Warn("run crashed", logRun, id, logPID, w.pid, logReason, msg)
		return fail(&ipc.Failure{Code: ipc.CodeCrashed, Message: msg})
	}
	violation := func(format string, args ...any) *ipc.Event {
		w.kill(fmt.Sprintf(format, args...))
		return crashed()
	}

	w.begin(id)
	wallEnd := time.Now().Add(time.Duration(lim.WallMs) * time.Millisecond)
	hardEnd := wallEnd.Add(p.cfg.Grace)
	if err := w.write(frame, hardEnd); err != nil {
		return crashed()
	}
	hard := time.NewTimer(time.Until(hardEnd))
	defer hard.Stop()
	// The host stops waiting for the caller to take events at the wall
	// limit: the worker is about to end the run with TIMEOUT then.
	emitCtx, cancelEmit := context.WithDeadline(ctx, wallEnd)
	defer cancelEmit()

	var (
		ctxDone    = ctx.Done()
		poolAbort  = p.abortAll
		abortTimer *time.Timer
		abortC     <-chan time.Time
		abortMsg   string
		emitting   = job.Host != nil
		hostErr    error // Emit failed while the run was alive
		slowReader bool  // Emit failed at the wall limit: the run times out
		// Emit failed because ctx ended, or the host stopped taking
		// events: events of the run were never delivered. In-process the
		// step would still be blocked in Emit, so the run ends ABORTED
		// even if the worker has finished meanwhile.
		abortedEmitting bool
	)
	abort := func(msg, reason string) {
		if abortC != nil {
			return
		}
		abortMsg = msg
		b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameAbort, RunID: id, Abort: &ipc.Abort{Reason: reason}}, p.cfg.MaxFrameBytes)
		if err == nil {
			_ = w.write(b, hardEnd) // a dead worker shows in w.frames
		}
		abortTimer = time.NewTimer(p.cfg.Grace)
		abortC = abortTimer.C
	}
	defer func() {
		if abortTimer != nil {
			abortTimer.Stop()
		}
	}()
	ctxAbort := func() {
		ctxDone = nil
		reason := ""
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			reason = cause.Error()
		}
		abort(ipc.AbortMessage(ctx), reason)
	}

	for {
		select {
		case f, ok := <-w.frames:
			if !ok {
				return crashed()
			}
			if f.RunID != id {
				return violation("sent a %s frame of run %d during run %d", f.Type, f.RunID, id)
			}
			if started != (f.Type != ipc.FrameStarted) {
				return violation("sent a %s frame %s the run's started frame", f.Type, map[bool]string{true: "after", false: "before"}[started])
			}
			switch f.Type {
			case ipc.FrameStarted:
				started = true
			case ipc.FrameEvent:
				if err := acct.event(f.Event); err != nil {
					return violation("%v", err)
				}
				if !emitting {
					continue
				}
				if err := job.Host.Emit(emitCtx, f.Event); err != nil {
					// Later events are checked and counted but dropped.
					emitting = false
					switch {
					case ctx.Err() != nil:
						// Aborted, closed, or stalled: the caller's
						// session ends ctx when the caller has taken no
						// event for its stall limit.
						abortedEmitting = true
						ctxAbort()
					case !time.Now().Before(wallEnd):
						// The caller did not keep up until the wall limit:
						// the run ends TIMEOUT, as in-process, even if the
						// worker has finished meanwhile.
						slowReader = true
						abort("the caller stopped reading events", "the caller stopped reading events")
					default:
						hostErr = err
						abortedEmitting = true
						abort("the host stopped taking events: "+err.Error(), "the host stopped taking events")
					}
				}
			case ipc.FrameTerminal:
				ev, err := acct.terminal(f.Event, start)
				if err != nil {
					return violation("%v", err)
				}
				w.runs.Add(1)
				if f.Retire != "" {
					w.retire(f.Retire)
				}
				if f.Exiting {
					// The worker could not stop the run's VM (a step stuck
					// in a native call past its CPU limit) and ended the run
					// itself; it exits, and takes no other run.
					w.exiting.Store(true)
					w.kill("")
					p.log.Info("worker replaced: its run overran its CPU limit in a native call", logRun, id, logPID, w.pid)
				}
				if slowReader {
					return ipc.Failed(&ipc.Failure{Code: ipc.CodeTimeout, Limit: ipc.LimitWall,
						Message: fmt.Sprintf("the step exceeded its wall-clock time limit (wallMs=%d)", job.Limits.WallMs)}, *ev.TerminalStats())
				}
				if abortedEmitting && ev.Result != nil {
					return ipc.Failed(&ipc.Failure{Code: ipc.CodeAborted, Message: abortMsg}, ev.Result.Stats)
				}
				if ev.Error != nil && ev.Error.Code == ipc.CodeAborted && hostErr != nil {
					ev.Error.Message = abortMsg
				}
				return ev
			default:
				return violation("sent a %s frame during a run", f.Type)
			}
		case rep := <-job.Replies:
			b := acct.reply(id, rep, p.cfg.MaxFrameBytes)
			_ = w.write(b, hardEnd) // a dead or stuck worker shows in w.frames or at hardEnd
		case <-ctxDone:
			ctxAbort()
		case <-poolAbort:
			poolAbort = nil
			abort(ipc.AbortedBecause(errPoolClosing).Message, errPoolClosing)
		case <-hard.C:
			w.kill("")
			<-w.exited
			p.log.Warn("run killed at its deadline", logRun, id, logPID, w.pid)
			return fail(&ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: ipc.LimitTime,
				Message: fmt.Sprintf("the step did not stop at its wall-clock limit (wallMs=%d) nor within %v after it: its worker was killed",
					lim.WallMs, p.cfg.Grace)})
		case <-abortC:
			w.kill("")
			<-w.exited
			p.log.Warn("run killed after abort", logRun, id, logPID, w.pid)
			return fail(&ipc.Failure{Code: ipc.CodeAborted, Message: abortMsg})
		}
	}
}

// account is the host's own count of what a run's worker reports, checked
// against the run's limits. The worker counts too, and stops the guest at
// a limit; a worker that reports more than its limits allow has been
// subverted or is broken.
type account struct {
	lim ipc.Limits
	// b counts what the worker originates: data requests with their
	// parameters, status and console events. Reply bytes are counted
	// apart: the worker adds them as they arrive, in an order the host
	// cannot see, and crossing maxDataBytes with a reply is the guest's
	// LIMIT_EXCEEDED, not the worker's fault.
	b           *ipc.Budget
	replyBytes  int
	lastRequest int64
	pending     map[int64]ipc.Kind // requests not yet answered, by id
}

func newAccount(lim ipc.Limits) *account {
	return &account{lim: lim, b: ipc.NewBudget(lim), pending: map[int64]ipc.Kind{}}
}

// maxNoticeBytes bounds the console line that announces dropped output.
const maxNoticeBytes = 1024

// event checks and counts one non-terminal event.
func (a *account) event(ev *ipc.Event) error {
	switch ev.Kind {
	case ipc.KindStatus:
		if a.b.Status() != nil {
			return fmt.Errorf("sent more than maxStatusEvents=%d status events", a.lim.MaxStatusEvents)
		}
		// Status payloads cross the bridge and count as data bytes.
		if err := a.b.DataBytes(len(ev.Status)); err != nil {
			return fmt.Errorf("sent status payloads beyond the run's limits: %w", err)
		}
		if err := ipc.CheckJSONDepth(ev.Status, ipc.MaxJSONDepth); err != nil {
			return fmt.Errorf("sent a status payload %w", err)
		}
	case ipc.KindConsole:
		c := ev.Console
		if c.Level == "" || len(c.Level) > 16 {
			return fmt.Errorf("sent a console event with level %.20q", c.Level)
		}
		out, ok, notice := a.b.Console(c.Text)
		switch {
		case ok && out == c.Text:
		case !ok && notice && len(c.Text) <= maxNoticeBytes:
			// The one line that says further output is dropped.
		default:
			return fmt.Errorf("sent console output beyond maxConsoleEvents=%d or maxConsoleBytes=%d",
				a.lim.MaxConsoleEvents, a.lim.MaxConsoleBytes)
		}
	case ipc.KindDataRequest:
		d := ev.DataRequest
		if err := a.request(d.ID, ev.Kind); err != nil {
			return err
		}
		if len(d.Method) == 0 || len(d.Method) > 256 {
			return fmt.Errorf("sent a data request with a method of %d bytes", len(d.Method))
		}
		if err := a.b.DataRequest(len(d.Params)); err != nil {
			return fmt.Errorf("sent data requests beyond the run's limits: %w", err)
		}
		if err := ipc.CheckJSONDepth(d.Params, ipc.MaxJSONDepth); err != nil {
			return fmt.Errorf("sent data request parameters %w", err)
		}
	case ipc.KindFetchRequest:
		if err := a.request(ev.FetchRequest.ID, ev.Kind); err != nil {
			return err
		}
		if a.b.Fetch() != nil {
			return fmt.Errorf("sent more than maxFetchRequests=%d fetch requests", a.lim.MaxFetchRequests)
		}
	default:
		// Fetch audit events are the host's own: the worker sends only
		// fetch requests.
		return fmt.Errorf("sent a %s event", ev.Kind)
	}
	return nil
}

// request checks the id of a request (data or fetch): the worker numbers
// them 1, 2, 3, ... in one sequence.
func (a *account) request(id int64, kind ipc.Kind) error {
	if id <= a.lastRequest {
		return fmt.Errorf("sent request %d after %d", id, a.lastRequest)
	}
	a.lastRequest = id
	a.pending[id] = kind
	return nil
}

// reply counts a reply as the worker will and returns its frame. A reply
// that cannot be sent is replaced by an error reply, so the step's await
// rejects instead of hanging.
func (a *account) reply(id uint64, rep ipc.Reply, max int) []byte {
	kind, pending := a.pending[rep.ID]
	delete(a.pending, rep.ID)
	if rep.Error == "" && rep.Limit == "" {
		var buf bytes.Buffer
		n := 0
		switch {
		case len(bytes.TrimSpace(rep.Value)) == 0:
			rep.Value = nil
			n = len("null") // as the worker counts an empty value
		case json.Compact(&buf, rep.Value) != nil:
			rep = ipc.Reply{ID: rep.ID, Error: "the reply is not valid JSON"}
		default:
			rep.Value = buf.Bytes()
			n = len(rep.Value)
		}
		// Only data replies count as data bytes, and only for a request
		// still waiting (the worker drops any other).
		if pending && kind == ipc.KindDataRequest {
			a.replyBytes += n
		}
	}
	b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameReply, RunID: id, Reply: &rep}, max)
	if err != nil {
		msg := "the reply could not be sent"
		if errors.Is(err, ipc.ErrFrameTooLarge) {
			msg = fmt.Sprintf("the reply is larger than the worker bridge allows (%d bytes)", max)
		}
		b, err = ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameReply, RunID: id, Reply: &ipc.Reply{ID: rep.ID, Error: msg}}, max)
		if err != nil {
			panic(fmt.Sprintf("pool: encode an error reply: %v", err))
		}
	}
	return b
}

// terminal checks the worker's terminal event and replaces the counters
// the host keeps itself.
func (a *account) terminal(ev *ipc.Event, start time.Time) (*ipc.Event, error) {
	var st *ipc.Stats
	if r := ev.Result; r != nil {
		if len(r.Value) > a.lim.MaxResultBytes {
			return nil, fmt.Errorf("sent a result of %d bytes, more than maxResultBytes=%d", len(r.Value), a.lim.MaxResultBytes)
		}
		// Its nesting was checked with the frame: ipc.DecodeFrame checks
		// every payload against MaxJSONDepth.
		st = &r.Stats
	} else {
		st = &ev.Error.Stats
	}
	host := a.stats(start)
	// What the worker alone can measure, within sanity.
	host.CPUMs = clamp(st.CPUMs, host.WallMs)
	host.CodeMs = clamp(st.CodeMs, host.WallMs)
	host.HeapMB = clamp(st.HeapMB, 4*float64(a.lim.MemoryMB))
	host.ConsoleDropped = max(0, st.ConsoleDropped)
	*st = host
	return ev, nil
}

// stats returns the host's own counts for a run that started at start.
func (a *account) stats(start time.Time) ipc.Stats {
	st := since(start)
	st.DataRequests = a.b.Stats.DataRequests
	st.DataBytes = a.b.Stats.DataBytes + a.replyBytes
	st.StatusEvents = a.b.Stats.StatusEvents
	st.ConsoleEvents = a.b.Stats.ConsoleEvents
	// Fetch requests are counted here; the bytes only the caller's
	// FetchProxy sees, and it fills them in.
	st.FetchRequests = a.b.Stats.FetchRequests
	return st
}

func clamp(v, hi float64) float64 { return max(0, min(v, hi)) }

func since(start time.Time) ipc.Stats {
	return ipc.Stats{WallMs: ipc.Ms(time.Since(start))}
}

// afterPython checks, after a Python run on w, what only the host can: that
// the zygote is alive, and that no run left a named unix socket in its
// network namespace. A worker whose zygote fails either is retired; a run
// that ended because its zygote died says how it died.
func (p *Pool) afterPython(w *proc, ev *ipc.Event) {
	z := w.currentZygote()
	if z == nil {
		return
	}
	lost := ev.Error != nil && ev.Error.Code == ipc.CodeCrashed && strings.HasPrefix(ev.Error.Message, pyrt.ZygoteDied)
	if lost || !z.usable() {
		if lost {
			// The worker saw its control socket close; the reaper
			// follows, with how the zygote ended.
			select {
			case <-z.exited:
				ev.Error.Message += ": " + z.diagnostics()
			case <-time.After(reapWait):
			}
		}
		w.retire("its Python zygote died")
		return
	}
	if err := z.z.ProveSockets(); err != nil {
		w.retire(err.Error())
	}
}

// reapWait bounds how long a run that lost its zygote waits for the exit
// status that says how it died.
const reapWait = 500 * time.Millisecond
