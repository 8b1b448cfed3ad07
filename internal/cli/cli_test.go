package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/cli"
	"github.com/stepbox/stepbox/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// stepbox runs the command in-process and returns its exit status, stdout
// and stderr. A run gets time limits out of reach of any machine (see
// unreachable) unless the test sets its own.
func stepbox(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	if len(args) > 0 && args[0] == "run" {
		args = unreachable(args)
	}
	var out, errb bytes.Buffer
	st := &cli.State{
		Args:     args,
		Stdin:    strings.NewReader(stdin),
		Stdout:   &out,
		Stderr:   &errb,
		Getenv:   func(string) string { return "" },
		ReadFile: os.ReadFile,
	}
	code := cli.Main(context.Background(), st)
	return code, out.String(), errb.String()
}

// unreachable adds --cpu and --timeout flags with limits no machine that
// can run the suite reaches to the arguments of a run that sets neither:
// the plan's defaults are meant for steps, not for a slow machine under
// the race detector.
func unreachable(args []string) []string {
	set := map[string]bool{}
	for _, a := range args {
		set[strings.TrimLeft(a, "-")] = true
	}
	out := slices.Clone(args)
	if !set["cpu"] {
		out = append(out, "--cpu", fmt.Sprint(testenv.UnreachableCPUMs)+"ms")
	}
	if !set["timeout"] {
		out = append(out, "--timeout", fmt.Sprint(testenv.UnreachableWallMs)+"ms")
	}
	return out
}

// TestWorkloads runs every benchmark workload shape through the CLI and
// checks the result its README promises.
func TestWorkloads(t *testing.T) {
	want := map[string]string{
		"trivial.js": "2", "fib.js": "196418", "json.js": "100000", "strings.js": "1799999",
		"transform.js": `["a4","a31","a27","a8","a35"]`,
	}
	files, _ := filepath.Glob("../../bench/workloads/*.js")
	if len(files) < 6 {
		t.Fatalf("workloads missing: %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			code, out, errs := stepbox(t, "", "run", f, "--memory", "512")
			if code != cli.ExitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			out = strings.TrimSpace(out)
			if w, ok := want[filepath.Base(f)]; ok && out != w {
				t.Fatalf("got %s, want %s", out, w)
			}
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("stdout is not JSON: %q", out)
			}
		})
	}
}

func TestRunExample(t *testing.T) {
	code, out, errs := stepbox(t, "", "run", "../../examples/hello.js", "--input", "@../../examples/hello.input.json", "--data", "../../examples/hello.data.json")
	if code != 0 || strings.TrimSpace(out) != `{"customer":"ada","orders":3,"total":49.75}` {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if errs != "status: {\"stage\":\"loading\"}\ngot 3 orders for ada\n" {
		t.Fatalf("stderr %q", errs)
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		args       []string
		want       int
		stderr     string
	}{
		{"ok from stdin", "return 40 + 2", nil, cli.ExitOK, ""},
		// From stdin, the headline's position names the file the stack
		// names, by language, as run --help says.
		{"throw", "throw new Error('x')", nil, cli.ExitRuntime, "stepbox: RUNTIME at step.js:1:16: Error: x\n    at anonymous (step.js:1:16)\n"},
		{"syntax", "return (", nil, cli.ExitValidation, "stepbox: VALIDATION at step.js:1:9: SyntaxError: "},
		{"throw in TypeScript", "const n: number = 1;\nthrow new Error('x' + n)", []string{"--lang", "typescript"}, cli.ExitRuntime, "stepbox: RUNTIME at step.ts:2:11: Error: x1\n    at anonymous (step.ts:2:11)\n"},
		{"timeout", "while (true) {}", []string{"--timeout", "100ms"}, cli.ExitTimeout, "stepbox: TIMEOUT (wallMs): "},
		{"cpu", "while (true) {}", []string{"--cpu", "50ms"}, cli.ExitTimeout, "stepbox: TIMEOUT (cpuMs): "},
		{"oom", "const a = []; while (true) a.push(new Array(1000).fill(1))", []string{"--memory", "8"}, cli.ExitOOM, "stepbox: OOM (memoryMb): "},
		{"limit", "for (let i = 0; i < 200; i++) reportStatus(i)", nil, cli.ExitLimitExceeded, "status: 0\n"},
		{"python", "return 1", []string{"--plan", "default"}, cli.ExitOK, ""},
		{"bad flag", "1", []string{"--nope"}, cli.ExitUsage, "stepbox run: flag provided but not defined: -nope"},
		{"bad input", "1", []string{"--input", "{"}, cli.ExitValidation, "stepbox run: --input: not valid JSON at line 1, column 2 (byte 1): unexpected end of JSON input"},
		{"unknown plan", "1", []string{"--plan", "gold"}, cli.ExitUsage, `stepbox run: --plan "gold": no such plan`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := stepbox(t, tc.code, append([]string{"run", "-"}, tc.args...)...)
			if code != tc.want || !strings.HasPrefix(errs, tc.stderr) {
				t.Fatalf("exit %d (want %d), stderr %q (want prefix %q)", code, tc.want, errs, tc.stderr)
			}
		})
	}
}

func TestJSONEvents(t *testing.T) {
	code, out, _ := stepbox(t, "console.log('hi'); reportStatus({p: 1}); return [1]", "run", "-", "--json")
	if code != 0 {
		t.Fatal(code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		`{"kind":"console","console":{"level":"log","text":"hi"}}`,
		`{"kind":"status","status":{"p":1}}`,
	}
	if len(lines) != 3 || lines[0] != want[0] || lines[1] != want[1] || !strings.HasPrefix(lines[2], `{"kind":"result","result":{"value":[1],"stats":{`) {
		t.Fatalf("events:\n%s", out)
	}
}

func TestPlansFile(t *testing.T) {
	dir := t.TempDir()
	plans := filepath.Join(dir, "plans.json")
	os.WriteFile(plans, []byte(`{"tiny": {"maxResultBytes": 10}}`), 0o600)
	code, _, errs := stepbox(t, "return 'x'.repeat(20)", "run", "-", "--plans", plans, "--plan", "tiny")
	if code != cli.ExitLimitExceeded || !strings.Contains(errs, "maxResultBytes") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestVersionAndHelp(t *testing.T) {
	if code, out, _ := stepbox(t, "", "version"); code != 0 || !strings.HasPrefix(out, "stepbox ") {
		t.Fatal(code, out)
	}
	if code, out, _ := stepbox(t, "", "help", "run"); code != 0 || !strings.Contains(out, "Exit status:") || !strings.Contains(out, "LIMIT_EXCEEDED") {
		t.Fatal(code, out)
	}
	if code, _, _ := stepbox(t, ""); code != cli.ExitUsage {
		t.Fatal(code)
	}
	// Every command is listed, and each one's help is one command away,
	// both ways, on stdout with status 0.
	if code, out, _ := stepbox(t, "", "--help"); code != 0 || !strings.Contains(out, "stepbox packages install|list") {
		t.Fatalf("--help: %d %q", code, out)
	}
	for _, c := range []struct{ cmd, want string }{
		{"run", "--timeout DURATION"}, {"compile", "OUT.js.map"}, {"packages", "--catalogue"}, {"serve", "--check"},
	} {
		for _, args := range [][]string{{"help", c.cmd}, {c.cmd, "--help"}, {c.cmd, "-h"}} {
			if code, out, errs := stepbox(t, "", args...); code != 0 || !strings.Contains(out, c.want) || errs != "" {
				t.Errorf("%v: status %d, stdout %q, stderr %q; want the help of %s", args, code, out, errs, c.cmd)
			}
		}
	}
	if code, out, _ := stepbox(t, "", "packages", "install", "--help"); code != 0 || !strings.Contains(out, "--catalogue") {
		t.Errorf("packages install --help: %d %q", code, out)
	}
}

// TestDurationsNeedAUnit: "--timeout 5" was 5 ms; a bare number is now
// refused with what to write instead, before anything runs.
func TestDurationsNeedAUnit(t *testing.T) {
	for _, flag := range []string{"--timeout", "--cpu"} {
		code, _, errs := stepbox(t, "", "run", "../../examples/hello.js", flag, "5")
		if code != cli.ExitUsage || !strings.Contains(errs, `"5" has no unit: write 5ms or 5s`) {
			t.Errorf("%s 5: status %d, stderr %q", flag, code, errs)
		}
	}
	if code, _, errs := stepbox(t, "", "run", "../../examples/hello.js", "--timeout", "1.5s", "--cpu", "500ms",
		"--input", "@../../examples/hello.input.json", "--data", "../../examples/hello.data.json"); code != 0 {
		t.Errorf("with units: status %d, stderr %q", code, errs)
	}
}

func TestTypeScript(t *testing.T) {
	if code, out, errs := stepbox(t, "", "run", "testdata/step.ts"); code != 0 || strings.TrimSpace(out) != "20" {
		t.Fatalf("run: %d %q %q", code, out, errs)
	}
	code, _, errs := stepbox(t, "", "run", "testdata/step.ts", "--input", `{"n": 500}`)
	if code != cli.ExitRuntime || !strings.HasPrefix(errs, "stepbox: RUNTIME at testdata/step.ts:5:") || !strings.Contains(errs, "(testdata/step.ts:5:") {
		t.Fatalf("throw: %d %q", code, errs)
	}
	// A TypeScript syntax error through run: the position once, in the
	// headline, named by the file (from stdin, step.ts), not repeated in
	// the message.
	bad, _ := os.ReadFile("testdata/bad.ts")
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"run", "testdata/bad.ts"}, "stepbox: VALIDATION at testdata/bad.ts:2:12: Unexpected \";\"\n"},
		{string(bad), []string{"run", "-", "--lang", "typescript"}, "stepbox: VALIDATION at step.ts:2:12: Unexpected \";\"\n"},
	} {
		code, _, errs := stepbox(t, c.stdin, c.args...)
		headline, _, _ := strings.Cut(errs, "\n")
		if code != cli.ExitValidation || errs != c.want || strings.Count(headline, "2:12") != 1 {
			t.Errorf("%v: exit %d, stderr %q\nwant %q", c.args, code, errs, c.want)
		}
	}
	code, _, errs = stepbox(t, "", "compile", "testdata/bad.ts")
	if code != cli.ExitValidation || !strings.HasPrefix(errs, "testdata/bad.ts:2:12: ") {
		t.Fatalf("compile error: %d %q", code, errs)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "step.js")
	var out2, errb bytes.Buffer
	st := &cli.State{Args: []string{"compile", "testdata/step.ts", "-o", out}, Stdout: &out2, Stderr: &errb,
		ReadFile: os.ReadFile, WriteFile: func(n string, d []byte) error { return os.WriteFile(n, d, 0o600) }}
	if code := cli.Main(context.Background(), st); code != 0 {
		t.Fatal(code, errb.String())
	}
	js, _ := os.ReadFile(out)
	m, _ := os.ReadFile(out + ".map")
	if !strings.Contains(string(js), "return check(n)") || !strings.Contains(string(m), `"mappings"`) {
		t.Fatalf("js %q map %q", js, m)
	}
	if code, out, errs := stepbox(t, "", "run", out); code != 0 || strings.TrimSpace(out) != "20" {
		t.Fatalf("run compiled: %d %q %q", code, out, errs)
	}
}

// TestModules runs steps that use the built-in modules, which --modules
// grants.
func TestModules(t *testing.T) {
	step := `const db = await duckdb.open();
await db.load("sales", input.rows);
return await db.query("SELECT region, sum(amount) AS total, count(*) AS n FROM sales GROUP BY region ORDER BY region")`
	input := `{"rows": [{"region": "EU", "amount": 12.5}, {"region": "US", "amount": 7}, {"region": "EU", "amount": 1}]}`
	code, out, errs := stepbox(t, step, "run", "-", "--modules", "duckdb", "--input", input)
	if code != cli.ExitOK || strings.TrimSpace(out) != `[{"region":"EU","total":13.5,"n":2},{"region":"US","total":7,"n":1}]` {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, args := range [][]string{{"--modules", "duckdb,glpk"}, {"--modules", "glpk", "--modules", " duckdb "}} {
		code, out, errs := stepbox(t, `return [typeof duckdb, typeof glpk]`, append([]string{"run", "-"}, args...)...)
		if code != cli.ExitOK || strings.TrimSpace(out) != `["object","object"]` {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	if code, out, errs := stepbox(t, `return typeof duckdb`, "run", "-"); code != cli.ExitOK || strings.TrimSpace(out) != `"undefined"` {
		t.Fatalf("without --modules: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, _, errs := stepbox(t, `return 1`, "run", "-", "--modules", "sqlite"); code != cli.ExitValidation || !strings.Contains(errs, `"sqlite"`) {
		t.Fatalf("unknown module: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := stepbox(t, `return 1`, "run", "-", "--modules", "duckdb,"); code != cli.ExitUsage || !strings.Contains(errs, "empty name") {
		t.Fatalf("empty name: exit %d, stderr %q", code, errs)
	}
	if _, out, _ := stepbox(t, "", "help", "run"); !strings.Contains(out, "--modules LIST") {
		t.Fatal("help run does not document --modules")
	}
}
