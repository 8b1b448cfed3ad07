package worker

import (
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/testenv"
)

// TestWorkerBackpressure checks that a host that stops reading holds the
// guest back, and that the run still ends at its wall limit while it is
// held: the host reads nothing until the worker has ended the run.
func TestWorkerBackpressure(t *testing.T) {
	h := startWorker(t, &ipc.Hello{Protocol: ipc.ProtocolVersion})
	lim := testLimits
	lim.WallMs = 500
	lim.MaxConsoleEvents = 1 << 20
	lim.MaxConsoleBytes = 1 << 30
	// Lines of 8 KB: a few fill the pipe, on a machine of any speed, long
	// before the wall limit.
	h.execute(1, `const s = "x".repeat(8000); for (let i = 0; ; i++) console.log(s)`, lim)
	// The run has ended when its terminal frame waits for the writer,
	// which waits for room in the pipe.
	testenv.WaitFor(t, "the run to end while the host does not read", func() bool {
		return strings.Contains(goroutines(), "worker.(*server).end(")
	})
	capacity := pipeCapacity(t, h.in)
	events, term := h.until(1)
	if term.Error == nil || term.Error.Code != ipc.CodeTimeout || term.Error.Limit != ipc.LimitWall {
		t.Fatalf("terminal %+v", term)
	}
	if len(events) == 0 {
		t.Fatal("no console events")
	}
	b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameEvent, RunID: 1, Event: events[0]}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Held back: no more lines than the pipe held, plus the one frame in
	// the writer's hands; an unheld guest prints hundreds in 500 ms. And
	// the pipe did fill (the kernel packs frames of 8 KB into its pages
	// at least half full): the guest was made to wait.
	t.Logf("%d console events of %d bytes through a pipe of %d bytes", len(events), len(b), capacity)
	if most := capacity/len(b) + 1; len(events) > most {
		t.Fatalf("%d console events of %d bytes got through a host that was not reading (pipe of %d bytes)", len(events), len(b), capacity)
	}
	if len(events)*len(b) < capacity/2 {
		t.Fatalf("%d console events of %d bytes: the pipe (%d bytes) never filled", len(events), len(b), capacity)
	}
}

// goroutines returns the stacks of all goroutines.
func goroutines() string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// pipeCapacity returns the capacity in bytes of the pipe f is an end of.
func pipeCapacity(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	const fGetPipeSz = 1032 // F_GETPIPE_SZ
	var n uintptr
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		n, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSz, 0)
	}); err != nil {
		t.Fatal(err)
	}
	if errno != 0 {
		t.Fatalf("F_GETPIPE_SZ: %v", errno)
	}
	return int(n)
}
