//go:build !cgo

package duckdb_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stepbox/stepbox/internal/modules/duckdb"
)

func TestUnavailableWithoutCgo(t *testing.T) {
	_, err := duckdb.Open(context.Background(), duckdb.Config{})
	var de *duckdb.Error
	if !errors.As(err, &de) || de.Kind != duckdb.KindUnavailable || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Open: %v", err)
	}
}
