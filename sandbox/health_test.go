package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

func TestHealthReady(t *testing.T) {
	up := sandbox.WorkerHealth{Size: 2, Up: 2}
	for _, c := range []struct {
		name string
		h    sandbox.Health
		why  string // empty: ready
	}{
		{"idle", sandbox.Health{PoolSize: 2, QueueSize: 4, Workers: up}, ""},
		{"busy, queue has room", sandbox.Health{Running: 2, Queued: 3, PoolSize: 2, QueueSize: 4, Workers: up}, ""},
		{"saturated", sandbox.Health{Running: 2, Queued: 4, PoolSize: 2, QueueSize: 4, Workers: up}, "saturated"},
		{"no queue, all busy", sandbox.Health{Running: 1, PoolSize: 1, Workers: up}, "saturated"},
		{"starting", sandbox.Health{PoolSize: 2, QueueSize: 4, Workers: sandbox.WorkerHealth{Size: 2}}, "no worker is up yet"},
		{"crash-looping", sandbox.Health{PoolSize: 2, QueueSize: 4, Workers: sandbox.WorkerHealth{Size: 2, Failing: 2, LastError: "exec: no such file"}},
			"no worker is up: exec: no such file"},
	} {
		ok, why := c.h.Ready()
		if ok != (c.why == "") || !strings.Contains(why, c.why) {
			t.Errorf("%s: Ready() = %v, %q; want %q", c.name, ok, why, c.why)
		}
	}
}

func TestEngineHealth(t *testing.T) {
	eng := newEngine(t, sandbox.Config{PoolSize: 2})
	if _, err := eng.Run(context.Background(), sandbox.Request{Code: "return 1"}, nil); err != nil {
		t.Fatal(err)
	}
	// The other slots may still be starting: nothing tells when they are
	// up. Process isolation keeps Standby unbound workers beyond PoolSize
	// (DefaultStandby(2) = 1), so every slot is up at PoolSize + Standby;
	// in-process, Up is PoolSize and Standby is zero.
	slots := 2 + eng.Health().Workers.Standby
	testenv.WaitFor(t, "every worker up", func() bool { return eng.Health().Workers.Up >= slots })
	h := eng.Health()
	if ok, why := h.Ready(); !ok || h.PoolSize != 2 || h.Workers.Size != 2 || h.Workers.Up != slots || h.Workers.Busy != 0 || h.Workers.Restarts != 0 || h.Running != 0 {
		t.Fatalf("health %+v (ready %v %q)", h, ok, why)
	}
	if want := isolation; h.Isolation != want && (want != "" || h.Isolation != sandbox.IsolationProcess) {
		t.Fatalf("isolation %q", h.Isolation)
	}
	if err := eng.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, why := eng.Health().Ready(); ok || !strings.Contains(why, "closed") {
		t.Fatalf("closed engine: ready %v %q", ok, why)
	}
}

// TestHealthShowsBothLanguages: Health lists the processes that run steps
// of both languages. A Python run starts the zygote of the worker it runs
// in (in-process, a worker of the Python pool), which Health then names.
func TestHealthShowsBothLanguages(t *testing.T) {
	eng := newEngine(t, sandbox.Config{PoolSize: 1})
	if _, err := eng.Run(context.Background(), sandbox.Request{Language: sandbox.Python, Code: "return 1"}, nil); err != nil {
		t.Fatal(err)
	}
	h := eng.Health()
	wh := h.Workers
	if h.Isolation == sandbox.IsolationInProcess {
		if h.Python.Workers == nil {
			t.Fatalf("in-process, no Python workers after a Python run: %+v", h)
		}
		wh = *h.Python.Workers
	}
	if h.Python.Zygotes != 1 {
		t.Fatalf("%d zygotes after a Python run, want 1: %+v", h.Python.Zygotes, h)
	}
	zygotes := 0
	for _, p := range wh.Processes {
		if p.PID <= 0 || p.Busy {
			t.Fatalf("process %+v", p)
		}
		if p.ZygotePID != 0 {
			zygotes++
			if !p.Bound || p.Runs != 1 {
				t.Fatalf("the worker that ran the Python step: %+v", p)
			}
		}
	}
	if zygotes != 1 || len(wh.Processes) != wh.Up {
		t.Fatalf("processes %+v, %d up", wh.Processes, wh.Up)
	}
}
