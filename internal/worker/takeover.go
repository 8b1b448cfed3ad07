package worker

import (
	"fmt"
	"os"
	"syscall"

	"github.com/stepbox/stepbox/internal/forkserver"
	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// TakeOver turns this process into the child the engine started it as,
// and then never returns: the pool's fork server, a worker of the pool
// (which enters its jail first), the launcher of a Python zygote, or the
// jail's capability probe.
// They are told apart by environment variables only the engine sets.
// Otherwise TakeOver returns at once. Package sandbox calls it from its
// init, so that a host program needs no line of its own for its children;
// a test binary that starts workers calls it first thing in TestMain.
func TakeOver() {
	forkserver.MaybeServe() // returns only when this is not the pool's fork server
	pyrt.MaybeZygote()      // returns only when this is not a zygote
	// A worker of the pool: it enters its jail first thing.
	MaybeRun(Config{Enter: enterJail})
	if cfg, ok, err := jail.ChildConfigFromEnv(); ok {
		if err == nil {
			err = jail.Enter(cfg) // a probe child ends inside Enter
		}
		fmt.Fprintf(os.Stderr, "stepbox: jail child: %v\n", err)
		syscall.Exit(3)
	}
}

// enterJail enters the jail the pool prepared for this worker, if any (a
// pool with UnsafeNoJail prepares none).
func enterJail() error {
	cfg, ok, err := jail.ChildConfigFromEnv()
	if !ok || err != nil {
		return err
	}
	return jail.Enter(cfg)
}
