package sandbox_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/modules/npm"
	"github.com/stepbox/stepbox/sandbox"
)

// The npm package table: widely used packages, each imported and used the
// way its README shows, in the step files of testdata/npmtable/cases; the
// golden files are what Node (v20) returns for the same code, written by
// scripts/npm-table-golden. Here each case runs through the engine with
// the table's catalogue and must return the same JSON value.

// tableFailures are the cases that fail today, each on something the
// guest lacks: the run must fail naming it. When it lands, the case
// passes, this test says so, and the entry goes (luxon, uuid v4 and
// nanoid's random ids went when Intl and crypto landed).
var tableFailures = map[string]struct {
	why  string // the missing piece
	want string // in the run's error message
}{
	// Not a missing global: QuickJS's parser of RegExp classes with the v
	// flag rejects jsonpath-plus's /'((?:\\.|[^'\\])*)'|…/gv, which is
	// valid ECMAScript 2024.
	"jsonpath-plus": {"QuickJS support of RegExp v-flag classes", "invalid class set operation"},
}

// tableJSOnly are the cases run as JavaScript only (see TestPackageTable).
var tableJSOnly = map[string]bool{"mathjs": true, "ajv": true, "zod": true}

// tableCacheDir is where the table's packages are installed, kept across
// test runs: $STEPBOX_TEST_CACHE, else the user's cache directory
// (~/.cache/stepbox-test/packages). Load checks each install against the
// catalogue's integrity and its own SHA-256, so a stale or edited entry
// is installed again rather than used.
func tableCacheDir(t *testing.T) string {
	if d := os.Getenv("STEPBOX_TEST_CACHE"); d != "" {
		return filepath.Join(d, "packages")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(t.TempDir(), "packages")
	}
	return filepath.Join(d, "stepbox-test", "packages")
}

func tableCatalogue(t *testing.T) []sandbox.Package {
	raw, err := os.ReadFile("testdata/npmtable/catalogue.json")
	if err != nil {
		t.Fatal(err)
	}
	var cat []sandbox.Package
	if err := json.Unmarshal(raw, &cat); err != nil {
		t.Fatal(err)
	}
	return cat
}

// installTable installs the catalogue into dir with this machine's npm,
// a few packages at a time; the installs already there cost a read.
func installTable(t *testing.T, dir string, cat []sandbox.Package) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	errs := make([]error, len(cat))
	for i, p := range cat {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			_, errs[i] = npm.Cache{Dir: dir}.Install(ctx, npm.Package(p), npm.InstallOptions{})
		}()
	}
	wg.Wait()
	failed := false
	for _, err := range errs {
		if err != nil {
			t.Errorf("install the table's packages (is npm installed?): %v", err)
			failed = true
		}
	}
	if failed {
		t.FailNow()
	}
}

func TestPackageTable(t *testing.T) {
	cat := tableCatalogue(t)
	dir := tableCacheDir(t)
	installTable(t, dir, cat)
	e := newEngine(t, sandbox.Config{Packages: sandbox.Packages{Catalogue: cat, CacheDir: dir}})

	files, err := filepath.Glob("testdata/npmtable/cases/*.js")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".js")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			code, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			golden, err := os.ReadFile(filepath.Join("testdata/npmtable/golden", name+".json"))
			if err != nil {
				t.Fatalf("%v (run scripts/npm-table-golden %s)", err, name)
			}
			var want any
			if err := json.Unmarshal(golden, &want); err != nil {
				t.Fatalf("golden: %v", err)
			}
			// The same file is a TypeScript step: the compiler keeps
			// the imports for the engine to resolve the same way. The
			// largest packages run as JavaScript only: their imports
			// are of the forms the others show in both languages, and
			// each of their runs costs a minute under -race.
			langs := []sandbox.Language{sandbox.JavaScript, sandbox.TypeScript}
			if tableJSOnly[name] {
				langs = langs[:1]
			}
			for _, lang := range langs {
				_, res, err := run(t, e, sandbox.Request{Language: lang, Code: string(code)}, nil)
				if fail, ok := tableFailures[name]; ok {
					if err == nil {
						t.Fatalf("%s: passes now (it needed %s): remove it from tableFailures", lang, fail.why)
					}
					if !strings.Contains(err.Error(), fail.want) {
						t.Fatalf("%s: fails, but not on %s: %v", lang, fail.why, err)
					}
					t.Logf("%s: expected failure, needs %s: %v", lang, fail.why, err)
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", lang, err)
				}
				var got any
				if err := json.Unmarshal(res.Value, &got); err != nil {
					t.Fatalf("%s: result %s: %v", lang, res.Value, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: got  %s\nNode %s", lang, res.Value, golden)
				}
			}
		})
	}
	for name := range tableFailures {
		if !seen[name] {
			t.Errorf("tableFailures names %s, which is not a case", name)
		}
	}
}
