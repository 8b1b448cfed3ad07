//go:build linux

package security_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// The soak: several clients per engine submit a random mix of runs for a
// while, in both isolations at once, while a fault injector SIGKILLs the
// engines' child processes (JavaScript workers and Python zygotes) at
// random, the way an OOM killer would. Every accepted run must end with
// exactly one terminal event and an outcome its kind allows; afterwards
// the engines must still serve, and the host's goroutines, descriptors,
// memory and processes must be back where they were.

var soakFlag = flag.Duration("soak", 0, "how long TestSoak runs its faulted mixed load (default $STEPBOX_SOAK, else "+defaultSoak.String()+")")

// defaultSoak keeps CI fast; pass -soak=2m (or STEPBOX_SOAK=2m) for the long soak.
const defaultSoak = 15 * time.Second

func soakDuration(t *testing.T) time.Duration {
	if *soakFlag > 0 {
		return *soakFlag
	}
	if v := os.Getenv("STEPBOX_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("STEPBOX_SOAK=%q: want a positive duration such as 2m", v)
		}
		return d
	}
	return defaultSoak
}

const (
	soakPoolSize = 2
	soakClients  = 4 // per engine
)

// soakX stretches the soak's pauses under the race detector, which makes
// host code several times slower. It paces the load only: no outcome the
// soak asserts depends on it. Its bounds (how long a run or Close may take
// before the soak calls it a hang, how long the figures may take to
// settle) follow the machine through testenv.ScaleDuration instead.
var soakX = map[bool]time.Duration{false: 1, true: 6}[testenv.Race]

// soakPlan has time limits out of reach (the suite's plan): only the kinds
// that cross a limit on purpose set a small one.
var soakPlan = plan

// Between two kills the injector waits a random time in this range: long
// enough for a killed worker to be replaced most of the time, short enough
// for dozens of kills in the short soak.
var killEvery = map[bool][2]time.Duration{
	false: {150 * time.Millisecond, 700 * time.Millisecond},
	true:  {300 * time.Millisecond, 1200 * time.Millisecond},
}[testenv.Race]

// fault is what a client does to a run besides reading its events.
type fault int

const (
	noFault      fault = iota
	abortAtData        // Session.Abort at the first data request
	abortRandom        // Session.Abort after a random delay
	cancelRandom       // the Submit context ends after a random delay (or before Submit)
)

// soakKind is one kind of run in the mix and the outcomes it may have
// without faults. ok means success, with value (if set) the exact JSON of
// the result for input {"i": i}.
type soakKind struct {
	name   string
	lang   sandbox.Language
	code   string
	limits sandbox.Limits
	ok     bool
	codes  []sandbox.Code
	limit  string // the limit an error names, if any
	value  func(i int) string
	check  func(r *soakRun) string // further checks of a result; "" if fine
	fault  fault
}

const countTo20 = `let s = 0; for (let k = 0; k < 20; k++) s += await dataProxy.request("m", k); return s`

var soakKinds = []soakKind{
	{name: "ok", code: `return input.i * 2`, ok: true, value: func(i int) string { return strconv.Itoa(2 * i) }},
	{name: "data", code: `let s = input.i; for (let k = 0; k < 5; k++) s += await dataProxy.request("m", k); reportStatus({s}); return s`,
		ok: true, value: func(i int) string { return strconv.Itoa(i + 10) }},
	{name: "typescript", lang: sandbox.TypeScript,
		code: `interface In { i: number }
enum Step { One = 1, Two }
const v: In = input as In;
const d: number = await dataProxy.request("m", Step.Two);
return v.i + d;`, ok: true, value: func(i int) string { return strconv.Itoa(i + 2) }},
	{name: "console", code: `for (let k = 0; k < 40; k++) console.log("line", k, {k}); return 1`, limits: sandbox.Limits{MaxConsoleEvents: 10},
		ok: true, value: func(int) string { return "1" }, check: func(r *soakRun) string {
			// Ten lines, then one that says the rest is dropped.
			if st := r.res.Stats; r.consoles != 11 || st.ConsoleEvents != 10 || st.ConsoleDropped != 30 {
				return fmt.Sprintf("%d console events, consoleEvents=%d, consoleDropped=%d; want 11, 10 and 30", r.consoles, st.ConsoleEvents, st.ConsoleDropped)
			}
			return ""
		}},
	{name: "fetch-denied", code: `try { await fetch("http://10.0.0.1/"); return "fetched" } catch (e) { return [e instanceof TypeError, e.message] }`,
		ok: true, check: fetchDenied(`[true,"fetch failed: blocked by egress policy: address 10.0.0.1 is private`)},
	{name: "throw", code: `throw new Error("no " + input.i)`, codes: []sandbox.Code{sandbox.CodeRuntime}},
	{name: "cpu-loop", code: `while (true) {}`, limits: sandbox.Limits{CPUMs: 50}, codes: []sandbox.Code{sandbox.CodeTimeout}, limit: "cpuMs"},
	{name: "wall", code: `await new Promise(r => setTimeout(r, 1e6))`, limits: sandbox.Limits{WallMs: 200}, codes: []sandbox.Code{sandbox.CodeTimeout}, limit: "wallMs"},
	{name: "oom", code: `let s = "x"; while (true) s = s.repeat(2)`, limits: sandbox.Limits{MemoryMB: 8}, codes: []sandbox.Code{sandbox.CodeOOM}, limit: "memoryMb"},
	{name: "status-flood", code: `for (;;) reportStatus(1)`, limits: sandbox.Limits{MaxStatusEvents: 10}, codes: []sandbox.Code{sandbox.CodeLimitExceeded}, limit: "maxStatusEvents"},
	{name: "abort-at-data", code: `reportStatus("waiting"); await dataProxy.request("hold")`, codes: []sandbox.Code{sandbox.CodeAborted}, fault: abortAtData},
	{name: "abort-random", code: countTo20, ok: true, value: func(int) string { return "190" }, fault: abortRandom},
	{name: "cancel-random", code: countTo20, ok: true, value: func(int) string { return "190" }, fault: cancelRandom},

	{name: "py-data", lang: sandbox.Python, code: "v = await data_proxy.request(\"m\", input[\"i\"])\nreport_status({\"v\": v})\nreturn v * 3",
		ok: true, value: func(i int) string { return strconv.Itoa(3 * i) }},
	{name: "py-fetch-denied", lang: sandbox.Python, code: "try:\n    await fetch(\"http://10.0.0.1/\")\n    return \"fetched\"\nexcept FetchError as e:\n    return str(e)",
		ok: true, check: fetchDenied(`"fetch failed: blocked by egress policy: address 10.0.0.1 is private`)},
	{name: "py-throw", lang: sandbox.Python, code: "raise ValueError('no')", codes: []sandbox.Code{sandbox.CodeRuntime}},
	{name: "py-cpu-loop", lang: sandbox.Python, code: "while True:\n    pass", limits: sandbox.Limits{CPUMs: 100}, codes: []sandbox.Code{sandbox.CodeTimeout}, limit: "cpuMs"},
	{name: "py-oom", lang: sandbox.Python, code: "a = []\nwhile True:\n    a.append('x' * 100000)", limits: sandbox.Limits{MemoryMB: 32}, codes: []sandbox.Code{sandbox.CodeOOM}, limit: "memoryMb"},
	{name: "py-cancel-random", lang: sandbox.Python, code: "s = 0\nfor k in range(20):\n    s += await data_proxy.request(\"m\", k)\nreturn s",
		ok: true, value: func(int) string { return "190" }, fault: cancelRandom},
}

// heldKinds wait for an answer that never comes, until Close aborts them.
var heldKinds = []soakKind{
	{name: "held", code: `await dataProxy.request("hold")`},
	{name: "py-held", lang: sandbox.Python, code: `await data_proxy.request("hold")`},
}

// fetchDenied checks that the result starts with prefix and that the host
// saw exactly one fetch audit, a denial.
func fetchDenied(prefix string) func(r *soakRun) string {
	return func(r *soakRun) string {
		if v := string(r.res.Value); !strings.HasPrefix(v, prefix) {
			return "result " + v + "; want " + prefix + "..."
		}
		if r.denied != 1 || r.allowed != 0 {
			return fmt.Sprintf("%d denied and %d allowed fetch audits; want one denial", r.denied, r.allowed)
		}
		return ""
	}
}

// soakRun is what one run did.
type soakRun struct {
	kind      *soakKind
	iso       string
	closing   bool // submitted while the engine may be closing
	i         int
	submit    time.Time
	end       time.Time
	terminals int
	events    int
	last      sandbox.Event
	denied    int
	allowed   int
	consoles  int
	res       sandbox.Result
	err       error
}

// outcome labels a run in the figures: "ok" or its error code.
func (r *soakRun) outcome() string {
	var se *sandbox.Error
	if errors.As(r.err, &se) {
		return string(se.Code)
	}
	if r.err != nil {
		return "?"
	}
	return "ok"
}

// engineUnder is one engine of the soak and its isolation, in a phase of
// the soak: "" while it serves, "closing" while Close ends its runs.
type engineUnder struct {
	iso   isolation
	e     *sandbox.Engine
	phase string
}

// soaker holds the soak's state shared by its clients.
type soaker struct {
	t      *testing.T
	python bool
	kills  *injector

	seq atomic.Int64 // numbers the runs

	mu       sync.Mutex
	tally    map[string]map[string]int // guarded by mu: isolation and kind → outcome → runs
	runs     map[string]int            // guarded by mu: isolation → runs
	examples map[string]string         // guarded by mu: a message of each fault outcome
	problems int                       // guarded by mu
}

func (sk *soaker) fail(format string, args ...any) {
	sk.mu.Lock()
	sk.problems++
	n := sk.problems
	sk.mu.Unlock()
	if n <= 30 {
		sk.t.Errorf(format, args...)
	} else if n == 31 {
		sk.t.Errorf("... more problems; only the first 30 are shown")
	}
}

// hangAfter bounds a run from Submit to its terminal event: what a run of
// the mix may take on the reference machine (a few seconds), twice (one
// run ahead in the queue), with room for a worker start after a kill,
// scaled to this machine; and the grace.
var hangAfter = testenv.ScaleDuration(20*time.Second) + grace + slack

// killReach is how long before a run's submission a kill may still be what
// failed it: a worker killed while idle may be taken before it is reaped.
var killReach = testenv.ScaleDuration(2 * time.Second)

// runOne submits one run of kind k, reads its stream to the end, answering
// data requests, applies the kind's fault, and checks the outcome. It
// returns false if the engine refused the run because it is closed.
func (sk *soaker) runOne(eu engineUnder, k *soakKind, rng *rand.Rand) bool {
	return sk.runOneThen(eu, k, rng, nil)
}

// runOneThen is runOne, calling running (if not nil) at the run's first
// data request: the step is running then.
func (sk *soaker) runOneThen(eu engineUnder, k *soakKind, rng *rand.Rand, running func()) bool {
	r := &soakRun{kind: k, iso: eu.iso.name, closing: eu.phase == "closing", i: int(sk.seq.Add(1))}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := sandbox.Request{Language: k.lang, Code: k.code, Limits: k.limits, Input: json.RawMessage(fmt.Sprintf(`{"i":%d}`, r.i))}
	delay := time.Duration(-1)
	if k.fault == abortRandom || k.fault == cancelRandom {
		delay = time.Duration(rng.IntN(int(40*soakX))) * time.Millisecond
		if k.fault == cancelRandom && rng.IntN(8) == 0 {
			cancel() // before Submit
			delay = -1
		}
	}
	r.submit = time.Now()
	s, err := eu.e.Submit(ctx, req)
	if err != nil {
		if r.closing && errors.Is(err, sandbox.ErrUnavailable) && errors.Is(err, sandbox.ErrClosed) {
			sk.record(r, "refused: closed")
			return false
		}
		sk.fail("%s/%s: Submit refused the run: %v", r.iso, k.name, err)
		sk.record(r, "refused")
		return true
	}
	if delay >= 0 {
		tm := time.AfterFunc(delay, func() {
			if k.fault == cancelRandom {
				cancel()
			} else {
				s.Abort()
			}
		})
		defer tm.Stop()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range s.Events() {
			r.events++
			r.last = ev
			switch {
			case ev.Terminal():
				r.terminals++
			case ev.Kind == sandbox.EventConsole:
				r.consoles++
			case ev.Kind == sandbox.EventFetch:
				var rec struct{ Decision string }
				if json.Unmarshal(ev.Fetch, &rec) == nil && rec.Decision == "deny" {
					r.denied++
				} else {
					r.allowed++
				}
			case ev.DataRequest != nil:
				if running != nil {
					running()
					running = nil
				}
				if k.fault == abortAtData {
					s.Abort()
				} else {
					answer(s, ev.DataRequest)
				}
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(hangAfter):
		sk.fail("HOST HANG: %s/%s: no end of stream %v after Submit; aborting", r.iso, k.name, hangAfter)
		s.Abort()
		select {
		case <-done:
		case <-time.After(grace + slack):
			sk.fail("HOST HANG: %s/%s: Session.Abort did not end the run either", r.iso, k.name)
			sk.record(r, "hung")
			return true
		}
	}
	r.end = time.Now()
	r.res, r.err = s.Wait()
	if why := sk.verdict(r); why != "" {
		sk.fail("%s/%s (run %d): %s", r.iso, k.name, r.i, why)
	}
	sk.record(r, r.outcome())
	return true
}

func (sk *soaker) record(r *soakRun, outcome string) {
	sk.mu.Lock()
	defer sk.mu.Unlock()
	iso := r.iso
	if r.closing {
		iso += ", closing"
	}
	key := iso + "\t" + r.kind.name
	if sk.tally[key] == nil {
		sk.tally[key] = map[string]int{}
	}
	sk.tally[key][outcome]++
	sk.runs[iso]++
	var se *sandbox.Error
	if errors.As(r.err, &se) && (se.Code == sandbox.CodeCrashed || se.Code == sandbox.CodeUnavailable) {
		lang := "JavaScript"
		if r.kind.lang == sandbox.Python {
			lang = "Python"
		}
		key := fmt.Sprintf("%s %s (%s)", lang, se.Code, iso)
		if _, ok := sk.examples[key]; !ok {
			sk.examples[key], _, _ = strings.Cut(se.Message, "\n")
		}
	}
}

// verdict checks a finished run against the contract and its kind; it
// says what is wrong, or "".
func (sk *soaker) verdict(r *soakRun) string {
	k := r.kind
	if r.terminals != 1 || !r.last.Terminal() {
		return fmt.Sprintf("%d terminal events among %d, the last %q; want exactly one, last", r.terminals, r.events, r.last.Kind)
	}
	var se *sandbox.Error
	if r.err != nil {
		if !errors.As(r.err, &se) {
			return fmt.Sprintf("Wait returned %T %v, not a *sandbox.Error", r.err, r.err)
		}
		if r.last.Kind != sandbox.EventError || r.last.Error != se {
			return fmt.Sprintf("Wait returned %v but the terminal event is %s", r.err, r.last.Kind)
		}
	} else if r.last.Kind != sandbox.EventResult || string(r.last.Result.Value) != string(r.res.Value) {
		return fmt.Sprintf("Wait returned the result %s but the terminal event is %s", r.res.Value, r.last.Kind)
	}

	if se == nil {
		if !k.ok {
			return "it succeeded with " + string(r.res.Value) + "; want " + fmt.Sprint(k.codes)
		}
		if k.value != nil {
			if want := k.value(r.i); string(r.res.Value) != want {
				return "result " + string(r.res.Value) + "; want " + want
			}
		}
		if k.check != nil {
			return k.check(r)
		}
		return ""
	}

	if !knownCodes[se.Code] {
		return "unknown code " + string(se.Code)
	}
	if slices.Contains(k.codes, se.Code) {
		if k.limit != "" && se.Limit != k.limit {
			return fmt.Sprintf("%s with limit %q; want %q (%s)", se.Code, se.Limit, k.limit, se.Message)
		}
		return ""
	}
	// Close aborts the runs still going when its context ends.
	if se.Code == sandbox.CodeAborted && r.closing && errors.Is(se, sandbox.ErrClosed) {
		return ""
	}
	// Faults the client made.
	if se.Code == sandbox.CodeAborted && (k.fault == abortRandom || k.fault == cancelRandom) {
		if k.fault == cancelRandom && !errors.Is(se, context.Canceled) {
			return "ABORTED by the context, but errors.Is(err, context.Canceled) is false: " + se.Message
		}
		return ""
	}
	// Faults the injector made. A worker that dies fails its run
	// (CRASHED); a Python run lives in a worker and its zygote, and
	// either dying fails it (CRASHED), or, while the zygote is being
	// started for it (a worker's first Python run), makes Python
	// UNAVAILABLE for the run. Either needs a kill of such a process while
	// the run was in the engine (or just before: a worker killed while
	// idle may be taken before it is reaped).
	victims := []string{"worker"}
	if k.lang == sandbox.Python {
		victims = append(victims, "zygote")
	}
	if se.Code == sandbox.CodeCrashed && (k.lang == sandbox.Python || r.iso == "process") || se.Code == sandbox.CodeUnavailable && k.lang == sandbox.Python {
		kills := 0
		for _, v := range victims {
			kills += sk.kills.between(v, r.submit.Add(-killReach), r.end)
		}
		if kills == 0 {
			return fmt.Sprintf("%s with no %s killed: %s", se.Code, strings.Join(victims, " or "), se.Message)
		}
		return ""
	}
	want := fmt.Sprint(k.codes)
	if k.ok {
		want = "a result or " + want
	}
	return fmt.Sprintf("%s (limit %q): %s; want %s", se.Code, se.Limit, se.Message, want)
}

// client submits runs of random kinds to one engine, one at a time,
// until stop or until the engine is closed.
func (sk *soaker) client(eu engineUnder, seed uint64, stop time.Time) {
	rng := rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano())))
	for time.Now().Before(stop) {
		k := &soakKinds[rng.IntN(len(soakKinds))]
		if k.lang == sandbox.Python && !sk.python {
			continue
		}
		if !sk.runOne(eu, k, rng) {
			return
		}
	}
}

// load runs soakClients clients on each engine until stop, and fails the
// test if they do not all stop in time.
func (sk *soaker) load(engines []engineUnder, seed uint64, stop time.Time) {
	var wg sync.WaitGroup
	for _, eu := range engines {
		for c := range soakClients {
			wg.Add(1) // Done when the client stops.
			go func() {
				defer wg.Done()
				sk.client(eu, seed+uint64(c)+1, stop)
			}()
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Until(stop) + 2*hangAfter):
		sk.fail("HOST HANG: the clients did not stop %v after the soak's end", 2*hangAfter)
	}
}

// inject starts the fault injector; the function it returns stops it.
func (sk *soaker) inject(seed uint64) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sk.kills.run(quit, rand.New(rand.NewPCG(seed, 0)))
	}()
	return func() { close(quit); <-done }
}

// gate runs n Python steps at once, each waiting at a data request until
// all n are waiting: so each runs on its own runtime, whose zygote is
// started if it is not running. It returns an error unless all succeed.
func gate(eu engineUnder, n int) error {
	arrived := make(chan *sandbox.Session, n)
	type ended struct {
		res sandbox.Result
		err error
	}
	results := make(chan ended, n)
	for i := range n {
		s, err := eu.e.Submit(context.Background(), sandbox.Request{Language: sandbox.Python,
			Code: `return await data_proxy.request("gate", input)`, Input: json.RawMessage(strconv.Itoa(i))})
		if err != nil {
			return err
		}
		go func() {
			for ev := range s.Events() {
				if ev.DataRequest != nil {
					arrived <- s
				}
			}
			res, err := s.Wait()
			results <- ended{res, err}
		}()
	}
	var held []*sandbox.Session
	timeout := time.After(testenv.ScaleDuration(30 * time.Second))
	for len(held) < n {
		select {
		case s := <-arrived:
			held = append(held, s)
		case r := <-results:
			return fmt.Errorf("a gated Python run ended before all %d were running: %s %v", n, r.res.Value, r.err)
		case <-timeout:
			return fmt.Errorf("only %d of %d gated Python runs started", len(held), n)
		}
	}
	for _, s := range held {
		// Each run has one request, id 1.
		if err := s.Respond(1, "gated"); err != nil {
			return err
		}
	}
	for range n {
		r := <-results
		if r.err != nil || string(r.res.Value) != `"gated"` {
			return fmt.Errorf("a gated Python run: %s %v", r.res.Value, r.err)
		}
	}
	return nil
}

// soak runs the mixed, faulted load against one engine per isolation at
// once, and checks the host's figures before, during and after.
func soak(t *testing.T) {
	dur := soakDuration(t)
	port, _ := loopback(t) // the policy's port; the kinds fetch a private address
	before := measure()
	var engines []engineUnder
	for _, iso := range isolations {
		cfg := egressConfig(port)
		cfg.PoolSize = soakPoolSize
		// The default worker policy, without the standby: every worker
		// then gets a zygote at the gates, so the processes after the
		// warm-up and after the soak are the same ones, and so are the
		// host's goroutines and descriptors for them.
		cfg.Workers.Standby = -1
		cfg.Plans = map[string]sandbox.Limits{"default": soakPlan}
		engines = append(engines, engineUnder{iso: iso, e: newEngine(t, iso, cfg)})
	}
	t.Cleanup(func() {
		// Idempotent: the soak closes them itself unless it stopped early.
		for _, eu := range engines {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = eu.e.Close(ctx)
			cancel()
		}
	})
	sk := &soaker{t: t, kills: &injector{}, tally: map[string]map[string]int{}, runs: map[string]int{}, examples: map[string]string{}}

	// Warm up: each kind once, then Python on every slot (if this machine
	// has it; the kinds that cross a limit retire their workers, zygotes
	// and all), and every worker started.
	_, err := engines[0].e.Run(context.Background(), sandbox.Request{Language: sandbox.Python, Code: "return 1"}, nil)
	switch {
	case err == nil:
		sk.python = true
	case errors.Is(err, sandbox.ErrUnavailable) && errors.Is(err, errors.ErrUnsupported) && !testenv.RequireJail():
		t.Logf("Python is unavailable here; the soak runs without its Python kinds: %v", err)
	default:
		t.Fatalf("the first Python run: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, eu := range engines {
		for i := range soakKinds {
			if soakKinds[i].lang != sandbox.Python || sk.python {
				sk.runOne(eu, &soakKinds[i], rng)
			}
		}
		if sk.python {
			if err := gate(eu, soakPoolSize); err != nil {
				t.Fatalf("%s: warm-up: %v", eu.iso.name, err)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	var wantProcs figures // as the engines have them when start is measured
	start := settle(func(f figures) bool {
		wantProcs = sk.wantProcs(engines)
		return f.procsAre(wantProcs)
	}, 20*time.Second)
	if !start.procsAre(wantProcs) {
		t.Fatalf("after the warm-up: %s; want %s", start.procs(), wantProcs.procs())
	}
	sk.tally, sk.runs, sk.examples = map[string]map[string]int{}, map[string]int{}, map[string]string{}

	// The soak.
	seed := uint64(time.Now().UnixNano())
	t.Logf("soak: %v, %d clients per engine, seed %d", dur, soakClients, seed)
	began := time.Now()
	stopKills := sk.inject(seed)
	sk.load(engines, seed, began.Add(dur))
	elapsed := time.Since(began)
	stopKills()

	// The engines must still serve: once every worker is back, a plain run
	// on each (and Python on every slot) succeeds at the first try.
	settled := settle(func(f figures) bool { return f.workers == wantProcs.workers && f.zombies == 0 }, 20*time.Second)
	if settled.workers != wantProcs.workers || settled.zombies != 0 {
		t.Errorf("after the soak: %s; want %d workers and no zombies", settled.procs(), wantProcs.workers)
	}
	for _, eu := range engines {
		res, err := eu.e.Run(context.Background(), sandbox.Request{Code: "return input.a + 1", Input: json.RawMessage(`{"a":41}`)}, nil)
		if err != nil || string(res.Value) != "42" {
			t.Errorf("%s: the engine no longer serves after the soak: %s %v", eu.iso.name, res.Value, err)
		}
		if sk.python {
			if err := gate(eu, soakPoolSize); err != nil {
				t.Errorf("%s: Python no longer serves after the soak: %v", eu.iso.name, err)
			}
		}
	}
	var wantEnd figures // as the engines have them when end is measured
	end := settle(func(f figures) bool {
		wantEnd = sk.wantProcs(engines)
		return f.procsAre(wantEnd) && f.goroutines <= start.goroutines+goroutineSlack && f.fds <= start.fds+fdSlack
	}, 20*time.Second)

	// Close under load and faults: the runs still going when Close's
	// context ends are aborted, each with its one terminal event; later
	// submissions are refused.
	stopKills = sk.inject(seed + 1)
	var closing []engineUnder
	for _, eu := range engines {
		eu.phase = "closing"
		closing = append(closing, eu)
	}
	var loadDone sync.WaitGroup
	loadDone.Add(1) // Done when every client has stopped.
	go func() {
		defer loadDone.Done()
		sk.load(closing, seed+100, time.Now().Add(time.Hour))
	}()
	time.Sleep(closeAfter) // pacing: the load builds up
	// Runs that hold a slot until Close aborts them: once one runs on each
	// engine (the others queue), Close's deadline is sure to find runs in
	// flight as well as queued.
	for _, eu := range closing {
		var kinds []*soakKind
		for i := range heldKinds {
			if heldKinds[i].lang != sandbox.Python || sk.python {
				for range soakPoolSize {
					kinds = append(kinds, &heldKinds[i])
				}
			}
		}
		first := newFirstStart(len(kinds))
		for _, k := range kinds {
			loadDone.Add(1) // Done when the run has ended.
			go func() {
				defer loadDone.Done()
				defer first.ended()
				sk.runOneThen(eu, k, rand.New(rand.NewPCG(seed, 0)), first.started)
			}()
		}
		<-first.c
	}
	var closers sync.WaitGroup
	for _, eu := range engines {
		closers.Add(1) // Done when Close returns.
		go func() {
			defer closers.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond*soakX)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- eu.e.Close(ctx) }()
			select {
			case err := <-done:
				if err != nil && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s: Close: %v", eu.iso.name, err)
				}
			case <-time.After(hangAfter):
				t.Errorf("HOST HANG: %s: Engine.Close under load did not return in %v", eu.iso.name, hangAfter)
			}
		}()
	}
	closers.Wait()
	loadDone.Wait()
	stopKills()

	closed := settle(func(f figures) bool {
		return f.procsAre(figures{}) && f.goroutines <= before.goroutines && f.fds <= before.fds
	}, 20*time.Second)

	t.Log("\n" + sk.report(elapsed, []string{"before", "start", "end", "closed"}, []figures{before, start, end, closed}))

	// Flat: the figures after the soak are those after the warm-up, within
	// bounds; after Close, those before the engines.
	if !end.procsAre(wantEnd) {
		t.Errorf("after the soak, settled: %s; want %s", end.procs(), wantEnd.procs())
	}
	if end.goroutines > start.goroutines+goroutineSlack {
		t.Errorf("goroutines: %d after the soak, %d before it", end.goroutines, start.goroutines)
	}
	if end.fds > start.fds+fdSlack {
		t.Errorf("open descriptors: %d after the soak, %d before it; new: %s", end.fds, start.fds, newFDs(start.fdNames, end.fdNames))
	}
	if bound := start.heapMiB + max(heapSlackMiB, start.heapMiB/2); end.heapMiB > bound {
		t.Errorf("Go heap in use: %.1f MiB after the soak, %.1f before it; want at most %.1f", end.heapMiB, start.heapMiB, bound)
	}
	if bound := start.rssMiB + max(rssSlackMiB, start.rssMiB/2); end.rssMiB > bound {
		t.Errorf("resident memory: %.1f MiB after the soak, %.1f before it; want at most %.1f", end.rssMiB, start.rssMiB, bound)
	}
	if !closed.procsAre(figures{}) {
		t.Errorf("after Close: %s; want no child processes", closed.procs())
	}
	if closed.fds > before.fds {
		t.Errorf("open descriptors: %d after Close, %d before the engines; new: %s", closed.fds, before.fds, newFDs(before.fdNames, closed.fdNames))
	}
	if closed.goroutines > before.goroutines {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("%d goroutines after Close, %d before the engines:\n%s", closed.goroutines, before.goroutines, strings.TrimSpace(string(buf)))
	}
	if sk.kills.total() == 0 {
		t.Errorf("the injector killed no process")
	}
}

// Bounds of flatness: what the host may hold more after the soak than
// after the warm-up, once settled. Pool workers and zygotes are replaced,
// not added, so the process counts must be equal.
const (
	goroutineSlack = 4
	fdSlack        = 4
	heapSlackMiB   = 16
)

// rssSlackMiB is larger under the race detector, whose shadow memory grows
// with the memory the host has touched.
var rssSlackMiB = map[bool]float64{false: 64, true: 128}[testenv.Race]

// firstStart tells when the first of n runs has started, or all have
// ended without starting: c is closed then.
type firstStart struct {
	c    chan struct{}
	once sync.Once
	left atomic.Int64
}

func newFirstStart(n int) *firstStart {
	f := &firstStart{c: make(chan struct{})}
	f.left.Store(int64(n))
	if n == 0 {
		f.started()
	}
	return f
}

func (f *firstStart) started() { f.once.Do(func() { close(f.c) }) }

func (f *firstStart) ended() {
	if f.left.Add(-1) == 0 {
		f.started()
	}
}

// closeAfter is how long the clients run before the engines close under
// them.
var closeAfter = map[bool]time.Duration{false: time.Second, true: 2 * time.Second}[testenv.Race]

// wantProcs is the engines' processes when all are up: every worker slot
// of each pool filled (PoolSize and the standby: the process-isolated
// engine's pool, and, once Python has run, the in-process engine's Python
// pool), and the zygotes the pools say are up. Which workers have one
// depends on the load: a worker starts its zygote at its first Python run
// and loses it when it is retired (after a run that crossed a limit, say),
// so the soak checks that no zygote is on the host that the pools do not
// know of, and none they count is missing.
func (sk *soaker) wantProcs(engines []engineUnder) figures {
	var f figures
	for _, eu := range engines {
		h := eu.e.Health()
		wh := &h.Workers
		if h.Isolation == sandbox.IsolationInProcess {
			wh = h.Python.Workers // nil until a Python run
		}
		if wh != nil {
			f.workers += wh.Size + wh.Standby
			f.servers++ // at most one per pool
		}
		f.zygotes += h.Python.Zygotes
	}
	return f
}

// report is the figures table.
func (sk *soaker) report(elapsed time.Duration, names []string, figs []figures) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	sk.mu.Lock()
	outcomes := []string{"ok"}
	var keys []string
	for key, m := range sk.tally {
		keys = append(keys, key)
		for o := range m {
			if !slices.Contains(outcomes, o) {
				outcomes = append(outcomes, o)
			}
		}
	}
	slices.Sort(keys)
	slices.Sort(outcomes[1:])
	fmt.Fprintf(tw, "isolation\tkind\t%s\t\n", strings.Join(outcomes, "\t"))
	for _, key := range keys {
		fmt.Fprintf(tw, "%s\t", key)
		for _, o := range outcomes {
			fmt.Fprintf(tw, "%d\t", sk.tally[key][o])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	total := 0
	for _, iso := range slices.Sorted(maps.Keys(sk.runs)) {
		n := sk.runs[iso]
		if strings.HasSuffix(iso, "closing") {
			fmt.Fprintf(&b, "%s: %d runs\n", iso, n)
			continue
		}
		total += n
		fmt.Fprintf(&b, "%s: %d runs, %.1f runs/s\n", iso, n, float64(n)/elapsed.Seconds())
	}
	for _, key := range slices.Sorted(maps.Keys(sk.examples)) {
		fmt.Fprintf(&b, "e.g. %s: %s\n", key, sk.examples[key])
	}
	sk.mu.Unlock()
	fmt.Fprintf(&b, "all: %d runs in %v, %.1f runs/s\n", total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds())
	fmt.Fprintf(&b, "kills: %s\n\n", sk.kills.summary())

	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "host\t%s\t\n", strings.Join(names, "\t"))
	row := func(name string, v func(f figures) string) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, f := range figs {
			fmt.Fprintf(tw, "%s\t", v(f))
		}
		fmt.Fprintln(tw)
	}
	row("goroutines", func(f figures) string { return strconv.Itoa(f.goroutines) })
	row("open fds", func(f figures) string { return strconv.Itoa(f.fds) })
	row("heap in use MiB", func(f figures) string { return fmt.Sprintf("%.1f", f.heapMiB) })
	row("RSS MiB", func(f figures) string { return fmt.Sprintf("%.1f", f.rssMiB) })
	row("workers", func(f figures) string { return strconv.Itoa(f.workers) })
	row("zygotes", func(f figures) string { return strconv.Itoa(f.zygotes) })
	row("other children", func(f figures) string { return strconv.Itoa(f.others) })
	row("zombies", func(f figures) string { return strconv.Itoa(f.zombies) })
	tw.Flush()
	return b.String()
}

// ---- the host's figures ----------------------------------------------------

// figures is a snapshot of the host process.
type figures struct {
	goroutines int
	fds        int
	fdNames    map[string]string // descriptor → what it refers to
	heapMiB    float64           // Go heap in use, after a collection
	rssMiB     float64
	workers    int // child processes that are JavaScript workers
	zygotes    int // child processes that are Python zygotes
	servers    int // child processes that are the pools' fork servers
	others     int // any other child process
	zombies    int // children not yet reaped (any kind)
}

func (f figures) procs() string {
	return fmt.Sprintf("%d workers, %d zygotes, %d fork servers, %d other children, %d zombies", f.workers, f.zygotes, f.servers, f.others, f.zombies)
}

// procsAre reports whether f has exactly want's workers and zygotes, at
// most its fork servers (a pool starts one at its second jailed start,
// and again after one was killed) and no zombies.
func (f figures) procsAre(want figures) bool {
	return f.workers == want.workers && f.zygotes == want.zygotes && f.servers <= want.servers && f.others == 0 && f.zombies == 0
}

func measure() figures {
	debug.FreeOSMemory() // a collection, and freed memory back to the system
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f := figures{goroutines: runtime.NumGoroutine(), heapMiB: float64(ms.HeapInuse) / (1 << 20), rssMiB: rssMiB()}
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		f.fdNames = map[string]string{}
		for _, ent := range ents {
			if target, err := os.Readlink("/proc/self/fd/" + ent.Name()); err == nil {
				f.fdNames[ent.Name()] = target
			}
		}
		f.fds = len(f.fdNames)
	}
	for _, c := range children() {
		switch {
		case c.zombie:
			f.zombies++
		case c.what == "worker":
			f.workers++
		case c.what == "zygote":
			f.zygotes++
		case c.what == "forkserver":
			f.servers++
		default:
			f.others++
		}
	}
	return f
}

// settle measures until ok holds and the figures have stopped moving (a
// zygote passes the host the pipes of its next spare process a moment
// after each run), or timeout (on the reference machine, scaled to this
// one) passes, and returns the last figures.
func settle(ok func(figures) bool, timeout time.Duration) figures {
	deadline := time.Now().Add(testenv.ScaleDuration(timeout))
	var last figures
	steady := 0
	for {
		f := measure()
		if f.goroutines == last.goroutines && f.fds == last.fds && f.procsAre(last) {
			steady++
		} else {
			steady = 0
		}
		last = f
		if ok(f) && steady >= 3 || time.Now().After(deadline) {
			return f
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// newFDs describes the descriptors open in now and not in then.
func newFDs(then, now map[string]string) string {
	var out []string
	for fd, target := range now {
		if then[fd] != target {
			out = append(out, fd+" → "+target)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

// child is a child process of the test, as /proc shows it.
type child struct {
	pid    int
	zombie bool
	what   string // "worker", "zygote" or the command's name
}

// children lists the test process's children from /proc, as anything
// outside the process (an OOM killer, an operator) would find them.
func children() []child {
	me := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []child
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := procStat(pid)
		if !ok || ppid != me {
			continue
		}
		out = append(out, child{pid: pid, zombie: state == 'Z', what: classify(pid)})
	}
	return out
}

// procStat reads a process's parent and state from /proc/pid/stat.
func procStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}

// classify names a child by its command line: the pool starts workers as
// "stepbox-worker", Python zygotes start as "stepbox-pyzygote" and become
// python3.
func classify(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return "gone"
	}
	arg0, _, _ := strings.Cut(string(b), "\x00")
	switch {
	case arg0 == "stepbox-worker":
		return "worker"
	case arg0 == "stepbox-pyzygote" || strings.Contains(arg0, "python"):
		return "zygote"
	case arg0 == "stepbox-forkserver":
		return "forkserver"
	case arg0 == "":
		return "(no command line)"
	}
	return arg0
}

// ---- the fault injector ----------------------------------------------------

// injector SIGKILLs random children of the test process at random
// intervals, and remembers when.
type injector struct {
	mu   sync.Mutex
	log  []killed       // guarded by mu: every kill, when it was decided
	what map[string]int // guarded by mu: kills by kind of process
}

type killed struct {
	at   time.Time
	what string
}

func (in *injector) run(stop <-chan struct{}, rng *rand.Rand) {
	for {
		wait := killEvery[0] + time.Duration(rng.Int64N(int64(killEvery[1]-killEvery[0])))
		select {
		case <-stop:
			return
		case <-time.After(wait):
		}
		var live []child
		for _, c := range children() {
			if !c.zombie {
				live = append(live, c)
			}
		}
		if len(live) == 0 {
			continue
		}
		c := live[rng.IntN(len(live))]
		// Recorded before the signal, so that a run that sees its effect
		// finds the kill.
		in.mu.Lock()
		in.log = append(in.log, killed{time.Now(), c.what})
		in.mu.Unlock()
		if kill(c.pid) {
			in.mu.Lock()
			if in.what == nil {
				in.what = map[string]int{}
			}
			in.what[c.what]++
			in.mu.Unlock()
		}
	}
}

// kill SIGKILLs pid if it is still a child of the test process: through a
// pidfd, so that a pid reused since the listing is never signalled.
func kill(pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if ppid, _, ok := procStat(pid); !ok || ppid != os.Getpid() {
		return false
	}
	return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil
}

// between counts the kills decided in [from, to] of processes that may be
// of this kind ("worker" or "zygote"): that kind, or one caught starting,
// before it showed its command line.
func (in *injector) between(what string, from, to time.Time) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	for _, k := range in.log {
		if k.at.Before(from) || k.at.After(to) {
			continue
		}
		if k.what == what || k.what != "worker" && k.what != "zygote" {
			n++
		}
	}
	return n
}

func (in *injector) total() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	for _, c := range in.what {
		n += c
	}
	return n
}

func (in *injector) summary() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	var parts []string
	for _, w := range slices.Sorted(maps.Keys(in.what)) {
		n += in.what[w]
		parts = append(parts, fmt.Sprintf("%s %d", w, in.what[w]))
	}
	return fmt.Sprintf("%d (%s)", n, strings.Join(parts, ", "))
}
