//go:build !cgo || stepbox_noglpk

package glpk_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/modules/glpk"
)

// TestUnavailable: a build without GLPK (no cgo, or the stepbox_noglpk
// tag) fails every solve with KindUnavailable, saying why and what to do.
func TestUnavailable(t *testing.T) {
	_, err := glpk.Solve(context.Background(), []byte(`{"name":"x","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1}]}}`), glpk.Options{})
	var ge *glpk.Error
	if !errors.As(err, &ge) || ge.Kind != glpk.KindUnavailable || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Solve: %v", err)
	}
	if avail := glpk.Available(); avail == nil || avail.Error() != err.Error() {
		t.Fatalf("Available() = %v, Solve: %v", avail, err)
	}
	if !strings.Contains(err.Error(), "GLPK is not available: this binary was built "+built) || !strings.Contains(err.Error(), "libglpk-dev and libltdl-dev") {
		t.Fatalf("message: %v", err)
	}
	if v := glpk.Version(); v != "" {
		t.Fatalf("Version() = %q", v)
	}
}
