package sandbox_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

var cpythonAll = flag.Bool("cpython-all", false, "TestCPythonTestModules runs all of cpythonModules, not only cpythonQuick")

// cpythonModules are the standard library's test modules (Debian's
// libpython3.11-testsuite, which scripts/test installs) that
// TestCPythonTestModules runs in a step and outside the jail; cpythonQuick
// is the part the default suite runs: two of the modules with tests that
// need exec, and three without (about 2 s of CPU each way). The whole list
// takes some 35 s of CPU each way, with test_datetime's 3,500 tests:
//
//	go test ./sandbox -run CPython -cpython-all -v
var (
	cpythonModules = []string{
		"test_json", "test_base64", "test_datetime", "test_re", "test_decimal", "test_fractions",
		"test_statistics", "test_collections", "test_itertools", "test_functools", "test_string",
		"test_textwrap", "test_csv", "test_difflib", "test_heapq", "test_bisect", "test_calendar",
		"test_zoneinfo", "test_uuid", "test_hashlib",
	}
	cpythonQuick = []string{"test_json", "test_base64", "test_zoneinfo", "test_string", "test_bisect"}
)

// cpythonNeedExec are the tests that pass outside the jail and not in a
// step, each because it starts a process, which the jail refuses by
// design: a test class (each of whose tests may differ) or a test, and the
// outcome it has in a step. The command-line tests run python3 -m MODULE
// (test.support.script_helper), which ends PermissionError on the
// interpreter (exec refused); uuid's look for the ifconfig and ip
// programs, which the jail does not hold, and skip. Any other difference
// fails the test.
var cpythonNeedExec = map[string]string{
	"test.test_json.test_tool.TestTool":                                  execRefused, // python -m json.tool
	"test.test_base64.TestMain":                                          execRefused, // python -m base64
	"test.test_calendar.CommandLineTestCase":                             execRefused, // python -m calendar
	"test.test_uuid.TestInternalsWithExtModule.test_ifconfig_getnode":    "skip: requires ifconfig",
	"test.test_uuid.TestInternalsWithExtModule.test_ip_getnode":          "skip: requires ip",
	"test.test_uuid.TestInternalsWithoutExtModule.test_ifconfig_getnode": "skip: requires ifconfig",
	"test.test_uuid.TestInternalsWithoutExtModule.test_ip_getnode":       "skip: requires ip",
}

const execRefused = "error: PermissionError: [Errno 1] Operation not permitted: '/usr/bin/python3"

// CPython's own tests of 20 standard-library modules give the same
// outcome, test by test, in a step (through the engine, in its jailed
// worker) as in the same interpreter outside the jail, apart from the
// tests in cpythonNeedExec.
func TestCPythonTestModules(t *testing.T) {
	const python = "/usr/bin/python3"
	if _, err := os.Stat("/usr/lib/python3.11/test/test_json"); err != nil {
		t.Fatalf("CPython's test modules are not installed (apt-get install libpython3.11-testsuite; scripts/test does): %v", err)
	}
	modules := cpythonQuick
	if *cpythonAll {
		modules = cpythonModules
	}
	src, err := os.ReadFile("testdata/cpython_tests.py")
	if err != nil {
		t.Fatal(err)
	}
	body, _, ok := strings.Cut(string(src), "\nif __name__ == \"__main__\":")
	if !ok {
		t.Fatal("testdata/cpython_tests.py has no __main__ block")
	}
	type outcomes map[string]struct {
		Outcomes map[string]string `json:"outcomes"`
		CPUS     float64           `json:"cpuS"`
		WallS    float64           `json:"wallS"`
	}
	// test_datetime holds some 200 MB; the outcomes of its 3,500 tests
	// are some 300 kB of JSON.
	plan := testPlan
	plan.MemoryMB, plan.MaxResultBytes = 512, 4<<20
	e := newEngine(t, sandbox.Config{Plans: map[string]sandbox.Limits{"default": plan}, Caps: plan})
	var table []string
	var differ []string
	for _, m := range modules {
		// Outside: the same interpreter and environment as the jail's
		// (isolated mode, TZ=UTC, C.UTF-8, an empty home and working
		// directory), without the jail.
		dir := t.TempDir()
		cmd := exec.CommandContext(context.Background(), python, "-I", "-S", "-B", "-X", "utf8", "-", m)
		cmd.Stdin = strings.NewReader(string(src))
		cmd.Dir = dir
		cmd.Env = []string{"LANG=C.UTF-8", "HOME=" + dir, "TMPDIR=" + dir, "TZ=UTC"}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s outside the jail: %v\n%s", m, err, stderr.String())
		}
		var outside outcomes
		if err := json.Unmarshal(b, &outside); err != nil {
			t.Fatalf("%s outside the jail: %v", m, err)
		}
		_, res, err := run(t, e, sandbox.Request{
			Language: sandbox.Python,
			Code:     body + fmt.Sprintf("\nreturn run_modules([%q])\n", m),
		}, nil)
		if err != nil {
			t.Fatalf("%s in a step: %v", m, err)
		}
		var inside outcomes
		if err := json.Unmarshal(res.Value, &inside); err != nil {
			t.Fatalf("%s in a step: %v", m, err)
		}
		out, in := outside[m].Outcomes, inside[m].Outcomes
		if len(out) == 0 {
			t.Fatalf("%s ran no test outside the jail", m)
		}
		var diffs []string
		for id, o := range out {
			if in[id] == o {
				continue
			}
			diffs = append(diffs, id)
			key := id
			if _, listed := cpythonNeedExec[key]; !listed {
				key = id[:strings.LastIndexByte(id, '.')]
			}
			if want, listed := cpythonNeedExec[key]; !listed {
				t.Errorf("%s: outside %q, in a step %q", id, o, in[id])
			} else if !strings.HasPrefix(in[id], want) {
				t.Errorf("%s (which needs exec): outside %q, in a step %q, want %q", id, o, in[id], want)
			}
		}
		for id, o := range in {
			if _, ok := out[id]; !ok {
				t.Errorf("%s: only in a step, %q", id, o)
			}
		}
		slices.Sort(diffs)
		differ = append(differ, diffs...)
		byClass := map[string]int{}
		for _, id := range diffs {
			byClass[id[:strings.LastIndexByte(id, '.')]]++
		}
		var summary []string
		for class, n := range byClass {
			summary = append(summary, fmt.Sprintf("%s (%d)", class, n))
		}
		slices.Sort(summary)
		table = append(table, fmt.Sprintf("%-16s %5d %5d %5d %6.1f/%.1f s %6.1f/%.1f s  %s", m, len(out), passes(out), passes(in),
			outside[m].CPUS, outside[m].WallS, inside[m].CPUS, inside[m].WallS, strings.Join(summary, ", ")))
	}
	for key := range cpythonNeedExec {
		if m := strings.Split(key, ".")[1]; slices.Contains(modules, m) && !slices.ContainsFunc(differ, func(id string) bool { return id == key || strings.HasPrefix(id, key+".") }) {
			t.Errorf("%s is listed as needing exec but gives the same outcomes in a step", key)
		}
	}
	t.Logf("module           tests, passed outside, passed in a step; CPU/wall outside, in a step; the tests that differ\n%s", strings.Join(table, "\n"))
}

func passes(outcomes map[string]string) int {
	n := 0
	for _, o := range outcomes {
		if o == "pass" {
			n++
		}
	}
	return n
}
