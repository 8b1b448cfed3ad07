package jsrt

import (
	"strings"
	"testing"

	"modernc.org/quickjs"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/testenv"
)

// TestOutOfMemoryWithoutSampling: bombs whose failure reaches the host as
// "Uncaught null" (the engine could not allocate its out-of-memory error)
// are OOM on every run. The heap was once sampled by a goroutine, every
// 2 ms, and such a null was OOM only if a sample had seen the heap near
// the limit; a starved sampler (a loaded machine, the race detector) made
// the run RUNTIME "Uncaught null" (issue #14). A failed allocation is now
// seen where it happens, whatever the scheduler does, and at the heap's
// limit it ends the run before the engine throws anything.
func TestOutOfMemoryWithoutSampling(t *testing.T) {
	rt := newRT(t)
	bombs := []struct{ name, code string }{
		{"Set of strings", `const s = new Set(); for (let i = 0; ; i++) s.add("k" + i)`},
		{"Map growth", `const m = new Map(); for (let i = 0; ; i++) m.set(i, {i})`},
		{"array of objects", `const a = []; while (true) a.push({i: a.length})`},
		{"array of closures", `const a = []; while (true) a.push(() => a.length)`},
	}
	times := 10
	if testenv.Race {
		times = 3
	}
	before := rt.unnamedOOMs.Load()
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			for i := 0; i < times; i++ {
				l := testLimits
				l.MemoryMB = 4
				ev := runStep(t, rt, b.code, l, nil)
				if ev.Error == nil || ev.Error.Code != ipc.CodeOOM || ev.Error.Limit != ipc.LimitMemory {
					t.Fatalf("run %d: got %+v %+v, want OOM", i, ev.Result, ev.Error)
				}
				if ev.Error.Stats.HeapMB < 4 {
					t.Errorf("run %d: heapMb %v, want the limit at least", i, ev.Error.Stats.HeapMB)
				}
			}
		})
	}
	// The test is about the runs that the allocator's watch, not the
	// engine's message, tells out of memory: make sure they happened.
	if rt.unnamedOOMs.Load() == before {
		t.Fatal("every bomb ended by the engine's own out-of-memory error: the test tests nothing")
	}
}

// TestThrowNullIsTheStepsOwn: a step that throws null itself, with its
// heap far from or near the limit, fails RUNTIME "Uncaught null": no
// allocation failed. (The sampled peak called the second one OOM.)
func TestThrowNullIsTheStepsOwn(t *testing.T) {
	rt := newRT(t)
	for _, c := range []struct{ name, code string }{
		{"far from the limit", `throw null`},
		{"near the limit", `const keep = []; for (let i = 0; i < 5; i++) keep.push("x".repeat(1 << 20)); throw null`},
		{"from a promise job", `await Promise.resolve().then(() => { throw null })`},
		{"an InternalError without a message", `throw new InternalError("")`},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := testLimits
			l.MemoryMB = 16
			ev := runStep(t, rt, c.code, l, nil)
			if ev.Error == nil || ev.Error.Code != ipc.CodeRuntime {
				t.Fatalf("got %+v %+v, want RUNTIME", ev.Result, ev.Error)
			}
			t.Logf("%s (heapMb %.1f of 16)", ev.Error.Message, ev.Error.Stats.HeapMB)
		})
	}
}

// TestPromiseChainRunsOutOfMemory: a chain of promises that reschedules
// itself without end grows until an allocation fails inside a promise
// job. The engine makes that failure a rejection nothing sees, the job
// queue then runs dry, and the step awaits a promise nothing will settle:
// it was reported RUNTIME "the step never finished" (issue #14). It ran
// out of memory first.
func TestPromiseChainRunsOutOfMemory(t *testing.T) {
	rt := newRT(t)
	// At its limit the engine collects before every allocation, and
	// whether a chain's next job fails (ending the chain) or its failure
	// frees enough for the chain to go on depends on the heap's layout: a
	// global defined before the chain changed one into the other. Either
	// way the run is out of memory; the time limits here are only there
	// to end a run that thrashes at the limit as a failure, not a hang.
	const then = `const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})`
	for _, c := range []struct{ name, code string }{
		{"then", then},
		{"then after an accessor", `Object.defineProperty(globalThis, "g", { get() { return 1 }, configurable: true });` + then},
		{"async", `async function f() { await null; return f() } f(); await new Promise(() => {})`},
		{"caught", `const f = () => Promise.resolve().then(f); f().catch(() => {}); await new Promise(() => {})`},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := testLimits
			l.MemoryMB, l.WallMs, l.CPUMs = 16, 120_000, 120_000
			ev := runStep(t, rt, c.code, l, nil)
			if ev.Error == nil || ev.Error.Code != ipc.CodeOOM || ev.Error.Limit != ipc.LimitMemory {
				t.Fatalf("got %+v %+v, want OOM", ev.Result, ev.Error)
			}
		})
	}
	// With nothing exhausted, the verdict stands.
	ev := runStep(t, rt, `await new Promise(() => {})`, testLimits, nil)
	if ev.Error == nil || ev.Error.Code != ipc.CodeRuntime || ev.Error.Message != "the step never finished: it awaits a promise that nothing will settle" {
		t.Fatalf("got %+v %+v", ev.Result, ev.Error)
	}
}

// TestOutOfMemoryAtTheLimit: a step that fills its memory cannot catch
// running out of it (as with DuckDB's memory); one large allocation that
// does not fit, with the heap far below its limit, is the engine's
// catchable error.
func TestOutOfMemoryAtTheLimit(t *testing.T) {
	rt := newRT(t)
	l := testLimits
	l.MemoryMB = 16
	ev := runStep(t, rt, `const a = []; try { for (;;) a.push({ n: a.length }) } catch (e) {} return "escaped"`, l, nil)
	if ev.Error == nil || ev.Error.Code != ipc.CodeOOM || ev.Error.Limit != ipc.LimitMemory {
		t.Fatalf("filled: got %+v %+v, want OOM", ev.Result, ev.Error)
	}
	ev = runStep(t, rt, `try { new ArrayBuffer(64 << 20) } catch (e) { return String(e) }`, l, nil)
	if ev.Error != nil || ev.Result == nil || !strings.Contains(string(ev.Result.Value), "out of memory") {
		t.Fatalf("one large block: got %+v %+v, want the caught error", ev.Result, ev.Error)
	}
}

// TestAllocWatch: the allocator watch is installed on every VM, keeps the
// peak of the bytes allocated and sees a refused allocation. If the
// wrapper's layout changes, it is not installed, and this fails: OOM
// would then be told only by the engine's message.
func TestAllocWatch(t *testing.T) {
	m, err := newMachine()
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	if m.watch == nil {
		t.Fatal("no allocator watch: the layout of the quickjs wrapper changed")
	}
	m.vm.SetMemoryLimit(8 << 20)
	m.watch.reset()
	before := m.watch.peakBytes()
	if _, err := m.vm.Eval(`globalThis.keep = "x".repeat(1 << 20); 1`, quickjs.EvalGlobal); err != nil {
		t.Fatal(err)
	}
	if m.watch.peakBytes() < before+1<<20 || m.watch.exhausted() {
		t.Fatalf("peak %d from %d, exhausted %v", m.watch.peakBytes(), before, m.watch.exhausted())
	}
	if _, err := m.vm.Eval(`new Array(1e8).fill(0).length`, quickjs.EvalGlobal); err == nil {
		t.Fatal("no out-of-memory error")
	}
	if !m.watch.exhausted() {
		t.Fatal("the refused allocation was not seen")
	}
	m.watch.reset()
	if m.watch.exhausted() {
		t.Fatal("reset kept the failure")
	}
}
