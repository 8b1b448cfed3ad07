package jsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"

	"github.com/stepbox/stepbox/internal/intl"
	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/modules/duckdb"
)

// Run executes one step and returns its terminal event. It blocks until the
// step ends: by returning or throwing, by crossing a limit, or because ctx
// ended (an abort: the result is ABORTED). Every call returns exactly one
// terminal event; Stats.QueueMs is left for the caller.
func (r *Runtime) Run(ctx context.Context, job Job) *ipc.Event {
	start := time.Now()
	if f := job.Limits.CheckCode(len(job.Code)); f != nil {
		return ipc.Failed(f, ipc.Stats{WallMs: ipc.Ms(time.Since(start))})
	}
	input := string(job.Input)
	if strings.TrimSpace(input) == "" {
		input = "null"
	}
	code, codes, f := prepareJob(job)
	if f != nil {
		return ipc.Failed(f, ipc.Stats{WallMs: ipc.Ms(time.Since(start))})
	}
	var m *machine
	var preloaded bool
	var err error
	if zoned(job.TimeZone) {
		// Not a VM with the packages loaded already: zone.js must
		// replace Date before any package's code can keep it.
		m, err = r.acquire()
	} else {
		m, preloaded, err = r.acquireWith(job.Packages, codes)
	}
	if err != nil {
		return ipc.Failed(&ipc.Failure{Code: ipc.CodeUnavailable, Message: err.Error()}, ipc.Stats{})
	}
	defer r.release(m)
	m.intl = intl.Env{Locales: r.locales, TimeZone: DefaultTimeZone, DefaultLocale: job.Locale}
	if job.TimeZone != "" {
		m.intl.TimeZone = job.TimeZone
	}
	if preloaded {
		codes = nil
	}

	rn := newRun(ctx, m, job, start)
	rn.rt = r
	defer rn.finish()
	return rn.execute(code, codes, input)
}

// run is the state of one execution. Its fields are touched only by the VM
// goroutine, except where marked.
type run struct {
	// exactDecimals: the run's DuckDB writes DECIMALs exactly
	// (duckdb.Config.ExactDecimals), for a Python step's decimal.Decimal.
	exactDecimals bool
	rt            *Runtime
	m             *machine
	job           Job
	budget        *ipc.Budget
	start         time.Time
	wall          time.Time // wall deadline
	cpu           cpuMeter

	ctx    context.Context // ends when the run must stop; Emit watches it
	cancel context.CancelFunc

	pending map[int64]ipc.Kind // requests awaiting a Reply: data, fetch or module
	mods    *modules           // nil until the first module call
	staged  *duckdb.Rows       // rows read by __sbx_rows for the next duckdb.load
	timers  map[int64]*time.Timer
	nextID  int64
	wake    chan int64 // fired timer ids, from timer goroutines

	codeNs   atomic.Int64  // wall time spent in finished calls into JavaScript
	callT0   atomic.Int64  // when the call in progress began (UnixNano); 0 if none
	oomFloor atomic.Uint64 // the memory limit, once the run ran out of memory
	result   *ipc.Event    // set once by "done"/"syntax" or a stop

	// budgetMu guards budget, which the VM goroutine counts on and an
	// overrun (on a watchdog's goroutine) reads the statistics of.
	budgetMu sync.Mutex

	stopMu     sync.Mutex
	stopReason *ipc.Failure  // guarded by stopMu; first stop wins
	stopped    chan struct{} // closed on the first stop
	exited     chan struct{} // closed when the VM goroutine is done with the VM
	stopTimers []*time.Timer // the wall watchdog; guarded by stopMu
	cpuTimer   *time.Timer   // the CPU watchdog (cpuwatch.go); reset only by itself
	stopCPU    atomic.Int64  // CPU used when the CPU watchdog saw the run stopped (ns); 0 before
	afterCtx   func() bool

	endMu sync.Mutex
	ended *ipc.Event // guarded by endMu: the terminal event, once decided (see end)
}

// stopPanic is what a host function panics with to end the run at once: the
// engine turns a Go panic into an uncatchable exception, so no catch or
// finally block of the step runs after a limit was crossed.
type stopPanic struct{}

func newRun(ctx context.Context, m *machine, job Job, start time.Time) *run {
	rn := &run{
		m:       m,
		job:     job,
		budget:  ipc.NewBudget(job.Limits),
		start:   start,
		wall:    start.Add(time.Duration(job.Limits.WallMs) * time.Millisecond),
		pending: make(map[int64]ipc.Kind),
		timers:  make(map[int64]*time.Timer),
		wake:    make(chan int64, 16),
		stopped: make(chan struct{}),
		exited:  make(chan struct{}),
	}
	rn.ctx, rn.cancel = context.WithCancel(context.Background())
	m.run = rn
	m.vm.SetMemoryLimit(uintptr(job.Limits.MemoryMB) << 20)
	m.watch.reset()
	if m.watch != nil {
		m.watch.atLimit = func() { rn.stop(rn.unnamedOOM()) }
	}

	rn.stopTimers = append(rn.stopTimers, time.AfterFunc(time.Until(rn.wall), func() {
		rn.stop(rn.timeout(ipc.LimitWall))
	}))
	rn.armCPU()
	rn.afterCtx = context.AfterFunc(ctx, func() {
		rn.stop(ipc.Aborted(ctx))
	})
	return rn
}

func (rn *run) timeout(limit string) *ipc.Failure {
	l := rn.job.Limits.WallMs
	what := "wall-clock"
	if limit == ipc.LimitCPU {
		l, what = rn.job.Limits.CPUMs, "CPU"
	}
	return &ipc.Failure{Code: ipc.CodeTimeout, Limit: limit,
		Message: fmt.Sprintf("the step exceeded its %s time limit (%s=%d)", what, limit, l)}
}

// stop ends the run with f unless it already ended. It may be called from
// any goroutine. The engine's interrupt is cleared whenever Go calls into
// JavaScript, so one request can be lost if it lands just before such a
// call; stop keeps interrupting until the VM goroutine lets go.
func (rn *run) stop(f *ipc.Failure) {
	rn.stopMu.Lock()
	if rn.stopReason != nil {
		rn.stopMu.Unlock()
		return
	}
	rn.stopReason = f
	close(rn.stopped)
	rn.stopMu.Unlock()
	rn.cancel()
	rn.m.vm.Interrupt()
	go func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-rn.exited:
				return
			case <-t.C:
				rn.m.vm.Interrupt()
			}
		}
	}()
}

func (rn *run) reason() *ipc.Failure {
	rn.stopMu.Lock()
	defer rn.stopMu.Unlock()
	return rn.stopReason
}

// fail stops the run from the VM goroutine, inside a host function: it
// records f and unwinds the JavaScript without running its handlers.
func (rn *run) fail(f *ipc.Failure) {
	rn.stop(f)
	panic(stopPanic{})
}

func (rn *run) finish() {
	rn.stopModules()
	close(rn.exited)
	rn.afterCtx()
	rn.stopMu.Lock()
	for _, t := range rn.stopTimers {
		t.Stop()
	}
	rn.stopMu.Unlock()
	rn.cpuTimer.Stop() // a check in progress sees exited and does not rearm
	for _, t := range rn.timers {
		t.Stop()
	}
	rn.cancel()
	rn.m.run = nil
}

// execute runs code, the job's code with its imports rewritten, after
// loading the packages whose bytecode is in codes (none when the VM has
// them already).
func (rn *run) execute(code string, codes []*compiledPackage, input string) *ipc.Event {
	rn.js(func() error {
		if zoned(rn.job.TimeZone) {
			if err := rn.m.setZone(rn.job.TimeZone); err != nil {
				return err
			}
		}
		if len(rn.job.Modules) > 0 {
			mods, _ := json.Marshal(rn.job.Modules)
			if _, err := rn.m.dispatch.Call(quickjs.UndefinedValue, "modules", string(mods)); err != nil {
				return err
			}
		}
		if len(codes) > 0 {
			if err := rn.m.loadPackages(rn.job.Packages, codes); err != nil {
				return err
			}
		}
		if f := rn.syntaxCheck(code); f != nil {
			rn.result = ipc.Failed(f, ipc.Stats{})
			return nil
		}
		if rn.granted(ModuleDuckDB) {
			rn.preopenDuckDB()
		}
		return rn.callJSON("start", input, code)
	})
	for rn.result == nil && rn.reason() == nil {
		if len(rn.pending) == 0 && len(rn.timers) == 0 {
			// The job queue is empty (js drains it) and nothing is
			// awaited from outside.
			rn.result = ipc.Failed(rn.stalled(), ipc.Stats{})
			break
		}
		select {
		case id := <-rn.wake:
			rn.fireTimer(id)
		case rep := <-rn.job.Replies:
			rn.deliver(rep)
		case rep := <-rn.modReplies():
			rn.deliverModule(rep)
		case <-rn.stopped:
		}
	}
	// A result reported before a stop stands: work the step left queued
	// behind its return (a microtask flood, say) cannot take it back.
	ev := rn.result
	if f := rn.reason(); f != nil && ev == nil {
		ev = ipc.Failed(f, ipc.Stats{})
	}
	rn.fillStats(ev)
	return rn.end(ev)
}

// end decides the run's terminal event: ev, unless an overrun decided it
// first, whose event it returns then. Safe from any goroutine.
func (rn *run) end(ev *ipc.Event) *ipc.Event {
	rn.endMu.Lock()
	defer rn.endMu.Unlock()
	if rn.ended == nil {
		rn.ended = ev
	}
	return rn.ended
}

// stalled is the outcome of a step that waits for nothing while its job
// queue is empty: what it awaits can never settle. Unless it got there by
// crossing a limit: a promise job that ran out of memory rejected a
// promise instead of failing the run (the engine turns any exception of a
// job into a rejection, and a chain of promises that grows until the
// memory is exhausted ends so), or its time ran out before a watchdog
// said so. Those limits come first.
func (rn *run) stalled() *ipc.Failure {
	switch {
	case rn.m.watch.exhausted():
		return rn.unnamedOOM()
	case rn.cpu.used() >= time.Duration(rn.job.Limits.CPUMs)*time.Millisecond:
		return rn.timeout(ipc.LimitCPU)
	case !time.Now().Before(rn.wall):
		return rn.timeout(ipc.LimitWall)
	}
	return &ipc.Failure{Code: ipc.CodeRuntime, Message: "the step never finished: it awaits a promise that nothing will settle"}
}

// syntaxCheck compiles the step the way the AsyncFunction constructor will
// (the same two header lines) without running anything, so a syntax error
// is reported as VALIDATION with the user's position, and anything thrown
// while the function is then built is known to come from code that ran.
func (rn *run) syntaxCheck(code string) *ipc.Failure {
	v, err := rn.m.vm.EvalValue("(async function anonymous(\n) {\n"+code+"\n})", quickjs.EvalGlobal|lib.MJS_EVAL_FLAG_COMPILE_ONLY)
	if err == nil {
		v.Free()
		return nil
	}
	var qe *quickjs.Error
	if !errors.As(err, &qe) || qe.Name != "SyntaxError" {
		return nil // out of memory or interrupted: the run itself reports it
	}
	return &ipc.Failure{Code: ipc.CodeValidation, Name: qe.Name, Message: qe.Name + ": " + qe.Message,
		Position: syntaxPosition(code, qe.LineNumber-headerLines, qe.ColumnNumber)}
}

// js calls into JavaScript and accounts for the time spent there.
func (rn *run) js(call func() error) {
	if rn.reason() != nil {
		return
	}
	left := time.Until(rn.wall)
	if left <= 0 {
		rn.stop(rn.timeout(ipc.LimitWall))
		return
	}
	// The engine's own deadline backs up the wall watchdog.
	_ = rn.m.vm.SetEvalTimeout(left)
	t0 := time.Now()
	rn.callT0.Store(t0.UnixNano())
	rn.cpu.enter()
	err := rn.protect(func() error {
		if err := call(); err != nil {
			return err
		}
		return rn.drain() // one entry per turn: the CPU clock costs syscalls
	})
	rn.cpu.leave()
	rn.codeNs.Add(int64(time.Since(t0)))
	rn.callT0.Store(0)
	if err == nil || rn.result != nil || rn.reason() != nil {
		return
	}
	var qe *quickjs.Error
	if errors.As(err, &qe) && qe.Name == "InternalError" && qe.Message == "interrupted" {
		rn.stop(rn.timeout(ipc.LimitWall)) // the engine's deadline fired first
		return
	}
	switch {
	case errors.As(err, &qe) && qe.Message == "out of memory":
		rn.stop(rn.oom())
		return
	case rn.m.watch.exhausted():
		// Near the limit the engine may throw null instead of its
		// out-of-memory error; whatever it threw, an allocation failed.
		rn.stop(rn.unnamedOOM())
		return
	}
	rn.result = ipc.Failed(&ipc.Failure{Code: ipc.CodeRuntime, Message: err.Error()}, ipc.Stats{})
}

// protect runs call, turning a stopPanic from a host function into a
// normal return.
func (rn *run) protect(call func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(stopPanic); !ok {
				panic(p)
			}
			err = nil
		}
	}()
	return call()
}

// unnamedOOM is oom for a run that ran out of memory without the engine
// saying so: an allocation failed (allocWatch) at the heap's limit, or
// what the step threw after a failed allocation is not the engine's
// out-of-memory error.
func (rn *run) unnamedOOM() *ipc.Failure {
	if rn.rt != nil {
		rn.rt.unnamedOOMs.Add(1)
	}
	return rn.oom()
}

func (rn *run) oom() *ipc.Failure {
	// The allocation that failed did not count; the run reached its limit.
	rn.oomFloor.Store(uint64(rn.job.Limits.MemoryMB) << 20)
	return &ipc.Failure{Code: ipc.CodeOOM, Limit: ipc.LimitMemory,
		Message: fmt.Sprintf("the step ran out of memory (memoryMb=%d)", rn.job.Limits.MemoryMB)}
}

// maxDrain is what ExecutePendingJobs runs at most in one call before it
// returns with jobs still queued.
const maxDrain = 1 << 20

// drain runs the queued promise jobs, within the current call into
// JavaScript, until none are left or the run ends. A step that feeds the
// queue forever (while(true) await null) is stopped by its time limits.
func (rn *run) drain() error {
	for rn.result == nil && rn.reason() == nil {
		if time.Now().After(rn.wall) {
			rn.stop(rn.timeout(ipc.LimitWall))
			return nil
		}
		n, err := rn.m.vm.ExecutePendingJobs()
		var qe *quickjs.Error
		if errors.As(err, &qe) && (qe.Message == "out of memory" || qe.Message == "interrupted") {
			return err
		}
		// Any other error is a job's own exception, which settled its
		// promise.
		if n < maxDrain {
			return nil
		}
	}
	return nil
}

func (rn *run) fireTimer(id int64) {
	if _, ok := rn.timers[id]; !ok {
		return // cleared after it fired
	}
	delete(rn.timers, id)
	rn.js(func() error {
		_, err := rn.m.dispatch.Call(quickjs.UndefinedValue, "timer", id)
		return err
	})
}

func (rn *run) deliver(rep ipc.Reply) {
	kind, ok := rn.pending[rep.ID]
	if !ok {
		return // the host checks ids; a stray reply is ignored
	}
	delete(rn.pending, rep.ID)
	if rep.Limit != "" {
		rn.stop(&ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: rep.Limit, Message: rep.Error})
		return
	}
	ok = rep.Error == ""
	payload := rep.Error
	if ok {
		payload = string(rep.Value)
		if strings.TrimSpace(payload) == "" {
			payload = "null"
		}
		if kind == ipc.KindDataRequest {
			if err := rn.count(func(b *ipc.Budget) error { return b.DataBytes(len(payload)) }); err != nil {
				rn.stop(ipc.LimitFailure(err))
				return
			}
		}
		if err := ipc.CheckJSONDepth(rep.Value, ipc.MaxJSONDepth); err != nil {
			ok, payload = false, "dataProxy.request: the reply is "+err.Error()
		}
	}
	rn.js(func() error {
		if ok {
			return rn.callJSON("reply", payload, rep.ID, ok)
		}
		_, err := rn.m.dispatch.Call(quickjs.UndefinedValue, "reply", rep.ID, ok, payload)
		return err
	})
}

// callJSON calls the bootstrap's dispatch(kind, args..., value, built),
// where value is what the guest receives of text, a JSON text: built from
// Go (jsonvalue.go) when it can be, built true, else the text itself, for
// JSON.parse in the guest.
func (rn *run) callJSON(kind, text string, args ...any) error {
	return rn.callJSONAs(kind, text, false, args...)
}

// callJSONAs is callJSON, with integers beyond ±(2^53-1) built as BigInts
// if bigints.
func (rn *run) callJSONAs(kind, text string, bigints bool, args ...any) error {
	var resume func()
	if _, tls, ok := vmHandles(rn.m.vm); ok {
		resume = rn.m.heap.deferGC(tls, 4*len(text))
	}
	v, ok, stopped := buildJSON(rn.m.vm, text, rn.stopping, bigints)
	if resume != nil {
		resume()
	}
	if stopped {
		return nil // the run is ending
	}
	all := append([]any{kind}, args...)
	if ok {
		defer v.Free()
		all = append(all, v, true)
	} else {
		all = append(all, text, false)
	}
	_, err := rn.m.dispatch.Call(quickjs.UndefinedValue, all...)
	return err
}

// stopping reports whether the run must stop, for Go code that works in
// the VM on the guest's behalf and that no interrupt reaches: true if it
// was stopped, or if it is past its wall deadline, which stops it.
func (rn *run) stopping() bool {
	if rn.reason() != nil {
		return true
	}
	if time.Now().After(rn.wall) {
		rn.stop(rn.timeout(ipc.LimitWall))
		return true
	}
	return false
}

func (rn *run) emit(ev *ipc.Event) {
	if err := rn.job.Host.Emit(rn.ctx, ev); err != nil {
		if f := rn.reason(); f != nil {
			panic(stopPanic{})
		}
		rn.fail(&ipc.Failure{Code: ipc.CodeAborted, Message: "the host stopped taking events: " + err.Error()})
	}
}

// host is the one entry point from the guest: __sbx_host(op, ...).
func (rn *run) host(args []any) (any, error) {
	if rn.reason() != nil || rn.result != nil {
		panic(stopPanic{})
	}
	op, _ := arg[string](args, 0)
	switch op {
	case "console":
		level, _ := arg[string](args, 1)
		text, _ := arg[string](args, 2)
		rn.budgetMu.Lock()
		out, ok, notice := rn.budget.Console(text)
		rn.budgetMu.Unlock()
		if ok {
			rn.emit(&ipc.Event{Kind: ipc.KindConsole, Console: &ipc.Console{Level: level, Text: out}})
		} else if notice {
			rn.emit(&ipc.Event{Kind: ipc.KindConsole, Console: &ipc.Console{Level: "warn",
				Text: fmt.Sprintf("[stepbox] console limit reached (maxConsoleEvents=%d, maxConsoleBytes=%d): further output is dropped",
					rn.job.Limits.MaxConsoleEvents, rn.job.Limits.MaxConsoleBytes)}})
		}
		return nil, nil
	case "status":
		text, _ := arg[string](args, 1)
		if err := rn.count(func(b *ipc.Budget) error { return b.Status() }); err != nil {
			rn.fail(ipc.LimitFailure(err))
		}
		if err := rn.count(func(b *ipc.Budget) error { return b.DataBytes(len(text)) }); err != nil {
			rn.fail(ipc.LimitFailure(err)) // status payloads cross the bridge too
		}
		if err := ipc.CheckJSONDepth([]byte(text), ipc.MaxJSONDepth); err != nil {
			return nil, fmt.Errorf("reportStatus: the payload is %w", err)
		}
		rn.emit(&ipc.Event{Kind: ipc.KindStatus, Status: json.RawMessage(text)})
		return nil, nil
	case "request":
		method, _ := arg[string](args, 1)
		params, _ := arg[string](args, 2)
		if len(method) == 0 || len(method) > 256 {
			return nil, errors.New("dataProxy.request: method must be 1 to 256 characters")
		}
		if err := rn.count(func(b *ipc.Budget) error { return b.DataRequest(len(params)) }); err != nil {
			rn.fail(ipc.LimitFailure(err))
		}
		if err := ipc.CheckJSONDepth([]byte(params), ipc.MaxJSONDepth); err != nil {
			return nil, fmt.Errorf("dataProxy.request: params are %w", err)
		}
		rn.nextID++
		id := rn.nextID
		rn.pending[id] = ipc.KindDataRequest
		rn.emit(&ipc.Event{Kind: ipc.KindDataRequest, DataRequest: &ipc.DataRequest{ID: id, Method: method, Params: json.RawMessage(params)}})
		return id, nil
	case "fetch":
		req, _ := arg[string](args, 1)
		if err := rn.count(func(b *ipc.Budget) error { return b.Fetch() }); err != nil {
			rn.fail(ipc.LimitFailure(err))
		}
		rn.nextID++
		id := rn.nextID
		rn.pending[id] = ipc.KindFetchRequest
		rn.emit(&ipc.Event{Kind: ipc.KindFetchRequest, FetchRequest: &ipc.FetchRequest{ID: id, Request: json.RawMessage(req)}})
		return id, nil
	case "timer":
		id, _ := argInt(args, 1)
		delay, _ := argFloat(args, 2)
		if len(rn.timers) >= maxTimers {
			return nil, fmt.Errorf("too many pending timers (the limit is %d)", maxTimers)
		}
		if t, ok := rn.timers[id]; ok {
			t.Stop()
		}
		d := time.Duration(math.Min(delay, float64(rn.job.Limits.WallMs)+1) * float64(time.Millisecond))
		rn.timers[id] = time.AfterFunc(d, func() {
			select {
			case rn.wake <- id:
			case <-rn.exited:
			}
		})
		return nil, nil
	case "cleartimer":
		id, _ := argInt(args, 1)
		if t, ok := rn.timers[id]; ok {
			t.Stop()
			delete(rn.timers, id)
		}
		return nil, nil
	case "web":
		return rn.webCall(args)
	case "duckdb.open", "duckdb.load", "duckdb.query", "duckdb.table", "duckdb.exec", "duckdb.close", "glpk.solve", "glpk.write":
		return rn.moduleCall(op, args)
	case "done":
		ok, _ := arg[bool](args, 1)
		payload, _ := arg[string](args, 2)
		if ok {
			rn.done(payload)
		} else {
			rn.result = ipc.Failed(rn.thrown(payload, ipc.CodeRuntime), ipc.Stats{})
		}
		// Jobs the step left queued must not run on: stop draining them.
		rn.m.vm.Interrupt()
		return nil, nil
	}
	return nil, fmt.Errorf("unknown host operation %q", op)
}

// maxTimers bounds the timers a step may have pending at once.
const maxTimers = 10000

func (rn *run) done(value string) {
	if len(value) > rn.job.Limits.MaxResultBytes {
		rn.result = ipc.Failed(&ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: ipc.LimitResult,
			Message: fmt.Sprintf("the result is %d bytes, more than maxResultBytes=%d", len(value), rn.job.Limits.MaxResultBytes)}, ipc.Stats{})
		return
	}
	if err := ipc.CheckJSONDepth([]byte(value), ipc.MaxJSONDepth); err != nil {
		rn.result = ipc.Failed(&ipc.Failure{Code: ipc.CodeRuntime, Limit: ipc.LimitJSONDepth,
			Message: "the result is " + err.Error()}, ipc.Stats{})
		return
	}
	rn.result = &ipc.Event{Kind: ipc.KindResult, Result: &ipc.Result{Value: json.RawMessage(value)}}
}

// count counts on the run's budget.
func (rn *run) count(f func(*ipc.Budget) error) error {
	rn.budgetMu.Lock()
	defer rn.budgetMu.Unlock()
	return f(rn.budget)
}

// fillStats puts the run's statistics so far in ev. Safe from any
// goroutine.
func (rn *run) fillStats(ev *ipc.Event) {
	rn.budgetMu.Lock()
	st := rn.budget.Stats
	rn.budgetMu.Unlock()
	code := rn.codeNs.Load()
	if t0 := rn.callT0.Load(); t0 != 0 {
		code += time.Now().UnixNano() - t0
	}
	st.WallMs = ipc.Ms(time.Since(rn.start))
	st.CPUMs = ipc.Ms(rn.cpu.used())
	st.CodeMs = ipc.Ms(time.Duration(code))
	st.HeapMB = float64(max(rn.m.watch.peakBytes(), rn.oomFloor.Load())) / (1 << 20)
	*ev.TerminalStats() = st
}

func arg[T any](args []any, i int) (T, bool) {
	var zero T
	if i >= len(args) {
		return zero, false
	}
	v, ok := args[i].(T)
	return v, ok
}

func argFloat(args []any, i int) (float64, bool) {
	if i >= len(args) {
		return 0, false
	}
	switch v := args[i].(type) {
	case int:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

func argInt(args []any, i int) (int64, bool) {
	f, ok := argFloat(args, i)
	return int64(f), ok
}
