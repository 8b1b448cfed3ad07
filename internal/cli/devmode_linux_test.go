package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/cli"
	"github.com/stepbox/stepbox/internal/testenv"
)

const unsafeWarning = "UNSAFE development mode (--unsafe-dev): the step runs inside this process without the worker jail; never use it for code you do not trust"

// envNoUserNS makes the test binary run the CLI with the arguments it holds
// (JSON) where user namespaces are switched off, and print its exit status
// and output as JSON.
const envNoUserNS = "CLITEST_NO_USERNS_ARGS"

func init() {
	if a := os.Getenv(envNoUserNS); a != "" {
		noUserNSHelper(a)
		os.Exit(0)
	}
}

// noUserNSHelper runs as root of a user namespace of its own, where it sets
// user.max_user_namespaces = 0 (a per-user-namespace limit), so that the
// jail cannot be set up, then runs the CLI.
func noUserNSHelper(argsJSON string) {
	var args []string
	if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
		fmt.Printf("{\"error\":%q}\n", err.Error())
		return
	}
	if err := testenv.DisableUserNamespaces(); err != nil {
		fmt.Printf("{\"error\":%q}\n", err.Error())
		return
	}
	if args[0] == "run" {
		args = unreachable(args)
	}
	var out, errs bytes.Buffer
	code := cli.Main(context.Background(), &cli.State{
		Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errs,
		Getenv: func(string) string { return "" }, ReadFile: os.ReadFile,
	})
	b, _ := json.Marshal(map[string]any{"code": code, "stdout": out.String(), "stderr": errs.String()})
	fmt.Println(string(b))
}

// stepboxNoUserNS runs the CLI in a helper process where the kernel refuses
// user namespaces for real (the machine's sysctls are left alone).
func stepboxNoUserNS(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	a, _ := json.Marshal(args)
	b := testenv.OutputWithoutUserNamespaces(t, envNoUserNS+"="+string(a))
	var got struct {
		Error          string
		Code           int
		Stdout, Stderr string
	}
	if err := json.Unmarshal(b, &got); err != nil || got.Error != "" {
		t.Fatalf("%v %s: %s", err, got.Error, b)
	}
	return got.Code, got.Stdout, got.Stderr
}

// TestJailUnavailableCLI: where the jail cannot be set up, a run fails
// UNAVAILABLE naming the cause, the fix and --unsafe-dev; with
// --unsafe-dev the same machine runs JavaScript and TypeScript steps,
// warning every time, and still refuses Python.
func TestJailUnavailableCLI(t *testing.T) {
	code, out, errs := stepboxNoUserNS(t, "run", "../../examples/hello.js", "--input", "@../../examples/hello.input.json", "--data", "../../examples/hello.data.json")
	if code != cli.ExitUnavailable || out != "" {
		t.Errorf("exit %d, stdout %q, want %d and nothing", code, out, cli.ExitUnavailable)
	}
	for _, want := range []string{
		"stepbox run: the worker jail cannot be set up here (jail: user namespaces: no space left on device): user namespaces are switched off: user.max_user_namespaces = 0\n",
		"\n  to fix: sysctl -w user.max_user_namespaces=15000",
		"add --unsafe-dev: stepbox run --unsafe-dev ../../examples/hello.js ...\n",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}

	// serve has no development mode: it stops, saying why.
	code, _, errs = stepboxNoUserNS(t, "serve", "--listen", "127.0.0.1:0")
	if code != cli.ExitUsage || !strings.Contains(errs, "the worker jail cannot be set up here (jail: user namespaces: no space left on device): user namespaces are switched off") {
		t.Errorf("serve: exit %d, stderr %q", code, errs)
	}

	code, out, errs = stepboxNoUserNS(t, "run", "--unsafe-dev", "../../examples/hello.js", "--input", "@../../examples/hello.input.json", "--data", "../../examples/hello.data.json")
	if code != cli.ExitOK || out != `{"customer":"ada","orders":3,"total":49.75}`+"\n" || !strings.HasPrefix(errs, "stepbox: "+unsafeWarning+"\n") {
		t.Errorf("--unsafe-dev hello.js: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = stepboxNoUserNS(t, "run", "testdata/step.ts", "--unsafe-dev", "--input", `{"n": 4}`)
	if code != cli.ExitOK || out != "40\n" || !strings.Contains(errs, unsafeWarning) {
		t.Errorf("--unsafe-dev step.ts: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = stepboxNoUserNS(t, "run", "--unsafe-dev", "testdata/step.ts", "--json")
	if code != cli.ExitOK || !strings.Contains(out, `"value":20`) || !strings.Contains(errs, unsafeWarning) {
		t.Errorf("--unsafe-dev --json: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestUnsafeDevRefusesPython: Python never runs without the jail, even
// where the jail works.
func TestUnsafeDevRefusesPython(t *testing.T) {
	dir := t.TempDir()
	step := dir + "/step.py"
	if err := os.WriteFile(step, []byte("return 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := stepbox(t, "", "run", "--unsafe-dev", step)
	if code != cli.ExitUnavailable || out != "" ||
		errs != "stepbox run: --unsafe-dev runs JavaScript and TypeScript only: Python steps never run without the jail\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestUnsafeDevWarns: development mode warns on every run, also where the
// jail works, and its step runs.
func TestUnsafeDevWarns(t *testing.T) {
	for range 2 {
		code, out, errs := stepbox(t, "return input * 2", "run", "--unsafe-dev", "-", "--input", "5")
		if code != cli.ExitOK || out != "10\n" || errs != "stepbox: "+unsafeWarning+"\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
		}
	}
}
