package npm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/modules/npm"
)

// The tests install the real simple-statistics with the npm client this
// machine has (its configuration decides the registry). They fail, not
// skip, without npm: the module cannot work without it.

var ss = npm.DefaultCatalogue[0]

func install(t *testing.T, dir string, p npm.Package) (*npm.Bundle, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return npm.Cache{Dir: dir}.Install(ctx, p, npm.InstallOptions{})
}

func TestInstallAndLoad(t *testing.T) {
	dir := t.TempDir()
	c := npm.Cache{Dir: dir}
	if _, err := c.Load(ss); !errors.Is(err, npm.ErrNotInstalled) {
		t.Fatalf("Load before Install: %v, want ErrNotInstalled", err)
	}
	b, err := install(t, dir, ss)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.Source, "(function () {\n") || !strings.HasSuffix(b.Source, "return __sbx_pkg;\n})()\n") {
		t.Fatalf("bundle does not have the wrapper: %.100q … %.100q", b.Source, b.Source[len(b.Source)-100:])
	}
	if len(b.Source) > 200_000 {
		t.Errorf("bundle is %d bytes", len(b.Source))
	}
	entry := filepath.Join(dir, "simple-statistics@7.12.1")
	for _, f := range []string{"bundle.js", "stepbox.json", "LICENSE"} {
		if _, err := os.Stat(filepath.Join(entry, f)); err != nil {
			t.Error(err)
		}
	}
	b2, err := c.Load(ss)
	if err != nil || b2.Source != b.Source || b2.SHA256 != b.SHA256 {
		t.Fatalf("Load after Install: %v", err)
	}
	// A second Install finds it installed.
	if _, err := c.Install(context.Background(), ss, npm.InstallOptions{NPM: "/nonexistent/npm"}); err != nil {
		t.Fatalf("Install of an installed package ran npm: %v", err)
	}

	t.Run("another version or integrity is not this install", func(t *testing.T) {
		other := ss
		other.Integrity = "sha512-" + strings.Repeat("A", 86) + "=="
		if _, err := c.Load(other); !errors.Is(err, npm.ErrNotInstalled) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a changed bundle is not used", func(t *testing.T) {
		d := t.TempDir()
		if err := os.CopyFS(d, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(d, "simple-statistics@7.12.1", "bundle.js")
		if err := os.WriteFile(f, []byte(b.Source+"globalThis.x = 1;"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := (npm.Cache{Dir: d}).Load(ss); !errors.Is(err, npm.ErrNotInstalled) || !strings.Contains(err.Error(), "changed") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("an install of another bundle format is not used", func(t *testing.T) {
		d := t.TempDir()
		if err := os.CopyFS(d, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(d, "simple-statistics@7.12.1", "stepbox.json")
		rec, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(rec), `,
  "format": 2`) {
			t.Fatalf("stepbox.json %s: %v", rec, err)
		}
		// What Stepbox wrote before the format existed.
		if err := os.WriteFile(f, []byte(strings.Replace(string(rec), `,
  "format": 2`, "", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := (npm.Cache{Dir: d}).Load(ss); !errors.Is(err, npm.ErrNotInstalled) || !strings.Contains(err.Error(), "another version of Stepbox") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestIntegrityMismatch(t *testing.T) {
	dir := t.TempDir()
	bad := ss
	bad.Integrity = "sha512-" + strings.Repeat("A", 86) + "=="
	_, err := install(t, dir, bad)
	var ie *npm.IntegrityError
	if !errors.As(err, &ie) || ie.Got != ss.Integrity {
		t.Fatalf("got %v, want an IntegrityError with the real integrity", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("the cache is not empty after a refused install: %v", entries)
	}
}

func TestNoNPM(t *testing.T) {
	_, err := npm.Cache{Dir: t.TempDir()}.Install(context.Background(), ss, npm.InstallOptions{NPM: "stepbox-no-such-npm"})
	if err == nil || !strings.Contains(err.Error(), "was not found") {
		t.Fatalf("got %v", err)
	}
}

func TestValidate(t *testing.T) {
	good := []npm.Package{ss, {Name: "@scope/a.b-c", Version: "1.0.0-rc.1+b", Integrity: ss.Integrity}}
	for _, p := range good {
		if err := p.Validate(); err != nil {
			t.Errorf("%v: %v", p, err)
		}
	}
	bad := []npm.Package{
		{Name: "Upper", Version: "1.0.0", Integrity: ss.Integrity},
		{Name: "-rf", Version: "1.0.0", Integrity: ss.Integrity},
		{Name: "a/b", Version: "1.0.0", Integrity: ss.Integrity},
		{Name: "a", Version: "^1.0.0", Integrity: ss.Integrity},
		{Name: "a", Version: "latest", Integrity: ss.Integrity},
		{Name: "a", Version: "1.0.0", Integrity: "sha1-abc"},
		{Name: "a", Version: "1.0.0", Integrity: "sha512-short"},
	}
	for _, p := range bad {
		if err := p.Validate(); err == nil {
			t.Errorf("%v: valid", p)
		}
	}
	if err := npm.ValidateCatalogue([]npm.Package{ss, ss}); err == nil {
		t.Error("a repeated name is valid")
	}
}

func TestDefaultCacheDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x/stepbox/packages"},
		{map[string]string{"XDG_CACHE_HOME": "rel", "HOME": "/h"}, "/h/.cache/stepbox/packages"},
		{map[string]string{"HOME": "/h"}, "/h/.cache/stepbox/packages"},
		{map[string]string{}, ""},
	} {
		if got := npm.DefaultCacheDir(env(tc.env)); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.env, got, tc.want)
		}
	}
}
