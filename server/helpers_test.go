package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/proto/stepbox/v1/stepboxv1connect"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// testServer is a real server on a loopback port, over a real engine.
type testServer struct {
	srv    *server.Server
	eng    *sandbox.Engine
	url    string
	logs   *syncBuffer
	h2c    *http.Client // HTTP/2 without TLS, as gRPC clients speak it
	h1     *http.Client // HTTP/1.1, as curl speaks it
	served chan error
	down   bool
}

// testMetricsKey is the metrics key start gives a server with tenants
// and no MetricsEndpoint, so that tests read /metrics (get sends it).
const testMetricsKey = "test-metrics-key-0123456789abcdef"

// start serves cfg on 127.0.0.1 and stops everything when the test ends.
// A config without plans gets slowLimits, and one without caps gets caps
// that let them be. cfg's Logger is replaced (ts.logs has the lines); its
// Metrics is kept if set. A cfg with tenants and no MetricsEndpoint gets
// testMetricsKey.
func start(t *testing.T, cfg server.Config) *testServer {
	t.Helper()
	if len(cfg.Tenants) > 0 && cfg.MetricsEndpoint.Listen == "" && cfg.MetricsEndpoint.Keys == nil {
		cfg.MetricsEndpoint.Keys = []string{server.HashKey(testMetricsKey)}
	}
	return startExact(t, cfg)
}

// startExact is start with cfg's MetricsEndpoint as it is.
func startExact(t *testing.T, cfg server.Config) *testServer {
	t.Helper()
	if cfg.Plans == nil {
		cfg.Plans = maps.Clone(slowLimits)
	}
	if cfg.Caps == (sandbox.Limits{}) {
		cfg.Caps = slowLimits["default"]
	}
	logs := &syncBuffer{}
	cfg.Logger = server.NewLogger(logs, slog.LevelDebug)
	if cfg.Metrics == nil {
		cfg.Metrics = server.NewMetrics()
	}
	cfg.Version = "test"
	eng, err := sandbox.New(cfg.EngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(eng, cfg)
	if err != nil {
		eng.Close(context.Background())
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	ts := &testServer{
		srv: srv, eng: eng, url: "http://" + l.Addr().String(), logs: logs,
		h2c:    &http.Client{Transport: &http.Transport{Protocols: &p}},
		h1:     &http.Client{Transport: &http.Transport{}},
		served: make(chan error, 1),
	}
	go func() { ts.served <- srv.Serve(l) }()
	t.Cleanup(func() {
		ts.shutdown(t, testenv.ScaleDuration(20*time.Second))
		ts.h2c.CloseIdleConnections()
		ts.h1.CloseIdleConnections()
		if t.Failed() {
			t.Logf("server logs:\n%s", logs.String())
		}
	})
	return ts
}

// shutdown stops the server and closes the engine; it returns Shutdown's
// error.
func (ts *testServer) shutdown(t *testing.T, within time.Duration) error {
	t.Helper()
	if ts.down {
		return nil
	}
	ts.down = true
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	err := ts.srv.Shutdown(ctx)
	if serr := <-ts.served; !errors.Is(serr, http.ErrServerClosed) {
		t.Errorf("Serve returned %v", serr)
	}
	ts.eng.Close(context.Background())
	return err
}

// client returns a Go client of the server.
func (ts *testServer) client(opts client.Options) *client.Client {
	if opts.HTTPClient == nil {
		opts.HTTPClient = ts.h2c
	}
	return client.New(ts.url, opts)
}

// rpc returns the generated Connect client, with opts (connect.WithGRPC()).
func (ts *testServer) rpc(opts ...connect.ClientOption) stepboxv1connect.StepboxServiceClient {
	return stepboxv1connect.NewStepboxServiceClient(ts.h2c, ts.url, opts...)
}

// post sends body as curl would and returns the status and the decoded
// JSON answer (nil if not JSON) and the raw body.
func (ts *testServer) post(t *testing.T, path, body string, header ...string) (int, map[string]any, string) {
	t.Helper()
	status, _, raw := ts.send(t, path, "application/json", body, header...)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return status, m, string(raw)
}

// send posts body to path over HTTP/1.1 with contentType (none if empty)
// and the header's name, value pairs, and returns the answer's status,
// Content-Type and body.
func (ts *testServer) send(t *testing.T, path, contentType, body string, header ...string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest("POST", ts.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := ts.h1.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), raw
}

// get fetches an operational endpoint (with testMetricsKey).
func (ts *testServer) get(t *testing.T, path string) (int, string) {
	t.Helper()
	return getURL(t, ts.h1, ts.url+path, testMetricsKey)
}

// getURL fetches url, with key as a bearer key unless it is empty.
func getURL(t *testing.T, hc *http.Client, url, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const runPath = "/stepbox.v1.StepboxService/Run"

// syncBuffer is a bytes.Buffer safe for concurrent writers.
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

// eventually retries check until it returns "" or the time is up: within
// on the reference machine, scaled to this one. Use it where nothing tells
// the test of the state it waits for (a log line, a metric).
func eventually(t *testing.T, within time.Duration, check func() string) {
	t.Helper()
	deadline := time.Now().Add(testenv.ScaleDuration(within))
	for {
		msg := check()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// get walks a decoded JSON value by keys and indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// slowLimits are time limits for steps that do not mean to cross them:
// out of reach of any machine that can run the suite, however slow or
// loaded, race detector included.
var slowLimits = map[string]sandbox.Limits{
	"default": {CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs},
}

// jsonOf writes a JSON value read back from a body as compact JSON text,
// object members sorted by key (null for a value absent from the body).
func jsonOf(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "!" + err.Error()
	}
	return strings.TrimSuffix(b.String(), "\n")
}
