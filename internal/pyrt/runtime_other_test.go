//go:build !linux

package pyrt_test

import (
	"errors"
	"testing"

	"github.com/stepbox/stepbox/internal/pyrt"
)

func TestUnsupported(t *testing.T) {
	if _, err := pyrt.New(pyrt.Config{}); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("New: %v, want ErrUnsupported", err)
	}
}
