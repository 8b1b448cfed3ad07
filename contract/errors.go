package contract

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

// Error is how every run fails, on a local engine and through the client
// alike. Use errors.As to read it and errors.Is with a sentinel
// (ErrTimeout, ...) to test its code:
//
//	var se *contract.Error // the same type as *sandbox.Error
//	if errors.As(err, &se) && se.Code == contract.CodeLimitExceeded {
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

	cause error // for Unwrap; never crosses a process boundary
}

// NewError returns an *Error with code and message whose Unwrap returns
// cause (which may be nil). The cause stays on the side where the error
// arose: only the exported fields cross the wire.
func NewError(code Code, message string, cause error) *Error {
	return &Error{Code: code, Message: message, cause: cause}
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
func (e *Error) Unwrap() error { return e.cause }
