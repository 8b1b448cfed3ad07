package sandbox

import (
	"fmt"
	"os"
	"syscall"

	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// The engine starts helper processes by re-executing the host's own
// binary: Python's jailed zygote and the jail's capability probe. They are
// told apart by environment variables only the engine sets, and taken over
// here, before the host's main runs, so that a host program needs no line
// of its own for them.
func init() { takeOverChild() }

func takeOverChild() {
	pyrt.MaybeZygote() // returns only when this is not a zygote
	if cfg, ok, err := jail.ChildConfigFromEnv(); ok {
		if err == nil {
			err = jail.Enter(cfg) // a probe child ends inside Enter
		}
		fmt.Fprintf(os.Stderr, "stepbox: jail child: %v\n", err)
		syscall.Exit(3)
	}
}
