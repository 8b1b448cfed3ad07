package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
)

// TestServerExample checks examples/server.yaml as its comment says, then
// serves it (on ports the system picks, through the flag and the variable
// that override the file) and runs steps through it over HTTP+JSON with
// each tenant's example key.
func TestServerExample(t *testing.T) {
	const cfg = "../../examples/server.yaml"
	code, out, errs := serve(t, nil, "", "--check", "--config", cfg)
	if code != ExitOK || !strings.HasPrefix(out, "configuration OK: listen 127.0.0.1:8080, auth keys, 2 tenants, plans free,pro") {
		t.Fatalf("serve --check: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	stderr := &lockedBuffer{}
	sig := make(chan os.Signal, 1)
	st := &State{
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderr, ReadFile: os.ReadFile, Signals: sig,
		Getenv: func(k string) string { return map[string]string{"STEPBOX_METRICS_LISTEN": "127.0.0.1:0"}[k] },
	}
	exit := make(chan int, 1)
	go func() {
		exit <- serveCommand(context.Background(), st, []string{"--config", cfg, "--listen", "127.0.0.1:0"})
	}()
	addr := ""
	re := regexp.MustCompile(`"msg":"listening","listen":"([^"]+)"`)
	timeout := time.After(testenv.ScaleDuration(10 * time.Second))
	for addr == "" {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
			break
		}
		select {
		case <-stderr.written():
		case code := <-exit:
			t.Fatalf("exit %d before listening:\n%s", code, stderr.String())
		case <-timeout:
			t.Fatalf("not listening:\n%s", stderr.String())
		}
	}

	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	run := func(key, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", "http://"+addr+"/stepbox.v1.StepboxService/Run", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, m
	}
	const acme, globex = "acme-example-key-replace-me-0001", "globex-example-key-replace-me-0002"
	// The curl of the file's comment.
	if status, m := run(acme, `{"code": "return input.a + 1", "input": "{\"a\": 41}"}`); status != 200 || m["result"].(map[string]any)["value"] != "42" {
		t.Fatalf("acme: %d %v", status, m)
	}
	// acme's default plan, pro, may use DuckDB; globex's, free, may not.
	duck := `{"code": "const db = await duckdb.open(); return (await db.query(\"SELECT 6 * 7 AS n\"))[0].n", "modules": ["duckdb"]}`
	if status, m := run(acme, duck); status != 200 || m["result"].(map[string]any)["value"] != "42" {
		t.Fatalf("acme with duckdb: %d %v", status, m)
	}
	if status, m := run(globex, duck); status != 400 || !strings.Contains(m["message"].(string), `"duckdb"`) {
		t.Fatalf("globex with duckdb: %d %v", status, m)
	}
	if status, m := run(globex, `{"code": "return 1", "plan": "pro"}`); status == 200 {
		t.Fatalf("globex on plan pro: %d %v", status, m)
	}
	if status, _ := run("", `{"code": "return 1"}`); status != 401 {
		t.Fatalf("no key: %d", status)
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
}
