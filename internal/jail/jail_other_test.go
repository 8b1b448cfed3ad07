//go:build !linux

package jail_test

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/stepbox/stepbox/internal/jail"
)

// Off Linux every entry point fails closed.
func TestFailsClosed(t *testing.T) {
	if err := jail.Probe().Err(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Probe().Err() = %v, want errors.ErrUnsupported", err)
	}
	cmd := exec.Command("worker")
	if _, err := jail.Prepare(cmd, jail.Config{}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Prepare = %v, want errors.ErrUnsupported", err)
	}
	if cmd.SysProcAttr != nil || cmd.Env != nil {
		t.Errorf("Prepare changed cmd")
	}
	if err := jail.Enter(jail.ChildConfig{}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Enter = %v, want errors.ErrUnsupported", err)
	}
	if err := jail.NewFilter().Install(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Install = %v, want errors.ErrUnsupported", err)
	}
}
