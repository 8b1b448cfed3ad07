package duckdb

import (
	"errors"
	"fmt"
)

// Kind says why a call failed, so that the engine can decide how the run
// ends. Its string form may travel over IPC.
//
// Engine mapping:
//
//	KindInvalid, KindSQL   → the guest's promise rejects (RUNTIME if uncaught)
//	KindMemory             → the run ends: OOM (DuckDB's memory_limit, derived from memoryMb)
//	KindLimit              → the run ends: LIMIT_EXCEEDED, limit = Error.Limit
//	KindCanceled           → the run is already ending (deadline, abort, close); report that instead
//	KindUnavailable        → UNAVAILABLE (the binary has no DuckDB)
type Kind string

// The kinds of failure.
const (
	// KindInvalid: the arguments are malformed (table name, rows that are
	// not an array of objects, a parameter of an unsupported type).
	KindInvalid Kind = "invalid"
	// KindSQL: DuckDB refused or failed the statement: syntax, binder,
	// catalog, conversion, constraint, permission (a file, an extension or
	// a setting that the sandbox forbids), and so on. Message is DuckDB's.
	KindSQL Kind = "sql"
	// KindMemory: the statement needed more than the database's
	// memory_limit.
	KindMemory Kind = "memory"
	// KindLimit: a result cap of Config was crossed; Limit names it.
	KindLimit Kind = "limit"
	// KindCanceled: the call's context ended (DuckDB was interrupted) or
	// the DB was closed. Unwrap gives context.Canceled,
	// context.DeadlineExceeded or ErrClosed.
	KindCanceled Kind = "canceled"
	// KindUnavailable: this binary was built without cgo, so without
	// DuckDB. Unwrap gives errors.ErrUnsupported.
	KindUnavailable Kind = "unavailable"
)

// Names of the caps, the values of Error.Limit for KindLimit.
const (
	LimitResultRows  = "duckdbResultRows"
	LimitResultBytes = "duckdbResultBytes"
)

// ErrClosed is the cause of a KindCanceled error from a call on a closed DB.
var ErrClosed = errors.New("duckdb: database is closed")

// Error is the error every method of DB returns. Message is written for the
// step's author and is safe to show to the guest.
//
//	var de *duckdb.Error
//	if errors.As(err, &de) && de.Kind == duckdb.KindLimit {
//		// end the run: LIMIT_EXCEEDED, de.Limit
//	}
//
// Only Kind, Limit and Message should cross a process boundary; the cause
// that Unwrap returns stays in the worker.
type Error struct {
	Kind    Kind   `json:"kind"`
	Limit   string `json:"limit,omitempty"` // set for KindLimit
	Message string `json:"message"`
	err     error
}

// Error returns Message prefixed with "duckdb: ".
func (e *Error) Error() string { return "duckdb: " + e.Message }

// Unwrap returns the cause: a *duckdb-go Error, a context error, ErrClosed.
func (e *Error) Unwrap() error { return e.err }

// Is makes errors.Is(err, &Error{Kind: KindMemory}) compare kinds only.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Message == "" && t.err == nil
}

func invalidf(format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Message: fmt.Sprintf(format, args...)}
}
