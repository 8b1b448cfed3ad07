package sandbox

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stepbox/stepbox/internal/ipc"
)

// Code classifies how a run failed. Codes are stable API; messages are for
// people.
type Code string

// The error codes of the run contract.
const (
	// CodeValidation: the request was refused before running: unknown plan
	// or language, limits above the plan, code too large, input not JSON,
	// a syntax error in the step.
	CodeValidation Code = "VALIDATION"
	// CodeRuntime: the step threw, or returned something that is not JSON.
	CodeRuntime Code = "RUNTIME"
	// CodeTimeout: the step used up its CPU or wall-clock time.
	CodeTimeout Code = "TIMEOUT"
	// CodeOOM: the step ran out of memory.
	CodeOOM Code = "OOM"
	// CodeLimitExceeded: the step crossed another limit; Error.Limit says
	// which.
	CodeLimitExceeded Code = "LIMIT_EXCEEDED"
	// CodeAborted: the caller aborted the run, its context ended, or the
	// engine closed.
	CodeAborted Code = "ABORTED"
	// CodeCrashed: the process running the step died.
	CodeCrashed Code = "CRASHED"
	// CodeUnavailable: the run was not accepted: queue full, engine closed,
	// language not available here.
	CodeUnavailable Code = "UNAVAILABLE"
)

// Sentinels, one per code, for errors.Is. (*Error).Is compares codes only.
var (
	ErrValidation    = &Error{Code: CodeValidation}
	ErrRuntime       = &Error{Code: CodeRuntime}
	ErrTimeout       = &Error{Code: CodeTimeout}
	ErrOOM           = &Error{Code: CodeOOM}
	ErrLimitExceeded = &Error{Code: CodeLimitExceeded}
	ErrAborted       = &Error{Code: CodeAborted}
	ErrCrashed       = &Error{Code: CodeCrashed}
	ErrUnavailable   = &Error{Code: CodeUnavailable}
)

// ErrClosed is wrapped by the UNAVAILABLE error of a Submit after Close, and
// by the ABORTED error of runs that Close ended.
var ErrClosed = errors.New("stepbox: engine closed")

// ErrStalled is wrapped by the ABORTED error of a run whose caller did not
// read its events for Config.StallTimeout while the run waited to deliver
// one.
var ErrStalled = errors.New("stepbox: the caller did not read the run's events")

// Error is how every run fails. Use errors.As to read it and errors.Is with
// a sentinel (ErrTimeout, ...) to test its code:
//
//	var se *sandbox.Error
//	if errors.As(err, &se) && se.Code == sandbox.CodeLimitExceeded {
//		log.Printf("crossed %s", se.Limit)
//	}
//
// When the caller's own context ended the run, errors.Is(err,
// context.Canceled) (or DeadlineExceeded) is true as well.
type Error struct {
	// Code classifies the failure.
	Code Code `json:"code"`
	// Limit names the limit crossed, for TIMEOUT, OOM, LIMIT_EXCEEDED and
	// some VALIDATION errors: a Limits JSON name such as "wallMs" or
	// "maxDataRequests", or "time" for a worker killed after its grace. A
	// RUNTIME error may name "stackDepth" (recursion too deep) or
	// "jsonDepth" (a value nested too deeply).
	Limit string `json:"limit,omitempty"`
	// Message says what happened, for people. For a thrown error it is
	// "Name: message" as JavaScript prints it.
	Message string `json:"message"`
	// Stack is the guest stack trace, with the user's file and lines.
	Stack string `json:"stack,omitempty"`
	// Position is where in the user's source the error arose, if known.
	Position *Position `json:"position,omitempty"`
	// Diagnostics lists every problem of a TypeScript step that did not
	// compile.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// Stats describe the run up to its end.
	Stats Stats `json:"stats"`

	err error // cause, for Unwrap; never crosses a process boundary
}

// Position is a 1-based line and column in the source the user wrote.
type Position struct {
	Line   int `json:"line"`
	Column int `json:"column,omitempty"`
}

// Error formats the error as "stepbox: CODE: message".
func (e *Error) Error() string {
	if e.Message == "" {
		return "stepbox: " + string(e.Code)
	}
	return "stepbox: " + string(e.Code) + ": " + e.Message
}

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.err }

func newError(code Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), err: cause}
}

// errorFromWire is the one place a run's failure becomes an *Error.
func errorFromWire(f *ipc.Failure, cause error) *Error {
	e := &Error{
		Code:    Code(f.Code),
		Limit:   f.Limit,
		Message: f.Message,
		Stack:   f.Stack,
		Stats:   statsFromWire(f.Stats),
		err:     cause,
	}
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
