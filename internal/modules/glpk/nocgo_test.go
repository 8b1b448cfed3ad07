//go:build !cgo

package glpk_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stepbox/stepbox/internal/modules/glpk"
)

func TestUnavailableWithoutCgo(t *testing.T) {
	_, err := glpk.Solve(context.Background(), []byte(`{"name":"x","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1}]}}`), glpk.Options{})
	var ge *glpk.Error
	if !errors.As(err, &ge) || ge.Kind != glpk.KindUnavailable || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Solve: %v", err)
	}
}
