package egress

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := checkNoLeakedGoroutines(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// checkNoLeakedGoroutines fails if connection goroutines outlive the tests:
// every Run must close its pool (net/http's own leak check, in small).
func checkNoLeakedGoroutines() error {
	var leaked []string
	for deadline := time.Now().Add(testenv.ScaleDuration(5 * time.Second)); ; {
		leaked = leaked[:0]
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		for g := range strings.SplitSeq(string(buf), "\n\n") {
			if strings.Contains(g, "net/http.(*persistConn)") || strings.Contains(g, "net/http.(*http2ClientConn)") ||
				strings.Contains(g, "egress.") && !strings.Contains(g, "TestMain") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("leaked goroutines:\n%s", strings.Join(leaked, "\n\n"))
}

// testPKI is a throwaway CA and one leaf certificate for the test names.
type testPKI struct {
	roots *x509.CertPool
	leaf  tls.Certificate
}

// The names the test certificate is valid for. ".test" is reserved (RFC
// 6761): if anything bypassed the fake resolver, nothing would answer.
var testCertNames = []string{"api.test", "*.api.test", "other.test"}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "stepbox egress test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "api.test"},
		DNSNames:     testCertNames,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return &testPKI{roots: roots, leaf: tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}
}

// fakeResolver maps names to addresses and counts lookups. If answer is
// set, it decides instead (call is 1 for the first lookup of a name).
type fakeResolver struct {
	mu     sync.Mutex
	hosts  map[string][]netip.Addr                  // guarded by mu
	calls  map[string]int                           // guarded by mu
	answer func(host string, call int) []netip.Addr // guarded by mu
}

func newResolver(pairs ...string) *fakeResolver {
	r := &fakeResolver{hosts: map[string][]netip.Addr{}, calls: map[string]int{}}
	for i := 0; i+1 < len(pairs); i += 2 {
		r.hosts[pairs[i]] = append(r.hosts[pairs[i]], netip.MustParseAddr(pairs[i+1]))
	}
	return r
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[host]++
	if r.answer != nil {
		return r.answer(host, r.calls[host]), nil
	}
	addrs, ok := r.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return append([]netip.Addr(nil), addrs...), nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

func (r *fakeResolver) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		n += c
	}
	return n
}

// dialRecorder is a Config.DialContext that records every address it is
// asked to dial, refuses anything that is not a literal ip:port, and
// tracks which connections are still open.
type dialRecorder struct {
	t     testing.TB
	mu    sync.Mutex
	addrs []string // guarded by mu
	open  int      // guarded by mu
}

// trackedConn decrements the recorder's open count on its first Close.
type trackedConn struct {
	net.Conn
	once sync.Once
	d    *dialRecorder
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.d.mu.Lock()
		c.d.open--
		c.d.mu.Unlock()
	})
	return c.Conn.Close()
}

func (d *dialRecorder) openConns() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.open
}

func (d *dialRecorder) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, address)
	d.mu.Unlock()
	if _, err := netip.ParseAddrPort(address); err != nil {
		d.t.Errorf("dial of %q: not a literal ip:port", address)
		return nil, errors.New("not an ip:port")
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.open++
	d.mu.Unlock()
	return &trackedConn{Conn: c, d: d}, nil
}

func (d *dialRecorder) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// recorder is an Auditor that keeps records.
type recorder struct {
	mu   sync.Mutex
	recs []Record // guarded by mu
}

func (a *recorder) Audit(r Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, r)
}

func (a *recorder) records() []Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Record(nil), a.recs...)
}

// seen is one request as the backend saw it.
type seen struct {
	Proto  string
	Method string
	Path   string
	Host   string
	SNI    string
	Header http.Header
	Body   string
}

// backend is a loopback test server with handlers for the scenarios.
type backend struct {
	srv  *httptest.Server
	port int
	mu   sync.Mutex
	reqs []seen // guarded by mu
}

// newBackend starts a backend on 127.0.0.1; with pki it serves HTTPS
// (HTTP/2 enabled) with the test certificate.
func newBackend(t testing.TB, pki *testPKI) *backend {
	t.Helper()
	return newBackendOn(t, "127.0.0.1:0", pki)
}

// newBackendOn starts a backend listening on addr.
func newBackendOn(t testing.TB, addr string, pki *testPKI) *backend {
	t.Helper()
	b := &backend{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from "+r.Host)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		// Reflects every request header into the response, headers and
		// body, like httpbin's /headers: the worst case for secrets.
		for name, vs := range r.Header {
			for _, v := range vs {
				w.Header().Add("X-Echo-"+name, v)
			}
		}
		for name, vs := range r.Header {
			fmt.Fprintf(w, "%s: %s\n", name, strings.Join(vs, ", "))
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		if code == 0 {
			code = http.StatusFound
		}
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(code)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Location", "/loop?n="+strconv.Itoa(n+1))
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/bytes", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		chunk := []byte(strings.Repeat("x", 1024))
		for n > 0 {
			k := min(n, len(chunk))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte{0xff, 0xfe, 0x00, 0x01})
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/hop-headers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "X-Private")
		w.Header().Set("X-Private", "per-connection")
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("X-Public", "end-to-end")
	})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := new(strings.Builder)
		_, _ = io.Copy(body, r.Body)
		s := seen{Proto: r.Proto, Method: r.Method, Path: r.URL.RequestURI(), Host: r.Host, Header: r.Header.Clone(), Body: body.String()}
		if r.TLS != nil {
			s.SNI = r.TLS.ServerName
		}
		b.mu.Lock()
		b.reqs = append(b.reqs, s)
		b.mu.Unlock()
		mux.ServeHTTP(w, r)
	})
	b.srv = httptest.NewUnstartedServer(handler)
	if addr != "127.0.0.1:0" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("cannot listen on %s: %v", addr, err)
		}
		b.srv.Listener.Close()
		b.srv.Listener = l
	}
	b.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // TLS failures are expected in some tests
	if pki != nil {
		b.srv.EnableHTTP2 = true
		b.srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.leaf}}
		b.srv.StartTLS()
	} else {
		b.srv.Start()
	}
	t.Cleanup(b.srv.Close)
	u, _ := url.Parse(b.srv.URL)
	b.port, _ = strconv.Atoi(u.Port())
	return b
}

func (b *backend) requests() []seen {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]seen(nil), b.reqs...)
}

// url returns scheme://host:port+path for this backend.
func (b *backend) url(host, path string) string {
	scheme := "http"
	if b.srv.TLS != nil {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s:%d%s", scheme, host, b.port, path)
}

// loopback is the UnsafeAllowAddresses entry tests use to reach their
// servers on 127.0.0.1 (and only there).
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// env is a proxy wired to fakes, plus what it recorded.
type env struct {
	proxy    *Proxy
	resolver *fakeResolver
	dialer   *dialRecorder
	audit    *recorder
}

// newEnv builds a proxy from cfg with the fakes filled in where cfg leaves
// them nil.
func newEnv(t testing.TB, cfg Config, res *fakeResolver) *env {
	t.Helper()
	e := &env{resolver: res, dialer: &dialRecorder{t: t}, audit: &recorder{}}
	if e.resolver == nil {
		e.resolver = newResolver()
	}
	cfg.Resolver = e.resolver
	if cfg.DialContext == nil {
		cfg.DialContext = e.dialer.DialContext
	}
	cfg.Auditor = e.audit
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.proxy = p
	// Runs from e.run close first (cleanups run last-in first-out), and
	// the backends only after this check: every connection a run opened
	// must be closed by its Run.Close, not by the server going away.
	t.Cleanup(func() {
		testenv.WaitFor(t, "every connection closed after Run.Close", func() bool { return e.dialer.openConns() == 0 })
	})
	return e
}

func (e *env) run(t testing.TB, rc RunConfig) *Run {
	t.Helper()
	if rc.RunID == "" {
		rc.RunID = "run-" + t.Name()
	}
	r, err := e.proxy.NewRun(rc)
	if err != nil {
		t.Fatalf("NewRun: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// expectError checks that err is an *Error of kind whose reason contains want.
func expectError(t testing.TB, err error, kind Kind, want string) *Error {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v (%T), want *Error of kind %s", err, err, kind)
	}
	if fe.Kind != kind {
		t.Fatalf("kind = %s (%q), want %s", fe.Kind, fe.Reason, kind)
	}
	if !strings.Contains(fe.Reason, want) {
		t.Fatalf("reason = %q, want it to contain %q", fe.Reason, want)
	}
	return fe
}

// expectOK checks that a fetch succeeded with status.
func expectOK(t testing.TB, resp *Response, err error, status int) *Response {
	t.Helper()
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if resp.Status != status {
		t.Fatalf("status = %d, want %d (body %q)", resp.Status, status, resp.Body)
	}
	return resp
}

func header(resp *Response, name string) []string {
	var vs []string
	for _, kv := range resp.Headers {
		if kv[0] == name {
			vs = append(vs, kv[1])
		}
	}
	return vs
}
