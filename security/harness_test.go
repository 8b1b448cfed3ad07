package security_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// plan gives time limits no machine that can run the suite reaches, so
// that a loaded machine or the race detector does not turn a row that is
// not about time into a timeout. Rows that cross a time limit on purpose
// lower it, with a step that never ends by itself (and so end fast). caps
// let the plan keep these limits: the default caps are lower.
var (
	plan = sandbox.Limits{CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs}
	caps = plan
)

// isolation is one way an Engine runs steps. Every catalogue, the
// cross-run test and the soak run once per isolation.
type isolation struct {
	name  string
	apply func(*sandbox.Config) // nil: the config as given
}

// isolations lists the isolations under test: the default, jailed worker
// processes, first; then in-process, whose failures (a loop it cannot
// interrupt keeps a CPU busy) must not slow the other down.
var isolations = []isolation{
	{name: "process", apply: func(c *sandbox.Config) { c.Isolation = sandbox.IsolationProcess }},
	{name: "inprocess", apply: func(c *sandbox.Config) { c.Isolation = sandbox.IsolationInProcess }},
}

// newEngine is the one place the suite builds an Engine: the isolation
// decides where steps run, and a nil Plans gets the suite's generous plan as
// "default".
func newEngine(t testing.TB, iso isolation, cfg sandbox.Config) *sandbox.Engine {
	t.Helper()
	if cfg.Plans == nil {
		cfg.Plans = map[string]sandbox.Limits{"default": plan}
	}
	if cfg.Caps == (sandbox.Limits{}) {
		cfg.Caps = caps
	}
	if cfg.Grace == 0 {
		cfg.Grace = grace
	}
	if iso.apply != nil {
		iso.apply(&cfg)
	}
	e, err := sandbox.New(cfg)
	if err != nil {
		t.Fatalf("%s: new engine: %v", iso.name, err)
	}
	return e
}

// Time allowed past a run's wall-clock limit. grace is the engines' own:
// how long a run may outlive its wall limit before the engine gives up on
// it (kills its worker, or abandons its in-process runtime) and reports
// LIMIT_EXCEEDED (limit "time"). The default, a second, is for a service;
// the suite scales it to this machine, so that a run that stops at its
// limit, but late on a loaded machine or under the race detector, still
// ends TIMEOUT. Only the native loops, which nothing stops but the grace,
// keep the default. slack, on top, is what the suite allows the host
// around a run (a worker start after a kill, above all) before it calls
// the run a host hang.
var (
	grace = testenv.ScaleDuration(sandbox.DefaultGrace)
	slack = testenv.ScaleDuration(time.Second)
)

// closeEngine closes e and fails t if Close does not return in time: a run
// that cannot be ended keeps Close waiting forever.
func closeEngine(t testing.TB, e *sandbox.Engine) {
	t.Helper()
	within := testenv.ScaleDuration(5 * time.Second)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		done <- e.Close(ctx)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close had to abort runs that should have ended on their own: %v", err)
		}
	case <-time.After(within + grace + slack):
		t.Errorf("HOST HANG: Engine.Close did not return: a run cannot be ended")
	}
}

// ---- the catalogue -------------------------------------------------------

// attack is one row of a catalogue: a step, the limits it runs under and
// the safe outcome it must have.
type attack struct {
	name   string
	code   string
	limits sandbox.Limits // lowers the plan for this row; zero fields keep it
	want   expect
}

// section is one catalogue: rows that share an engine configuration and a
// language.
type section struct {
	name string
	lang sandbox.Language
	cfg  sandbox.Config
	// subst, if set, rewrites each row's code before it runs (e.g. $PORT).
	subst *strings.Replacer
	rows  []attack
	after func(*testing.T) // if set, runs after the rows
}

// expect is the safe outcome of a row: success with an exact JSON value,
// or an error with an exact code and limit; optionally a message prefix
// and further checks. Build one with returns, fails or throws.
type expect struct {
	code   sandbox.Code // "": the run succeeds
	limit  string
	value  string // exact JSON of a success; "" for any
	msg    string // prefix of the error message
	checks []check
	or     []expect // alternatives: any one of them (e.g. per isolation)
}

// check inspects a finished run further.
type check func(t *testing.T, o *outcome)

// returns expects success with exactly this JSON value.
func returns(value string) expect { return expect{value: value} }

// succeeds expects success with any value; add checks to inspect it.
func succeeds() expect { return expect{} }

// fails expects an error with this code and limit ("" for none).
func fails(code sandbox.Code, limit string) expect { return expect{code: code, limit: limit} }

// throws expects RUNTIME, no limit, and a message starting with prefix.
func throws(prefix string) expect { return expect{code: sandbox.CodeRuntime, msg: prefix} }

// message adds a message prefix to an error expectation.
func (e expect) message(prefix string) expect { e.msg = prefix; return e }

// and adds checks.
func (e expect) and(cs ...check) expect {
	e.checks = append(e.checks[:len(e.checks):len(e.checks)], cs...)
	return e
}

// orElse accepts other outcomes as well. Use it only where more than one
// outcome is honestly safe, e.g. a limit the in-process engine reports
// itself and the process pool enforces by killing the worker.
func (e expect) orElse(alts ...expect) expect {
	e.or = append(e.or[:len(e.or):len(e.or)], alts...)
	return e
}

func (e expect) String() string {
	var s string
	switch {
	case e.code == "" && e.value != "":
		s = "result " + e.value
	case e.code == "":
		s = "success"
	default:
		s = string(e.code)
		if e.limit != "" {
			s += " (limit " + e.limit + ")"
		}
		if e.msg != "" {
			s += fmt.Sprintf(" %q...", e.msg)
		}
	}
	for _, a := range e.or {
		s += " or " + a.String()
	}
	return s
}

// matches reports whether o is e, ignoring the extra checks; why says how
// it is not.
func (e expect) matches(o *outcome) (ok bool, why string) {
	if o.err == nil {
		if e.code != "" {
			return false, "it succeeded with " + string(o.res.Value)
		}
		if e.value != "" && string(o.res.Value) != e.value {
			return false, "it returned " + string(o.res.Value)
		}
		return true, ""
	}
	got := fmt.Sprintf("%s (limit %q): %s", o.err.Code, o.err.Limit, o.err.Message)
	if e.code != o.err.Code || e.limit != o.err.Limit {
		return false, "it failed with " + got
	}
	if !strings.HasPrefix(o.err.Message, e.msg) {
		return false, "it failed with " + got
	}
	return true, ""
}

// outcome is what a run did.
type outcome struct {
	events  []sandbox.Event // in order, terminal last
	res     sandbox.Result
	err     *sandbox.Error // nil on success
	refused bool           // Submit refused the run (err is set, no events)
	elapsed time.Duration  // Submit to terminal event
}

func (o *outcome) count(k sandbox.EventKind) int {
	n := 0
	for _, ev := range o.events {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

func (o *outcome) stats() sandbox.Stats {
	if o.err != nil {
		return o.err.Stats
	}
	return o.res.Stats
}

// ---- checks --------------------------------------------------------------

// noEvents checks that the run emitted no events of these kinds.
func noEvents(kinds ...sandbox.EventKind) check {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		for _, k := range kinds {
			if n := o.count(k); n != 0 {
				t.Errorf("%d %s events; want none", n, k)
			}
		}
	}
}

// events checks the number of events of a kind.
func events(k sandbox.EventKind, n int) check {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		if got := o.count(k); got != n {
			t.Errorf("%d %s events; want %d", got, k, n)
		}
	}
}

// paramsSeen checks the params of every data request the host saw.
func paramsSeen(want ...string) check {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		var got []string
		for _, ev := range o.events {
			if ev.DataRequest != nil {
				got = append(got, string(ev.DataRequest.Params))
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("the host saw params %q; want %q", got, want)
		}
	}
}

// statusSeen checks the payloads of every status event.
func statusSeen(want ...string) check {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		var got []string
		for _, ev := range o.events {
			if ev.Kind == sandbox.EventStatus {
				got = append(got, string(ev.Status))
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("the host saw status %q; want %q", got, want)
		}
	}
}

// consoleStats checks the console counters.
func consoleStats(delivered, dropped int) check {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		st := o.stats()
		if st.ConsoleEvents != delivered || st.ConsoleDropped != dropped {
			t.Errorf("consoleEvents=%d consoleDropped=%d; want %d and %d", st.ConsoleEvents, st.ConsoleDropped, delivered, dropped)
		}
	}
}

// consoleBytesAtMost checks the console text the host received in all.
func consoleBytesAtMost(n int) check {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		total := 0
		for _, ev := range o.events {
			if ev.Console != nil && !strings.HasPrefix(ev.Console.Text, "[stepbox]") {
				total += len(ev.Console.Text)
			}
		}
		if total > n {
			t.Errorf("%d bytes of console text reached the host; want at most %d", total, n)
		}
	}
}

// stackHas checks that the error's stack contains s.
func stackHas(s string) check {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		if o.err == nil || !strings.Contains(o.err.Stack, s) {
			t.Errorf("stack does not contain %q: %+v", s, o.err)
		}
	}
}

// fetchAudits checks that every fetch event is a denial and counts them.
func fetchAudits(denied int) check {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		n := 0
		for _, ev := range o.events {
			if ev.Kind != sandbox.EventFetch {
				continue
			}
			var rec struct{ Decision string }
			if err := json.Unmarshal(ev.Fetch, &rec); err != nil || rec.Decision != "deny" {
				t.Errorf("audit %s: want a denial", ev.Fetch)
			}
			n++
		}
		if n != denied {
			t.Errorf("%d fetch audits; want %d", n, denied)
		}
	}
}

// ---- running rows --------------------------------------------------------

// target runs rows on an engine, and replaces the engine if a row leaves
// it with a run that cannot be ended, so that one host hang does not hide
// the rows after it.
type target struct {
	iso  isolation
	cfg  sandbox.Config // Grace set
	mu   sync.Mutex
	eng  *sandbox.Engine   // guarded by mu
	used []*sandbox.Engine // guarded by mu: every engine, for the final checks
	hung map[*sandbox.Engine]bool
}

func newTarget(t *testing.T, iso isolation, cfg sandbox.Config) *target {
	if cfg.PoolSize == 0 {
		cfg.PoolSize = 2
	}
	if cfg.Grace == 0 {
		cfg.Grace = grace
	}
	tg := &target{iso: iso, cfg: cfg, hung: map[*sandbox.Engine]bool{}}
	tg.eng = newEngine(t, iso, cfg)
	tg.used = []*sandbox.Engine{tg.eng}
	return tg
}

func (tg *target) engine() *sandbox.Engine {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.eng
}

// poison marks the current engine as holding a run that cannot be ended
// and moves later rows to a fresh engine.
func (tg *target) poison(t *testing.T) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.hung[tg.eng] = true
	tg.eng = newEngine(t, tg.iso, tg.cfg)
	tg.used = append(tg.used, tg.eng)
}

// finish asserts that every engine the rows used still runs a normal step,
// and closes those that can close.
func (tg *target) finish(t *testing.T) {
	t.Helper()
	tg.mu.Lock()
	used := tg.used
	tg.mu.Unlock()
	for i, e := range used {
		res, err := e.Run(context.Background(), sandbox.Request{Code: "return input.a + 1", Input: json.RawMessage(`{"a":41}`)}, nil)
		if err != nil || string(res.Value) != "42" {
			t.Errorf("engine %d no longer works after the catalogue: %s %v", i, res.Value, err)
		}
		if !tg.hung[e] {
			closeEngine(t, e)
		}
	}
}

// deadline is how long a run with these limits may take from Submit to
// its terminal event before the suite calls it a host hang: its wall
// limit, or what a row that sets none may take on this machine (the plan's
// wall limit is out of reach), plus the engine's grace and the slack.
func (tg *target) deadline(l sandbox.Limits) time.Duration {
	wall := rowTime
	if l.WallMs != 0 {
		wall = time.Duration(l.WallMs) * time.Millisecond
	}
	return wall + tg.cfg.Grace + slack
}

// rowTime bounds a row that sets no wall limit: twenty seconds on the
// reference machine, scaled to this one. No row takes a second there.
var rowTime = testenv.ScaleDuration(20 * time.Second)

// answer is the host side of every data request in the suite: method
// "hold" is never answered, "fail" is refused, anything else gets its params
// back.
func answer(s *sandbox.Session, dr *sandbox.DataRequest) {
	switch dr.Method {
	case "hold":
	case "fail":
		_ = s.RespondError(dr.ID, "refused by the host")
	default:
		if err := s.Respond(dr.ID, dr.Params); err != nil {
			_ = s.RespondError(dr.ID, err.Error()) // e.g. params that are not JSON
		}
	}
}

// run submits req, reads every event, answers data requests, and checks
// the invariants every run must keep: exactly one terminal event, last;
// Wait agreeing with it; a terminal event within the wall limit plus grace;
// a sane error. It returns nil if the run hung.
func (tg *target) run(t *testing.T, req sandbox.Request) *outcome {
	t.Helper()
	e := tg.engine()
	o := &outcome{}
	start := time.Now()
	s, err := e.Submit(context.Background(), req)
	if err != nil {
		o.refused = true
		if !errors.As(err, &o.err) {
			t.Fatalf("Submit: %T %v is not a *sandbox.Error", err, err)
		}
		return o
	}
	done := make(chan struct{})
	var terminals int
	go func() {
		defer close(done)
		for ev := range s.Events() {
			o.events = append(o.events, ev)
			if ev.Terminal() {
				terminals++
			}
			if dr := ev.DataRequest; dr != nil {
				answer(s, dr)
			}
		}
	}()
	limit := tg.deadline(req.Limits)
	select {
	case <-done:
	case <-time.After(limit):
		t.Errorf("HOST HANG: no terminal event %v after Submit (wall limit plus %v); aborting", limit.Round(time.Millisecond), tg.cfg.Grace+slack)
		s.Abort()
		select {
		case <-done:
			t.Errorf("the run ended only when aborted, %v after Submit", time.Since(start).Round(time.Millisecond))
		case <-time.After(tg.cfg.Grace + slack):
			t.Errorf("HOST HANG: Session.Abort did not end the run either; moving the remaining rows to a new engine")
			tg.poison(t)
			return nil
		}
	}
	o.elapsed = time.Since(start)
	if terminals != 1 || len(o.events) == 0 || !o.events[len(o.events)-1].Terminal() {
		t.Fatalf("want exactly one terminal event, last; got %d terminal in %v", terminals, kinds(o.events))
	}
	for _, ev := range o.events {
		// Nothing but JSON crosses the bridge.
		if ev.Kind == sandbox.EventStatus && !json.Valid(ev.Status) {
			t.Errorf("a status event carries %q, which is not JSON", ev.Status)
		}
		if dr := ev.DataRequest; dr != nil && !json.Valid(dr.Params) {
			t.Errorf("a data request carries params %q, which are not JSON", dr.Params)
		}
	}
	res, err := s.Wait()
	last := o.events[len(o.events)-1]
	if err != nil {
		if !errors.As(err, &o.err) {
			t.Fatalf("Wait: %T %v is not a *sandbox.Error", err, err)
		}
		if last.Kind != sandbox.EventError || last.Error != o.err {
			t.Errorf("Wait returned %v but the terminal event is %s", err, last.Kind)
		}
		checkError(t, o.err)
	} else {
		o.res = res
		if last.Kind != sandbox.EventResult || string(last.Result.Value) != string(res.Value) {
			t.Errorf("Wait returned a result but the terminal event is %s", last.Kind)
		}
		if !json.Valid(res.Value) {
			t.Errorf("the result is not JSON: %q", res.Value)
		}
	}
	return o
}

var knownCodes = map[sandbox.Code]bool{
	sandbox.CodeValidation: true, sandbox.CodeRuntime: true, sandbox.CodeTimeout: true, sandbox.CodeOOM: true,
	sandbox.CodeLimitExceeded: true, sandbox.CodeAborted: true, sandbox.CodeCrashed: true, sandbox.CodeUnavailable: true,
}

// checkError checks what every error must be: a known code, a limit where
// the code needs one, and a position inside the user's source.
func checkError(t *testing.T, se *sandbox.Error) {
	t.Helper()
	if !knownCodes[se.Code] {
		t.Errorf("unknown error code %q", se.Code)
	}
	switch se.Code {
	case sandbox.CodeTimeout, sandbox.CodeOOM, sandbox.CodeLimitExceeded:
		if se.Limit == "" {
			t.Errorf("%s without a limit: %s", se.Code, se.Message)
		}
	}
	if p := se.Position; p != nil && (p.Line < 1 || p.Column < 0) {
		t.Errorf("position %d:%d is outside the user's source (%s)", p.Line, p.Column, se.Message)
	}
	if !errors.Is(se, &sandbox.Error{Code: se.Code}) {
		t.Errorf("errors.Is does not match the code")
	}
}

// runSection runs every row of sec on one engine (per isolation), then
// checks that the engine still works.
func runSection(t *testing.T, iso isolation, sec section) {
	tg := newTarget(t, iso, sec.cfg)
	for _, a := range sec.rows {
		t.Run(a.name, func(t *testing.T) {
			code := a.code
			if sec.subst != nil {
				code = sec.subst.Replace(code)
			}
			o := tg.run(t, sandbox.Request{Language: sec.lang, Code: code, Limits: a.limits})
			if o == nil {
				return // reported as a hang
			}
			assertOutcome(t, a.want, o)
		})
	}
	tg.finish(t)
}

// assertOutcome fails t unless o is one of the outcomes want allows, and
// runs the checks of the one that matched.
func assertOutcome(t *testing.T, want expect, o *outcome) {
	t.Helper()
	for _, w := range append([]expect{want}, want.or...) {
		if ok, _ := w.matches(o); ok {
			for _, c := range w.checks {
				c(t, o)
			}
			return
		}
	}
	_, why := want.matches(o)
	t.Errorf("want %s; %s", want, why)
	if o.err != nil && o.err.Stack != "" {
		t.Logf("stack:\n%s", o.err.Stack)
	}
}

func kinds(evs []sandbox.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Kind)
	}
	return out
}
