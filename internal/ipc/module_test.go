package ipc

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestModuleCallCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		call ModuleCall
		want string // "" for valid
	}{
		{"open", ModuleCall{ID: 1, Op: OpDuckDBOpen}, ""},
		{"load", ModuleCall{ID: 2, Op: OpDuckDBLoad, Handle: 1, Table: "t", Rows: json.RawMessage(`[{"a":1}]`)}, ""},
		{"query", ModuleCall{ID: 3, Op: OpDuckDBQuery, Handle: 1, SQL: "SELECT ?", Params: json.RawMessage(`[2]`)}, ""},
		{"solve", ModuleCall{ID: 4, Op: OpGLPKSolve, Model: json.RawMessage(`{}`), Options: json.RawMessage(`{}`)}, ""},
		{"unknown op", ModuleCall{ID: 1, Op: "duckdb.attach"}, "unknown module operation"},
		{"no id", ModuleCall{ID: 0, Op: OpDuckDBOpen}, "call id 0"},
		{"extra argument", ModuleCall{ID: 1, Op: OpDuckDBExec, SQL: "x", Rows: json.RawMessage(`[]`)}, "do not match the operation"},
		{"load without rows", ModuleCall{ID: 1, Op: OpDuckDBLoad, Handle: 1, Table: "t"}, "without rows"},
		{"solve without a model", ModuleCall{ID: 1, Op: OpGLPKSolve}, "without a model"},
		{"negative handle", ModuleCall{ID: 1, Op: OpDuckDBClose, Handle: -1}, "handle -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call.Check()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
