package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
)

// TestRunSecrets: a request's secrets over HTTP+JSON are bound to origins
// as in Go (the wire's origin, unsafeAllowHTTP and deprecated host), and a
// bad one is refused as invalid_argument naming it.
func TestRunSecrets(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Api-Key"))
		mu.Unlock()
		w.Write([]byte("key " + strings.ToLower(r.Header.Get("X-Api-Key"))))
	}))
	defer backend.Close()
	port := backend.URL[strings.LastIndexByte(backend.URL, ':')+1:]
	portN, _ := strconv.Atoi(port)
	ts := start(t, server.Config{Egress: &sandbox.Egress{Policy: sandbox.EgressPolicy{
		Schemes: []string{"http"}, Hosts: []string{"127.0.0.1"}, Ports: []int{portN},
		UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	}}})
	step := fmt.Sprintf(`"code": "return await (await fetch('%s/')).text()"`, backend.URL)

	status, resp, raw := ts.post(t, runPath, `{`+step+`, "secrets": [
		{"origin": "`+backend.URL+`", "header": "X-Api-Key", "value": "Wire-K3y-Value", "unsafeAllowHTTP": true}]}`)
	if status != 200 || jsonOf(dig(resp, "result", "value")) != `"key [REDACTED]"` {
		t.Fatalf("status %d: %s", status, raw)
	}
	mu.Lock()
	if len(seen) != 1 || seen[0] != "Wire-K3y-Value" {
		t.Errorf("the backend saw %q", seen)
	}
	mu.Unlock()

	for _, tc := range []struct{ secret, msg string }{
		{`{"origin": "` + backend.URL + `", "header": "X-Api-Key", "value": "Wire-K3y-Value"}`,
			`secrets[0]: origin: \"` + backend.URL + `\" is plain http`},
		{`{"host": "127.0.0.1:` + port + `", "header": "X-Api-Key", "value": "Wire-K3y-Value"}`,
			`secrets[0]: host: \"127.0.0.1:` + port + `\" has a port`},
		{`{"origin": "https://*", "header": "X-Api-Key", "value": "Wire-K3y-Value"}`, `a secret for every host`},
	} {
		status, resp, raw := ts.post(t, runPath, `{`+step+`, "secrets": [`+tc.secret+`]}`)
		if status != 400 || dig(resp, "code") != "invalid_argument" || !strings.Contains(raw, tc.msg) || strings.Contains(raw, "K3y") {
			t.Errorf("secret %s: status %d %s; want invalid_argument with %s", tc.secret, status, raw, tc.msg)
		}
	}
	// The deprecated host form still crosses: it means https on 443, so
	// this http fetch goes without it.
	status, resp, raw = ts.post(t, runPath, `{`+step+`, "secrets": [{"host": "127.0.0.1", "header": "X-Api-Key", "value": "Wire-K3y-Value"}]}`)
	if status != 200 || jsonOf(dig(resp, "result", "value")) != `"key "` {
		t.Fatalf("host form: status %d: %s", status, raw)
	}
}
