//go:build cgo && !stepbox_noglpk

package glpk_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/modules/glpk"
)

// TestWrite: the model as GLPK writes it, in CPLEX LP (what glpk.js's
// write returns for the same model; internal/differential compares the
// two) and in free MPS.
func TestWrite(t *testing.T) {
	lp, err := glpk.Write(json.RawMessage(readmeLP), "", glpk.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`\* Problem: LP *\`, "Maximize", " obj: + 0.6 x1 + 0.5 x2", "Subject To", " cons1: + x1 + 2 x2 <= 1", "End"} {
		if !strings.Contains(lp, want) {
			t.Errorf("LP text lacks %q:\n%s", want, lp)
		}
	}
	mps, err := glpk.Write(json.RawMessage(readmeLP), "mps", glpk.Limits{})
	if err != nil || !strings.Contains(mps, "NAME LP") || !strings.Contains(mps, "ROWS") || !strings.Contains(mps, "ENDATA") {
		t.Errorf("MPS text: %v\n%s", err, mps)
	}
	if _, err := glpk.Write(json.RawMessage(readmeLP), "xml", glpk.Limits{}); err == nil {
		t.Error("format xml accepted")
	}
	if _, err := glpk.Write(json.RawMessage(`{"name":"x"}`), "lp", glpk.Limits{}); err == nil {
		t.Error("a model without an objective written")
	}
}
