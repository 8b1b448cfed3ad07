//go:build !linux

package pyrt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jail"
)

// EnvZygote is the environment variable that makes a process the launcher
// of a Python zygote (Linux only).
const EnvZygote = "STEPBOX_PYZYGOTE"

// MaybeZygote does nothing here: there is no zygote to launch.
func MaybeZygote() {}

// Launcher starts Python zygotes; on this system it cannot be created.
type Launcher struct{}

// NewLauncher fails closed: Python steps need the Linux jail.
func NewLauncher(cfg Config) (*Launcher, error) {
	if _, err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("pyrt: %w: Python steps need the Linux jail (this is %s)", errors.ErrUnsupported, runtime.GOOS)
}

// Python returns "".
func (l *Launcher) Python() string { return "" }

// Version returns "".
func (l *Launcher) Version() string { return "" }

// StartTimeout returns 0.
func (l *Launcher) StartTimeout() time.Duration { return 0 }

// Jail returns the zero jail.Config.
func (l *Launcher) Jail(hostUID, hostGID int) jail.Config { return jail.Config{} }

// Command fails.
func (l *Launcher) Command() (cmd *exec.Cmd, control *os.File, err error) {
	return nil, nil, errors.ErrUnsupported
}

// Zygote is the host's record of a started zygote.
type Zygote struct{ Info ipc.Zygote }

// Ready fails.
func (l *Launcher) Ready(control *os.File, pid int) (*Zygote, error) {
	return nil, errors.ErrUnsupported
}

// ProveSockets fails.
func (z *Zygote) ProveSockets() error { return errors.ErrUnsupported }

// Close does nothing.
func (z *Zygote) Close() {}

// Runner runs Python steps; on this system it cannot be created.
type Runner struct{}

// NewRunner fails closed.
func NewRunner(control *os.File, info ipc.Zygote, modules ModuleHost) (*Runner, error) {
	control.Close()
	return nil, fmt.Errorf("pyrt: %w: Python steps need the Linux jail (this is %s)", errors.ErrUnsupported, runtime.GOOS)
}

// Dead reports true.
func (r *Runner) Dead() bool { return true }

// Run fails with UNAVAILABLE.
func (r *Runner) Run(ctx context.Context, job Job) (*ipc.Event, string) {
	return ipc.Failed(&ipc.Failure{Code: ipc.CodeUnavailable, Message: "Python is unavailable on " + runtime.GOOS}, ipc.Stats{}), ""
}

// Close does nothing.
func (r *Runner) Close() {}
