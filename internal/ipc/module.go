package ipc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The module operations: what a guest's duckdb and glpk objects do (DESIGN
// decision 7). A JavaScript run performs them inside its VM; a Python run's
// process sends them to the worker that hosts it, which performs them as
// ModuleCalls on the worker's own runtime (jsrt.ModuleSession).
const (
	OpDuckDBOpen  = "duckdb.open"
	OpDuckDBLoad  = "duckdb.load"
	OpDuckDBQuery = "duckdb.query"
	OpDuckDBTable = "duckdb.table" // a query whose result is a table with its schema
	OpDuckDBExec  = "duckdb.exec"
	OpDuckDBClose = "duckdb.close"
	OpGLPKSolve   = "glpk.solve"
	OpGLPKWrite   = "glpk.write"
)

// ModuleOps lists the module operations.
var ModuleOps = []string{OpDuckDBOpen, OpDuckDBLoad, OpDuckDBQuery, OpDuckDBTable, OpDuckDBExec, OpDuckDBClose, OpGLPKSolve, OpGLPKWrite}

// ModuleOf returns the module an operation belongs to: "duckdb" for
// "duckdb.query".
func ModuleOf(op string) string {
	m, _, _ := strings.Cut(op, ".")
	return m
}

// ModuleCall is one module operation of a Python run. Op says which of
// the other fields it carries; Check enforces it. The JSON arguments travel
// as they are, unescaped.
type ModuleCall struct {
	// ID numbers the calls of a run: positive, unique; the reply carries
	// it back.
	ID int64  `json:"id"`
	Op string `json:"op"`
	// Handle is the database of a duckdb call other than open: the value
	// open returned.
	Handle int64 `json:"handle,omitempty"`
	// Table is db.load's table name.
	Table string `json:"table,omitempty"`
	// SQL is the statement of db.query and db.exec.
	SQL string `json:"sql,omitempty"`
	// Rows is db.load's rows: a JSON array of objects.
	Rows json.RawMessage `json:"rows,omitempty"`
	// Params are db.query's parameters, a JSON array; absent means none.
	Params json.RawMessage `json:"params,omitempty"`
	// Model and Options are glpk.solve's and glpk.write's arguments;
	// absent Options means the defaults.
	Model   json.RawMessage `json:"model,omitempty"`
	Options json.RawMessage `json:"options,omitempty"`
}

// Check reports whether c is a known operation carrying exactly the
// arguments it takes.
func (c *ModuleCall) Check() error {
	if c.ID <= 0 {
		return fmt.Errorf("call id %d", c.ID)
	}
	if c.Handle < 0 {
		return fmt.Errorf("%.40s: handle %d", c.Op, c.Handle)
	}
	// Which arguments are present, to compare with what the op takes.
	type parts struct{ handle, table, sql, rows, params, model, options bool }
	got := parts{c.Handle != 0, c.Table != "", c.SQL != "", len(c.Rows) > 0, len(c.Params) > 0, len(c.Model) > 0, len(c.Options) > 0}
	var allowed parts
	switch c.Op {
	case OpDuckDBOpen:
	case OpDuckDBLoad:
		allowed = parts{handle: true, table: true, rows: true}
		if !got.rows {
			return errors.New("duckdb.load without rows")
		}
	case OpDuckDBQuery, OpDuckDBTable:
		allowed = parts{handle: true, sql: true, params: true}
	case OpDuckDBExec:
		allowed = parts{handle: true, sql: true}
	case OpDuckDBClose:
		allowed = parts{handle: true}
	case OpGLPKSolve, OpGLPKWrite:
		allowed = parts{model: true, options: true}
		if !got.model {
			return errors.New(c.Op + " without a model")
		}
	default:
		return fmt.Errorf("unknown module operation %.40q", c.Op)
	}
	// A present argument must be allowed; an allowed one may be absent
	// (an empty table name or SQL is DuckDB's to refuse).
	if (got.handle && !allowed.handle) || (got.table && !allowed.table) || (got.sql && !allowed.sql) ||
		(got.rows && !allowed.rows) || (got.params && !allowed.params) || (got.model && !allowed.model) ||
		(got.options && !allowed.options) {
		return fmt.Errorf("%s: arguments do not match the operation", c.Op)
	}
	return nil
}

// ModuleReply is the outcome of a ModuleCall, by ID: exactly one of Value
// (the call's JSON result), Error (the guest's call fails with this
// message, which it may catch) or Failure (the run ends with it: a memory
// or result limit, the deadline).
type ModuleReply struct {
	ID      int64           `json:"id"`
	Value   json.RawMessage `json:"value,omitempty"`
	Error   string          `json:"error,omitempty"`
	Failure *Failure        `json:"failure,omitempty"`
}
