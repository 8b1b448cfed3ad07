package egress

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/egress/rule"
)

// portMapper is a Config.DialContext that dials a checked address on
// another port: the proxy believes it reaches api.test:443, the test's
// server listens on a free port. Tests of default ports (443, 80) need it,
// since a test cannot count on binding them.
type portMapper struct {
	d     *dialRecorder
	ports map[int]int // the port the proxy dials -> the backend's real port
}

func (m *portMapper) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		m.d.t.Errorf("dial of %q: not a literal ip:port", address)
		return nil, err
	}
	if to, ok := m.ports[int(ap.Port())]; ok {
		address = netip.AddrPortFrom(ap.Addr(), uint16(to)).String()
	}
	return m.d.DialContext(ctx, network, address)
}

// newMappedEnv is newEnv with a portMapper as the dialer; the cleanup
// checks that every connection the mapper opened is closed.
func newMappedEnv(t *testing.T, cfg Config, res *fakeResolver, ports map[int]int) *env {
	t.Helper()
	m := &portMapper{d: &dialRecorder{t: t}, ports: ports}
	cfg.DialContext = m.DialContext
	e := newEnv(t, cfg, res)
	e.dialer = m.d
	return e
}

// originsEnv is api.test on three origins: https on 443 and 8443, http on
// 80, each a different loopback backend behind the port mapper, all
// allowed by the policy (and other.test on the same three).
type originsEnv struct {
	pki                 *testPKI
	https, https2, http *backend
	pol                 Policy
	res                 *fakeResolver
	ports               map[int]int
}

func newOriginsEnv(t *testing.T) *originsEnv {
	o := &originsEnv{pki: newTestPKI(t)}
	o.https, o.https2, o.http = newBackend(t, o.pki), newBackend(t, o.pki), newBackend(t, nil)
	o.ports = map[int]int{443: o.https.port, 8443: o.https2.port, 80: o.http.port}
	o.pol = Policy{
		Schemes:              []string{"https", "http"},
		Hosts:                []string{"api.test", "other.test"},
		Ports:                []int{443, 8443, 80},
		UnsafeAllowAddresses: loopback,
	}
	o.res = newResolver("api.test", "127.0.0.1", "other.test", "127.0.0.1")
	return o
}

func (o *originsEnv) env(t *testing.T, secrets ...Binding) *env {
	return newMappedEnv(t, Config{Policy: o.pol, TLSConfig: &tls.Config{RootCAs: o.pki.roots}, Secrets: secrets}, o.res, o.ports)
}

// lastAuth is the Authorization header of the last request b saw.
func lastAuth(t *testing.T, b *backend) []string {
	t.Helper()
	reqs := b.requests()
	if len(reqs) == 0 {
		t.Fatal("the backend saw no request")
	}
	return reqs[len(reqs)-1].Header.Values("Authorization")
}

// TestSecretOrigins: a secret goes to the origin it is bound to and
// nowhere else: not to another port of the host, not over http, not on a
// redirect to either. The deprecated host-only form means https on 443.
func TestSecretOrigins(t *testing.T) {
	const secret = "Bearer origin-bound-s3cr3t"
	o := newOriginsEnv(t)
	ctx := context.Background()

	t.Run("host form is https on the default port", func(t *testing.T) {
		e := o.env(t, Binding{Host: "api.test", Header: "Authorization", Value: secret})
		run := e.run(t, RunConfig{})
		tests := []struct {
			url  string
			b    *backend
			want []string
		}{
			{"https://api.test/echo", o.https, []string{secret}},
			{"https://api.test:443/echo", o.https, []string{secret}},
			{"https://API.test./echo", o.https, []string{secret}},
			{"https://api.test:8443/echo", o.https2, nil},
			{"http://api.test/echo", o.http, nil},
			{"https://other.test/echo", o.https, nil},
		}
		for _, tt := range tests {
			resp, err := run.Fetch(ctx, Request{URL: tt.url})
			expectOK(t, resp, err, 200)
			if got := lastAuth(t, tt.b); !slices.Equal(got, tt.want) {
				t.Errorf("%s: the server saw Authorization %q, want %q", tt.url, got, tt.want)
			}
			assertNoSecret(t, resp, secret)
		}
	})

	t.Run("origin with a port", func(t *testing.T) {
		e := o.env(t, Binding{Origin: "https://api.test:8443", Header: "Authorization", Value: secret})
		run := e.run(t, RunConfig{Secrets: []Binding{
			// The run's binding of the same header, for another origin:
			// each goes to its own.
			{Origin: "HTTPS://API.TEST/", Header: "authorization", Value: "Bearer run-s3cr3t-for-443"},
		}})
		tests := []struct {
			url  string
			b    *backend
			want []string
		}{
			{"https://api.test:8443/echo", o.https2, []string{secret}},
			{"https://api.test/echo", o.https, []string{"Bearer run-s3cr3t-for-443"}},
			{"http://api.test/echo", o.http, nil},
			{"https://other.test:8443/echo", o.https2, nil},
			{"https://api.test:8443/redirect?to=/echo", o.https2, []string{secret}}, // same origin: carried
			// Another origin, though a binding matches it: secrets stay
			// with the origin the step asked for.
			{"https://api.test:8443/redirect?to=https://api.test/echo", o.https, nil},
		}
		for _, tt := range tests {
			resp, err := run.Fetch(ctx, Request{URL: tt.url})
			expectOK(t, resp, err, 200)
			if got := lastAuth(t, tt.b); !slices.Equal(got, tt.want) {
				t.Errorf("%s: the server saw Authorization %q, want %q", tt.url, got, tt.want)
			}
			assertNoSecret(t, resp, secret, "run-s3cr3t-for-443")
		}
	})

	t.Run("http only with unsafeAllowHTTP", func(t *testing.T) {
		e := o.env(t, Binding{Origin: "http://api.test", Header: "Authorization", Value: secret, UnsafeAllowHTTP: true})
		run := e.run(t, RunConfig{})
		tests := []struct {
			url  string
			b    *backend
			want []string
		}{
			{"http://api.test/echo", o.http, []string{secret}},
			{"https://api.test/echo", o.https, nil}, // an http binding is not an https one
			{"http://api.test/redirect?to=https://api.test/echo", o.https, nil},
		}
		for _, tt := range tests {
			resp, err := run.Fetch(ctx, Request{URL: tt.url})
			expectOK(t, resp, err, 200)
			if got := lastAuth(t, tt.b); !slices.Equal(got, tt.want) {
				t.Errorf("%s: the server saw Authorization %q, want %q", tt.url, got, tt.want)
			}
		}
		_, err := o.env(t).proxy.NewRun(RunConfig{Secrets: []Binding{{Origin: "http://api.test", Header: "Authorization", Value: secret}}})
		if err == nil || !strings.Contains(err.Error(), "run secrets[0]: origin: \"http://api.test\" is plain http") {
			t.Errorf("an http origin without unsafeAllowHTTP: %v", err)
		}
	})

	// A redirect from the bound origin to the same host on another port or
	// scheme is another origin: the hop goes without the secret, and
	// without the step's own Authorization.
	t.Run("redirects to another port or scheme", func(t *testing.T) {
		e := o.env(t, Binding{Host: "api.test", Header: "Authorization", Value: secret})
		run := e.run(t, RunConfig{})
		for _, tt := range []struct {
			to string
			b  *backend
		}{
			{"https://api.test:8443/echo", o.https2},
			{"http://api.test/echo", o.http},
			{"http://api.test:443/echo", o.https}, // plain http to the https port: a 400, but never the secret
		} {
			before := len(o.https.requests())
			resp, err := run.Fetch(ctx, Request{
				URL:     "https://api.test/redirect?code=307&to=" + url.QueryEscape(tt.to),
				Headers: [][2]string{{"Authorization", "Bearer guest-own"}},
			})
			if err != nil {
				t.Fatalf("redirect to %s: %v", tt.to, err)
			}
			first := o.https.requests()[before]
			if got := first.Header.Values("Authorization"); !slices.Equal(got, []string{secret}) {
				t.Errorf("first hop saw Authorization %q, want the secret", got)
			}
			if tt.b != o.https {
				if got := lastAuth(t, tt.b); got != nil {
					t.Errorf("redirect hop to %s carried Authorization %q", tt.to, got)
				}
			} else if n := len(o.https.requests()); n != before+1 {
				t.Errorf("the https server saw %d requests; the plain-http hop reached it as one", n-before)
			}
			assertNoSecret(t, resp, secret)
		}
	})
}

// reflector is an HTTPS (HTTP/1.1) server that reflects a request header
// back in the form a query asks for: the ways an upstream can echo a
// credential, and a few it can hide it in.
func newReflector(t *testing.T, pki *testPKI) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		name := q.Get("h")
		if name == "" {
			name = "Authorization"
		}
		v := r.Header.Get(name)
		_, cred, _ := strings.Cut(v, " ")
		switch q.Get("form") {
		case "exact":
			io.WriteString(w, "you sent: "+v)
		case "upper":
			io.WriteString(w, strings.ToUpper(v))
		case "lower":
			io.WriteString(w, strings.ToLower(v))
		case "credential":
			fmt.Fprintf(w, `{"error": "token %s is not valid"}`, cred)
		case "credential upper":
			io.WriteString(w, strings.ToUpper(cred))
		case "header name and value":
			fmt.Fprintf(w, "%s: %s\n", strings.ToUpper(name), v)
		case "chunks":
			// Flushed one byte at a time: the proxy reads it in pieces.
			f := w.(http.Flusher)
			for i := range len(v) {
				io.WriteString(w, v[i:i+1])
				f.Flush()
			}
		case "gzip":
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, v)
			zw.Close()
		case "header value upper":
			w.Header().Set("X-Seen", strings.ToUpper(v))
		case "header value lower, other name case":
			w.Header()["x-SEEN-auth"] = []string{strings.ToLower(v)}
		case "credential in a header name":
			w.Header().Set("X-"+cred, "1")
		case "status text":
			c, buf, _ := w.(http.Hijacker).Hijack()
			fmt.Fprintf(buf, "HTTP/1.1 403 bad %s\r\nContent-Length: 0\r\n\r\n", v)
			buf.Flush()
			c.Close()
		case "malformed header line":
			// The transport's error quotes the line.
			c, buf, _ := w.(http.Hijacker).Hijack()
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\n%s\r\n\r\n", v)
			buf.Flush()
			c.Close()
		case "location, manual":
			w.Header().Set("Location", "/next?token="+url.QueryEscape(strings.ToUpper(cred)))
			w.WriteHeader(http.StatusFound)
		case "location, followed":
			w.Header().Set("Location", "/landing/"+cred)
			w.WriteHeader(http.StatusFound)
		case "location, denied":
			w.Header().Set("Location", "https://evil.test/"+cred)
			w.WriteHeader(http.StatusFound)
		case "base64":
			io.WriteString(w, base64.StdEncoding.EncodeToString([]byte(v)))
		case "hex":
			io.WriteString(w, hex.EncodeToString([]byte(v)))
		case "html entities":
			for _, c := range v {
				fmt.Fprintf(w, "&#x%x;", c)
			}
		case "percent-encoded":
			io.WriteString(w, url.QueryEscape(v))
		case "json escapes":
			for _, c := range v {
				fmt.Fprintf(w, `\u%04x`, c)
			}
		case "deflate":
			w.Header().Set("Content-Encoding", "deflate")
			fw, _ := flate.NewWriter(w, flate.BestCompression)
			io.WriteString(fw, v)
			fw.Close()
		case "first half":
			io.WriteString(w, v[:len(v)/2])
		case "second half":
			io.WriteString(w, v[len(v)/2:])
		default:
			io.WriteString(w, "ok")
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.leaf}}
	srv.StartTLS() // HTTP/1.1 only: the status-text row hijacks the connection
	t.Cleanup(srv.Close)
	return srv
}

// TestSecretRedaction pins what the proxy scrubs from what comes back, row
// by row, as docs/security.md states it: caught rows must not show the
// credential in any case, in the response or the error; the gaps must
// still show it, so that the documentation changes when they close.
func TestSecretRedaction(t *testing.T) {
	const (
		bearer  = "Bearer s3cr3t-Token-Value" // its credential part is 18 bytes: matched alone too
		cred    = "s3cr3t-Token-Value"
		special = "k3y/with+special=chars" // percent-encoding changes it
	)
	pki := newTestPKI(t)
	srv := newReflector(t, pki)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	pol := Policy{Hosts: []string{"api.test"}, UnsafeAllowAddresses: loopback} // evil.test resolves, but is not allowed
	e := newMappedEnv(t, Config{Policy: pol, TLSConfig: &tls.Config{RootCAs: pki.roots}, Secrets: []Binding{
		{Origin: "https://api.test", Header: "Authorization", Value: bearer},
		{Origin: "https://api.test", Header: "X-Api-Key", Value: special},
	}}, newResolver("api.test", "127.0.0.1", "evil.test", "127.0.0.1"), map[int]int{443: port})
	run := e.run(t, RunConfig{})
	ctx := context.Background()

	// shows reports whether s appears in what the step got back, in any
	// case: the response (as JSON, body decoded if base64) or the error.
	shows := func(resp *Response, err error, s string) bool {
		var text string
		if err != nil {
			text = err.Error()
		} else {
			j, _ := json.Marshal(resp)
			text = string(j)
			if resp.BodyEncoding == EncodingBase64 {
				b, _ := base64.StdEncoding.DecodeString(resp.Body)
				text += string(b)
			}
		}
		return strings.Contains(strings.ToLower(text), strings.ToLower(s))
	}
	caught := []struct {
		form     string
		redirect string
	}{
		{form: "exact"},
		{form: "upper"},
		{form: "lower"},
		{form: "credential"},
		{form: "credential upper"},
		{form: "header name and value"},
		{form: "chunks"},
		{form: "gzip"},
		{form: "header value upper"},
		{form: "header value lower, other name case"},
		{form: "credential in a header name"},
		{form: "status text"},
		{form: "malformed header line"},
		{form: "location, manual", redirect: RedirectManual},
		{form: "location, followed"},
		{form: "location, denied"},
		{form: "percent-encoded"}, // "Bearer+s3cr3t-Token-Value": the credential part is intact
	}
	for _, tt := range caught {
		t.Run("caught/"+tt.form, func(t *testing.T) {
			resp, err := run.Fetch(ctx, Request{URL: "https://api.test/?form=" + url.QueryEscape(tt.form), Redirect: tt.redirect})
			if shows(resp, err, cred) {
				j, _ := json.Marshal(resp)
				t.Errorf("the step sees the credential: %s %v", j, err)
			}
		})
	}

	// The gaps: each decode recovers the credential from what the step got.
	inflate := func(b []byte) string { s, _ := io.ReadAll(flate.NewReader(bytes.NewReader(b))); return string(s) }
	gaps := []struct {
		form, header, want string
		decode             func(body []byte) string
	}{
		{form: "base64", want: bearer, decode: func(b []byte) string { s, _ := base64.StdEncoding.DecodeString(string(b)); return string(s) }},
		{form: "hex", want: bearer, decode: func(b []byte) string { s, _ := hex.DecodeString(string(b)); return string(s) }},
		{form: "html entities", want: bearer, decode: func(b []byte) string { return html.UnescapeString(string(b)) }},
		{form: "percent-encoded", header: "X-Api-Key", want: special, decode: func(b []byte) string { s, _ := url.QueryUnescape(string(b)); return s }},
		{form: "json escapes", want: bearer, decode: func(b []byte) string { var s string; json.Unmarshal([]byte(`"`+string(b)+`"`), &s); return s }},
		{form: "deflate", want: bearer, decode: inflate},
		{form: "first half", want: bearer[:len(bearer)/2], decode: func(b []byte) string { return string(b) }},
		{form: "second half", want: bearer[len(bearer)/2:], decode: func(b []byte) string { return string(b) }},
	}
	for _, tt := range gaps {
		t.Run("not caught/"+tt.form, func(t *testing.T) {
			resp, err := run.Fetch(ctx, Request{URL: "https://api.test/?form=" + url.QueryEscape(tt.form) + "&h=" + tt.header})
			expectOK(t, resp, err, 200)
			body := []byte(resp.Body)
			if resp.BodyEncoding == EncodingBase64 {
				body, _ = base64.StdEncoding.DecodeString(resp.Body)
			}
			if got := tt.decode(body); got != tt.want {
				t.Errorf("decoded %q, want %q: if redaction now catches this, update docs/security.md and the README", got, tt.want)
			}
		})
	}

	t.Run("never in the audit", func(t *testing.T) {
		for _, r := range e.audit.records() {
			if s := strings.ToLower(fmt.Sprintf("%+v", r)); strings.Contains(s, strings.ToLower(cred)) {
				t.Errorf("audit record shows the credential: %s", s)
			}
		}
	})
}

// TestBindingValidate: the origin forms a Binding accepts, what each
// means, and a clear error naming the field for every other.
func TestBindingValidate(t *testing.T) {
	const value = "Bearer long-enough"
	tests := []struct {
		b    Binding
		want string // the canonical origin, or an error substring
	}{
		{Binding{Origin: "https://api.example.com"}, "https://api.example.com"},
		{Binding{Origin: "https://api.example.com/"}, "https://api.example.com"},
		{Binding{Origin: "HTTPS://API.Example.COM.:443"}, "https://api.example.com"},
		{Binding{Origin: "https://api.example.com:8443"}, "https://api.example.com:8443"},
		{Binding{Origin: "https://*.example.com"}, "https://*.example.com"},
		{Binding{Origin: "https://203.0.113.7:8443"}, "https://203.0.113.7:8443"},
		{Binding{Origin: "https://[2001:db8::1]"}, "https://[2001:db8::1]"},
		{Binding{Origin: "https://[2001:DB8::1]:8443"}, "https://[2001:db8::1]:8443"},
		{Binding{Origin: "http://api.example.com", UnsafeAllowHTTP: true}, "http://api.example.com"},
		{Binding{Origin: "http://api.example.com:80", UnsafeAllowHTTP: true}, "http://api.example.com"},
		{Binding{Origin: "http://api.example.com:8080", UnsafeAllowHTTP: true}, "http://api.example.com:8080"},
		{Binding{Host: "api.example.com"}, "https://api.example.com"},
		{Binding{Host: "API.example.com."}, "https://api.example.com"},
		{Binding{Host: "*.example.com"}, "https://*.example.com"},
		{Binding{Host: "2001:db8::1"}, "https://[2001:db8::1]"},
		{Binding{Host: "[2001:db8::1]"}, "https://[2001:db8::1]"},

		{Binding{}, `origin: required: the scheme, host and port the secret is for`},
		{Binding{Origin: "https://a.example.com", Host: "a.example.com"}, "host: set origin, or the deprecated host, not both"},
		{Binding{Origin: "api.example.com"}, `origin: "api.example.com" is not an origin (no scheme)`},
		{Binding{Origin: "http://api.example.com"}, `origin: "http://api.example.com" is plain http: the secret would travel in clear text; use an https origin, or set unsafeAllowHTTP`},
		{Binding{Origin: "https://api.example.com", UnsafeAllowHTTP: true}, `unsafeAllowHTTP: set, but origin "https://api.example.com" is https`},
		{Binding{Origin: "ftp://api.example.com"}, `scheme "ftp" is not supported`},
		{Binding{Origin: "https://api.example.com/v1"}, "not to a path"},
		{Binding{Origin: "https://api.example.com?x=1"}, "not to a path"},
		{Binding{Origin: "https://u:p@api.example.com"}, "no user:password@"},
		{Binding{Origin: "https://"}, "(no host)"},
		{Binding{Origin: "https://api.example.com:"}, `"" is not a port`},
		{Binding{Origin: "https://api.example.com:0"}, `"0" is not a port`},
		{Binding{Origin: "https://api.example.com:65536"}, `"65536" is not a port`},
		{Binding{Origin: "https://[api.example.com]"}, "only an IPv6 address goes in brackets"},
		{Binding{Origin: "https://*"}, `a secret for every host ("*")`},
		{Binding{Origin: "https://*.*.example.com"}, `"*" may only be the whole pattern`},
		{Binding{Origin: "https://0x7f.1"}, "ends in a number"},
		{Binding{Host: "*"}, `host: "https://*": a secret for every host`},
		{Binding{Host: "https://api.example.com"}, `host: "https://api.example.com" has a scheme: write it as origin: "https://api.example.com"`},
		{Binding{Host: "api.example.com:8443"}, `host: "api.example.com:8443" has a port, and host means https on port 443: write origin: "https://api.example.com:8443"`},
		{Binding{Host: "api.example.com", UnsafeAllowHTTP: true}, `unsafeAllowHTTP: host "api.example.com" means https; to send the secret over plain http write origin: "http://api.example.com"`},
	}
	for _, tt := range tests {
		b := tt.b
		b.Header, b.Value = "Authorization", value
		err := b.Validate()
		if strings.Contains(tt.want, "://") && !strings.Contains(tt.want, " ") {
			o, oerr := b.origin()
			if err != nil || oerr != nil || o.String() != tt.want {
				t.Errorf("%v: origin %s, %v; want %s", b, o, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v; want one containing %q", b, err, tt.want)
		}
	}

	// Every problem is reported, each with its field, each on its own
	// line with the caller's prefix.
	_, err := New(Config{Secrets: []Binding{
		{Origin: "http://a.example.com", Header: "Bad Name", Value: "short"},
		{Host: "b.example.com:1", Header: "X-Ok", Value: value},
	}})
	if err == nil {
		t.Fatal("New accepted bad secrets")
	}
	want := []string{
		`egress: secrets[0]: origin: "http://a.example.com" is plain http`,
		`egress: secrets[0]: header: "Bad Name" is not a valid header name`,
		`egress: secrets[0]: value: shorter than 8 bytes`,
		`egress: secrets[1]: host: "b.example.com:1" has a port`,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start %q", i, lines[i], w)
		}
	}
}

// TestBindingForms: a Binding prints, logs and marshals without its value,
// and its JSON reads back (value included) as the same Binding.
func TestBindingForms(t *testing.T) {
	b := Binding{Origin: "http://api.test:8080", Header: "X-Api-Key", Value: "k3y-never-printed", UnsafeAllowHTTP: true}
	j, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"origin":"http://api.test:8080","header":"X-Api-Key","value":"[REDACTED]","unsafeAllowHTTP":true}`; string(j) != want {
		t.Errorf("JSON %s, want %s", j, want)
	}
	var back Binding
	if err := json.Unmarshal([]byte(`{"origin":"http://api.test:8080","header":"X-Api-Key","value":"k3y-never-printed","unsafeAllowHTTP":true}`), &back); err != nil || back != b {
		t.Errorf("decoded %v %v", back, err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("binding", "b", b)
	for _, s := range []string{fmt.Sprint(b), fmt.Sprintf("%+v", b), fmt.Sprintf("%#v", b), logged.String()} {
		if strings.Contains(s, "never-printed") || !strings.Contains(s, "http://api.test:8080") {
			t.Errorf("printed binding: %s", s)
		}
	}
	if s := fmt.Sprint(Binding{Host: "api.test", Header: "A", Value: "v"}); s != `Binding{Host: "api.test", Header: "A", Value: [REDACTED]}` {
		t.Errorf("deprecated form prints %s", s)
	}
}

// TestRedactor: the scrubbing itself, on the edges the fetch tests do not
// reach.
func TestRedactor(t *testing.T) {
	r := newRedactor([]binding{
		{value: "Bearer abcdefgh12"},
		{value: "Basic short"},           // credential under MinSecretLen: only the whole value
		{value: "k\xffy-with-8bit-byte"}, // non-ASCII bytes are matched as they are
		{value: "bearer ABCDEFGH12"},     // the same secret in another case: one needle
	})
	if len(r.needles) != 4 {
		t.Errorf("needles %q, want three whole values and one credential", r.needles)
	}
	tests := []struct{ in, want string }{
		{"", ""},
		{"nothing here", "nothing here"},
		{"x BEARER ABCDEFGH12 y", "x [REDACTED] y"},
		{"abcdefgh12abcdefgh12", "[REDACTED]"},             // adjacent copies merge
		{"Bearer Bearer abcdefgh12", "Bearer [REDACTED]"},  // the longest match wins
		{"basic SHORT and short", "[REDACTED] and short"},  // "short" alone is no secret
		{"K\xffY-WITH-8BIT-BYTE!", "[REDACTED]!"},          // ASCII case folding only
		{"k\xfey-with-8bit-byte", "k\xfey-with-8bit-byte"}, // another byte: no match
		{"abcdefgh1", "abcdefgh1"},                         // a prefix is not the secret
	}
	for _, tt := range tests {
		if got := string(r.scrub([]byte(tt.in))); got != tt.want {
			t.Errorf("scrub(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := r.scrubString(tt.in); got != tt.want {
			t.Errorf("scrubString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	h := [][2]string{{"a", "1"}, {"x-abcdefgh12", "v"}, {"z", "Bearer ABCdefgh12"}}
	r.scrubHeaders(h)
	if want := [][2]string{{"[redacted]", "[REDACTED]"}, {"a", "1"}, {"z", "[REDACTED]"}}; !slices.Equal(h, want) {
		t.Errorf("headers %q, want %q", h, want)
	}
}

// FuzzBindingOrigin: any Origin or Host either fails Validate or gives an
// origin whose written form reads back as the same origin, on https
// unless the binding is UnsafeAllowHTTP.
func FuzzBindingOrigin(f *testing.F) {
	for _, s := range []string{"https://api.example.com", "https://api.example.com:8443/", "http://[::1]:80",
		"HTTPS://*.Example.com.", "https://0x7f.1", "https://[a]:1", "https://a.example.com:", "https://*", "api.example.com"} {
		f.Add(s, false, false)
	}
	f.Fuzz(func(t *testing.T, s string, asHost, http bool) {
		b := Binding{Origin: s, Header: "Authorization", Value: "Bearer long-enough", UnsafeAllowHTTP: http}
		if asHost {
			b.Origin, b.Host = "", s
		}
		o, err := b.origin()
		if err != nil {
			return
		}
		if o.Scheme == "http" && !http || o.Pattern == "*" || o.Port < 1 || o.Port > 65535 {
			t.Fatalf("%v accepted as %s", b, o)
		}
		back, err := rule.ParseOrigin(o.String())
		if err != nil || back != o {
			t.Fatalf("%v: %s reads back as %s, %v", b, o, back, err)
		}
	})
}
