//go:build linux

package pyrt_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/pyrt"
	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/internal/worker"
)

func TestMain(m *testing.M) {
	// The zygote's launcher never returns from here.
	pyrt.MaybeZygote()
	// Nor does jail.Probe's child.
	if cfg, ok, err := jail.ChildConfigFromEnv(); ok {
		if err == nil {
			err = jail.Enter(cfg)
		}
		fmt.Fprintf(os.Stderr, "jail child: %v\n", err)
		syscall.Exit(3)
	}
	// Nor does a worker of the module tests' pool.
	if worker.Enabled() {
		os.Exit(worker.Main(worker.Config{}))
	}
	testenv.Main(m, closeShared, closeModuleHosts)
}
