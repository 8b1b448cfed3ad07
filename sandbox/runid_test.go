package sandbox_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// runIDForm is the form of every run id: "run_" and 128 random bits.
var runIDForm = regexp.MustCompile(`^run_[0-9a-f]{32}$`)

// TestRunIDs checks that run ids are unique, also across engines, and give
// nothing away: random, not a counter that tells a tenant how many runs
// the others made between two of its own.
func TestRunIDs(t *testing.T) {
	var mu sync.Mutex
	var ids []string // in the order the engines gave them out
	meter := sandbox.MeterFunc(func(u sandbox.Usage) {
		mu.Lock()
		ids = append(ids, u.RunID)
		mu.Unlock()
	})
	limits := map[string]sandbox.Limits{"default": {CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs}}
	engines := []*sandbox.Engine{
		newEngine(t, sandbox.Config{Meter: meter, Plans: limits}),
		newEngine(t, sandbox.Config{Meter: meter, Plans: limits}),
	}
	// Refused requests are metered with a run id too, and cost nothing to
	// make many of.
	const refused = 2000
	for i := range refused {
		if _, err := engines[i%2].Submit(context.Background(), sandbox.Request{Code: "return 1", Plan: "nope"}); err == nil {
			t.Fatal("a request for an unknown plan was accepted")
		}
	}
	var sessions []string
	for i := range 10 {
		s, err := engines[i%2].Submit(context.Background(), sandbox.Request{Code: "return 1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Wait(); err != nil {
			t.Fatal(err)
		}
		for range s.Events() {
		}
		sessions = append(sessions, s.ID())
	}
	testenv.WaitFor(t, "the meter records of the runs", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(ids) == refused+len(sessions)
	})
	mu.Lock()
	defer mu.Unlock()
	for _, id := range sessions {
		if !slices.Contains(ids, id) {
			t.Errorf("Session.ID %q is not the id metered for the run", id)
		}
	}

	seen := map[string]bool{}
	for i, id := range ids {
		if !runIDForm.MatchString(id) {
			t.Fatalf("run id %q: want run_ and 32 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("run id %q given twice", id)
		}
		seen[id] = true
		// Random ids share a prefix of 8 hex digits with a probability of
		// 2^-32; a counter's share all but its last digits.
		if i > 0 && sharedPrefix(ids[i-1], id) >= len("run_")+8 {
			t.Fatalf("consecutive run ids %q and %q share a prefix: they look counted, not random", ids[i-1], id)
		}
	}
	if slices.IsSorted(ids) || slices.IsSortedFunc(ids, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Fatal("run ids are in order: they look counted, not random")
	}
}

func sharedPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
