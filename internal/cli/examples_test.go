package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/cli"
)

// The examples of examples/, each run as the README says and checked
// against the output its first lines promise. (hello.js: TestRunExample;
// server.yaml: TestServerExample.)

// example runs `stepbox run FILE ARGS...` (FILE from the repository's
// root) and checks its stdout, and that the file says what it prints.
func example(t *testing.T, file, want string, args ...string) {
	t.Helper()
	code, out, errs := stepbox(t, "", append([]string{"run", "../../" + file}, args...)...)
	if code != cli.ExitOK || strings.TrimSpace(out) != want {
		t.Fatalf("stepbox run %s %s: exit %d, stdout %q (want %s), stderr %q", file, strings.Join(args, " "), code, out, want, errs)
	}
	if b, err := os.ReadFile("../../" + file); err != nil || !strings.Contains(string(b), want) {
		t.Errorf("%s does not say it prints %s", file, want)
	}
}

func TestExampleTypeScript(t *testing.T) {
	example(t, "examples/invoice.ts", `{"net":96,"vat":12.15,"total":108.15}`, "--input", "@../../examples/invoice.input.json")
}

func TestExampleDuckDB(t *testing.T) {
	example(t, "examples/duckdb.js", `[{"region":"north","total":42.5},{"region":"south","total":7}]`, "--modules", "duckdb")
}

func TestExampleDuckDBWASM(t *testing.T) {
	example(t, "examples/duckdb-wasm.js", `{"fields":["region","n","total"],"rows":[{"region":"north","n":2,"total":42.5},{"region":"south","n":1,"total":7}]}`, "--modules", "duckdb")
}

func TestExampleGLPK(t *testing.T) {
	example(t, "examples/glpk.js", `{"status":5,"z":112,"vars":{"a":20,"b":3}}`, "--modules", "glpk")
}

func TestExamplePandas(t *testing.T) {
	example(t, "examples/pandas.py", `{"east":{"total":9998,"n":3333},"north":{"total":9999,"n":3334},"south":{"total":9997,"n":3333}}`)
}

// TestExamplePackage runs the step that imports a package of the built-in
// catalogue, which stepbox run installs on first use with this machine's
// npm client, into the cache named.
func TestExamplePackage(t *testing.T) {
	cache := t.TempDir()
	example(t, "examples/stats.js", `{"mean":5,"median":4.5,"sd":2,"slope":2}`, "--cache", cache, "--input", `{"xs": [2, 4, 4, 4, 5, 5, 7, 9]}`)
}

// TestExampleFetch serves examples/ on loopback, as the example's comment
// does with python3 -m http.server, and runs the step with the example's
// egress file, its port replaced by the server's.
func TestExampleFetch(t *testing.T) {
	srv := httptest.NewServer(http.FileServer(http.Dir("../../examples")))
	defer srv.Close()
	port, _ := strconv.Atoi(srv.URL[strings.LastIndexByte(srv.URL, ':')+1:])

	b, err := os.ReadFile("../../examples/fetch.egress.json")
	if err != nil {
		t.Fatal(err)
	}
	var egress map[string]map[string]any
	if err := json.Unmarshal(b, &egress); err != nil {
		t.Fatal(err)
	}
	if p := egress["policy"]["ports"]; len(p.([]any)) != 1 || p.([]any)[0] != 8000.0 {
		t.Fatalf("the example's policy allows ports %v, want [8000], which the test replaces", p)
	}
	egress["policy"]["ports"] = []int{port}
	b, _ = json.Marshal(egress)
	file := filepath.Join(t.TempDir(), "fetch.egress.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	example(t, "examples/fetch.js", `{"usd":270,"gbp":212.5,"blocked":"fetch failed: blocked by egress policy: host \"api.example.com\" is not allowed"}`,
		"--egress", file, "--input", `{"api": "`+srv.URL+`", "eur": 250}`)

	// Without the policy, fetch is off.
	code, _, errs := stepbox(t, "", "run", "../../examples/fetch.js", "--input", `{"api": "`+srv.URL+`", "eur": 250}`)
	if code != cli.ExitRuntime || !strings.Contains(errs, "fetch is not enabled") {
		t.Fatalf("without --egress: exit %d, stderr %q", code, errs)
	}
}

// TestExampleGoHost builds examples/gohost, a program that embeds the
// engine, and runs it on hello.js as its comment says.
func TestExampleGoHost(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command, to build examples/gohost: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "gohost")
	build := exec.CommandContext(context.Background(), goTool, "build", "-o", bin, "../../examples/gohost")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build examples/gohost: %v\n%s", err, out)
	}
	run := func(input string) (string, string, error) {
		cmd := exec.Command(bin, "../../examples/hello.js", input)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	const want = `{"customer":"ada","orders":3,"total":49.75}`
	out, errs, err := run(`{"customer": "ada"}`)
	if err != nil || strings.TrimSpace(out) != want {
		t.Fatalf("gohost: %v, stdout %q (want %s), stderr %q", err, out, want, errs)
	}
	if src, _ := os.ReadFile("../../examples/gohost/main.go"); !strings.Contains(string(src), want) {
		t.Errorf("examples/gohost/main.go does not say it prints %s", want)
	}
	// The handler's error rejects the step's request: the step throws it.
	out, errs, err = run(`{"customer": "bob"}`)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || out != "" ||
		!regexp.MustCompile(`^gohost: stepbox: RUNTIME.*Error: no customer "bob"`).MatchString(errs) {
		t.Fatalf("unknown customer: %v, stdout %q, stderr %q", err, out, errs)
	}
}

// TestEveryExampleIsRun: each file of examples/ is named by a test of this
// package or by another example (the data a step fetches), so none is left
// untested.
func TestEveryExampleIsRun(t *testing.T) {
	entries, err := os.ReadDir("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{} // file: its text
	for _, glob := range []string{"*_test.go", "../../examples/*"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				texts[f] = string(b)
			}
		}
	}
	for _, e := range entries {
		run := false
		for f, text := range texts {
			if f != "../../examples/"+e.Name() && (strings.Contains(text, "examples/"+e.Name()) || strings.Contains(text, "/"+e.Name()+"`")) {
				run = true
			}
		}
		if !run {
			t.Errorf("examples/%s is run by no test (add it to internal/cli/examples_test.go)", e.Name())
		}
	}
	if len(entries) < 10 {
		t.Fatalf("examples/ has %d entries", len(entries))
	}
}
