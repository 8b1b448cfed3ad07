package security_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
	"github.com/stepbox/stepbox/proto/stepbox/v1/stepboxv1connect"
)

// The server floods: what a client of `stepbox serve`, with a tenant's key
// or with none, can send as often as it likes to grow the server's memory,
// its metrics or its logs, or to learn about other tenants. Each row is one
// attack against a real server on a loopback port over a real engine (the
// default isolation: the server's behaviour does not depend on it), and
// asserts the safe outcome: the metrics keep their series, the log its
// bounds, the other tenants their privacy.

// Keys of the flood server: a tenant's, and the scraper's for /metrics.
const (
	floodTenantKey = "flood-tenant-key-0123456789abcdef0123"
	floodScrapeKey = "flood-scrape-key-0123456789abcdef0123"
)

// serverFlood is one row: an attack on the server and the checks of its
// safe outcome, both in attack.
type serverFlood struct {
	name   string
	attack func(t *testing.T, fs *floodServer)
}

var serverFloods = []serverFlood{
	{"unique paths before authentication", func(t *testing.T, _ *floodServer) {
		// A body over maxRequestBytes is refused before authentication:
		// a server whose limit is cheap to cross.
		fs := startFloodServer(t, func(c *server.Config) { c.MaxRequestBytes = 1024 })
		fs.seriesStayFlat(t, 3000, func(i int) {
			path := "/stepbox.v1.StepboxService/" + fs.unique(i)
			fs.expect(t, "POST", path, strings.Repeat("x", 2048), "", http.StatusRequestEntityTooLarge)
			fs.expect(t, "POST", path, "{}", "", http.StatusNotFound)
			fs.expect(t, "GET", "/"+fs.unique(i), "", "", http.StatusNotFound)
		})
	}},
	{"a tenant name of its own without a key", func(t *testing.T, fs *floodServer) {
		fs.seriesStayFlat(t, 2000, func(i int) {
			fs.expect(t, "POST", runPath, fmt.Sprintf(`{"code": "return 1", "tenant": %q}`, fs.unique(i)), "", http.StatusUnauthorized)
		})
	}},
	{"unknown languages with a key", func(t *testing.T, fs *floodServer) {
		fs.seriesStayFlat(t, 2000, func(i int) {
			fs.expect(t, "POST", runPath, fmt.Sprintf(`{"code": "return 1", "language": %q}`, fs.unique(i)), floodTenantKey, http.StatusBadRequest)
		})
	}},
	{"unknown plans with a key", func(t *testing.T, fs *floodServer) {
		fs.seriesStayFlat(t, 2000, func(i int) {
			fs.expect(t, "POST", runPath, fmt.Sprintf(`{"code": "return 1", "plan": %q}`, fs.unique(i)), floodTenantKey, http.StatusForbidden)
		})
	}},
	{"a tenant reads /metrics", func(t *testing.T, fs *floodServer) {
		for _, key := range []string{"", floodTenantKey, "wrong"} {
			status, body := fs.do(t, "GET", "/metrics", "", key)
			if status != http.StatusUnauthorized || strings.Contains(body, "stepbox_runs_total") {
				t.Errorf("/metrics with key %q: %d %.200s", key, status, body)
			}
		}
		// Tenants configured and the metrics not: nobody reads them.
		closed := startFloodServer(t, func(c *server.Config) { c.MetricsEndpoint = server.MetricsEndpoint{} })
		for _, key := range []string{"", floodTenantKey, floodScrapeKey} {
			if status, body := closed.do(t, "GET", "/metrics", "", key); status != http.StatusForbidden || strings.Contains(body, "stepbox_") {
				t.Errorf("/metrics by default, key %q: %d %.200s", key, status, body)
			}
		}
	}},
	{"900 KB of metadata", func(t *testing.T, fs *floodServer) {
		md := map[string]string{"big": strings.Repeat("m", 900_000)}
		for i := range 1000 {
			md[fmt.Sprintf("k%04d-%s", i, strings.Repeat("k", 200))] = strings.Repeat("v", 500)
		}
		body, _ := json.Marshal(map[string]any{"code": "return 1", "metadata": md})
		status, raw := fs.do(t, "POST", runPath, string(body), floodTenantKey)
		var resp struct{ RunID string }
		if err := json.Unmarshal([]byte(raw), &resp); status != http.StatusOK || err != nil || resp.RunID == "" {
			t.Fatalf("%d %.200s", status, raw)
		}
		line := fs.waitLine(t, `"msg":"run","run":"`+resp.RunID+`"`)
		if len(line) > 8<<10 || !strings.Contains(line, `"metadata_cut":"985 of 1001 entries not logged`) || !strings.Contains(line, "…[cut ") {
			t.Errorf("the run line for %d bytes of metadata: %d bytes: %.500s", len(body), len(line), line)
		}
	}},
	{"20,000 bogus data responses on one stream", func(t *testing.T, fs *floodServer) {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(30*time.Second))
		defer cancel()
		bidi := fs.rpc.Execute(ctx)
		bidi.RequestHeader().Set("Authorization", "Bearer "+floodTenantKey)
		if err := bidi.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Start{Start: &pb.RunRequest{
			Code: "await dataProxy.request('hold'); return 1",
		}}}); err != nil {
			t.Fatal(err)
		}
		sent := make(chan struct{})
		go func() {
			defer close(sent)
			for i := range 20_000 {
				if bidi.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_DataResponse{DataResponse: &pb.DataResponse{
					Id: int64(1<<40 + i), ValueJson: "1",
				}}}) != nil {
					return // the server ended the stream
				}
			}
		}()
		var id, terminal string
		var err error
		for {
			var m *pb.ExecuteResponse
			if m, err = bidi.Receive(); err != nil {
				break
			}
			id = m.GetRunId()
			if e := m.GetEvent().GetError(); e != nil {
				terminal = e.GetCode()
			}
		}
		<-sent
		_ = bidi.CloseRequest()
		_ = bidi.CloseResponse()
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "too many protocol errors on this stream") || terminal != "ABORTED" {
			t.Fatalf("the stream ended with %v after a terminal %q; want INVALID_ARGUMENT, too many protocol errors, after ABORTED", err, terminal)
		}
		fs.waitLine(t, `"msg":"rpc","procedure":"Execute","code":"invalid_argument"`)
		if n := len(fs.lines(`"run":"` + id + `"`)); n > 5 {
			t.Errorf("%d log lines about the run", n)
		}
	}},
	{"run ids tell nothing", func(t *testing.T, fs *floodServer) {
		var ids []string
		for range 50 {
			status, raw := fs.do(t, "POST", runPath, `{"code": "return 1"}`, floodTenantKey)
			var resp struct{ RunID string }
			if err := json.Unmarshal([]byte(raw), &resp); status != http.StatusOK || err != nil {
				t.Fatalf("%d %.200s", status, raw)
			}
			ids = append(ids, resp.RunID)
		}
		form := regexp.MustCompile(`^run_[0-9a-f]{32}$`)
		for i, id := range ids {
			if !form.MatchString(id) {
				t.Fatalf("run id %q: want run_ and 32 random hex digits", id)
			}
			if i > 0 && id[:len("run_")+8] == ids[i-1][:len("run_")+8] {
				t.Fatalf("run ids %q and %q share a prefix: counted, not random", ids[i-1], id)
			}
		}
		if slices.IsSorted(ids) {
			t.Fatal("run ids come in order: counted, not random")
		}
	}},
}

const runPath = "/stepbox.v1.StepboxService/Run"

// TestServerFloods runs the rows against one server, in order (a row that
// needs another configuration starts its own); each row checks its own
// outcome, and every line a server logged must stay within
// server.LogLineBytes and be JSON. It asserts no elapsed time.
func TestServerFloods(t *testing.T) {
	seen := map[string]bool{}
	for _, row := range serverFloods {
		if seen[row.name] {
			t.Fatalf("row %q appears twice", row.name)
		}
		seen[row.name] = true
	}
	fs := startFloodServer(t, nil)
	for _, row := range serverFloods {
		t.Run(row.name, func(t *testing.T) { row.attack(t, fs) })
	}
}

// floodServer is a real server over a real engine, with a tenant.
type floodServer struct {
	url     string
	hc      *http.Client // HTTP/1.1, as curl speaks it
	h2c     *http.Client // HTTP/2 without TLS, for Execute
	rpc     stepboxv1connect.StepboxServiceClient
	logs    *lockedLog
	metrics *server.Metrics
}

// startFloodServer serves a tenant on a loopback port, with a scraper's
// key for /metrics and the default request limit, changed by tweak if not
// nil, until the test ends.
func startFloodServer(t *testing.T, tweak func(*server.Config)) *floodServer {
	t.Helper()
	logs := &lockedLog{}
	cfg := server.Config{
		Tenants:         []server.Tenant{{Name: "acme", Keys: []string{server.HashKey(floodTenantKey)}}},
		MetricsEndpoint: server.MetricsEndpoint{Keys: []string{server.HashKey(floodScrapeKey)}},
		Plans:           map[string]sandbox.Limits{"default": {CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs}},
		Logger:          server.NewLogger(logs, slog.LevelDebug),
		Metrics:         server.NewMetrics(),
		Version:         "test",
	}
	if tweak != nil {
		tweak(&cfg)
	}
	eng := newEngine(t, isolations[0], cfg.EngineConfig())
	srv, err := server.New(eng, cfg)
	if err != nil {
		closeEngine(t, eng)
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	hc, h2c := &http.Client{Transport: &http.Transport{}}, &http.Client{Transport: &http.Transport{Protocols: &p}}
	fs := &floodServer{url: "http://" + l.Addr().String(), hc: hc, h2c: h2c, logs: logs, metrics: cfg.Metrics}
	fs.rpc = stepboxv1connect.NewStepboxServiceClient(h2c, fs.url)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(10*time.Second))
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(logs.String(), "\n"), "\n") {
			var v map[string]any
			if len(line)+1 > server.LogLineBytes || json.Unmarshal([]byte(line), &v) != nil {
				t.Errorf("a log line of %d bytes (at most %d, one JSON object): %.300s", len(line)+1, server.LogLineBytes, line)
			}
		}
		if t.Failed() {
			t.Logf("server logs (last 4 KB):\n%s", tail(logs.String(), 4096))
		}
		hc.CloseIdleConnections()
		h2c.CloseIdleConnections()
		closeEngine(t, eng)
	})
	return fs
}

// unique is client text no server has seen: a kilobyte a label would cost.
func (fs *floodServer) unique(i int) string {
	return fmt.Sprintf("u%06d-%s", i, strings.Repeat("z", 600))
}

// do sends a request with key as its bearer key (none if empty) and returns
// the status and the body.
func (fs *floodServer) do(t *testing.T, method, path, body, key string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, fs.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := fs.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// expect sends a request and fails t unless its status is want.
func (fs *floodServer) expect(t *testing.T, method, path, body, key string, want int) {
	t.Helper()
	if status, raw := fs.do(t, method, path, body, key); status != want {
		t.Fatalf("%s %.60s...: %d, want %d: %.200s", method, path, status, want, raw)
	}
}

// series returns the number of stepbox_ series in the registry and the
// stepbox_ text of /metrics, read as the scraper reads it.
func (fs *floodServer) series(t *testing.T) (int, string) {
	t.Helper()
	fams, err := fs.metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "stepbox_") {
			n += len(f.GetMetric())
		}
	}
	status, body := fs.do(t, "GET", "/metrics", "", floodScrapeKey)
	if status != http.StatusOK {
		t.Fatalf("/metrics for the scraper: %d %s", status, body)
	}
	var text strings.Builder
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "stepbox_") {
			text.WriteString(line + "\n")
		}
	}
	return n, text.String()
}

// seriesStayFlat sends a few requests, reads the metrics, sends n more of
// the same kind with new text each, and checks that no series was added
// and the /metrics text grew by digits at most.
func (fs *floodServer) seriesStayFlat(t *testing.T, n int, send func(i int)) {
	t.Helper()
	const warm = 10
	for i := range warm {
		send(i)
	}
	before, textBefore := fs.series(t)
	for i := warm; i < warm+n; i++ {
		send(i)
	}
	after, textAfter := fs.series(t)
	t.Logf("%d requests: stepbox_ series %d -> %d, /metrics text %d -> %d bytes", n, before, after, len(textBefore), len(textAfter))
	if after != before {
		t.Errorf("stepbox_ series grew from %d to %d", before, after)
	}
	if len(textAfter) > len(textBefore)+8*before || strings.Contains(textAfter, "zzzz") {
		t.Errorf("/metrics grew from %d to %d bytes:\n%s", len(textBefore), len(textAfter), tail(textAfter, 2048))
	}
}

// lines returns the server's log lines that contain s.
func (fs *floodServer) lines(s string) []string {
	var out []string
	for _, line := range strings.Split(fs.logs.String(), "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// waitLine waits for the one log line that contains s and returns it.
func (fs *floodServer) waitLine(t *testing.T, s string) string {
	t.Helper()
	var line string
	testenv.WaitFor(t, "a log line with "+s, func() bool {
		if ls := fs.lines(s); len(ls) == 1 {
			line = ls[0]
		}
		return line != ""
	})
	return line
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// lockedLog collects log lines from concurrent writers.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
