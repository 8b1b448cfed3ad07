package intl

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTablesGenerated runs the generator again (its npm ci is cached, by
// the lock file, in the user's cache directory) and compares: tables.go
// is never edited by hand.
func TestTablesGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run ./gen (and npm ci once)")
	}
	out := filepath.Join(t.TempDir(), "tables.go")
	cmd := exec.Command("go", "run", "./gen", "-dir", "gen", "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./gen (are node and npm installed? ./scripts/test installs them): %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("tables.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("tables.go is not what gen/main.go writes: run go generate ./internal/intl")
	}
}
