package security_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// soakKinds are the runs of the soak, each with the outcome it must have.
var soakKinds = []struct {
	name   string
	code   string
	limits sandbox.Limits
	want   sandbox.Code // "" for a result
	abort  bool         // abort the run at its first data request
}{
	{name: "ok", code: `return input.i * 2`},
	{name: "throw", code: `throw new Error("no " + input.i)`, want: sandbox.CodeRuntime},
	{name: "timeout", code: `while (true) {}`, limits: sandbox.Limits{CPUMs: 50}, want: sandbox.CodeTimeout},
	{name: "oom", code: `let s = "x"; while (true) s = s.repeat(2)`, limits: sandbox.Limits{MemoryMB: 8}, want: sandbox.CodeOOM},
	{name: "abort", code: `reportStatus("waiting"); await dataProxy.request("hold")`, want: sandbox.CodeAborted, abort: true},
	{name: "data", code: `let s = 0; for (let i = 0; i < 5; i++) s += await dataProxy.request("m", i); return s`},
	{name: "console", code: `for (let i = 0; i < 40; i++) console.log("line", i, {i}); return 1`, limits: sandbox.Limits{MaxConsoleEvents: 10}},
	{name: "limit", code: `for (;;) reportStatus(1)`, limits: sandbox.Limits{MaxStatusEvents: 10}, want: sandbox.CodeLimitExceeded},
}

// soak submits 300 mixed runs at once to an engine with two slots, reads
// every stream to its end, checks that each run had exactly one terminal
// event with the outcome of its kind, and closes the engine.
func soak(t *testing.T, iso isolation) {
	const runs = 300
	e := newEngine(t, iso, sandbox.Config{PoolSize: 2, QueueSize: runs})

	type tally struct {
		kind      string
		terminals int
		events    int
		last      sandbox.EventKind
		err       error
	}
	start := time.Now()
	tallies := make([]tally, runs)
	var wg sync.WaitGroup
	for i := range runs {
		k := soakKinds[i%len(soakKinds)]
		wg.Add(1) // Done when the run's stream is closed.
		go func() {
			defer wg.Done()
			tl := &tallies[i]
			tl.kind = k.name
			s, err := e.Submit(context.Background(), sandbox.Request{Code: k.code, Limits: k.limits, Input: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
			if err != nil {
				tl.err = err
				return
			}
			for ev := range s.Events() {
				tl.events++
				tl.last = ev.Kind
				if ev.Terminal() {
					tl.terminals++
				}
				if dr := ev.DataRequest; dr != nil {
					if k.abort {
						s.Abort()
					} else {
						answer(s, dr)
					}
				}
			}
			_, tl.err = s.Wait()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// Not a speed assertion: a bound on a hang, far above what the runs need.
	select {
	case <-done:
	case <-time.After(time.Duration(testenv.Scale(60)) * time.Second):
		t.Fatalf("HOST HANG: the soak's runs did not all end")
	}

	byKind := map[string]int{}
	for i, tl := range tallies {
		k := soakKinds[i%len(soakKinds)]
		if tl.terminals != 1 || !(tl.last == sandbox.EventResult || tl.last == sandbox.EventError) {
			t.Errorf("run %d (%s): %d terminal events, last %q; want exactly one, last", i, tl.kind, tl.terminals, tl.last)
		}
		got := sandbox.Code("")
		if se, ok := tl.err.(*sandbox.Error); ok {
			got = se.Code
		} else if tl.err != nil {
			t.Errorf("run %d (%s): %T %v", i, tl.kind, tl.err, tl.err)
		}
		if got != k.want {
			t.Errorf("run %d (%s): ended with %q (%v); want %q", i, tl.kind, got, tl.err, k.want)
		}
		byKind[tl.kind]++
	}
	t.Logf("%d runs in %v: %v", runs, time.Since(start).Round(time.Millisecond), byKind)

	closeEngine(t, e)
}

// settled fails t unless the goroutines go back to at most base (a few may
// still be on their way out).
func settled(t *testing.T, base int) {
	start := time.Now()
	for runtime.NumGoroutine() > base && time.Since(start) < 10*time.Second {
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("goroutines settled in %v", time.Since(start).Round(time.Millisecond))
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("%d goroutines after the soak, %d before:\n%s", n, base, strings.TrimSpace(string(buf)))
	}
}
