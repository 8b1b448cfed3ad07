package testenv

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds and fails t, naming what it waited
// for, if it does not within a budget of five seconds on the reference
// machine (see Scale). Use it where a test must wait for a state it cannot
// be told about (a process gone, a counter moved), never a fixed sleep.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(ScaleDuration(5 * time.Second))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
