package security_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// The pool attacks: one tenant, mallory, tries to keep another, victim,
// from running, by holding slots with runs that never end by themselves.
// Each row is one way to hold a slot. Against each, on a pool of two with
// a share of one slot per tenant:
//
//   - mallory's runs hold one slot and no more, the rest waiting in the
//     queue, while the victim's runs complete beside them (poolShare);
//   - each of mallory's runs, given the row's limits, ends with the row's
//     outcome: a run whose events nobody reads at the stall limit, ABORTED
//     and saying why; the others at their own limits.

// stallLimit is the stall limit of the engines under these attacks: short,
// it is crossed on purpose.
const stallLimit = 200 * time.Millisecond

// stalled is the outcome of a run whose caller stopped reading.
var stalled = fails(sandbox.CodeAborted, "").
	message("the run was aborted: the caller did not read its events for 200ms (stallTimeout)").
	and(func(t *testing.T, o *outcome) {
		t.Helper()
		if !errors.Is(o.err, sandbox.ErrStalled) {
			t.Errorf("errors.Is(err, sandbox.ErrStalled) is false: %v", o.err)
		}
	})

// unreadHogs hold a slot by not reading their events: each blocks on its
// full event buffer.
var unreadHogs = []attack{
	{"console flood", `for (let i = 0; ; i++) console.log(i)`, nil0, stalled},
	{"status flood", `for (let i = 0; ; i++) reportStatus(i)`, nil0, stalled},
	{"data requests", `await Promise.all(Array.from({length: 50}, (_, i) => dataProxy.request("m", i)))`, nil0, stalled},
	{"console from a timer", `setInterval(() => console.log("tick"), 0); await new Promise(() => {})`, nil0, stalled},
	{"console lines near the bytes limit", `const s = "x".repeat(60000); for (;;) console.log(s)`, nil0, stalled},
}

// unreadPythonHogs are unreadHogs in Python.
var unreadPythonHogs = []attack{
	{"print flood", "i = 0\nwhile True:\n    print(i)\n    i += 1", nil0, stalled},
	{"status flood", "i = 0\nwhile True:\n    report_status(i)\n    i += 1", nil0, stalled},
}

// readingHogs hold a slot with their events read: the stall limit does
// not apply, their own limits end them, and the share is what keeps the
// victim running meanwhile.
var readingHogs = []attack{
	{"idle", `await new Promise(() => setInterval(() => {}, 1000))`, wall300, fails(sandbox.CodeTimeout, "wallMs")},
	{"CPU loop", `while (true) {}`, cpu100, fails(sandbox.CodeTimeout, "cpuMs")},
	{"unanswered data request", `await dataProxy.request("hold")`, wall300, fails(sandbox.CodeTimeout, "wallMs")},
	{"slow console", `for (let i = 0; ; i++) { console.log(i); await new Promise(r => setTimeout(r, 1)) }`, wall300, fails(sandbox.CodeTimeout, "wallMs")},
}

// poolAttack is a table of rows with how its runs are read.
type poolAttack struct {
	name string
	lang sandbox.Language
	read bool // mallory reads every event (and answers nothing)
	rows []attack
}

var poolAttacks = []poolAttack{
	{name: "unread", rows: unreadHogs},
	{name: "unread python", lang: sandbox.Python, rows: unreadPythonHogs},
	{name: "reading", read: true, rows: readingHogs},
}

// poolShare runs the pool attacks on two engines of the isolation: one
// without a stall limit, where mallory's runs hold their slots until
// aborted, and one with it, where they end by themselves.
func poolShare(t *testing.T, iso isolation) {
	cfg := sandbox.Config{PoolSize: 2, EventBuffer: 4, TenantSlots: 1, StallTimeout: -1}
	hold := newEngine(t, iso, cfg)
	cfg.StallTimeout = stallLimit
	end := newEngine(t, iso, cfg)
	for _, pa := range poolAttacks {
		for _, a := range pa.rows {
			t.Run(pa.name+"/"+a.name, func(t *testing.T) {
				t.Run("victim runs beside", func(t *testing.T) { holdShare(t, hold, pa, a) })
				t.Run("ends", func(t *testing.T) { endsAlone(t, end, pa, a) })
			})
		}
	}
	for _, e := range []*sandbox.Engine{hold, end} {
		res, err := e.Run(context.Background(), sandbox.Request{Code: "return input.a + 1", Input: json.RawMessage(`{"a":41}`)}, nil)
		if err != nil || string(res.Value) != "42" {
			t.Errorf("an engine no longer works after the pool attacks: %s %v", res.Value, err)
		}
		closeEngine(t, e)
	}
}

// malloryRun is one of mallory's runs: its session and, once it has ended,
// what it did.
type malloryRun struct {
	s    *sandbox.Session
	done chan struct{} // closed when o is set
	o    *outcome
}

// submitMallory submits one of mallory's runs. A reading run has its
// events read (and no data request answered) as they come; an unread one
// only once it has ended.
func submitMallory(t *testing.T, e *sandbox.Engine, pa poolAttack, code string, limits sandbox.Limits) *malloryRun {
	t.Helper()
	s, err := e.Submit(context.Background(), sandbox.Request{Language: pa.lang, Code: code, Limits: limits, Tenant: "mallory"})
	if err != nil {
		t.Fatalf("mallory's run was refused: %v", err)
	}
	m := &malloryRun{s: s, done: make(chan struct{})}
	t.Cleanup(func() { // if the test fails first: Close waits for the run
		s.Abort()
		<-m.done
	})
	go func() {
		defer close(m.done)
		o := &outcome{}
		if !pa.read {
			_, _ = s.Wait()
		}
		for ev := range s.Events() {
			o.events = append(o.events, ev)
		}
		res, err := s.Wait()
		if err != nil && !errors.As(err, &o.err) {
			panic(fmt.Sprintf("Wait: %T %v is not a *sandbox.Error", err, err))
		}
		o.res = res
		m.o = o
	}()
	return m
}

// wait waits for the run's end, within bound, and checks the invariants
// of every run: one terminal event, last, that Wait agrees with.
func (m *malloryRun) wait(t *testing.T, bound time.Duration) *outcome {
	t.Helper()
	select {
	case <-m.done:
	case <-time.After(bound):
		t.Fatalf("HOST HANG: mallory's run did not end within %v", bound.Round(time.Millisecond))
	}
	o := m.o
	terminals := 0
	for _, ev := range o.events {
		if ev.Terminal() {
			terminals++
		}
	}
	if terminals != 1 || !o.events[len(o.events)-1].Terminal() {
		t.Fatalf("want exactly one terminal event, last; got %d in %v", terminals, kinds(o.events))
	}
	if last := o.events[len(o.events)-1]; o.err != nil && last.Error != o.err || o.err == nil && last.Result == nil {
		t.Fatalf("Wait returned %v but the terminal event is %s", o.err, last.Kind)
	}
	if o.err != nil {
		checkError(t, o.err)
	}
	return o
}

// victimRuns runs n trivial steps of the victim, each to its end, within a
// bound that only a run waiting behind mallory's would reach.
func victimRuns(t *testing.T, e *sandbox.Engine, n int) {
	t.Helper()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), rowTime)
		res, err := e.Run(ctx, sandbox.Request{Code: "return input.a + 1", Input: json.RawMessage(`{"a":41}`), Tenant: "victim"}, nil)
		cancel()
		if err != nil || string(res.Value) != "42" {
			t.Fatalf("the victim's run %d beside mallory's: %s %v", i, res.Value, err)
		}
	}
}

// holdShare: three of mallory's runs of the row, none ever ending by
// itself, hold one slot (the share) with two waiting, and the victim's
// runs complete meanwhile.
func holdShare(t *testing.T, e *sandbox.Engine, pa poolAttack, a attack) {
	load := func() (int, int) {
		running, queued, _, _ := e.Load()
		return running, queued
	}
	var runs []*malloryRun
	for range 3 {
		runs = append(runs, submitMallory(t, e, pa, a.code, nil0))
	}
	testenv.WaitFor(t, "mallory to hold one slot, its share, with its other runs waiting", func() bool {
		running, queued := load()
		return running == 1 && queued == 2
	})
	victimRuns(t, e, 3)
	if running, queued := load(); running != 1 || queued != 2 {
		t.Fatalf("after the victim's runs, %d running and %d queued; want mallory's 1 and 2", running, queued)
	}
	for _, m := range runs {
		select {
		case <-m.done:
			t.Fatalf("one of mallory's runs ended by itself: %+v", m.o.err)
		default:
		}
		m.s.Abort()
	}
	for _, m := range runs {
		// ABORTED, or a limit the step crossed before: a worker process
		// goes on while the host waits for the reader, and may end the
		// run (a status flood at maxStatusEvents) before the abort.
		if o := m.wait(t, rowTime); o.err == nil {
			t.Errorf("mallory's run, aborted, succeeded: %s", o.res.Value)
		}
	}
}

// endsAlone: two of mallory's runs of the row, with the row's limits, end
// with the row's outcome, one after the other on mallory's one slot; the
// victim's run completes meanwhile.
func endsAlone(t *testing.T, e *sandbox.Engine, pa poolAttack, a attack) {
	runs := []*malloryRun{submitMallory(t, e, pa, a.code, a.limits), submitMallory(t, e, pa, a.code, a.limits)}
	victimRuns(t, e, 1)
	wall := rowTime
	if a.limits.WallMs != 0 {
		wall = time.Duration(a.limits.WallMs) * time.Millisecond
	}
	bound := 2 * (wall + grace + slack) // one after the other
	for _, m := range runs {
		assertOutcome(t, a.want, m.wait(t, bound))
	}
}
