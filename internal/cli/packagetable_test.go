package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/cli"
)

// TestPackageTableFromCLI runs the npm package table of sandbox's
// TestPackageTable through the command line, as a user would: each case
// file with `stepbox run FILE --catalogue FILE --cache DIR`, the
// packages it imports installed on first use, its stdout the JSON Node
// gives for the same code (the golden files).
func TestPackageTableFromCLI(t *testing.T) {
	const table = "../../sandbox/testdata/npmtable"
	cache := os.Getenv("STEPBOX_TEST_CACHE")
	if cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			d = t.TempDir()
		}
		cache = filepath.Join(d, "stepbox-test")
	}
	// The directory sandbox's table test installs into: each install is
	// checked against the catalogue, so sharing it only saves time.
	cache = filepath.Join(cache, "packages")
	files, err := filepath.Glob(table + "/cases/*.js")
	if err != nil || len(files) < 20 {
		t.Fatalf("cases: %v, %d", err, len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".js")
		t.Run(name, func(t *testing.T) {
			code, out, errs := stepbox(t, "", "run", f, "--catalogue", table+"/catalogue.json", "--cache", cache)
			if name == "jsonpath-plus" {
				// sandbox's tableFailures says why: QuickJS's RegExp v flag.
				if code != cli.ExitRuntime || !strings.Contains(errs, "invalid class set operation") {
					t.Fatalf("exit %d, stderr %q: want the known RUNTIME failure", code, errs)
				}
				return
			}
			if code != cli.ExitOK {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			golden, err := os.ReadFile(filepath.Join(table, "golden", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("stdout %q: %v", out, err)
			}
			if err := json.Unmarshal(golden, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %s\nNode %s", out, golden)
			}
		})
	}
}
