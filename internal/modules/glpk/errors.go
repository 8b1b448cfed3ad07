package glpk

import "fmt"

// Kind says why a solve failed, so that the engine can decide how the run
// ends.
//
// Engine mapping:
//
//	KindInvalid, KindSolver   → the guest's promise rejects (RUNTIME if uncaught)
//	KindLimit                 → the run ends: LIMIT_EXCEEDED, limit = Error.Limit
//	KindMemory                → the run ends: OOM
//	KindCanceled              → the run is already ending (deadline, abort); report that instead
//	KindUnavailable           → UNAVAILABLE (the binary has no GLPK)
//
// An infeasible or unbounded model is not an error: it is a result with
// status GLP_NOFEAS or GLP_UNBND, as in glpk.js.
type Kind string

// The kinds of failure.
const (
	// KindInvalid: the model or the options are malformed: not the
	// glpk.js shape, an unknown member, a bad bound type, a duplicate
	// name, a variable in bounds, generals or binaries that the objective
	// and the constraints do not mention, and so on. Message names the
	// member, as in "subjectTo[3].bnds.type: …".
	KindInvalid Kind = "invalid"
	// KindLimit: the model is larger than Limits allow; Limit names the
	// cap.
	KindLimit Kind = "limit"
	// KindMemory: GLPK needed more than Limits.MemoryLimitBytes.
	KindMemory Kind = "memory"
	// KindSolver: GLPK reported an internal error (which would have
	// aborted the process, had the error hook not caught it).
	KindSolver Kind = "solver"
	// KindCanceled: ctx ended before or during the solve. Unwrap gives
	// context.Canceled or context.DeadlineExceeded.
	KindCanceled Kind = "canceled"
	// KindUnavailable: this binary has no GLPK: it was built without cgo,
	// or with the stepbox_noglpk tag. The message says which and how to
	// build one that has it. Unwrap gives errors.ErrUnsupported.
	KindUnavailable Kind = "unavailable"
)

// Names of the caps, the values of Error.Limit for KindLimit.
const (
	LimitVars        = "glpkVars"
	LimitConstraints = "glpkConstraints"
	LimitNonzeros    = "glpkNonzeros"
)

// Error is the error Solve and ParseOptions return. Message is written
// for the step's author and is safe to show to the guest.
//
//	var ge *glpk.Error
//	if errors.As(err, &ge) && ge.Kind == glpk.KindInvalid {
//		// reject the guest's promise with ge.Error()
//	}
type Error struct {
	Kind    Kind   `json:"kind"`
	Limit   string `json:"limit,omitempty"` // set for KindLimit
	Message string `json:"message"`
	err     error
}

// Error returns Message prefixed with "glpk: ".
func (e *Error) Error() string { return "glpk: " + e.Message }

// Unwrap returns the cause: a context error for KindCanceled,
// errors.ErrUnsupported for KindUnavailable, else nil.
func (e *Error) Unwrap() error { return e.err }

// Is makes errors.Is(err, &Error{Kind: KindInvalid}) compare kinds only.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Message == "" && t.err == nil
}

func invalidf(format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Message: fmt.Sprintf(format, args...)}
}

func limitf(limit, format string, args ...any) *Error {
	return &Error{Kind: KindLimit, Limit: limit, Message: fmt.Sprintf(format, args...)}
}
