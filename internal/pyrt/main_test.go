//go:build linux

package pyrt_test

import (
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/internal/worker"
)

func TestMain(m *testing.M) {
	// A worker of the tests' pools, a zygote's launcher and jail.Probe's
	// child never return from here.
	worker.TakeOver()
	testenv.Main(m, closeShared, closeDataStack)
}
