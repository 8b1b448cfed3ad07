package worker

import (
	"strconv"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/testenv"
)

// TestOverrunEndsWorker: a step stuck in one native call past its CPU
// limit makes the worker send its terminal, TIMEOUT cpuMs and marked
// Exiting, and end (a worker that is its own process exits with
// ExitOverrun; this one, in-process, ends Main): nothing else stops the
// goroutine of that call. Before, the worker waited for the call, and the
// host killed it at wall + Grace (LIMIT_EXCEEDED "time").
func TestOverrunEndsWorker(t *testing.T) {
	h := startWorker(t, &ipc.Hello{Protocol: ipc.ProtocolVersion, Warm: 1})
	lim := testLimits
	lim.CPUMs = 100
	// A loop that ends by itself about a second later (some two under the
	// race detector): the test's goroutine-leak check waits for it.
	n := strconv.Itoa(int(6e7 / testenv.Slowdown()))
	h.execute(1, "return Array.prototype.indexOf.call({length: "+n+"}, 1)", lim)
	var term *ipc.Frame
	for term == nil {
		switch f := h.read(); f.Type {
		case ipc.FrameTerminal:
			term = f
		case ipc.FrameEvent:
		default:
			t.Fatalf("unexpected %s frame", f.Type)
		}
	}
	if !term.Exiting {
		t.Error("the terminal is not marked Exiting")
	}
	f := term.Event.Error
	if f == nil || f.Code != ipc.CodeTimeout || f.Limit != ipc.LimitCPU {
		t.Fatalf("terminal %+v %+v, want TIMEOUT cpuMs", term.Event.Result, f)
	}
	t.Logf("%.1f ms of CPU for a limit of 100 ms", f.Stats.CPUMs)
	select {
	case status := <-h.exit:
		if status != 1 {
			t.Errorf("Main returned %d, want 1", status)
		}
		h.exit <- status // for the cleanup
	case <-time.After(testenv.ScaleDuration(5 * time.Second)):
		t.Fatal("the worker did not end after its overrun")
	}
}
