package jail

import (
	"fmt"
	"os"
	"syscall"
)

// init builds the jail of a child that Prepare started, in its first
// execution, and re-executes it (see Enter): that execution needs nothing
// but this package, so it stops before the packages that import this one
// initialise, which in a large host binary cost more than the jail itself.
// The second execution, and every process that is not a jailed child,
// initialises as usual; its main calls Enter, which then finishes the
// jail.
func init() {
	if os.Getenv(EnvConfig) == "" || os.Getenv(envStage) == "2" {
		return
	}
	cfg, ok, err := ChildConfigFromEnv()
	if !ok {
		return
	}
	if err == nil {
		err = Enter(cfg) // returns only on error; a probe ends inside
	}
	fmt.Fprintf(os.Stderr, "stepbox: jail: %v\n", err)
	syscall.Exit(3)
}
