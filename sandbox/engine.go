package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stepbox/stepbox/internal/egress"
	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/typescript"
)

// Engine runs steps. Create one with New, submit runs with Submit (or Run),
// and Close it when done. An Engine is safe for concurrent use.
type Engine struct {
	cfg   *resolved
	js    runner // a jsrt.Runtime, or a pool of workers
	stop  func(context.Context)
	sched *scheduler
	ts    *typescript.Cache
	proxy *egress.Proxy // nil when fetch is off
	py    *python

	mu       sync.Mutex
	closed   bool                  // guarded by mu
	sessions map[*Session]struct{} // guarded by mu: runs not yet ended
	wg       sync.WaitGroup        // one per accepted run; Done when its terminal event is out
}

// New validates cfg and starts an engine. Warm runtimes are prepared in the
// background; the first runs do not wait for them.
func New(cfg Config) (*Engine, error) {
	r, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	proxy, err := newProxy(r.Egress)
	if err != nil {
		return nil, fmt.Errorf("stepbox: invalid config: egress: %w", err)
	}
	py := newPython(r.Python)
	js, stop, err := newRunner(r, py)
	if err != nil {
		return nil, fmt.Errorf("stepbox: start the JavaScript runtime: %w", err)
	}
	return &Engine{
		cfg:      r,
		js:       js,
		stop:     stop,
		sched:    newScheduler(r.PoolSize, r.QueueSize, r.share, r.shareFromStart),
		ts:       typescript.NewCache(0),
		proxy:    proxy,
		py:       py,
		sessions: map[*Session]struct{}{},
	}, nil
}

// Submit validates req and starts its run, or queues it when every slot is
// busy, returning a Session to follow it.
//
// ctx governs the whole run, not just the call: when it ends, the run is
// aborted (ABORTED, and errors.Is(err, context.Canceled) holds). An error
// from Submit itself means the run was not accepted (VALIDATION; or
// UNAVAILABLE: queue full, engine closed) and no events follow; once Submit
// returns a Session, exactly one terminal event ends its stream. A step
// that does not parse is the step's fault, not a refusal: a JavaScript or
// Python syntax error and a TypeScript compile error alike are accepted
// runs ending in a VALIDATION error with its Position (the TypeScript one
// at once, without taking a slot, with every Diagnostic).
func (e *Engine) Submit(ctx context.Context, req Request) (*Session, error) {
	job, ts, fault, err := e.prepare(ctx, req)
	plan := req.Plan
	if plan == "" {
		plan = e.cfg.DefaultPlan
	}
	if err != nil {
		e.meterRefused(req, err)
		return nil, err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		err := newError(CodeUnavailable, ErrClosed, "the engine is closed")
		e.meterRefused(req, err)
		return nil, err
	}
	if fault != nil {
		// The step does not compile: an accepted run that ends at once,
		// as a JavaScript syntax error does, without taking a slot.
		s := newSession(ctx, e, req, job, nil)
		s.plan = plan
		e.sessions[s] = struct{}{}
		e.wg.Add(1) // Done in Session.fail once the terminal event is out.
		e.mu.Unlock()
		go s.fail(fault)
		return s, nil
	}
	w, err := e.sched.enqueue(req.Tenant)
	if err != nil {
		e.mu.Unlock()
		if errors.Is(err, errTenantQueueFull) {
			err = newError(CodeUnavailable, err, "the tenant's share of the queue is full (%d runs waiting)", e.sched.queueShare)
		} else {
			err = newError(CodeUnavailable, err, "the queue is full (%d runs waiting)", e.cfg.QueueSize)
		}
		e.meterRefused(req, err)
		return nil, err
	}
	s := newSession(ctx, e, req, job, ts)
	s.plan = plan
	e.sessions[s] = struct{}{}
	e.wg.Add(1) // Done in Session.run once the terminal event is out.
	e.mu.Unlock()
	go s.run(w)
	return s, nil
}

// Run submits req and waits for its result, answering data requests with
// handler, each on its own goroutine: a handler's error, or an answer that
// cannot be marshalled to JSON, rejects the step's await. A nil handler
// rejects every data request. Run is for callers who need no events; use
// Submit to see console and status events.
func (e *Engine) Run(ctx context.Context, req Request, handler DataHandler) (Result, error) {
	s, err := e.Submit(ctx, req)
	if err != nil {
		return Result{}, err
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for ev := range s.Events() {
		dr := ev.DataRequest
		if dr == nil {
			continue
		}
		if handler == nil {
			_ = s.RespondError(dr.ID, "no data handler is configured")
			continue
		}
		wg.Add(1) // Done when the handler returns.
		go func() {
			defer wg.Done()
			v, err := handler(hctx, dr.Method, dr.Params)
			if err != nil {
				_ = s.RespondError(dr.ID, err.Error())
				return
			}
			if err := s.Respond(dr.ID, v); err != nil {
				// Not JSON: the step's await rejects rather than waits.
				_ = s.RespondError(dr.ID, err.Error())
			}
		}()
	}
	cancel()
	wg.Wait()
	return s.Wait()
}

// Close stops accepting runs, lets the runs in progress finish until ctx
// ends, then aborts the rest (each still gets its one terminal event) and
// releases the runtimes. It returns ctx's error if it had to abort runs.
// Close is idempotent; calls after the first wait like the first.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	first := !e.closed
	e.closed = true
	e.mu.Unlock()
	if first {
		defer e.stop(ctx)
		defer e.py.close(ctx)
		defer e.cfg.modules.close()
	}
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		e.mu.Lock()
		for s := range e.sessions {
			s.cancel(ErrClosed)
		}
		e.mu.Unlock()
		<-done
	}
	return err
}

// prepare validates req into a job with effective limits, and the mapper
// of a TypeScript step's positions. A TypeScript step that does not compile
// is the step's fault, not the request's: the request is still checked
// whole, and the fault comes back beside a job that must not run, for a run
// that ends with it (VALIDATION, as a JavaScript syntax error ends).
func (e *Engine) prepare(ctx context.Context, req Request) (job *jsrt.Job, ts *tsMapper, fault *Error, err error) {
	plan := req.Plan
	if plan == "" {
		plan = e.cfg.DefaultPlan
	}
	lim, ok := e.cfg.plans[plan]
	if !ok {
		return nil, nil, nil, newError(CodeValidation, nil, "unknown plan %q", plan)
	}
	if req.Limits != (Limits{}) {
		if lim, err = lowerLimits(lim, req.Limits, plan); err != nil {
			return nil, nil, nil, newError(CodeValidation, err, "%v", err)
		}
	}
	if err := checkStepText(req); err != nil {
		return nil, nil, nil, err
	}
	defaults, derr := e.runDefaults(req, plan)
	if derr != nil {
		return nil, nil, nil, derr
	}
	code := req.Code
	switch req.Language {
	case "", JavaScript:
	case TypeScript:
		if len(req.Code) > lim.MaxCodeBytes {
			break // refused below, before compiling
		}
		c := req.Compiled
		if c == nil {
			out, err := e.ts.Compile(req.Code)
			if err != nil {
				fault, code = compileError(err), ""
				break
			}
			c = &Compiled{JS: out.JS, Map: out.Map}
		}
		code, ts = c.JS, &tsMapper{mapJSON: c.Map}
	case Python:
		if e.cfg.Python.Disabled {
			return nil, nil, nil, newError(CodeUnavailable, errors.ErrUnsupported, "Python is disabled in this engine's configuration")
		}
	default:
		return nil, nil, nil, newError(CodeValidation, nil, "unknown language %q (want javascript, typescript or python)", req.Language)
	}
	if f := limitsWire(lim).CheckCode(len(req.Code)); f != nil {
		err := newError(CodeValidation, nil, "%s", f.Message)
		err.Limit = f.Limit
		return nil, nil, nil, err
	}
	if len(req.Input) > 0 {
		if len(req.Input) > lim.MaxDataBytes {
			err := newError(CodeValidation, nil, "input is %d bytes, more than maxDataBytes=%d", len(req.Input), lim.MaxDataBytes)
			err.Limit = ipc.LimitDataBytes
			return nil, nil, nil, err
		}
		if !json.Valid(req.Input) {
			return nil, nil, nil, newError(CodeValidation, nil, "input is not valid JSON")
		}
		if err := ipc.CheckJSONDepth(req.Input, ipc.MaxJSONDepth); err != nil {
			return nil, nil, nil, newError(CodeValidation, err, "input is %v", err)
		}
	}
	if err := validateSecrets(req.Secrets); err != nil {
		return nil, nil, nil, newError(CodeValidation, err, "%v", err)
	}
	mods, pkgs, err := e.cfg.modules.resolve(ctx, req, plan, code, ts)
	if err != nil {
		return nil, nil, nil, err
	}
	return &jsrt.Job{Code: code, Input: req.Input, Limits: limitsWire(lim), Modules: mods, Packages: pkgs,
		TimeZone: defaults.TimeZone, Locale: defaults.Locale}, ts, fault, nil
}

// newRunID returns a new run id: "run_" and 128 bits from crypto/rand in
// hex. Ids are random rather than counted so that nobody learns from the
// ids of their own runs how many runs others made, or when; at 128 bits
// they do not collide, across engines and processes as well.
func newRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail (it crashes the program instead)
	return "run_" + hex.EncodeToString(b[:])
}

func (e *Engine) meterRefused(req Request, err error) {
	var se *Error
	errors.As(err, &se)
	u := Usage{
		RunID: newRunID(), Tenant: req.Tenant, Plan: req.Plan, Language: req.Language,
		Start: time.Now(), Outcome: string(se.Code), Limit: se.Limit, Metadata: req.Metadata,
	}
	e.cfg.Meter.Record(u.withDefaults(e.cfg.DefaultPlan))
}

// Load reports how busy the engine is: runs executing, runs waiting in the
// queue, and the sizes of the pool and of the queue. A server's readiness
// probe uses it.
func (e *Engine) Load() (running, queued, poolSize, queueSize int) {
	e.sched.mu.Lock()
	defer e.sched.mu.Unlock()
	return e.cfg.PoolSize - e.sched.free, e.sched.queued, e.cfg.PoolSize, e.cfg.QueueSize
}
