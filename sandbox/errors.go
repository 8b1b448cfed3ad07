package sandbox

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stepbox/stepbox/contract"
	"github.com/stepbox/stepbox/internal/ipc"
)

// ErrClosed is wrapped by the UNAVAILABLE error of a Submit after Close, and
// by the ABORTED error of runs that Close ended.
var ErrClosed = errors.New("stepbox: engine closed")

// ErrStalled is wrapped by the ABORTED error of a run whose caller did not
// read its events for Config.StallTimeout while the run waited to deliver
// one.
var ErrStalled = errors.New("stepbox: the caller did not read the run's events")

func newError(code Code, cause error, format string, args ...any) *Error {
	return contract.NewError(code, fmt.Sprintf(format, args...), cause)
}

// statsFromWire converts a worker's stats.
func statsFromWire(s ipc.Stats) Stats { return Stats(s) }

// errorFromWire is the one place a run's failure becomes an *Error.
func errorFromWire(f *ipc.Failure, cause error) *Error {
	e := contract.NewError(Code(f.Code), f.Message, cause)
	e.Limit, e.Stack, e.Stats = f.Limit, f.Stack, statsFromWire(f.Stats)
	if f.Position != nil {
		e.Position = &Position{Line: f.Position.Line, Column: f.Position.Column}
	}
	return e
}

// JailUnavailableError is the error of New (and of a Python run in an
// in-process engine) when the worker jail cannot be set up on this
// machine: which layer the kernel refused, why, and what would let it.
// errors.Is(err, errors.ErrUnsupported) holds.
//
//	var je *sandbox.JailUnavailableError
//	if errors.As(err, &je) {
//		log.Printf("no jail here: %s; to fix: %s", je.Cause, je.Fix)
//	}
type JailUnavailableError struct {
	// Cause names what refuses the jail, with the setting that says so:
	// "user namespaces are switched off: user.max_user_namespaces = 0",
	// "AppArmor restricts unprivileged user namespaces (...)", a
	// container's seccomp profile, or that the jail is Linux-only.
	Cause string
	// Fix says what to change: the sysctl, the AppArmor profile shipped in
	// deploy/apparmor, the container's flags or the pod's securityContext.
	Fix string

	err error // the refused layers, wrapping errors.ErrUnsupported
}

// Error says what was refused, why, and what fixes it.
func (e *JailUnavailableError) Error() string {
	refused := strings.ReplaceAll(fmt.Sprint(e.err), "\n", "; ")
	return fmt.Sprintf("the worker jail cannot be set up here (%s): %s; to fix: %s (in Go, Config.UnsafeNoJail runs without the jail, for development only)",
		refused, e.Cause, e.Fix)
}

// Unwrap returns the refused layers' error.
func (e *JailUnavailableError) Unwrap() error { return e.err }
