//go:build !cgo

package duckdb

import (
	"context"
	"encoding/json"
	"errors"
)

// This binary was built without cgo: DuckDB is a C++ library, so every
// call fails with KindUnavailable.

var errUnavailable = &Error{
	Kind:    KindUnavailable,
	Message: "DuckDB is not available: this binary was built without cgo; install build-essential and rebuild with cgo (scripts/stepbox does, as root)",
	err:     errors.ErrUnsupported,
}

// DB is one run's in-memory DuckDB database; see the cgo build.
type DB struct{}

// Open fails: this binary has no DuckDB.
func Open(context.Context, Config) (*DB, error) { return nil, errUnavailable }

// Load fails: this binary has no DuckDB.
func (*DB) Load(context.Context, string, json.RawMessage) error { return errUnavailable }

// LoadRows fails: this binary has no DuckDB.
func (*DB) LoadRows(context.Context, string, *Rows) error { return errUnavailable }

// Query fails: this binary has no DuckDB.
func (*DB) Query(context.Context, string, []any) (json.RawMessage, error) {
	return nil, errUnavailable
}

// QueryTable fails: this binary has no DuckDB.
func (*DB) QueryTable(context.Context, string, []any) (json.RawMessage, error) {
	return nil, errUnavailable
}

// Exec fails: this binary has no DuckDB.
func (*DB) Exec(context.Context, string) error { return errUnavailable }

// Close does nothing.
func (*DB) Close() error { return nil }

// Pool keeps databases ready; see the cgo build.
type Pool struct{}

// NewPool returns a pool whose Open fails.
func NewPool(int) *Pool { return &Pool{} }

// Open fails: this binary has no DuckDB.
func (*Pool) Open(context.Context, Config) (*DB, error) { return nil, errUnavailable }

// Close does nothing.
func (*Pool) Close() error { return nil }
