package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

// TestRunFlagsAboveDefaultCaps: on the command line the user is the
// operator, so the limits --cpu, --timeout and --memory set hold even
// above the engine's default caps, which would otherwise clamp them.
func TestRunFlagsAboveDefaultCaps(t *testing.T) {
	f := runFlags{cpu: "20m", timeout: "30m", memory: 2 * sandbox.DefaultCaps.MemoryMB}
	st := &State{Stdin: strings.NewReader("return 1")}
	req, cfg, _, err := f.build(st, "-")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Isolation = sandbox.IsolationInProcess
	e, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	// A request may ask for its plan's limits exactly: more is refused.
	want := sandbox.Limits{CPUMs: 20 * 60_000, WallMs: 30 * 60_000, MemoryMB: f.memory}
	for _, lim := range []sandbox.Limits{{CPUMs: want.CPUMs}, {WallMs: want.WallMs}, {MemoryMB: want.MemoryMB}} {
		req.Limits = lim
		s, err := e.Submit(context.Background(), req)
		if err != nil {
			t.Fatalf("%+v: %v", lim, err)
		}
		if _, err := s.Wait(); err != nil {
			t.Fatalf("%+v: %v", lim, err)
		}
	}
}
