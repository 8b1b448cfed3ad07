package sandbox_test

import (
	"context"
	"testing"
	"time"

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
		length = "1e7"
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
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if running, _, _, _ := e.Load(); running == 0 {
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	e.Close(ctx)
}
