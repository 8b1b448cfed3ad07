package security_test

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

// The secrets a step must never get hold of, nor send where they were not
// bound: the engine's, bound to https://127.0.0.1:$A, and a request's,
// bound to https://127.0.0.1:$B. Their credential parts are what an
// upstream echoes most often, so they are what the checks look for.
const (
	secretEngine     = "Bearer Sb0x-Engine-Secret"
	secretEngineCred = "Sb0x-Engine-Secret"
	secretRun        = "Run-Key-0123456789"
)

// secretServer is one of the origins of the secrets section: it tells the
// step whether it received a secret (/seen, /seenkey: "yes" or "no"),
// redirects (/redirect?to=&code=), and echoes the Authorization it got in
// the forms of /echo?form= (an upstream reflecting credentials).
func secretServer(t *testing.T, start func(http.Handler) *httptest.Server) *httptest.Server {
	srv := start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		_, cred, _ := strings.Cut(auth, " ")
		yes := func(name, want string) {
			if slices.Equal(r.Header.Values(name), []string{want}) {
				io.WriteString(w, "yes")
			} else {
				io.WriteString(w, "no")
			}
		}
		switch {
		case r.URL.Path == "/seen":
			yes("Authorization", secretEngine)
		case r.URL.Path == "/seenkey":
			yes("X-Api-Key", secretRun)
		case r.URL.Path == "/redirect":
			code := http.StatusTemporaryRedirect
			if c := r.URL.Query().Get("code"); c != "" {
				fmt.Sscan(c, &code)
			}
			w.Header().Set("Location", r.URL.Query().Get("to"))
			w.WriteHeader(code)
		case strings.HasPrefix(r.URL.Path, "/landing/"):
			io.WriteString(w, "landed")
		case r.URL.Path == "/echo":
			switch r.URL.Query().Get("form") {
			case "upper":
				io.WriteString(w, strings.ToUpper(auth+" "+r.Header.Get("X-Api-Key")))
			case "lower":
				io.WriteString(w, strings.ToLower(auth))
			case "credential":
				fmt.Fprintf(w, "token %s is not valid", cred)
			case "header":
				w.Header().Set("X-Echo", strings.ToUpper(auth))
			case "name":
				w.Header().Set("X-"+cred, "1")
			case "status":
				c, buf, _ := w.(http.Hijacker).Hijack()
				fmt.Fprintf(buf, "HTTP/1.1 403 bad %s\r\nContent-Length: 0\r\n\r\n", auth)
				buf.Flush()
				c.Close()
			case "location":
				w.Header().Set("Location", "/landing/"+cred)
				w.WriteHeader(http.StatusFound)
			case "manual":
				w.Header().Set("Location", "/next?t="+strings.ToLower(cred))
				w.WriteHeader(http.StatusFound)
			case "denied":
				w.Header().Set("Location", "https://evil.example/"+cred)
				w.WriteHeader(http.StatusFound)
			}
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // plain http to the https port is one of the rows
	t.Cleanup(srv.Close)
	return srv
}

// secretSites starts the section's three origins on 127.0.0.1: $A and $B
// (https, HTTP/1.1, two ports of one host) and $H (plain http), and the
// engine configuration that allows all three and binds the engine's
// secret to $A.
func secretSites(t *testing.T) (sandbox.Config, *strings.Replacer, string) {
	a, b, h := secretServer(t, httptest.NewTLSServer), secretServer(t, httptest.NewTLSServer), secretServer(t, httptest.NewServer)
	port := func(s *httptest.Server) int { return s.Listener.Addr().(*net.TCPAddr).Port }
	roots := x509.NewCertPool()
	roots.AddCert(a.Certificate())
	roots.AddCert(b.Certificate())
	cfg := sandbox.Config{Egress: &sandbox.Egress{
		Policy: sandbox.EgressPolicy{
			Schemes: []string{"https", "http"}, Hosts: []string{"127.0.0.1"},
			Ports:                []int{port(a), port(b), port(h)},
			UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		},
		Secrets: []sandbox.Secret{{Origin: a.URL, Header: "Authorization", Value: secretEngine}},
		RootCAs: roots,
	}}
	subst := strings.NewReplacer("$A", fmt.Sprint(port(a)), "$B", fmt.Sprint(port(b)), "$H", fmt.Sprint(port(h)))
	return cfg, subst, b.URL
}

// fetchText is a step that fetches u (with init, a JS object literal) and
// returns the body.
func fetchText(u, init string) string {
	if init == "" {
		init = "{}"
	}
	return `return await (await fetch("` + u + `", ` + init + `)).text()`
}

// secretRows are attacks on the engine's secret, bound to
// https://127.0.0.1:$A: sending it where it was not bound (another port of
// the host, plain http, a redirect to either), and reading it back from
// an upstream that echoes it. Every row also checks that no copy of a
// secret, in any case, reached the step's result or events.
var secretRows = []attack{
	{"the bound origin gets it", fetchText("https://127.0.0.1:$A/seen", ""), nil0, returns(`"yes"`)},
	{"another port of the bound host", fetchText("https://127.0.0.1:$B/seen", ""), nil0, returns(`"no"`)},
	{"the bound host over plain http", fetchText("http://127.0.0.1:$H/seen", ""), nil0, returns(`"no"`)},
	{"plain http to the bound port", `return (await fetch("http://127.0.0.1:$A/seen")).status`, nil0, returns(`400`)},
	{"redirect to another port", fetchText("https://127.0.0.1:$A/redirect?to=https://127.0.0.1:$B/seen", ""), nil0, returns(`"no"`)},
	{"redirect to plain http on the same host", fetchText("https://127.0.0.1:$A/redirect?to=http://127.0.0.1:$H/seen", ""), nil0, returns(`"no"`)},
	{"redirect, 308, to http with the same port", `return (await fetch("https://127.0.0.1:$A/redirect?code=308&to=http://127.0.0.1:$A/seen")).status`, nil0, returns(`400`)},
	{"same-origin redirect keeps it", fetchText("https://127.0.0.1:$A/redirect?to=/seen", ""), nil0, returns(`"yes"`)},
	{"redirect into the bound origin from another port", fetchText("https://127.0.0.1:$B/redirect?to=https://127.0.0.1:$A/seen", ""), nil0, returns(`"no"`)},
	{"the step's header in another case is replaced", fetchText("https://127.0.0.1:$A/seen", `{headers: {"AUTHORIZATION": "Bearer mine"}}`), nil0, returns(`"yes"`)},
	{"the step's header twice is replaced", fetchText("https://127.0.0.1:$A/seen", `{headers: [["authorization", "a"], ["Authorization", "b"]]}`), nil0, returns(`"yes"`)},
	{"echoed in upper case", fetchText("https://127.0.0.1:$A/echo?form=upper", ""), nil0, returns(`"[REDACTED] "`)},
	{"echoed in lower case", fetchText("https://127.0.0.1:$A/echo?form=lower", ""), nil0, returns(`"[REDACTED]"`)},
	{"credential echoed without its scheme", fetchText("https://127.0.0.1:$A/echo?form=credential", ""), nil0, returns(`"token [REDACTED] is not valid"`)},
	{"echoed in a header, upper case", `return (await fetch("https://127.0.0.1:$A/echo?form=header")).headers.get("x-echo")`, nil0, returns(`"[REDACTED]"`)},
	{"echoed in a header name", `return [...(await fetch("https://127.0.0.1:$A/echo?form=name")).headers.keys()].filter(k => !["content-length", "date"].includes(k))`, nil0, returns(`["[redacted]"]`)},
	{"echoed in the status text", `const r = await fetch("https://127.0.0.1:$A/echo?form=status"); return [r.status, r.statusText]`, nil0, returns(`[403,"bad [REDACTED]"]`)},
	{"echoed in a redirect's URL", `const r = await fetch("https://127.0.0.1:$A/echo?form=location"); return [r.redirected, r.url.replace(/:\d+/, ""), await r.text()]`, nil0, returns(`[true,"https://127.0.0.1/landing/[REDACTED]","landed"]`)},
	{"echoed in a Location, manual", `return (await fetch("https://127.0.0.1:$A/echo?form=manual", {redirect: "manual"})).headers.get("location")`, nil0, returns(`"[REDACTED]"`)},
	{"echoed in a denied redirect's error", fetchTry("https://127.0.0.1:$A/echo?form=denied"), nil0,
		returns(`[true,"fetch failed: blocked by egress policy: redirect to https://evil.example/[REDACTED]: host \"evil.example\" is not allowed"]`)},
}

// secretRequestRows run with the request's own secret, bound to
// https://127.0.0.1:$B, besides the engine's.
var secretRequestRows = []attack{
	{"the request secret's origin gets it", fetchText("https://127.0.0.1:$B/seenkey", ""), nil0, returns(`"yes"`)},
	{"the request secret not to the engine secret's origin", fetchText("https://127.0.0.1:$A/seenkey", ""), nil0, returns(`"no"`)},
	{"the request secret not over http", fetchText("http://127.0.0.1:$H/seenkey", ""), nil0, returns(`"no"`)},
	{"the engine secret not to the request secret's origin", fetchText("https://127.0.0.1:$B/seen", ""), nil0, returns(`"no"`)},
	{"the request secret echoed in upper case", fetchText("https://127.0.0.1:$B/echo?form=upper", ""), nil0, returns(`" [REDACTED]"`)},
}

// secretNowhere checks that no secret, in any case, reached the step's
// result, its error or any event (console, fetch audits).
func secretNowhere(t *testing.T, o *outcome) {
	t.Helper()
	b, _ := json.Marshal(o.events)
	text := strings.ToLower(string(b) + string(o.res.Value))
	if o.err != nil {
		text += strings.ToLower(o.err.Message)
	}
	for _, s := range []string{secretEngineCred, secretRun} {
		if strings.Contains(text, strings.ToLower(s)) {
			t.Errorf("the step or its events hold %q: %s", s, text)
		}
	}
}

// TestSecrets runs the secrets section for each isolation, with servers of
// its own, then the request-secret rows and the configurations the engine
// must refuse.
func TestSecrets(t *testing.T) {
	for name, rows := range map[string][]attack{"secrets": secretRows, "request secrets": secretRequestRows} {
		seen := map[string]bool{}
		for _, a := range rows {
			if seen[a.name] {
				t.Errorf("%s: row %q appears twice", name, a.name)
			}
			seen[a.name] = true
		}
	}
	withSecretCheck := func(rows []attack) []attack {
		out := slices.Clone(rows)
		for i := range out {
			out[i].want = out[i].want.and(secretNowhere)
		}
		return out
	}
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			t.Parallel()
			cfg, subst, originB := secretSites(t)
			runSection(t, iso, section{name: "secrets", cfg: cfg, subst: subst, rows: withSecretCheck(secretRows)})

			t.Run("request secrets", func(t *testing.T) {
				tg := newTarget(t, iso, cfg)
				for _, a := range withSecretCheck(secretRequestRows) {
					t.Run(a.name, func(t *testing.T) {
						o := tg.run(t, sandbox.Request{Code: subst.Replace(a.code), Secrets: []sandbox.Secret{
							{Origin: originB, Header: "X-Api-Key", Value: secretRun},
						}})
						if o != nil {
							assertOutcome(t, a.want, o)
						}
					})
				}
				// A request cannot bind a secret to every host, or send one
				// in clear text without saying so: Submit refuses it.
				for _, bad := range []sandbox.Secret{
					{Origin: "https://*", Header: "X-Api-Key", Value: secretRun},
					{Origin: "http://127.0.0.1" + originB[strings.LastIndexByte(originB, ':'):], Header: "X-Api-Key", Value: secretRun},
					{Host: "127.0.0.1" + originB[strings.LastIndexByte(originB, ':'):], Header: "X-Api-Key", Value: secretRun},
				} {
					o := tg.run(t, sandbox.Request{Code: fetchText(originB+"/seenkey", ""), Secrets: []sandbox.Secret{bad}})
					if o == nil || !o.refused || o.err.Code != sandbox.CodeValidation || !strings.HasPrefix(o.err.Message, "secrets[0]: ") {
						t.Errorf("secret %v: want Submit to refuse it (VALIDATION, secrets[0]: ...); got %+v", bad, o)
					}
				}
				tg.finish(t)
			})
		})
	}

	t.Run("config", func(t *testing.T) {
		for _, bad := range []sandbox.Secret{
			{Origin: "https://*", Header: "Authorization", Value: secretEngine},
			{Host: "*", Header: "Authorization", Value: secretEngine},
			{Origin: "http://api.example.com", Header: "Authorization", Value: secretEngine},
			{Origin: "https://api.example.com/v1", Header: "Authorization", Value: secretEngine},
		} {
			_, err := sandbox.New(sandbox.Config{Isolation: sandbox.IsolationInProcess, Egress: &sandbox.Egress{
				Policy:  sandbox.EgressPolicy{Hosts: []string{"*"}},
				Secrets: []sandbox.Secret{bad},
			}})
			if err == nil || !strings.Contains(err.Error(), "secrets[0]: ") || strings.Contains(err.Error(), secretEngineCred) {
				t.Errorf("secret %v: New said %v; want it refused, naming the secret but not its value", bad, err)
			}
		}
	})
}
