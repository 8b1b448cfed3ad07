//go:build !linux

package jail

import (
	"errors"
	"os/exec"
	"runtime"
)

// errNotLinux is the refusal every entry point returns off Linux: the jail
// needs Linux namespaces and seccomp, and Stepbox never runs Python unjailed.
func errNotLinux() error {
	return &LayerError{Layer: LayerOS, Err: errors.New(runtime.GOOS + " has no namespaces or seccomp"), Unsupported: true}
}

// Probe reports that no layer is available on this operating system.
func Probe() Capabilities {
	return Capabilities{OS: runtime.GOOS, Memory: EnforcedByRlimit, Procs: EnforcedByRlimit,
		Refused: []*LayerError{errNotLinux().(*LayerError)}}
}

// Prepare fails closed: it returns an error wrapping errors.ErrUnsupported.
func Prepare(cmd *exec.Cmd, cfg Config) (*Handle, error) { return nil, errNotLinux() }

// Handle is the host's side of a prepared worker; off Linux there is none.
type Handle struct{}

// Started fails closed.
func (h *Handle) Started(pid int) error { return errNotLinux() }

// Cleanup does nothing.
func (h *Handle) Cleanup() error { return nil }

// Enter fails closed: it returns an error wrapping errors.ErrUnsupported.
func Enter(cfg ChildConfig) error { return errNotLinux() }

// Install fails closed: it returns an error wrapping errors.ErrUnsupported.
func (f Filter) Install() error { return errNotLinux() }
