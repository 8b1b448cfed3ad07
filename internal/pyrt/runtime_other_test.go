//go:build !linux

package pyrt_test

import (
	"errors"
	"testing"

	"github.com/stepbox/stepbox/internal/pyrt"
)

func TestUnsupported(t *testing.T) {
	if _, err := pyrt.NewLauncher(pyrt.Config{}); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("NewLauncher: %v, want ErrUnsupported", err)
	}
}
