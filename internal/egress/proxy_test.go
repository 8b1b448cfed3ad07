package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
)

// policyFor allows hosts on b's port, over http and https, and lets tests
// reach 127.0.0.1 (only).
func policyFor(b *backend, hosts ...string) Policy {
	return Policy{
		Schemes:              []string{"http", "https"},
		Hosts:                hosts,
		Ports:                []int{b.port},
		UnsafeAllowAddresses: loopback,
	}
}

func TestFetchHTTP(t *testing.T) {
	b := newBackend(t, nil)
	e := newEnv(t, Config{Policy: policyFor(b, "api.test")}, newResolver("api.test", "127.0.0.1"))
	run := e.run(t, RunConfig{RunInfo: RunInfo{Tenant: "acme", Plan: "free"}})

	resp, err := run.Fetch(context.Background(), Request{
		URL:     b.url("API.test.", "/?q=1#frag"),
		Method:  "post",
		Headers: [][2]string{{"X-Custom", " v "}, {"Host", "evil.test"}, {"Te", "trailers"}, {"Accept-Encoding", "br"}},
		Body:    "hi",
	})
	expectOK(t, resp, err, 200)
	if resp.Body != "hello from api.test:"+fmt.Sprint(b.port) || resp.StatusText != "OK" || resp.Redirected {
		t.Errorf("response = %+v", resp)
	}
	if want := b.url("api.test", "/?q=1"); resp.URL != want {
		t.Errorf("URL = %q, want %q", resp.URL, want)
	}
	got := b.requests()[0]
	if got.Method != "POST" || got.Body != "hi" || got.Host != fmt.Sprintf("api.test:%d", b.port) {
		t.Errorf("server saw %+v", got)
	}
	for name, want := range map[string]string{
		"User-Agent":   DefaultUserAgent,
		"X-Custom":     "v",
		"Content-Type": "text/plain;charset=UTF-8",
		"Te":           "",
		"Accept":       "*/*",
	} {
		if v := got.Header.Get(name); v != want {
			t.Errorf("server saw %s = %q, want %q", name, v, want)
		}
	}
	if ae := got.Header.Get("Accept-Encoding"); ae == "br" {
		t.Errorf("guest Accept-Encoding was forwarded")
	}
	if s := run.Stats(); s.Requests != 1 || s.Bytes != int64(len(resp.Body)) || s.BytesOut != 2 {
		t.Errorf("stats = %+v", s)
	}
	recs := e.audit.records()
	if len(recs) != 1 {
		t.Fatalf("%d audit records, want 1", len(recs))
	}
	r := recs[0]
	if r.Decision != DecisionAllow || r.Status != 200 || r.IP != netip.MustParseAddr("127.0.0.1") ||
		r.Tenant != "acme" || r.Plan != "free" || r.Method != "POST" || r.Kind != "" ||
		r.URL != b.url("api.test", "/?q=REDACTED") || r.BytesIn != int64(len(resp.Body)) || r.BytesOut != 2 {
		t.Errorf("audit record = %+v", r)
	}
}

func TestFetchHTTPS(t *testing.T) {
	pki := newTestPKI(t)
	b := newBackend(t, pki)
	res := newResolver("api.test", "127.0.0.1", "www.api.test", "127.0.0.1", "nocert.test", "127.0.0.1")
	e := newEnv(t, Config{
		Policy:    policyFor(b, "api.test", "*.api.test", "nocert.test"),
		TLSConfig: &tls.Config{RootCAs: pki.roots},
	}, res)
	run := e.run(t, RunConfig{})

	for _, host := range []string{"api.test", "www.api.test"} {
		resp, err := run.Fetch(context.Background(), Request{URL: b.url(host, "/")})
		expectOK(t, resp, err, 200)
	}
	for i, got := range b.requests() {
		want := []string{"api.test", "www.api.test"}[i]
		if got.Proto != "HTTP/2.0" {
			t.Errorf("request %d: proto %s, want HTTP/2.0 over the pinned dialer", i, got.Proto)
		}
		if got.SNI != want {
			t.Errorf("request %d: SNI = %q, want %q (TLS must verify the URL's host, not the pinned IP)", i, got.SNI, want)
		}
	}

	// The certificate is not valid for nocert.test: connecting to the
	// pinned IP must not skip verifying the name.
	_, err := run.Fetch(context.Background(), Request{URL: b.url("nocert.test", "/")})
	expectError(t, err, KindNetwork, "TLS handshake with nocert.test failed")

	// A ServerName in the configured TLSConfig must not replace the
	// per-request name (it would verify every host against it).
	e2 := newEnv(t, Config{
		Policy:    policyFor(b, "nocert.test"),
		TLSConfig: &tls.Config{RootCAs: pki.roots, ServerName: "api.test"},
	}, res)
	_, err = e2.run(t, RunConfig{}).Fetch(context.Background(), Request{URL: b.url("nocert.test", "/")})
	expectError(t, err, KindNetwork, "TLS handshake with nocert.test failed")
}

func TestPolicyDenials(t *testing.T) {
	b := newBackend(t, nil)
	base := Policy{
		Schemes:              []string{"https", "http"},
		Hosts:                []string{"api.test", "*.example.test"},
		Ports:                []int{b.port, 443},
		Methods:              []string{"GET", "POST"},
		MaxRequestBodyBytes:  10,
		UnsafeAllowAddresses: loopback,
	}
	res := newResolver("api.test", "127.0.0.1", "a.example.test", "127.0.0.1", "example.test", "127.0.0.1")
	tests := []struct {
		name   string
		policy *Policy // nil: base
		req    Request
		kind   Kind
		reason string
	}{
		{name: "host not allowed", req: Request{URL: b.url("evil.test", "/")}, kind: KindDenied,
			reason: `blocked by egress policy: host "evil.test" is not allowed`},
		{name: "wildcard excludes apex", req: Request{URL: b.url("example.test", "/")}, kind: KindDenied,
			reason: `host "example.test" is not allowed`},
		{name: "scheme not allowed", policy: &Policy{Hosts: []string{"api.test"}},
			req: Request{URL: "http://api.test/"}, kind: KindDenied,
			reason: `blocked by egress policy: scheme "http" is not allowed (allowed: https)`},
		{name: "non-http scheme", req: Request{URL: "file:///etc/passwd"}, kind: KindDenied, reason: `scheme "file" is not allowed`},
		{name: "port not allowed", req: Request{URL: "http://api.test:8080/"}, kind: KindDenied,
			reason: "blocked by egress policy: port 8080 is not allowed for http"},
		{name: "default port only", policy: &Policy{Hosts: []string{"api.test"}},
			req: Request{URL: "https://api.test:8443/"}, kind: KindDenied, reason: "port 8443 is not allowed"},
		{name: "method not allowed", req: Request{URL: b.url("api.test", "/"), Method: "DELETE"}, kind: KindDenied,
			reason: `blocked by egress policy: method "DELETE" is not allowed`},
		{name: "patch is case-sensitive", req: Request{URL: b.url("api.test", "/"), Method: "patch"}, kind: KindDenied,
			reason: `method "patch" is not allowed`},
		{name: "forbidden method", req: Request{URL: b.url("api.test", "/"), Method: "TRACE"}, kind: KindInvalid,
			reason: `method "TRACE" is forbidden`},
		{name: "credentials in URL", req: Request{URL: "http://user:pass@api.test/"}, kind: KindDenied,
			reason: "URL must not contain credentials"},
		{name: "empty credentials", req: Request{URL: "http://@api.test/"}, kind: KindDenied, reason: "credentials"},
		{name: "relative URL", req: Request{URL: "/just/a/path"}, kind: KindInvalid, reason: "Invalid URL"},
		{name: "bad IPv4", req: Request{URL: "http://1.2.3.4.5/"}, kind: KindInvalid, reason: "Invalid URL"},
		{name: "IDN host", req: Request{URL: "http://bücher.test/"}, kind: KindInvalid, reason: "Invalid URL"},
		{name: "body too large", req: Request{URL: b.url("api.test", "/"), Method: "POST", Body: "01234567890"},
			kind: KindDenied, reason: "request body is 11 bytes, more than maxRequestBodyBytes (10)"},
		{name: "GET with body", req: Request{URL: b.url("api.test", "/"), Body: "x"}, kind: KindInvalid,
			reason: "Request with GET method cannot have body"},
		{name: "bad header name", req: Request{URL: b.url("api.test", "/"), Headers: [][2]string{{"Bad Name", "x"}}},
			kind: KindInvalid, reason: `"Bad Name" is not a valid header name`},
		{name: "header injection", req: Request{URL: b.url("api.test", "/"), Headers: [][2]string{{"X-A", "a\r\nX-B: b"}}},
			kind: KindInvalid, reason: "invalid value"},
		{name: "bad base64", req: Request{URL: b.url("api.test", "/"), Method: "POST", Body: "!!", BodyEncoding: "base64"},
			kind: KindInvalid, reason: "not valid base64"},
		{name: "bad redirect mode", req: Request{URL: b.url("api.test", "/"), Redirect: "sometimes"}, kind: KindInvalid,
			reason: "redirect must be"},
		{name: "unknown host", policy: &Policy{Hosts: []string{"*"}, Schemes: []string{"http"}, Ports: []int{b.port}},
			req: Request{URL: b.url("nowhere.test", "/")}, kind: KindNetwork, reason: `could not resolve host "nowhere.test"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := base
			if tt.policy != nil {
				pol = *tt.policy
			}
			e := newEnv(t, Config{Policy: pol}, res)
			run := e.run(t, RunConfig{})
			_, err := run.Fetch(context.Background(), tt.req)
			expectError(t, err, tt.kind, tt.reason)
			if d := e.dialer.dialed(); len(d) != 0 {
				t.Errorf("dialled %v for a refused request", d)
			}
			recs := e.audit.records()
			if len(recs) != 1 || recs[0].Kind != tt.kind || recs[0].Reason != err.Error() {
				t.Fatalf("audit = %+v, want one record of kind %s", recs, tt.kind)
			}
			if tt.kind != KindNetwork && recs[0].Decision != DecisionDeny {
				t.Errorf("decision = %s, want deny", recs[0].Decision)
			}
			if strings.Contains(recs[0].URL, "user:pass") {
				t.Errorf("audit URL %q keeps credentials", recs[0].URL)
			}
		})
	}
}

// TestSSRFSpellings sends every spelling of an internal address we know
// of; each must be denied before any connection is attempted.
func TestSSRFSpellings(t *testing.T) {
	pol := Policy{Schemes: []string{"http", "https"}, Hosts: []string{"*"}}
	tests := []struct {
		name, url, reason string
	}{
		{"loopback", "http://127.0.0.1/", "address 127.0.0.1 is loopback"},
		{"decimal", "http://2130706433/", "address 127.0.0.1 is loopback"},
		{"octal", "http://0177.0.0.1/", "address 127.0.0.1 is loopback"},
		{"octal whole", "http://017700000001/", "address 127.0.0.1 is loopback"},
		{"hex short", "http://0x7f.1/", "address 127.0.0.1 is loopback"},
		{"hex whole", "http://0x7F000001/", "address 127.0.0.1 is loopback"},
		{"hex dotted", "http://0x7f.0x0.0x0.0x1/", "address 127.0.0.1 is loopback"},
		{"short form", "http://127.1/", "address 127.0.0.1 is loopback"},
		{"short three", "http://127.0.1/", "address 127.0.0.1 is loopback"},
		{"trailing dot", "http://127.0.0.1./", "address 127.0.0.1 is loopback"},
		{"percent-encoded", "http://%31%32%37.0.0.1/", "address 127.0.0.1 is loopback"},
		{"backslash and slashes", `http:\\\127.0.0.1\x`, "address 127.0.0.1 is loopback"},
		{"tabs and newlines", "http://12\t7.0.\n0.1/", "address 127.0.0.1 is loopback"},
		{"explicit default port", "http://127.0.0.1:80/", "address 127.0.0.1 is loopback"},
		{"zero", "http://0/", "address 0.0.0.0 is unspecified"},
		{"this network", "http://0.1.2.3/", "address 0.1.2.3 is in 0.0.0.0/8"},
		{"private 10", "http://10.0.0.1/", "address 10.0.0.1 is private"},
		{"private 172", "http://172.16.5.4/", "is private"},
		{"private 192", "http://192.168.1.1/", "is private"},
		{"private octal", "http://012.0.0.1/", "address 10.0.0.1 is private"},
		{"cgnat", "http://100.64.0.1/", "address 100.64.0.1 is carrier-grade NAT"},
		{"link-local", "http://169.254.1.1/", "is link-local"},
		{"metadata", "http://169.254.169.254/latest/meta-data/", "address 169.254.169.254 is a cloud metadata endpoint"},
		{"metadata decimal", "http://2852039166/", "address 169.254.169.254 is a cloud metadata endpoint"},
		{"metadata azure", "http://168.63.129.16/", "is a cloud metadata endpoint"},
		{"broadcast", "http://255.255.255.255/", "is broadcast"},
		{"multicast", "http://224.0.0.1/", "is multicast"},
		{"reserved", "http://240.0.0.1/", "is reserved"},
		{"v6 loopback", "http://[::1]/", "address ::1 is loopback"},
		{"v6 loopback long", "http://[0:0:0:0:0:0:0:1]/", "address ::1 is loopback"},
		{"v6 unspecified", "http://[::]/", "address :: is unspecified"},
		{"v6 link-local", "http://[fe80::1]/", "is link-local"},
		{"v6 unique-local", "http://[fd12:3456::1]/", "is unique-local"},
		{"v6 site-local", "http://[fec0::1]/", "is site-local"},
		{"v6 multicast", "http://[ff02::1]/", "is multicast"},
		{"v6 metadata", "http://[fd00:ec2::254]/", "is a cloud metadata endpoint"},
		{"mapped", "http://[::ffff:127.0.0.1]/", "address ::ffff:127.0.0.1 is loopback (it embeds 127.0.0.1)"},
		{"mapped hex", "http://[::ffff:7f00:1]/", "address ::ffff:127.0.0.1 is loopback"},
		{"mapped long", "http://[0:0:0:0:0:ffff:a9fe:a9fe]/", "is a cloud metadata endpoint (it embeds 169.254.169.254)"},
		{"compat", "http://[::127.0.0.1]/", "address ::7f00:1 is loopback (it embeds 127.0.0.1)"},
		{"compat private", "http://[::10.0.0.1]/", "is private (it embeds 10.0.0.1)"},
		{"compat public", "http://[::8.8.8.8]/", "address ::808:808 is reserved"},
		{"nat64", "http://[64:ff9b::127.0.0.1]/", "is loopback (it embeds 127.0.0.1)"},
		{"nat64 metadata", "http://[64:ff9b::a9fe:a9fe]/", "is a cloud metadata endpoint (it embeds 169.254.169.254)"},
		{"nat64 local-use", "http://[64:ff9b:1::a00:1]/", "is private"},
		{"6to4", "http://[2002:7f00:1::]/", "is loopback (it embeds 127.0.0.1)"},
		{"6to4 private", "http://[2002:c0a8:101::1]/", "is private (it embeds 192.168.1.1)"},
		{"teredo", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "is loopback (it embeds 127.0.0.1)"},
		{"documentation v6", "http://[2001:db8::1]/", "reserved for documentation"},
		{"documentation v4", "http://192.0.2.1/", "reserved for documentation"},
		{"outside global unicast", "http://[4000::1]/", "is reserved"},
		{"https too", "https://0x7f.1/", "address 127.0.0.1 is loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Config{Policy: pol}, nil)
			run := e.run(t, RunConfig{})
			_, err := run.Fetch(context.Background(), Request{URL: tt.url})
			fe := expectError(t, err, KindDenied, tt.reason)
			if !strings.HasPrefix(fe.Reason, "blocked by egress policy: ") {
				t.Errorf("reason %q lacks the policy prefix", fe.Reason)
			}
			if d := e.dialer.dialed(); len(d) != 0 {
				t.Errorf("dialled %v", d)
			}
			if n := e.resolver.total(); n != 0 {
				t.Errorf("resolver called %d times for an IP literal", n)
			}
		})
	}
}

// TestResolvedAddresses: names are judged by every address they resolve to.
func TestResolvedAddresses(t *testing.T) {
	b := newBackend(t, nil)
	tests := []struct {
		name   string
		addrs  []string
		kind   Kind
		reason string
	}{
		{"localhost", []string{"127.0.0.2"}, KindDenied, `host "svc.test" resolves to 127.0.0.2, which is loopback`},
		{"one good one private", []string{"127.0.0.1", "10.0.0.7"}, KindDenied, "resolves to 10.0.0.7, which is private"},
		{"private first", []string{"192.168.0.1", "127.0.0.1"}, KindDenied, "resolves to 192.168.0.1, which is private"},
		{"mapped private", []string{"::ffff:169.254.169.254"}, KindDenied, "is a cloud metadata endpoint (it embeds 169.254.169.254)"},
		{"metadata", []string{"169.254.169.254"}, KindDenied, "resolves to 169.254.169.254, which is a cloud metadata endpoint"},
		{"mapped allowed", []string{"::ffff:127.0.0.1"}, "", ""},
		{"no answers", nil, KindNetwork, `could not resolve host "svc.test": no addresses`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := newResolver()
			res.answer = func(string, int) []netip.Addr {
				var out []netip.Addr
				for _, a := range tt.addrs {
					out = append(out, netip.MustParseAddr(a))
				}
				return out
			}
			e := newEnv(t, Config{Policy: policyFor(b, "svc.test")}, res)
			run := e.run(t, RunConfig{})
			resp, err := run.Fetch(context.Background(), Request{URL: b.url("svc.test", "/")})
			if tt.kind == "" {
				expectOK(t, resp, err, 200)
				return
			}
			expectError(t, err, tt.kind, tt.reason)
			if d := e.dialer.dialed(); len(d) != 0 {
				t.Errorf("dialled %v", d)
			}
		})
	}
}

// TestDNSRebinding: the resolver answers an allowed address first
// (127.0.0.2 stands in for a public one; the policy allows exactly it) and
// 127.0.0.1 on every later lookup. The proxy must look up once per request
// and connect to the address it checked, so the second answer never
// matters for that request, and is checked (and denied) for the next.
func TestDNSRebinding(t *testing.T) {
	b := newBackendOn(t, "127.0.0.2:0", nil)
	decoy := newBackend(t, nil) // on 127.0.0.1: where a rebound connection would land
	res := newResolver()
	res.answer = func(host string, call int) []netip.Addr {
		if call == 1 {
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	}
	pol := Policy{
		Schemes: []string{"http"}, Hosts: []string{"rebind.test"}, Ports: []int{b.port, decoy.port},
		UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")},
	}
	e := newEnv(t, Config{Policy: pol}, res)
	run := e.run(t, RunConfig{})

	resp, err := run.Fetch(context.Background(), Request{URL: b.url("rebind.test", "/")})
	expectOK(t, resp, err, 200)
	if n := res.count("rebind.test"); n != 1 {
		t.Errorf("resolver called %d times, want 1 (a second lookup is a rebinding window)", n)
	}
	want := fmt.Sprintf("127.0.0.2:%d", b.port)
	if d := e.dialer.dialed(); !slices.Equal(d, []string{want}) {
		t.Errorf("dialled %v, want [%s]", d, want)
	}
	if len(b.requests()) != 1 || len(decoy.requests()) != 0 {
		t.Errorf("checked server got %d requests, rebound one %d", len(b.requests()), len(decoy.requests()))
	}
	if r := e.audit.records(); r[0].IP != netip.MustParseAddr("127.0.0.2") {
		t.Errorf("audit IP = %s", r[0].IP)
	}

	// The next request looks up again, sees the rebound answer and is
	// denied: every request is checked; a pooled connection is no reason
	// to skip the check.
	_, err = run.Fetch(context.Background(), Request{URL: b.url("rebind.test", "/")})
	expectError(t, err, KindDenied, `host "rebind.test" resolves to 127.0.0.1, which is loopback`)
	if d := e.dialer.dialed(); len(d) != 1 {
		t.Errorf("dialled %v after the rebound answer", d)
	}
	if n := len(decoy.requests()); n != 0 {
		t.Errorf("rebound server got %d requests", n)
	}
}

func TestRedirects(t *testing.T) {
	b := newBackend(t, nil)
	res := newResolver("api.test", "127.0.0.1", "other.test", "127.0.0.1", "internal.test", "10.1.2.3")
	pol := policyFor(b, "api.test", "other.test", "internal.test")
	pol.MaxRedirects = 3
	redirect := func(code int, to string) string {
		return b.url("api.test", fmt.Sprintf("/redirect?code=%d&to=%s", code, to))
	}
	tests := []struct {
		name         string
		anyHost      bool // policy hosts ["*"] rather than the three names
		maxRedirects int  // overrides the policy's 3 if set
		req          Request
		kind         Kind
		reason       string
		status       int
		method       string // what the last hop's server saw
		body         string
		redirects    int
	}{
		{name: "same host", req: Request{URL: redirect(302, "/")}, status: 200, method: "GET", redirects: 1},
		{name: "other allowed host", req: Request{URL: redirect(301, b.url("other.test", "/"))}, status: 200, method: "GET", redirects: 1},
		{name: "to host not allowed", req: Request{URL: redirect(302, b.url("evil.test", "/"))}, kind: KindDenied,
			reason: `blocked by egress policy: redirect to ` + b.url("evil.test", "/") + `: host "evil.test" is not allowed`, redirects: 1},
		{name: "to private address", req: Request{URL: redirect(302, b.url("internal.test", "/"))}, kind: KindDenied,
			reason: `resolves to 10.1.2.3, which is private`, redirects: 1},
		{name: "to metadata literal", req: Request{URL: redirect(307, "http://169.254.169.254/latest/meta-data/")}, kind: KindDenied,
			reason: `redirect to http://169.254.169.254/latest/meta-data/: host "169.254.169.254" is not allowed`, redirects: 1},
		{name: "to metadata, any host allowed", anyHost: true, req: Request{URL: redirect(302, "http://169.254.169.254/")},
			kind: KindDenied, reason: "redirect to http://169.254.169.254/: port 80 is not allowed", redirects: 1},
		{name: "to metadata hex on allowed port", anyHost: true, req: Request{URL: redirect(302, fmt.Sprintf("http://0xa9fea9fe:%d/", b.port))},
			kind: KindDenied, reason: fmt.Sprintf("redirect to http://169.254.169.254:%d/: address 169.254.169.254 is a cloud metadata endpoint", b.port), redirects: 1},
		{name: "to loopback v6 on allowed port", anyHost: true, req: Request{URL: redirect(302, fmt.Sprintf("http://[::1]:%d/", b.port))},
			kind: KindDenied, reason: "address ::1 is loopback", redirects: 1},
		{name: "to file scheme", req: Request{URL: redirect(302, "file:///etc/passwd")}, kind: KindDenied,
			reason: `redirect: scheme "file" is not allowed`},
		{name: "scheme-relative backslash", req: Request{URL: redirect(302, `/\evil.test/`)}, kind: KindDenied,
			reason: `host "evil.test" is not allowed`, redirects: 1},
		{name: "hop limit", req: Request{URL: b.url("api.test", "/loop")}, kind: KindDenied,
			reason: "blocked by egress policy: too many redirects (maxRedirects=3)", redirects: 3},
		{name: "303 POST becomes GET", req: Request{URL: redirect(303, "/"), Method: "POST", Body: "data"},
			status: 200, method: "GET", redirects: 1},
		{name: "302 POST becomes GET", req: Request{URL: redirect(302, "/"), Method: "POST", Body: "data"},
			status: 200, method: "GET", redirects: 1},
		{name: "307 keeps POST and body", req: Request{URL: redirect(307, "/"), Method: "POST", Body: "data"},
			status: 200, method: "POST", body: "data", redirects: 1},
		{name: "308 keeps PUT", req: Request{URL: redirect(308, "/"), Method: "PUT", Body: "data"},
			status: 200, method: "PUT", body: "data", redirects: 1},
		{name: "redirects off", maxRedirects: -1, req: Request{URL: redirect(302, "/")}, kind: KindDenied,
			reason: `redirects are not followed (maxRedirects=-1); use redirect: "manual" to see the 302 response`},
		{name: "manual returns the 3xx", req: Request{URL: redirect(302, "/elsewhere"), Redirect: RedirectManual}, status: 302},
		{name: "error mode", req: Request{URL: redirect(302, "/"), Redirect: RedirectError}, kind: KindNetwork,
			reason: `unexpected redirect (status 302) with redirect mode "error"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pol
			if tt.anyHost {
				p.Hosts = []string{"*"}
			}
			if tt.maxRedirects != 0 {
				p.MaxRedirects = tt.maxRedirects
			}
			e := newEnv(t, Config{Policy: p}, res)
			run := e.run(t, RunConfig{})
			before := len(b.requests())
			resp, err := run.Fetch(context.Background(), tt.req)
			rec := e.audit.records()
			if len(rec) != 1 {
				t.Fatalf("%d audit records, want 1", len(rec))
			}
			if rec[0].Redirects != tt.redirects {
				t.Errorf("audit redirects = %d, want %d", rec[0].Redirects, tt.redirects)
			}
			if tt.kind != "" {
				expectError(t, err, tt.kind, tt.reason)
				return
			}
			expectOK(t, resp, err, tt.status)
			if tt.status == 302 {
				if loc := header(resp, "location"); !slices.Equal(loc, []string{"/elsewhere"}) {
					t.Errorf("location = %v", loc)
				}
				return
			}
			if !resp.Redirected {
				t.Errorf("Redirected = false")
			}
			reqs := b.requests()[before:]
			last := reqs[len(reqs)-1]
			if last.Method != tt.method || last.Body != tt.body {
				t.Errorf("last hop: %s %q, want %s %q", last.Method, last.Body, tt.method, tt.body)
			}
			if tt.method == "GET" && last.Header.Get("Content-Type") != "" {
				t.Errorf("Content-Type survived the switch to GET")
			}
		})
	}
}

func TestRequestLimit(t *testing.T) {
	b := newBackend(t, nil)
	res := newResolver("api.test", "127.0.0.1")
	pol := policyFor(b, "api.test")
	pol.MaxRequests = 10
	e := newEnv(t, Config{Policy: pol}, res)
	run := e.run(t, RunConfig{Limits: Limits{MaxRequests: 3}})
	ctx := context.Background()

	_, err := run.Fetch(ctx, Request{URL: b.url("evil.test", "/")}) // denied, still counts
	expectError(t, err, KindDenied, "not allowed")
	for range 2 {
		resp, err := run.Fetch(ctx, Request{URL: b.url("api.test", "/")})
		expectOK(t, resp, err, 200)
	}
	_, err = run.Fetch(ctx, Request{URL: b.url("api.test", "/")})
	fe := expectError(t, err, KindLimit, "request limit reached (maxFetchRequests=3)")
	if fe.Limit != LimitRequests || !errors.Is(err, ErrLimit) {
		t.Errorf("limit = %q", fe.Limit)
	}
	if got := run.Stats().Requests; got != 3 {
		t.Errorf("Stats().Requests = %d, want 3", got)
	}
	if n := len(e.audit.records()); n != 4 {
		t.Errorf("%d audit records, want 4 (one per attempt)", n)
	}

	// A larger run limit is clamped to the policy's.
	run2 := e.run(t, RunConfig{Limits: Limits{MaxRequests: 1000}})
	if run2.maxReqs != 10 {
		t.Errorf("maxReqs = %d, want the policy's 10", run2.maxReqs)
	}
}

func TestResponseLimits(t *testing.T) {
	b := newBackend(t, nil)
	res := newResolver("api.test", "127.0.0.1")
	pol := policyFor(b, "api.test")
	pol.MaxResponseBytes = 4000
	tests := []struct {
		name     string
		sizes    []int // responses fetched in order; the last one is judged
		method   string
		chunked  bool
		runBytes int64
		kind     Kind
		limit    string
		reason   string
	}{
		{name: "at the cap", sizes: []int{4000}},
		{name: "over the per-response cap", sizes: []int{4001}, kind: KindDenied,
			reason: "response is 4001 bytes, more than maxResponseBytes (4000 bytes per response)"},
		{name: "over the cap, chunked", sizes: []int{10000}, chunked: true, kind: KindDenied,
			reason: "blocked by egress policy: response exceeds maxResponseBytes (4000 bytes per response)"},
		{name: "over the run budget", sizes: []int{3000, 3000}, runBytes: 5000, kind: KindLimit, limit: LimitBytes,
			reason: "response exceeds maxFetchBytes (5000 bytes per run)"},
		{name: "over the run budget, chunked", sizes: []int{3000, 3000}, chunked: true, runBytes: 5000, kind: KindLimit,
			limit: LimitBytes, reason: "response exceeds maxFetchBytes (5000 bytes per run)"},
		{name: "exactly the run budget", sizes: []int{2500, 2500}, runBytes: 5000},
		{name: "HEAD declaring a large body", sizes: []int{10000}, method: "HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Config{Policy: pol}, res)
			run := e.run(t, RunConfig{Limits: Limits{MaxBytes: tt.runBytes}})
			var resp *Response
			var err error
			for _, n := range tt.sizes {
				path := fmt.Sprintf("/bytes?n=%d", n)
				if tt.chunked {
					path += "&chunked=1"
				}
				resp, err = run.Fetch(context.Background(), Request{URL: b.url("api.test", path), Method: tt.method})
			}
			if tt.method == "HEAD" {
				expectOK(t, resp, err, 200)
				if resp.Body != "" || len(header(resp, "content-length")) != 1 {
					t.Errorf("HEAD response %+v", resp)
				}
				return
			}
			if tt.kind == "" {
				expectOK(t, resp, err, 200)
				if len(resp.Body) != tt.sizes[len(tt.sizes)-1] {
					t.Errorf("body has %d bytes", len(resp.Body))
				}
				return
			}
			fe := expectError(t, err, tt.kind, tt.reason)
			if fe.Limit != tt.limit {
				t.Errorf("limit = %q, want %q", fe.Limit, tt.limit)
			}
			if s := run.Stats(); s.Bytes > 10000 {
				t.Errorf("read %d bytes: reading did not stop at the cap", s.Bytes)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	b := newBackend(t, nil)
	res := newResolver("api.test", "127.0.0.1")
	tests := []struct {
		name      string
		policyMs  int
		requestMs int
		wantMs    string
	}{
		{"policy timeout", 150, 0, "150ms"},
		{"request lowers it", 10_000, 100, "100ms"},
		{"request cannot raise it", 100, 60_000, "100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := policyFor(b, "api.test")
			pol.TimeoutMs = tt.policyMs
			e := newEnv(t, Config{Policy: pol}, res)
			run := e.run(t, RunConfig{})
			start := time.Now()
			_, err := run.Fetch(context.Background(), Request{URL: b.url("api.test", "/slow"), TimeoutMs: tt.requestMs})
			expectError(t, err, KindTimeout, "request to api.test timed out after "+tt.wantMs)
			if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrTimeout) {
				t.Errorf("errors.Is(DeadlineExceeded / ErrTimeout) false for %v", err)
			}
			if d := time.Since(start); d > testenv.ScaleDuration(5*time.Second) {
				t.Errorf("took %v", d)
			}
			if r := e.audit.records(); len(r) != 1 || r[0].Kind != KindTimeout || r[0].Decision != DecisionAllow {
				t.Errorf("audit = %+v", r)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	pki := newTestPKI(t)
	b := newBackend(t, pki)
	const (
		secret    = "Bearer s3cr3t-token-value"
		runSecret = "run-scoped-key-123"
	)
	res := newResolver("api.test", "127.0.0.1", "other.test", "127.0.0.1")
	e := newEnv(t, Config{
		Policy:    policyFor(b, "api.test", "other.test"),
		TLSConfig: &tls.Config{RootCAs: pki.roots},
		Secrets: []Binding{
			{Origin: b.url("api.test", ""), Header: "Authorization", Value: secret},
			{Origin: b.url("api.test", ""), Header: "X-Api-Key", Value: "proxy-level-key-1"},
		},
	}, res)
	var auditLog bytes.Buffer
	jl := NewJSONLines(&auditLog)
	run := e.run(t, RunConfig{
		Secrets: []Binding{{Origin: b.url("*.test", ""), Header: "X-Api-Key", Value: runSecret}},
		Auditor: jl,
	})
	ctx := context.Background()
	last := func() seen { r := b.requests(); return r[len(r)-1] }

	t.Run("injected for the bound host", func(t *testing.T) {
		resp, err := run.Fetch(ctx, Request{URL: b.url("api.test", "/echo")})
		expectOK(t, resp, err, 200)
		got := last()
		if v := got.Header.Values("Authorization"); !slices.Equal(v, []string{secret}) {
			t.Errorf("server saw Authorization %q", v)
		}
		if v := got.Header.Values("X-Api-Key"); !slices.Equal(v, []string{runSecret}) {
			t.Errorf("server saw X-Api-Key %q, want the run binding's", v)
		}
		assertNoSecret(t, resp, secret, runSecret)
		if v := header(resp, "x-echo-authorization"); !slices.Equal(v, []string{redacted}) {
			t.Errorf("echoed header = %q, want redacted", v)
		}
	})
	t.Run("guest cannot override", func(t *testing.T) {
		resp, err := run.Fetch(ctx, Request{URL: b.url("api.test", "/echo"), Headers: [][2]string{
			{"authorization", "Bearer guest"}, {"AUTHORIZATION", "Bearer guest2"}, {"X-Other", "kept"},
		}})
		expectOK(t, resp, err, 200)
		got := last()
		if v := got.Header.Values("Authorization"); !slices.Equal(v, []string{secret}) {
			t.Errorf("server saw Authorization %q, want only the secret", v)
		}
		if got.Header.Get("X-Other") != "kept" {
			t.Errorf("unrelated guest header dropped")
		}
		assertNoSecret(t, resp, secret, runSecret)
	})
	t.Run("not sent to an unbound host", func(t *testing.T) {
		resp, err := run.Fetch(ctx, Request{URL: b.url("other.test", "/echo"), Headers: [][2]string{{"Authorization", "Bearer guest"}}})
		expectOK(t, resp, err, 200)
		got := last()
		if v := got.Header.Values("Authorization"); !slices.Equal(v, []string{"Bearer guest"}) {
			t.Errorf("other.test saw Authorization %q, want the guest's own", v)
		}
		if v := got.Header.Get("X-Api-Key"); v != runSecret {
			t.Errorf("other.test saw X-Api-Key %q: the *.test run binding applies", v)
		}
	})
	t.Run("not carried across a redirect to another host", func(t *testing.T) {
		to := b.url("other.test", "/echo")
		resp, err := run.Fetch(ctx, Request{URL: b.url("api.test", "/redirect?code=307&to="+to)})
		expectOK(t, resp, err, 200)
		reqs := b.requests()
		first, hop := reqs[len(reqs)-2], reqs[len(reqs)-1]
		if first.Header.Get("Authorization") != secret {
			t.Errorf("first hop lacked the secret")
		}
		if v := hop.Header.Get("Authorization"); v != "" {
			t.Errorf("redirect hop to other.test carried Authorization %q", v)
		}
		if v := hop.Header.Get("X-Api-Key"); v != "" {
			t.Errorf("redirect hop carried X-Api-Key %q, though *.test matches: secrets stay with the first origin", v)
		}
		assertNoSecret(t, resp, secret, runSecret)
	})
	t.Run("carried on a same-origin redirect", func(t *testing.T) {
		resp, err := run.Fetch(ctx, Request{URL: b.url("api.test", "/redirect?to=/echo")})
		expectOK(t, resp, err, 200)
		if last().Header.Get("Authorization") != secret {
			t.Errorf("same-origin hop lacked the secret")
		}
	})
	t.Run("never audited", func(t *testing.T) {
		for _, r := range e.audit.records() {
			if s := fmt.Sprintf("%+v %#v", r, r); strings.Contains(s, "s3cr3t") || strings.Contains(s, runSecret) {
				t.Errorf("audit record contains a secret: %s", s)
			}
		}
		if auditLog.Len() == 0 {
			t.Fatal("run auditor got nothing")
		}
		if strings.Contains(auditLog.String(), "s3cr3t") || strings.Contains(auditLog.String(), runSecret) {
			t.Errorf("JSON audit contains a secret")
		}
	})
	t.Run("binding never prints its value", func(t *testing.T) {
		bd := Binding{Origin: "https://api.test", Host: "api.test", Header: "Authorization", Value: secret, UnsafeAllowHTTP: true}
		j, _ := json.Marshal(bd)
		for _, s := range []string{fmt.Sprint(bd), fmt.Sprintf("%+v", bd), fmt.Sprintf("%#v", bd), string(j)} {
			if strings.Contains(s, "s3cr3t") {
				t.Errorf("printed binding shows the secret: %s", s)
			}
		}
	})
}

func assertNoSecret(t *testing.T, resp *Response, secrets ...string) {
	t.Helper()
	j, _ := json.Marshal(resp)
	for _, s := range secrets {
		if bytes.Contains(j, []byte(s)) {
			t.Errorf("response contains secret %q: %s", s, j)
		}
	}
}

func TestAuditRecords(t *testing.T) {
	b := newBackend(t, nil)
	res := newResolver("api.test", "127.0.0.1")
	var out bytes.Buffer
	jl := NewJSONLines(&out)
	e := newEnv(t, Config{Policy: policyFor(b, "api.test")}, res)
	run := e.run(t, RunConfig{RunInfo: RunInfo{RunID: "r1", Tenant: "t1", Plan: "p1"}, Auditor: jl, Limits: Limits{MaxRequests: 5}})
	ctx := context.Background()
	attempts := []Request{
		{URL: b.url("api.test", "/?token=abc&page=2")}, // allowed
		{URL: b.url("evil.test", "/")},                 // denied
		{URL: "http://u:p@api.test/"},                  // denied, credentials
		{URL: "::not a url::"},                         // invalid
		{URL: b.url("api.test", "/redirect?to=/")},     // allowed, one redirect
		{URL: b.url("api.test", "/")},                  // limit
	}
	for _, req := range attempts {
		run.Fetch(ctx, req)
	}
	if err := jl.Err(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(attempts) || len(e.audit.records()) != len(attempts) {
		t.Fatalf("%d JSON lines and %d records for %d attempts", len(lines), len(e.audit.records()), len(attempts))
	}
	var recs []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		recs = append(recs, m)
	}
	known := []string{FieldTime, FieldRunID, FieldTenant, FieldPlan, FieldMethod, FieldURL, FieldFinalURL, FieldIP,
		FieldDecision, FieldKind, FieldLimit, FieldReason, FieldStatus, FieldBytesIn, FieldBytesOut, FieldDurationMs, FieldRedirects}
	for i, m := range recs {
		for k := range m {
			if !slices.Contains(known, k) {
				t.Errorf("record %d: unknown field %q", i, k)
			}
		}
		if m[FieldRunID] != "r1" || m[FieldTenant] != "t1" || m[FieldPlan] != "p1" {
			t.Errorf("record %d: run info %v", i, m)
		}
		if _, err := time.Parse(time.RFC3339Nano, m[FieldTime].(string)); err != nil {
			t.Errorf("record %d: time: %v", i, err)
		}
	}
	check := func(i int, field string, want any) {
		t.Helper()
		if got := recs[i][field]; got != want {
			t.Errorf("record %d: %s = %v, want %v", i, field, got, want)
		}
	}
	check(0, FieldDecision, "allow")
	check(0, FieldURL, b.url("api.test", "/?token=REDACTED&page=REDACTED"))
	check(0, FieldIP, "127.0.0.1")
	check(0, FieldStatus, float64(200))
	check(1, FieldDecision, "deny")
	check(1, FieldKind, "denied")
	check(1, FieldReason, `blocked by egress policy: host "evil.test" is not allowed`)
	check(2, FieldURL, "http://REDACTED@api.test/")
	check(3, FieldKind, "invalid")
	check(4, FieldRedirects, float64(1))
	check(4, FieldFinalURL, b.url("api.test", "/"))
	check(5, FieldKind, "limit")
	check(5, FieldLimit, LimitRequests)
}

func TestRunClose(t *testing.T) {
	b := newBackend(t, nil)
	res := newResolver("api.test", "127.0.0.1")
	e := newEnv(t, Config{Policy: policyFor(b, "api.test")}, res)
	run := e.run(t, RunConfig{})

	errc := make(chan error, 1)
	go func() {
		_, err := run.Fetch(context.Background(), Request{URL: b.url("api.test", "/slow")})
		errc <- err
	}()
	testenv.WaitFor(t, "the request at the backend", func() bool { return len(b.requests()) > 0 })
	run.Close()
	err := <-errc
	expectError(t, err, KindCanceled, "the run ended")
	if !errors.Is(err, ErrClosed) {
		t.Errorf("errors.Is(err, ErrClosed) = false")
	}
	_, err = run.Fetch(context.Background(), Request{URL: b.url("api.test", "/")})
	expectError(t, err, KindCanceled, "after the run ended")
	run.Close() // idempotent
}

func TestCallerCancel(t *testing.T) {
	b := newBackend(t, nil)
	e := newEnv(t, Config{Policy: policyFor(b, "api.test")}, newResolver("api.test", "127.0.0.1"))
	run := e.run(t, RunConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := run.Fetch(ctx, Request{URL: b.url("api.test", "/slow")})
	expectError(t, err, KindCanceled, "fetch canceled")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(err, context.Canceled) = false: %v", err)
	}
}

func TestProxyEnvironmentIgnored(t *testing.T) {
	b := newBackend(t, nil)
	// A proxy that would answer differently if it were used.
	decoy := newBackend(t, nil)
	t.Setenv("HTTP_PROXY", decoy.srv.URL)
	t.Setenv("HTTPS_PROXY", decoy.srv.URL)
	t.Setenv("NO_PROXY", "")
	e := newEnv(t, Config{Policy: policyFor(b, "api.test")}, newResolver("api.test", "127.0.0.1"))
	run := e.run(t, RunConfig{})
	resp, err := run.Fetch(context.Background(), Request{URL: b.url("api.test", "/")})
	expectOK(t, resp, err, 200)
	if n := len(decoy.requests()); n != 0 {
		t.Errorf("the environment's proxy got %d requests", n)
	}
}

func TestResponseShape(t *testing.T) {
	b := newBackend(t, nil)
	e := newEnv(t, Config{Policy: policyFor(b, "api.test")}, newResolver("api.test", "127.0.0.1"))
	run := e.run(t, RunConfig{})
	ctx := context.Background()

	t.Run("binary body is base64", func(t *testing.T) {
		resp, err := run.Fetch(ctx, Request{URL: b.url("api.test", "/binary")})
		expectOK(t, resp, err, 200)
		raw, _ := base64.StdEncoding.DecodeString(resp.Body)
		if resp.BodyEncoding != EncodingBase64 || !bytes.Equal(raw, []byte{0xff, 0xfe, 0, 1}) {
			t.Errorf("body %q encoding %q", resp.Body, resp.BodyEncoding)
		}
	})
	t.Run("base64 request body", func(t *testing.T) {
		resp, err := run.Fetch(ctx, Request{URL: b.url("api.test", "/"), Method: "PUT",
			Body: base64.StdEncoding.EncodeToString([]byte{0, 1, 2}), BodyEncoding: EncodingBase64})
		expectOK(t, resp, err, 200)
		r := b.requests()
		if got := r[len(r)-1]; got.Body != "\x00\x01\x02" || got.Header.Get("Content-Type") != "" {
			t.Errorf("server saw body %q content-type %q", got.Body, got.Header.Get("Content-Type"))
		}
	})
	t.Run("hop-by-hop headers dropped", func(t *testing.T) {
		resp, err := run.Fetch(ctx, Request{URL: b.url("api.test", "/hop-headers")})
		expectOK(t, resp, err, 200)
		for _, kv := range resp.Headers {
			if kv[0] != strings.ToLower(kv[0]) {
				t.Errorf("header name %q not lower-case", kv[0])
			}
			switch kv[0] {
			case "connection", "keep-alive", "x-private":
				t.Errorf("hop-by-hop header %q returned", kv[0])
			}
		}
		if v := header(resp, "x-public"); !slices.Equal(v, []string{"end-to-end"}) {
			t.Errorf("x-public = %v", v)
		}
	})
	t.Run("JSON form", func(t *testing.T) {
		resp, err := run.Fetch(ctx, Request{URL: b.url("api.test", "/")})
		expectOK(t, resp, err, 200)
		j, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		var back Response
		if err := json.Unmarshal(j, &back); err != nil || back.Body != resp.Body || len(back.Headers) != len(resp.Headers) {
			t.Errorf("JSON round trip: %s -> %+v (%v)", j, back, err)
		}
	})
}

func TestConcurrentFetches(t *testing.T) {
	b := newBackend(t, nil)
	e := newEnv(t, Config{Policy: policyFor(b, "api.test")}, newResolver("api.test", "127.0.0.1"))
	run := e.run(t, RunConfig{Limits: Limits{MaxRequests: 20}})
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for range 30 {
		wg.Go(func() {
			_, err := run.Fetch(context.Background(), Request{URL: b.url("api.test", "/bytes?n=100")})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	ok, limited := 0, 0
	for err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrLimit):
			limited++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 20 || limited != 10 {
		t.Errorf("%d ok and %d limited, want 20 and 10", ok, limited)
	}
	if s := run.Stats(); s.Requests != 20 || s.Bytes != 2000 {
		t.Errorf("stats = %+v", s)
	}
	if n := len(e.audit.records()); n != 30 {
		t.Errorf("%d audit records, want 30", n)
	}
}

func TestNewValidates(t *testing.T) {
	_, err := New(Config{
		Policy:  Policy{Schemes: []string{"ftp"}, Hosts: []string{"https://x.test", "*.*.test"}, Ports: []int{0}},
		Secrets: []Binding{{Host: "", Header: "Host", Value: "short"}},
	})
	if err == nil {
		t.Fatal("New accepted an invalid config")
	}
	for _, want := range []string{"schemes[0]", "hosts[0]", "remove the scheme", "hosts[1]", "ports[0]",
		"secrets[0]: origin: required", "secrets[0]: header: \"Host\" is managed by the proxy", "secrets[0]: value: shorter than 8"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	p, err := New(Config{Policy: Policy{Hosts: []string{"*"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.NewRun(RunConfig{Policy: &Policy{Methods: []string{"CONNECT"}}}); err == nil ||
		!strings.Contains(err.Error(), "run policy") {
		t.Errorf("NewRun accepted a bad run policy: %v", err)
	}
}

// TestRunPolicyNarrows: a run policy can only take away.
func TestRunPolicyNarrows(t *testing.T) {
	b := newBackend(t, nil)
	e := newEnv(t, Config{Policy: policyFor(b, "api.test")}, newResolver("api.test", "127.0.0.1", "evil.test", "127.0.0.1"))
	run := e.run(t, RunConfig{Policy: &Policy{
		Schemes: []string{"http"}, Hosts: []string{"*"}, Ports: []int{b.port}, Methods: []string{"GET"},
		UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")},
	}})
	ctx := context.Background()
	resp, err := run.Fetch(ctx, Request{URL: b.url("api.test", "/")})
	expectOK(t, resp, err, 200)
	_, err = run.Fetch(ctx, Request{URL: b.url("evil.test", "/")})
	expectError(t, err, KindDenied, "not allowed")
	_, err = run.Fetch(ctx, Request{URL: b.url("api.test", "/"), Method: "POST", Body: "x"})
	expectError(t, err, KindDenied, `method "POST" is not allowed`)
	_, err = run.Fetch(ctx, Request{URL: "http://10.0.0.1:" + fmt.Sprint(b.port) + "/"})
	expectError(t, err, KindDenied, "not allowed")
}
