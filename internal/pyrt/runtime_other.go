//go:build !linux

package pyrt

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/stepbox/stepbox/internal/ipc"
)

// EnvZygote is the environment variable that makes a process the launcher
// of a Python zygote (Linux only).
const EnvZygote = "STEPBOX_PYZYGOTE"

// Runtime runs Python steps; on this system it cannot be created.
type Runtime struct{}

// New fails closed: Python steps need the Linux jail.
func New(cfg Config) (*Runtime, error) {
	if _, err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("pyrt: %w: Python steps need the Linux jail (this is %s)", errors.ErrUnsupported, runtime.GOOS)
}

// MaybeZygote does nothing here: there is no zygote to launch.
func MaybeZygote() {}

// Python returns "".
func (r *Runtime) Python() string { return "" }

// Version returns "".
func (r *Runtime) Version() string { return "" }

// Run fails with UNAVAILABLE.
func (r *Runtime) Run(ctx context.Context, job Job) *ipc.Event {
	return &ipc.Event{Kind: ipc.KindError, Error: &ipc.Failure{Code: ipc.CodeUnavailable, Message: "Python is unavailable on " + runtime.GOOS}}
}

// RunWithModules fails with UNAVAILABLE.
func (r *Runtime) RunWithModules(ctx context.Context, job Job, host ModuleHost) *ipc.Event {
	return r.Run(ctx, job)
}

// Close does nothing.
func (r *Runtime) Close() {}
