// Package testenv holds what test binaries share: the goroutine-leak check
// every TestMain runs, time budgets that follow the machine (Scale,
// Unreachable limits, WaitFor) and whether the jail must be there
// (RequireJail).
package testenv

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Main runs the tests and then the cleanups, and fails the binary if
// goroutines started by the tests are still running a few seconds later.
func Main(m *testing.M, cleanups ...func()) {
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	if code == 0 {
		if leaked := leakedGoroutines(5 * time.Second); leaked != "" {
			fmt.Fprintf(os.Stderr, "goroutines leaked by the tests:\n%s\n", leaked)
			code = 1
		}
	}
	os.Exit(code)
}

func leakedGoroutines(wait time.Duration) string {
	deadline := time.Now().Add(wait)
	for {
		var bad []string
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		for _, g := range strings.Split(string(buf), "\n\n") {
			if interesting(g) {
				bad = append(bad, g)
			}
		}
		if len(bad) == 0 || time.Now().After(deadline) {
			return strings.Join(bad, "\n\n")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// interesting reports whether a goroutine's stack is one a test left
// behind, not one of the runtime's or the test framework's own.
func interesting(stack string) bool {
	for _, ok := range []string{
		"testing.(*M).",
		"testing.tRunner",
		"testing.runTests",
		"runtime.goexit()\n", // a lone runtime goroutine
		"created by runtime.gc",
		"runtime.MHeap_Scavenger",
		"signal.signal_recv",
		"sigterm.handler",
		"runtime_mcall",
		"goroutine in C code",
		"testenv.leakedGoroutines",
		"os/signal.loop",
		"runtime.ensureSigM",
	} {
		if strings.Contains(stack, ok) {
			return false
		}
	}
	return strings.TrimSpace(stack) != ""
}
