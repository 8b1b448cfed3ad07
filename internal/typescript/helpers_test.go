package typescript

import (
	"errors"
	"flag"
	"os"
	"strings"
	"testing"

	"modernc.org/quickjs"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files")

// runtimePrefix is how the JavaScript runtime wraps a step; the test runner
// below does the same.
const runtimePrefix = "(async function(){"

// checkGolden compares got with the golden file at path, or rewrites the
// file with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run go test -update and review the diff)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// mustCompile compiles src or fails the test.
func mustCompile(t testing.TB, src string) *Output {
	t.Helper()
	out, err := Compile(src)
	if err != nil {
		t.Fatalf("Compile: %v\nsource:\n%s", err, src)
	}
	return out
}

// stepResult is what running a step in QuickJS gave.
type stepResult struct {
	JSON  string // JSON.stringify of the returned value, when it returned
	Error string // String(error), when it threw
	Stack string // the error's stack, when it threw
}

// runJS runs a JavaScript step body in a fresh QuickJS VM as the runtime
// does, "(async function(){" + js + "\n})", after the prelude script, and
// settles it.
func runJS(t testing.TB, prelude, js string) stepResult {
	t.Helper()
	vm, err := quickjs.NewVM()
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	if prelude != "" {
		if _, err := vm.Eval(prelude, quickjs.EvalGlobal); err != nil {
			t.Fatalf("prelude: %v", err)
		}
	}
	script := runtimePrefix + js + "\n})().then(" +
		"(v) => { globalThis.__r = JSON.stringify(v) === undefined ? 'undefined' : JSON.stringify(v); }, " +
		"(e) => { globalThis.__e = String(e); globalThis.__s = String(e && e.stack); })"
	if _, err := vm.Eval(script, quickjs.EvalGlobal); err != nil {
		var qerr *quickjs.Error
		if errors.As(err, &qerr) {
			t.Fatalf("eval: %v\nstack: %s\nscript:\n%s", err, qerr.Stack, script)
		}
		t.Fatalf("eval: %v", err)
	}
	for {
		n, err := vm.ExecutePendingJobs()
		if err != nil {
			t.Fatalf("jobs: %v", err)
		}
		if n == 0 {
			break
		}
	}
	var res stepResult
	for dst, name := range map[*string]string{&res.JSON: "__r", &res.Error: "__e", &res.Stack: "__s"} {
		v, err := vm.Eval("globalThis."+name+" ?? ''", quickjs.EvalGlobal)
		if err != nil {
			t.Fatal(err)
		}
		*dst, _ = v.(string)
	}
	if res.JSON == "" && res.Error == "" {
		t.Fatalf("step did not settle:\n%s", js)
	}
	return res
}

// parsesInQuickJS reports whether QuickJS accepts js as a step body.
func parsesInQuickJS(t testing.TB, js string) error {
	t.Helper()
	vm, err := quickjs.NewVM()
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Close()
	_, err = vm.Compile(runtimePrefix+js+"\n})", quickjs.EvalGlobal)
	return err
}

// lineOf returns the 1-based line of the first occurrence of needle in s.
func lineOf(t testing.TB, s, needle string) int {
	t.Helper()
	i := strings.Index(s, needle)
	if i < 0 {
		t.Fatalf("%q not in\n%s", needle, s)
	}
	return strings.Count(s[:i], "\n") + 1
}

// readTestdata returns the contents of testdata/name.
func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
