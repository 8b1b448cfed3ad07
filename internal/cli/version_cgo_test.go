//go:build cgo && !stepbox_noglpk

package cli_test

import (
	"strings"
	"testing"
)

// TestVersionModules: a full build says it has both modules, with their
// versions, as each answers for itself.
func TestVersionModules(t *testing.T) {
	code, out, errs := stepbox(t, "", "version")
	if code != 0 || !strings.Contains(out, "\nduckdb: yes (DuckDB v1.") || !strings.Contains(out, "\nglpk: yes (GLPK 5.") {
		t.Fatalf("exit %d: %q %q", code, out, errs)
	}
}
