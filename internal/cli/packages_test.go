package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/cli"
)

func TestPackages(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := stepbox(t, "", "packages", "list", "--cache", dir)
	if code != cli.ExitUnavailable || !strings.Contains(out, "simple-statistics@7.12.1\tnot installed") {
		t.Fatalf("list before install: exit %d, %q %q", code, out, errs)
	}
	// With this machine's npm client and configuration.
	code, out, errs = stepbox(t, "", "packages", "install", "--cache", dir)
	if code != cli.ExitOK || !strings.HasPrefix(out, "simple-statistics@7.12.1\tinstalled\t") {
		t.Fatalf("install: exit %d, %q %q", code, out, errs)
	}
	if !strings.Contains(errs, "integrity verified") {
		t.Errorf("stderr %q", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "simple-statistics@7.12.1", "bundle.js")); err != nil {
		t.Fatal(err)
	}
	code, out, _ = stepbox(t, "", "packages", "list", "--cache", dir)
	if code != cli.ExitOK || !strings.Contains(out, "simple-statistics@7.12.1\tinstalled") {
		t.Fatalf("list after install: exit %d, %q", code, out)
	}
}

func TestPackagesUsage(t *testing.T) {
	cat := filepath.Join(t.TempDir(), "cat.json")
	os.WriteFile(cat, []byte(`[{"name": "x", "version": "latest", "integrity": "sha512-x"}]`), 0o644)
	for _, args := range [][]string{
		{"packages"},
		{"packages", "remove"},
		{"packages", "install", "extra"},
		{"packages", "install", "--bogus"},
		{"packages", "install", "--catalogue", cat},
		{"packages", "install", "--catalogue", "/nonexistent.json"},
	} {
		if code, _, errs := stepbox(t, "", args...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	// Without HOME or XDG_CACHE_HOME there is no default cache.
	if code, _, errs := stepbox(t, "", "packages", "list"); code != cli.ExitUsage || !strings.Contains(errs, "--cache") {
		t.Errorf("no default cache: exit %d, %q", code, errs)
	}
	// A package npm cannot fetch: UNAVAILABLE.
	if code, _, errs := stepbox(t, "", "packages", "install", "--cache", t.TempDir(), "--npm", "stepbox-no-such-npm"); code != cli.ExitUnavailable || !strings.Contains(errs, "was not found") {
		t.Errorf("no npm: exit %d, %q", code, errs)
	}
}
