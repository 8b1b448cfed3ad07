package cli_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stepbox/stepbox/internal/cli"
)

// TestEgressFileSecrets: --egress binds secrets to origins; a file with a
// bad secret is refused before anything runs, naming each problem.
func TestEgressFileSecrets(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte(strings.ToUpper(r.Header.Get("Authorization"))))
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	policy := `"policy": {"schemes": ["http"], "hosts": ["127.0.0.1"], "ports": [` + port + `], "unsafeAllowAddresses": ["127.0.0.1/32"]}`

	good := write("good.json", `{`+policy+`, "secrets": [
		{"origin": "`+srv.URL+`", "header": "Authorization", "value": "Bearer cli-s3cr3t", "unsafeAllowHTTP": true}]}`)
	code, out, errs := stepbox(t, `return await (await fetch("`+srv.URL+`/")).text()`, "run", "-", "--egress", good)
	if code != cli.ExitOK || strings.TrimSpace(out) != `"[REDACTED]"` {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	mu.Lock()
	if len(seen) != 1 || seen[0] != "Bearer cli-s3cr3t" {
		t.Errorf("the server saw %q", seen)
	}
	mu.Unlock()

	bad := write("bad.json", `{`+policy+`, "secrets": [
		{"origin": "`+srv.URL+`", "header": "Authorization", "value": "Bearer cli-s3cr3t"},
		{"host": "127.0.0.1:`+port+`", "header": "Authorization", "value": "Bearer cli-s3cr3t"}]}`)
	code, _, errs = stepbox(t, `return 1`, "run", "-", "--egress", bad)
	for _, want := range []string{
		`secrets[0]: origin: "` + srv.URL + `" is plain http: the secret would travel in clear text; use an https origin, or set unsafeAllowHTTP`,
		`secrets[1]: host: "127.0.0.1:` + port + `" has a port, and host means https on port 443: write origin: "https://127.0.0.1:` + port + `"`,
	} {
		if code != cli.ExitUsage || !strings.Contains(errs, want) {
			t.Errorf("exit %d, stderr %q\nwant it to say %s", code, errs, want)
		}
	}
	if strings.Contains(errs, "cli-s3cr3t") {
		t.Errorf("the error shows the secret: %s", errs)
	}
}
