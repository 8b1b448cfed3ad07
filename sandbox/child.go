package sandbox

import (
	"fmt"
	"os"
	"syscall"

	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/pyrt"
	"github.com/stepbox/stepbox/internal/worker"
)

// The engine starts helper processes by re-executing the host's own
// binary: the workers of the process pool, Python's jailed zygote and the
// jail's capability probe. They are
// told apart by environment variables only the engine sets, and taken over
// here, before the host's main runs, so that a host program needs no line
// of its own for them.
func init() { takeOverChild() }

func takeOverChild() {
	pyrt.MaybeZygote() // returns only when this is not a zygote
	// A worker of the process pool: it enters its jail first thing.
	worker.MaybeRun(worker.Config{Enter: func() error {
		cfg, ok, err := jail.ChildConfigFromEnv()
		if !ok || err != nil {
			return err // no jail: started with UnsafeNoJail
		}
		return jail.Enter(cfg)
	}})
	if cfg, ok, err := jail.ChildConfigFromEnv(); ok {
		if err == nil {
			err = jail.Enter(cfg) // a probe child ends inside Enter
		}
		fmt.Fprintf(os.Stderr, "stepbox: jail child: %v\n", err)
		syscall.Exit(3)
	}
}
