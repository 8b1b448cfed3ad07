//go:build linux

package cli_test

import (
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/cli"
	"github.com/stepbox/stepbox/internal/testenv"
)

// TestPythonPackages runs a .py step that imports pandas, which the
// interpreter's own packages (the default) hold, and the flags that choose
// the interpreter, the packages and the preload list.
func TestPythonPackages(t *testing.T) {
	input := `{"rows": [{"region": "EU", "amount": 12.5}, {"region": "US", "amount": 7}, {"region": "EU", "amount": 1}]}`
	const want = `{"EU":{"total":13.5,"n":2},"US":{"total":7.0,"n":1}}`
	for _, args := range [][]string{
		{},
		{"--python-packages", "auto"},
		{"--python", "/usr/bin/python3", "--python-preload", "numpy,pandas"},
		{"--python-packages", "/usr/lib/python3/dist-packages"},
	} {
		code, out, errs := stepbox(t, "", append([]string{"run", "testdata/groupby.py", "--input", input}, args...)...)
		if code == cli.ExitUnavailable && len(args) == 0 && !testenv.RequireJail() {
			t.Skipf("Python is unavailable here: %s", errs)
		}
		if code != cli.ExitOK || strings.TrimSpace(out) != want {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	code, _, errs := stepbox(t, "", "run", "testdata/groupby.py", "--input", input, "--python-packages", "none")
	if code != cli.ExitRuntime || !strings.Contains(errs, "stepbox: RUNTIME at testdata/groupby.py:2:1: ModuleNotFoundError: No module named 'pandas'") {
		t.Fatalf("--python-packages none: exit %d, stderr %q", code, errs)
	}
	code, _, errs = stepbox(t, "", "run", "testdata/groupby.py", "--python", "/nonexistent/python3")
	if code != cli.ExitUnavailable || !strings.Contains(errs, "/nonexistent/python3") {
		t.Fatalf("--python /nonexistent/python3: exit %d, stderr %q", code, errs)
	}
	for _, c := range []struct{ args, want []string }{
		{[]string{"--python-packages", "site-packages"}, []string{`--python-packages "site-packages": "site-packages" is not an absolute directory`}},
		{[]string{"--python-preload", "os;x"}, []string{`preload[0]: "os;x" is not a module name`}},
		{[]string{"--python-packages", "none,/opt"}, []string{`--python-packages "none,/opt": "none" is not an absolute directory`}},
	} {
		code, _, errs := stepbox(t, "", append([]string{"run", "testdata/groupby.py"}, c.args...)...)
		if code != cli.ExitUsage || !strings.Contains(errs, c.want[0]) {
			t.Errorf("%v: exit %d, stderr %q", c.args, code, errs)
		}
	}
}
