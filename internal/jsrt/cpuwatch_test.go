package jsrt

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"modernc.org/quickjs"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/testenv"
)

// nativeLength is the length of an array-like whose indexOf, one native
// loop that never polls the interrupt, takes about a second and a half of
// CPU here (race detector included), far past the CPU limits below, and
// then ends: the VM goroutine of an overrun keeps spinning until it does.
// It is measured in CPU time, on the thread that runs it: a wall-clock
// measure shrinks the loop on a loaded machine until it ends within the
// limit.
var nativeLength = sync.OnceValue(func() string {
	const probe = 1_000_000
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	vm, err := quickjs.NewVM()
	if err != nil {
		panic(err)
	}
	defer vm.Close()
	clock := currentThreadClock()
	t0 := clock.now()
	if _, err := vm.Eval(`Array.prototype.indexOf.call({length: `+strconv.Itoa(probe)+`}, 1)`, quickjs.EvalGlobal); err != nil {
		panic(err)
	}
	perItem := float64(max(clock.now()-t0, time.Microsecond)) / probe
	return strconv.Itoa(int(min(float64(1500*time.Millisecond)/perItem, 4e9)))
})

// cpuBound is the most CPU a run with a CPU limit of limit may report: the
// limits promise 10% and 10 ms past the limit. Under the race detector the
// watchdog's timers run late by more than the margin on a loaded machine,
// and the bound is looser; the README's figures are measured without it.
func cpuBound(limit time.Duration) time.Duration {
	if testenv.Race {
		return limit + limit/2 + 50*time.Millisecond
	}
	return limit + limit/10 + 10*time.Millisecond
}

// runOverrun runs code with an Overrun hook and returns what ended the run
// for its caller: the overrun's event (overran) or Run's. It waits for Run
// to return either way, and checks that Run returns the overrun's event.
func runOverrun(t *testing.T, rt *Runtime, code string, lim ipc.Limits) (ev *ipc.Event, overran bool) {
	t.Helper()
	h := &recorder{replies: make(chan ipc.Reply, 100)}
	over := make(chan *ipc.Event, 2)
	done := make(chan *ipc.Event, 1)
	go func() {
		done <- rt.Run(context.Background(), Job{Code: code, Input: json.RawMessage(`{}`), Limits: lim, Host: h, Replies: h.replies,
			Overrun: func(ev *ipc.Event) { over <- ev }})
	}()
	select {
	case ev = <-over:
		overran = true
		if last := <-done; last != ev {
			t.Errorf("Run returned %+v after the overrun %+v; want the same event", last, ev)
		}
	case ev = <-done:
	}
	if len(over) > 0 {
		t.Error("Overrun was called after Run returned, or twice")
	}
	return ev, overran
}

// TestOverrunEndsNativeCall: a step inside one long native call, past its
// CPU limit, is ended for its caller by Job.Overrun within the margin,
// TIMEOUT cpuMs, although the engine's interrupt cannot reach it. Before,
// the run ended only when the call did (or the wall limit's grace in the
// layers above): 25.6 s of CPU against a limit of 20 s (issue #14).
func TestOverrunEndsNativeCall(t *testing.T) {
	rt := newRT(t)
	n := nativeLength()
	for _, c := range []struct{ name, code string }{
		{"indexOf on an array-like", `return Array.prototype.indexOf.call({length: ` + n + `}, 1)`},
		{"join of a sparse array", `return new Array(` + n + `).join("").length`},
		{"after a loop", `let i = 0; while (i < 1e4) i++; return Array.prototype.indexOf.call({length: ` + n + `}, 1)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := testLimits
			l.CPUMs = 200
			ev, overran := runOverrun(t, rt, c.code, l)
			if !overran {
				t.Fatalf("no overrun: %+v %+v", ev.Result, ev.Error)
			}
			if ev.Error == nil || ev.Error.Code != ipc.CodeTimeout || ev.Error.Limit != ipc.LimitCPU {
				t.Fatalf("got %+v %+v, want TIMEOUT cpuMs", ev.Result, ev.Error)
			}
			limit := 200 * time.Millisecond
			used := time.Duration(ev.Error.Stats.CPUMs * float64(time.Millisecond))
			if used < limit || used > cpuBound(limit) {
				t.Errorf("the run used %v of CPU; want %v to %v", used, limit, cpuBound(limit))
			}
			t.Logf("%v of CPU for a limit of %v", used, limit)
		})
	}
}

// TestNoOverrunWhenInterruptible: a step that the engine's interrupt stops
// (a loop of instructions, an interruptible built-in) ends by the VM
// itself, TIMEOUT cpuMs, without an overrun. Under the race detector the
// regular expression engine polls the interrupt too seldom for the
// margin, and may overrun; the outcome is the same.
func TestNoOverrunWhenInterruptible(t *testing.T) {
	rt := newRT(t)
	for _, c := range []struct {
		code       string
		slowInRace bool
	}{
		{code: `while (true) {}`},
		{code: `return /(a+)+$/.test("a".repeat(40) + "!")`, slowInRace: true},
		{code: `while (true) await null`},
	} {
		code := c.code
		l := testLimits
		l.CPUMs = 100
		ev, overran := runOverrun(t, rt, code, l)
		if overran && !(c.slowInRace && testenv.Race) {
			t.Errorf("%s: an overrun", code)
		}
		if ev.Error == nil || ev.Error.Code != ipc.CodeTimeout || ev.Error.Limit != ipc.LimitCPU {
			t.Errorf("%s: got %+v %+v, want TIMEOUT cpuMs", code, ev.Result, ev.Error)
		}
	}
}

// TestOverrunKeepsTheFirstLimit: a run stopped by its wall-clock limit
// while stuck in a native call still ends when its CPU runs past its
// limit, with the limit that stopped it.
func TestOverrunKeepsTheFirstLimit(t *testing.T) {
	rt := newRT(t)
	l := testLimits
	// The call lasts seconds (nativeLength); the wall limit comes first.
	l.CPUMs, l.WallMs = 200, 100
	ev, overran := runOverrun(t, rt, `return Array.prototype.indexOf.call({length: `+nativeLength()+`}, 1)`, l)
	if ev.Error == nil || ev.Error.Code != ipc.CodeTimeout || ev.Error.Limit != ipc.LimitWall {
		t.Fatalf("overrun %v: got %+v %+v, want TIMEOUT wallMs", overran, ev.Result, ev.Error)
	}
	// A machine too loaded to give the step a CPU before its wall limit
	// ends it before the native call: the limit still holds, without an
	// overrun. Otherwise the step was inside the call, and only the
	// overrun could end it.
	if !overran && ev.Error.Stats.CPUMs >= float64(l.WallMs)/2 {
		t.Fatalf("no overrun, though the step had %v ms of CPU: %+v", ev.Error.Stats.CPUMs, ev.Error)
	}
}
