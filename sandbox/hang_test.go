package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// TestNativeLoopEnds: a step stuck inside one native built-in call, which
// never checks for the interrupt, still gets its terminal event, and Close
// returns. A worker process is killed; in-process the run is abandoned and
// its goroutine holds the slot until the call returns, so the in-process
// case uses a loop that does end, later.
func TestNativeLoopEnds(t *testing.T) {
	length := "2 ** 53 - 1"
	if isolation == sandbox.IsolationInProcess {
		length = fmt.Sprint(boundedLoopLength())
	}
	e, err := sandbox.New(sandbox.Config{Isolation: isolation, PoolSize: 1, Grace: 100 * time.Millisecond,
		Plans: map[string]sandbox.Limits{"default": {CPUMs: 100, WallMs: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(context.Background(), sandbox.Request{Code: "return Array.prototype.indexOf.call({length: " + length + "}, 1)"}, nil)
	se := asError(t, err)
	if se.Code != sandbox.CodeLimitExceeded && se.Code != sandbox.CodeTimeout {
		t.Fatalf("got %v", err)
	}
	// The abandoned goroutine gives its slot back when its call returns.
	testenv.WaitFor(t, "the run's slot to be free", func() bool {
		running, _, _, _ := e.Load()
		return running == 0
	})
	ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(3*time.Second))
	defer cancel()
	if err := e.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// boundedLoopLength is the length of an array-like whose indexOf, a native
// loop, takes about a second on this machine (some two seconds under the
// race detector): well past the 200 ms of wall limit and grace above, and
// soon over. The loop's cost follows the measured slow-down.
func boundedLoopLength() int {
	return int(6e7 / testenv.Slowdown())
}
