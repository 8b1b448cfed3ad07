package sandbox_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
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

// fetchEnv is an engine whose egress policy allows one loopback test server.
type fetchEnv struct {
	e    *sandbox.Engine
	url  string
	mu   sync.Mutex
	auth []string // Authorization headers the server saw
	log  syncBuffer
	slog syncBuffer
}

// syncBuffer is a bytes.Buffer safe for the proxy's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newFetchEnv(t *testing.T, lim sandbox.Limits) *fetchEnv {
	env := &fetchEnv{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		env.mu.Lock()
		env.auth = append(env.auth, r.Header.Get("Authorization"))
		env.mu.Unlock()
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Items", "2")
			io.WriteString(w, `{"items":[1,2]}`)
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Echo-Auth", r.Header.Get("Authorization"))
			json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "body": string(body), "type": r.Header.Get("Content-Type"), "custom": r.Header.Get("X-Custom")})
		case "/binary":
			w.Write([]byte{0, 1, 2, 255})
		case "/big":
			io.WriteString(w, strings.Repeat("x", 5000))
		case "/redirect-out":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	lim.CPUMs, lim.WallMs = testPlan.CPUMs, testPlan.WallMs
	env.url = srv.URL
	env.e = newEngine(t, sandbox.Config{
		Plans: map[string]sandbox.Limits{"default": lim},
		Egress: &sandbox.Egress{
			Policy: sandbox.EgressPolicy{
				Schemes: []string{"http"}, Hosts: []string{"127.0.0.1"}, Ports: []int{port},
				UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			},
			Secrets:     []sandbox.Secret{{Origin: srv.URL, Header: "Authorization", Value: "Bearer s3cr3t-token", UnsafeAllowHTTP: true}},
			AuditLog:    &env.log,
			AuditLogger: slog.New(slog.NewJSONHandler(&env.slog, nil)),
		},
	})
	return env
}

func (env *fetchEnv) run(t *testing.T, code string) ([]sandbox.Event, sandbox.Result, error) {
	t.Helper()
	code = strings.ReplaceAll(code, "$URL", env.url)
	return run(t, env.e, sandbox.Request{Code: code}, nil)
}

func TestFetch(t *testing.T) {
	env := newFetchEnv(t, sandbox.Limits{})
	evs, res, err := env.run(t, `
const r = await fetch("$URL/json");
const j = await r.json();
const p = await fetch("$URL/echo", {method: "POST", body: JSON.stringify({a: 1}), headers: {"Content-Type": "application/json", "X-Custom": "yes", "Authorization": "forged"}});
const echo = await p.json();
const bin = new Uint8Array(await (await fetch("$URL/binary")).arrayBuffer());
return {status: r.status, ok: r.ok, items: j.items, header: r.headers.get("x-items"), echo,
        echoedAuth: p.headers.get("x-echo-auth"), bin: Array.from(bin), url: r.url.endsWith("/json")};`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"status":200,"ok":true,"items":[1,2],"header":"2","echo":{"body":"{\"a\":1}","custom":"yes","method":"POST","type":"application/json"},"echoedAuth":"[REDACTED]","bin":[0,1,2,255],"url":true}`
	if string(res.Value) != want {
		t.Fatalf("got  %s\nwant %s", res.Value, want)
	}
	env.mu.Lock()
	for _, a := range env.auth {
		if a != "Bearer s3cr3t-token" {
			t.Errorf("server saw Authorization %q; the bound secret must replace the step's", a)
		}
	}
	env.mu.Unlock()
	audits := 0
	for _, ev := range evs {
		if ev.Kind == sandbox.EventFetch {
			audits++
			if strings.Contains(string(ev.Fetch), "s3cr3t") || !strings.Contains(string(ev.Fetch), `"decision":"allow"`) {
				t.Errorf("audit %s", ev.Fetch)
			}
		}
	}
	if audits != 3 || res.Stats.FetchRequests != 3 || res.Stats.FetchBytes == 0 {
		t.Fatalf("%d audit events, stats %+v", audits, res.Stats)
	}
	for name, sink := range map[string]string{"AuditLog": env.log.String(), "AuditLogger": env.slog.String()} {
		if n := strings.Count(sink, "\n"); n != 3 || strings.Contains(sink, "s3cr3t") || !strings.Contains(sink, `"run_id":"run_`) {
			t.Errorf("%s: %d lines: %s", name, n, sink)
		}
	}
}

func TestFetchDenied(t *testing.T) {
	env := newFetchEnv(t, sandbox.Limits{})
	for _, u := range []string{
		"https://example.com/",      // host not allowed
		"http://2130706433/",        // 127.0.0.1 spelled as a number: not the allowed host literal
		"http://169.254.169.254/",   // metadata
		"http://user:pw@127.0.0.1/", // credentials in the URL
		"file:///etc/passwd",        // scheme
		"$URL/redirect-out",         // a redirect to the metadata address
	} {
		_, res, err := env.run(t, `try { await fetch("`+u+`"); return "fetched" } catch (e) { return [e instanceof TypeError, e.message] }`)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		var got []any
		json.Unmarshal(res.Value, &got)
		if len(got) != 2 || got[0] != true || !strings.HasPrefix(got[1].(string), "fetch failed: ") {
			t.Errorf("%s: got %s, want a TypeError", u, res.Value)
		}
	}
}

func TestFetchLimits(t *testing.T) {
	env := newFetchEnv(t, sandbox.Limits{MaxFetchRequests: 2, MaxFetchBytes: 4096})
	_, _, err := env.run(t, `for (let i = 0; i < 3; i++) await fetch("$URL/json")`)
	if se := asError(t, err); se.Code != sandbox.CodeLimitExceeded || se.Limit != "maxFetchRequests" {
		t.Fatalf("requests: %v", err)
	}
	_, _, err = env.run(t, `try { await (await fetch("$URL/big")).text() } catch (e) {} return "caught"`)
	if se := asError(t, err); se.Code != sandbox.CodeLimitExceeded || se.Limit != "maxFetchBytes" {
		t.Fatalf("bytes: %v", err)
	}
}

func TestFetchOff(t *testing.T) {
	_, res, err := run(t, engine(t), sandbox.Request{Code: `try { await fetch("https://example.com") } catch (e) { return e.message }`}, nil)
	if err != nil || string(res.Value) != `"fetch failed: fetch is not enabled on this engine: give it an egress policy (stepbox run --egress FILE; the server config's egress key; Config.Egress)"` {
		t.Fatalf("%s %v", res.Value, err)
	}
}

func TestFetchRequestNarrowsPolicy(t *testing.T) {
	env := newFetchEnv(t, sandbox.Limits{})
	_, res, err := run(t, env.e, sandbox.Request{
		Code:   strings.ReplaceAll(`try { await fetch("$URL/json"); return "fetched" } catch (e) { return "denied" }`, "$URL", env.url),
		Egress: &sandbox.EgressPolicy{Hosts: []string{"api.example.com"}},
	}, nil)
	if err != nil || string(res.Value) != `"denied"` {
		t.Fatalf("%s %v", res.Value, err)
	}
}
