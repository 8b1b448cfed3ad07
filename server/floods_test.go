package server_test

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
)

// unreachable is a plan no step of these tests means to reach.
var unreachable = map[string]sandbox.Limits{
	"default": {CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs},
}

// floodConfig is a server with a tenant (so that callers without its key
// are refused), a small request limit (so that "too large" is cheap to
// provoke) and a key for /metrics.
func floodConfig() server.Config {
	return server.Config{
		Tenants:         []server.Tenant{{Name: "acme", Keys: []string{server.HashKey("tenant-key")}}},
		MaxRequestBytes: 1024,
		Plans:           unreachable,
	}
}

// flood is one kind of request a client can make as often as it likes,
// each time with new text of its own (i tells them apart).
type flood struct {
	name string
	send func(t *testing.T, ts *testServer, i int)
}

// floods are the requests that once each grew the metrics by a series.
var floods = []flood{
	{"unknown path under the service, body too large", func(t *testing.T, ts *testServer, i int) {
		ts.postStatus(t, "/stepbox.v1.StepboxService/"+uniquePath(i), strings.Repeat("x", 2048), http.StatusRequestEntityTooLarge)
	}},
	{"unknown path under the service", func(t *testing.T, ts *testServer, i int) {
		ts.postStatus(t, "/stepbox.v1.StepboxService/"+uniquePath(i), "{}", http.StatusNotFound)
	}},
	{"unknown path", func(t *testing.T, ts *testServer, i int) {
		ts.postStatus(t, "/"+uniquePath(i), "{}", http.StatusNotFound)
	}},
	{"no key, a tenant of its own", func(t *testing.T, ts *testServer, i int) {
		ts.postStatus(t, runPath, fmt.Sprintf(`{"code": "return 1", "tenant": %q}`, uniquePath(i)), http.StatusUnauthorized)
	}},
	{"a key, an unknown language", func(t *testing.T, ts *testServer, i int) {
		ts.postStatus(t, runPath, fmt.Sprintf(`{"code": "return 1", "language": %q}`, uniquePath(i)), http.StatusBadRequest,
			"Authorization", "Bearer tenant-key")
	}},
}

// uniquePath is a long, unique path segment: a label made of it would
// cost kilobytes.
func uniquePath(i int) string { return fmt.Sprintf("p%06d-%s", i, strings.Repeat("z", 600)) }

// postStatus posts body and fails t unless the answer has status want.
func (ts *testServer) postStatus(t *testing.T, path, body string, want int, header ...string) {
	t.Helper()
	if status, _, raw := ts.post(t, path, body, header...); status != want {
		t.Fatalf("POST %.60s...: status %d, want %d: %.200s", path, status, want, raw)
	}
}

// stepboxSeries returns the size in bytes of the stepbox_ lines of
// /metrics, and the number of stepbox_ series in the registry.
func stepboxSeries(t *testing.T, ts *testServer, m *server.Metrics) (textBytes, series int) {
	t.Helper()
	status, text := ts.get(t, "/metrics")
	if status != http.StatusOK {
		t.Fatalf("/metrics: %d %s", status, text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "stepbox_") {
			textBytes += len(line) + 1
		}
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "stepbox_") {
			series += len(f.GetMetric())
		}
	}
	return textBytes, series
}

// rssKB reads this process's resident set size from /proc, 0 if it cannot.
func rssKB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// TestMetricsLabelsIgnoreClientText floods the server with thousands of
// requests, each with client text of its own (paths, tenant names,
// languages), and checks that /metrics and the registry do not grow: no
// label value comes from a client. RSS is logged, not asserted (the Go
// heap and the race detector make it noisy).
func TestMetricsLabelsIgnoreClientText(t *testing.T) {
	const warm, n = 20, 5000
	cfg := floodConfig()
	m := server.NewMetrics()
	cfg.Metrics = m
	ts := start(t, cfg)
	for _, f := range floods {
		for i := range warm { // every series these requests touch exists now
			f.send(t, ts, i)
		}
	}
	bytesBefore, seriesBefore := stepboxSeries(t, ts, m)
	runtime.GC()
	rssBefore := rssKB()
	for _, f := range floods {
		for i := warm; i < warm+n; i++ {
			f.send(t, ts, i)
		}
	}
	bytesAfter, seriesAfter := stepboxSeries(t, ts, m)
	runtime.GC()
	rssAfter := rssKB()
	t.Logf("%d requests of each of %d kinds: stepbox_ series %d -> %d, their /metrics text %d -> %d bytes, RSS %d -> %d KB (with the test's %d KB of log lines)",
		n, len(floods), seriesBefore, seriesAfter, bytesBefore, bytesAfter, rssBefore, rssAfter, len(ts.logs.String())>>10)
	if seriesAfter != seriesBefore {
		t.Errorf("the registry grew from %d to %d stepbox_ series", seriesBefore, seriesAfter)
	}
	// Counters gain digits (20 -> 5020): a few bytes per series, no more.
	if bytesAfter > bytesBefore+8*seriesBefore {
		t.Errorf("the stepbox_ lines of /metrics grew from %d to %d bytes", bytesBefore, bytesAfter)
	}
	_, text := ts.get(t, "/metrics")
	for _, want := range []string{
		`stepbox_rpc_requests_total{code="too_large",procedure="unknown"} 5020`,
		`stepbox_rpc_requests_total{code="unauthenticated",procedure="Run"} 5020`,
		`stepbox_rpc_requests_total{code="invalid_argument",procedure="Run"} 5020`,
		`stepbox_runs_total{language="unknown",outcome="VALIDATION",tenant="acme"} 5020`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no %q in\n%s", want, grep(text, "stepbox_r"))
		}
	}
	if strings.Contains(text, "zzzz") {
		t.Errorf("client text in /metrics:\n%s", grep(text, "zzzz"))
	}
}
