package cli

// These tests call serveCommand directly: they live in package cli until
// Main's command switch routes "serve" to it.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/server"
)

// serve runs `stepbox serve ARGS` in-process with env, and returns its exit
// status, stdout and stderr.
func serve(t *testing.T, env map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	st := &State{
		Args: append([]string{"serve"}, args...), Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }, ReadFile: os.ReadFile,
	}
	code := serveCommand(context.Background(), st, args)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServeCheck(t *testing.T) {
	bad := writeFile(t, "bad.yaml", `
listen: 0.0.0.0:8080
poolSize: -2
logLevel: chatty
plans:
  free: {memoryMb: 32, wallMS: 100}
tenants:
  - name: acme
    keys: ["sha256:1234"]
    plans: [gold]
`)
	code, out, errs := serve(t, nil, "", "--check", "--config", bad)
	if code != ExitUsage || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// Every problem in one pass: the field that does not decode and the
	// values that are wrong (with the rest of the file validated all the
	// same), not the first kind and then, once fixed, the second.
	for _, want := range []string{
		"stepbox serve: invalid configuration (6 problems):\n",
		`  plans.free.wallMS: unknown field: did you mean "wallMs"? (line 6)`,
		"  poolSize: -2 is negative\n",
		`  logLevel: "chatty" is not debug, info, warn or error` + "\n",
		`  tenants[0].plans[0]: "gold" is not in plans` + "\n",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("no %q in:\n%s", want, errs)
		}
	}
	// Values are listed with their fields.
	bad = writeFile(t, "bad2.yaml", `
listen: 0.0.0.0:8080
poolSize: -2
logLevel: chatty
plans:
  free: {memoryMb: 32}
tenants:
  - name: acme
    keys: ["sha256:1234"]
    plans: [gold]
`)
	code, _, errs = serve(t, nil, "", "--check", "--config", bad)
	if code != ExitUsage {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"stepbox serve: invalid configuration (5 problems):\n",
		"  poolSize: -2 is negative\n",
		`  logLevel: "chatty" is not debug, info, warn or error` + "\n",
		`  defaultPlan: "default" is not in plans` + "\n",
		`  tenants[0].keys[0]: want "sha256:" and 64 hex digits`,
		`  tenants[0].plans[0]: "gold" is not in plans` + "\n",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("no %q in:\n%s", want, errs)
		}
	}

	// A configuration the check accepts starts: the engine's checks of
	// modules and packages are the check's too, each problem with its
	// field; and a secret's variable that is not set is one problem, in
	// the words of the file.
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown module", "plans: {free: {}}\ndefaultPlan: free\nplanModules: {free: [duckdb, cobol]}\n",
			"stepbox serve: invalid configuration (1 problem):\n" +
				`  planModules.free[1]: unknown module "cobol" (known: duckdb, glpk, simple-statistics)` + "\n"},
		{"package not pinned", "packages: {catalogue: [{name: x}]}\n",
			"stepbox serve: invalid configuration (2 problems):\n" +
				`  packages.catalogue[0]: version "" is not an exact version (like 1.2.3)` + "\n" +
				`  packages.catalogue[0]: integrity "" is not a sha512 subresource integrity string (sha512-…)` + "\n"},
		{"unset secret", "egress:\n  policy: {hosts: [api.acme.example]}\n  secrets:\n    - {origin: \"https://api.acme.example\", header: Authorization, value: \"${ACME_TOKEN}\"}\n",
			"stepbox serve: invalid configuration (1 problem):\n" +
				`  egress.secrets[0].value: "${ACME_TOKEN}" was not replaced: the environment variable ACME_TOKEN is not set, or is empty` + "\n"},
	} {
		file := writeFile(t, "engine.yaml", c.yaml)
		if code, out, errs := serve(t, nil, "", "--check", "--config", file); code != ExitUsage || out != "" || errs != c.want {
			t.Errorf("%s: exit %d, stdout %q, stderr\n%s\nwant\n%s", c.name, code, out, errs, c.want)
		}
	}

	// The audit file the server
	// appends to must be creatable (its directory exists and takes files).
	dir := t.TempDir()
	for _, c := range []struct{ file, want string }{
		{dir + "/missing/fetch.jsonl", "auditFile: the directory " + dir + "/missing: stat " + dir + "/missing: no such file or directory"},
		{writeFile(t, "notadir", "") + "/fetch.jsonl", "not a directory"},
	} {
		audit := writeFile(t, "audit.yaml", "listen: 127.0.0.1:9000\negress: {policy: {hosts: [api.example.com]}}\nauditFile: "+c.file+"\n")
		if code, _, errs := serve(t, nil, "", "--check", "--config", audit); code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("auditFile %s: exit %d, stderr %q; want %q", c.file, code, errs, c.want)
		}
	}
	audit := writeFile(t, "audit.yaml", "listen: 127.0.0.1:9000\negress: {policy: {hosts: [api.example.com]}}\nauditFile: "+dir+"/fetch.jsonl\n")
	if code, _, errs := serve(t, nil, "", "--check", "--config", audit); code != ExitOK {
		t.Errorf("auditFile in a writable directory: exit %d, stderr %q", code, errs)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the check left files behind: %v", entries)
	}

	good := writeFile(t, "good.yaml", "listen: 127.0.0.1:9000\nplans: {free: {memoryMb: 32}}\ndefaultPlan: free\n")
	code, out, errs = serve(t, nil, "", "--check", "--config", good)
	if code != ExitOK || out != "configuration OK: listen 127.0.0.1:9000, auth none, 0 tenants, plans free\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// Env overrides the file, flags override env; a missing TLS file is named.
	code, _, errs = serve(t, map[string]string{"STEPBOX_CONFIG": good, "STEPBOX_LISTEN": "0.0.0.0:1", "STEPBOX_TLS_CERT": "/nonexistent.pem"}, "", "--check")
	if code != ExitUsage || !strings.Contains(errs, `auth: listen "0.0.0.0:1" is not a loopback address`) || !strings.Contains(errs, "tls: set both certFile and keyFile") ||
		!strings.Contains(errs, "tls.certFile: ") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, out, errs = serve(t, map[string]string{"STEPBOX_CONFIG": good, "STEPBOX_LISTEN": "0.0.0.0:1"}, "", "--check", "--listen", "localhost:7")
	if code != ExitOK || !strings.Contains(out, "listen localhost:7") {
		t.Fatalf("exit %d, %q %q", code, out, errs)
	}
	// No file at all: the local default.
	code, out, _ = serve(t, nil, "", "--check")
	if code != ExitOK || out != "configuration OK: listen 127.0.0.1:8080, auth none, 0 tenants, plans default\n" {
		t.Fatalf("exit %d, %q", code, out)
	}
	if code, _, errs := serve(t, nil, "", "--check", "--config", "/nonexistent.yaml"); code != ExitUsage || !strings.Contains(errs, "config: read /nonexistent.yaml") {
		t.Fatalf("exit %d, %q", code, errs)
	}
}

func TestServeHashKey(t *testing.T) {
	code, out, _ := serve(t, nil, "s3cret\n", "--hash-key")
	if code != ExitOK || out != server.HashKey("s3cret")+"\n" || !strings.HasPrefix(out, "sha256:") {
		t.Fatalf("exit %d, %q", code, out)
	}
	if code, _, _ := serve(t, nil, "", "--hash-key"); code != ExitUsage {
		t.Fatalf("empty key: exit %d", code)
	}
}

// TestServeRunsAndDrains starts the real command on a loopback port, runs
// a step through it, and stops it with a signal.
func TestServeRunsAndDrains(t *testing.T) {
	key := "serve-test-key-0123456789"
	cfg := writeFile(t, "serve.yaml", `
listen: 127.0.0.1:0
metrics: {listen: 127.0.0.1:0}
poolSize: 2
drainTimeout: 10s
tenants:
  - name: acme
    keys: ["`+server.HashKey(key)+`"]
`)
	stderr := &lockedBuffer{}
	sig := make(chan os.Signal, 2)
	st := &State{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr,
		Getenv: func(string) string { return "" }, ReadFile: os.ReadFile, Signals: sig,
	}
	exit := make(chan int, 1)
	go func() { exit <- serveCommand(context.Background(), st, []string{"--config", cfg}) }()

	// The command logs where it listens: each log write wakes the test.
	addr, metricsAddr := "", ""
	re := regexp.MustCompile(`"msg":"listening","listen":"([^"]+)"`)
	reMetrics := regexp.MustCompile(`"msg":"serving metrics","listen":"([^"]+)"`)
	timeout := time.After(testenv.ScaleDuration(10 * time.Second))
	for addr == "" {
		logs := stderr.String()
		if m, mm := re.FindStringSubmatch(logs), reMetrics.FindStringSubmatch(logs); m != nil && mm != nil {
			addr, metricsAddr = m[1], mm[1]
			break
		}
		select {
		case <-stderr.written():
		case code := <-exit:
			t.Fatalf("exit %d before listening:\n%s", code, stderr.String())
		case <-timeout:
			t.Fatalf("not listening with metrics:\n%s", stderr.String())
		}
	}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	post := func(auth string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", "http://"+addr+"/stepbox.v1.StepboxService/Run", strings.NewReader(`{"code": "return input * 2", "input": 21}`))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if status, _ := post(""); status != 401 {
		t.Fatalf("no key: %d", status)
	}
	status, m := post(key)
	if status != 200 || m["result"].(map[string]any)["value"] != 42.0 {
		t.Fatalf("%d %v", status, m)
	}
	// The metrics name the tenants: on their own listener, not on the API's.
	if resp, err := hc.Get("http://" + addr + "/metrics"); err != nil || resp.StatusCode != 404 {
		t.Fatalf("metrics on the API's listener: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if resp, err := hc.Get("http://" + metricsAddr + "/metrics"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("metrics: %v", err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `stepbox_runs_total{language="javascript",outcome="ok",tenant="acme"} 1`) {
			t.Fatalf("metrics:\n%s", b)
		}
	}

	sig <- syscall.SIGTERM
	select {
	case code := <-exit:
		if code != ExitOK {
			t.Fatalf("exit %d:\n%s", code, stderr.String())
		}
	case <-time.After(testenv.ScaleDuration(20 * time.Second)):
		t.Fatalf("did not stop:\n%s", stderr.String())
	}
	logs := stderr.String()
	for _, want := range []string{`"msg":"signal received: draining","signal":"terminated"`, `"msg":"stopped"`, `"msg":"run","run":"run_`} {
		if !strings.Contains(logs, want) {
			t.Errorf("no %q in logs:\n%s", want, logs)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers, which tells
// a reader when something was written.
type lockedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{} // guarded by mu; one pending signal at most
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wrote == nil {
		l.wrote = make(chan struct{}, 1)
	}
	select {
	case l.wrote <- struct{}{}:
	default:
	}
	return l.b.Write(p)
}

// written returns a channel that receives after a write.
func (l *lockedBuffer) written() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wrote == nil {
		l.wrote = make(chan struct{}, 1)
	}
	return l.wrote
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
