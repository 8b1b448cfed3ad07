//go:build !cgo || stepbox_noglpk

package cli_test

import (
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/cli"
)

// TestNoGLPK: in a build without GLPK (no cgo, or the stepbox_noglpk tag)
// a step that solves is UNAVAILABLE with the reason and the fix, and
// `stepbox version` says the same.
func TestNoGLPK(t *testing.T) {
	why := "GLPK is not available: this binary was built " + built
	code, out, errs := stepbox(t, "", "version")
	if code != 0 || !strings.Contains(out, "\nglpk: no ("+why) || !strings.Contains(out, "libglpk-dev and libltdl-dev") {
		t.Fatalf("version: exit %d: %q %q", code, out, errs)
	}
	step := `return await glpk.solve({name: "lp", objective: {direction: glpk.GLP_MAX, name: "z", vars: [{name: "x", coef: 1}]},
		subjectTo: [{name: "c", vars: [{name: "x", coef: 1}], bnds: {type: glpk.GLP_UP, ub: 1}}]})`
	code, out, errs = stepbox(t, step, "run", "-", "--modules", "glpk")
	if code != cli.ExitUnavailable || out != "" || !strings.Contains(errs, "UNAVAILABLE") || !strings.Contains(errs, why) || !strings.Contains(errs, "libglpk-dev and libltdl-dev") {
		t.Fatalf("run: exit %d: %q %q", code, out, errs)
	}
}
