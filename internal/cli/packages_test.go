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

// heCatalogue is a catalogue of one small npm package without
// dependencies, he 1.2.0 (HTML entities), pinned by the integrity npm
// prints for it (npm view he@1.2.0 dist.integrity).
const heCatalogue = `[{"name": "he", "version": "1.2.0",
  "integrity": "sha512-F/1DnUGPopORZi0ni+CvrCgHQ5FyEAHRLSApuYWMmrbSwoN2Mn/7k+Gl38gJnR7yyDZk6WLXwiGod1JOWNDKGw=="}]`

// TestRunCustomCatalogue: run takes --catalogue and --cache, with the
// meaning they have for "stepbox packages", and installs a package of the
// catalogue on its first import, with this machine's npm, saying so on
// stderr; later runs use the cache.
func TestRunCustomCatalogue(t *testing.T) {
	dir := t.TempDir()
	cat := writeFile(t, dir, "catalogue.json", heCatalogue)
	cache := filepath.Join(dir, "cache")
	step := writeFile(t, dir, "entities.js", "import * as he from \"he\"\nreturn he.decode(input)")
	// A relative --cache works too (esbuild needs an absolute directory).
	t.Chdir(dir)
	args := []string{"run", step, "--catalogue", cat, "--cache", "cache", "--input", `"&lt;b&gt; &amp; &#x1F600;"`}

	// --no-install refuses what the cache lacks, and says how to install.
	code, _, errs := stepbox(t, "", append(args, "--no-install")...)
	if code != cli.ExitUnavailable || !strings.Contains(errs, "he@1.2.0 is not installed in "+cache) {
		t.Fatalf("--no-install: exit %d, stderr %q", code, errs)
	}
	code, out, errs := stepbox(t, "", args...)
	if code != cli.ExitOK || strings.TrimSpace(out) != `"<b> & 😀"` {
		t.Fatalf("first run: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, want := range []string{"stepbox: installing he@1.2.0 into " + cache + " (first use", "he@1.2.0: integrity verified"} {
		if !strings.Contains(errs, want) {
			t.Errorf("first run: stderr %q lacks %q", errs, want)
		}
	}
	code, out, errs = stepbox(t, "", args...)
	if code != cli.ExitOK || strings.TrimSpace(out) != `"<b> & 😀"` || errs != "" {
		t.Fatalf("second run: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// TypeScript imports from the same catalogue; "stepbox packages" sees
	// the same cache.
	code, out, errs = stepbox(t, "import * as he from \"he\"\nconst s: string = he.encode(\"<é\")\nreturn s",
		"run", "-", "--lang", "typescript", "--catalogue", cat, "--cache", cache)
	if code != cli.ExitOK || strings.TrimSpace(out) != `"&#x3C;&#xE9;"` {
		t.Fatalf("TypeScript: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, out, _ := stepbox(t, "", "packages", "list", "--catalogue", cat, "--cache", cache); code != cli.ExitOK || !strings.HasPrefix(out, "he@1.2.0\tinstalled") {
		t.Errorf("packages list: exit %d, %q", code, out)
	}
	// Without the catalogue, he is not a package steps may import.
	if code, _, errs := stepbox(t, "", "run", step, "--cache", cache); code != cli.ExitValidation || !strings.Contains(errs, `package "he" is not in the catalogue`) {
		t.Errorf("default catalogue: exit %d, %q", code, errs)
	}
	// An install that fails is UNAVAILABLE, with npm's reason.
	code, _, errs = stepbox(t, "", "run", step, "--catalogue", cat, "--cache", filepath.Join(dir, "other"), "--npm", "stepbox-no-such-npm")
	if code != cli.ExitUnavailable || !strings.Contains(errs, "package he@1.2.0 could not be installed") || !strings.Contains(errs, "was not found") {
		t.Errorf("failed install: exit %d, %q", code, errs)
	}
}
