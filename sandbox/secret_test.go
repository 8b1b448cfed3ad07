package sandbox_test

import (
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

// seenHeaders records what a test server saw of the secrets' headers.
type seenHeaders struct {
	mu   sync.Mutex
	auth []string // Authorization of each request, "" if none
	key  []string // X-Api-Key of each request
}

// secretServer answers every request with the Authorization it got,
// upper-cased, in its body and a header: an upstream that echoes
// credentials in another case.
func secretServer(start func(http.Handler) *httptest.Server) (*httptest.Server, *seenHeaders) {
	seen := &seenHeaders{}
	srv := start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.mu.Lock()
		seen.auth = append(seen.auth, r.Header.Get("Authorization"))
		seen.key = append(seen.key, r.Header.Get("X-Api-Key"))
		seen.mu.Unlock()
		w.Header().Set("X-Seen", strings.ToUpper(r.Header.Get("Authorization")+r.Header.Get("X-Api-Key")))
		io.WriteString(w, strings.ToLower(r.Header.Get("Authorization")+" "+r.Header.Get("X-Api-Key")))
	}))
	return srv, seen
}

func (s *seenHeaders) get() (auth, key []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...), append([]string(nil), s.key...)
}

func portOf(t *testing.T, raw string) int {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

// TestFetchSecretOrigins: through the engine, an engine secret and a
// request secret each reach their own origin only, and the step sees no
// echo of either, whatever its case.
func TestFetchSecretOrigins(t *testing.T) {
	tls1, seen1 := secretServer(httptest.NewTLSServer)
	defer tls1.Close()
	tls2, seen2 := secretServer(httptest.NewTLSServer)
	defer tls2.Close()
	plain, seen3 := secretServer(httptest.NewServer)
	defer plain.Close()
	roots := x509.NewCertPool()
	roots.AddCert(tls1.Certificate())
	roots.AddCert(tls2.Certificate())

	e := newEngine(t, sandbox.Config{Egress: &sandbox.Egress{
		Policy: sandbox.EgressPolicy{
			Schemes: []string{"https", "http"}, Hosts: []string{"127.0.0.1"},
			Ports:                []int{portOf(t, tls1.URL), portOf(t, tls2.URL), portOf(t, plain.URL)},
			UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		},
		Secrets: []sandbox.Secret{{Origin: tls1.URL, Header: "Authorization", Value: "Bearer Engine-S3cr3t"}},
		RootCAs: roots,
	}})
	code := `
const out = [];
for (const u of input.urls) {
  const r = await fetch(u, {headers: {"x-api-key": "the step's own"}});
  out.push([r.headers.get("x-seen"), await r.text()]);
}
return out;`
	in, _ := json.Marshal(map[string][]string{"urls": {tls1.URL, tls2.URL, plain.URL}})
	_, res, err := run(t, e, sandbox.Request{
		Code: code, Input: in,
		Secrets: []sandbox.Secret{{Origin: tls2.URL + "/", Header: "X-Api-Key", Value: "Run-K3y-Value"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.ToLower(string(res.Value))
	for _, s := range []string{"engine-s3cr3t", "run-k3y-value"} {
		if strings.Contains(got, s) {
			t.Errorf("the step sees %q: %s", s, res.Value)
		}
	}
	if !strings.Contains(string(res.Value), "[REDACTED]") {
		t.Errorf("no redaction in %s", res.Value)
	}
	for _, tt := range []struct {
		name      string
		seen      *seenHeaders
		auth, key string
	}{
		{"the engine secret's origin", seen1, "Bearer Engine-S3cr3t", "the step's own"},
		{"the request secret's origin", seen2, "", "Run-K3y-Value"},
		{"the same host over http", seen3, "", "the step's own"},
	} {
		auth, key := tt.seen.get()
		if len(auth) != 1 || auth[0] != tt.auth || key[0] != tt.key {
			t.Errorf("%s saw Authorization %q, X-Api-Key %q; want %q and %q", tt.name, auth, key, tt.auth, tt.key)
		}
	}
}

// TestSecretValidation: a bad secret is refused where it is given, with
// every problem named: by New for the engine's, by Submit (VALIDATION)
// for a request's.
func TestSecretValidation(t *testing.T) {
	_, err := sandbox.New(sandbox.Config{Isolation: sandbox.IsolationInProcess, Egress: &sandbox.Egress{Secrets: []sandbox.Secret{
		{Host: "api.example.com:8443", Header: "Authorization", Value: "Bearer long-enough"},
		{Origin: "http://api.example.com", Header: "X-Key", Value: "long-enough"},
	}}})
	for _, want := range []string{
		`egress: secrets[0]: host: "api.example.com:8443" has a port, and host means https on port 443: write origin: "https://api.example.com:8443"`,
		`egress: secrets[1]: origin: "http://api.example.com" is plain http`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New: %v\nwant it to say %s", err, want)
		}
	}

	_, _, err = run(t, engine(t), sandbox.Request{Code: "return 1", Secrets: []sandbox.Secret{
		{Origin: "https://api.example.com", Header: "Authorization", Value: "Bearer long-enough"},
		{Origin: "https://*", Header: "Authorization", Value: "short"},
	}}, nil)
	se := asError(t, err)
	if se.Code != sandbox.CodeValidation || !strings.Contains(se.Message, `secrets[1]: origin: "https://*": a secret for every host`) ||
		!strings.Contains(se.Message, "secrets[1]: value: shorter than 8 bytes") || strings.Contains(se.Message, "secrets[0]") {
		t.Errorf("Submit: %s %q", se.Code, se.Message)
	}

	b, err := json.Marshal(sandbox.Secret{Origin: "https://api.example.com:8443", Header: "Authorization", Value: "Bearer never-shown"})
	if err != nil || string(b) != `{"origin":"https://api.example.com:8443","header":"Authorization","value":"[REDACTED]"}` {
		t.Errorf("JSON %s %v", b, err)
	}
	//lint:ignore SA1019 the deprecated host form is what this checks
	if err := (sandbox.Secret{Host: "api.example.com", Header: "Authorization", Value: "Bearer long-enough"}).Validate(); err != nil {
		t.Errorf("the deprecated host form: %v", err)
	}
}
