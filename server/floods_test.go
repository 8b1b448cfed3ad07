package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
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
	debug.FreeOSMemory()
	rssBefore := rssKB()
	for _, f := range floods {
		for i := warm; i < warm+n; i++ {
			f.send(t, ts, i)
		}
	}
	bytesAfter, seriesAfter := stepboxSeries(t, ts, m)
	debug.FreeOSMemory()
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

// logLines returns the lines of logs that contain s.
func logLines(logs, s string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(logs, "\n"), "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// checkLines fails t if a line of logs is longer than the server's bound
// or is not one JSON object.
func checkLines(t *testing.T, logs string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(logs, "\n"), "\n") {
		if len(line)+1 > server.LogLineBytes {
			t.Errorf("a log line of %d bytes, more than LogLineBytes=%d: %.300s...", len(line)+1, server.LogLineBytes, line)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("a log line that is not JSON (%v): %.300s", err, line)
		}
	}
}

// TestRunMetadataLogBounded runs a step with 900 KB of metadata in one
// value, long keys and many entries: its "run" line holds at most
// LogMetadataEntries entries, each cut, says what was cut, and stays
// short.
func TestRunMetadataLogBounded(t *testing.T) {
	ts := start(t, server.Config{Plans: unreachable})
	md := map[string]string{"a-big": strings.Repeat("v", 900_000), "b-" + strings.Repeat("k", 5000): "long key"}
	for i := range 40 {
		md[fmt.Sprintf("n%02d", i)] = "x"
	}
	body, _ := json.Marshal(map[string]any{"code": "return 1", "metadata": md})
	status, resp, raw := ts.post(t, runPath, string(body))
	if status != 200 || jsonOf(dig(resp, "result", "value")) != "1" {
		t.Fatalf("%d %.300s", status, raw)
	}
	id := dig(resp, "runId").(string)
	var line string
	testenv.WaitFor(t, "the run's log line", func() bool {
		lines := logLines(ts.logs.String(), `"msg":"run","run":"`+id+`"`)
		if len(lines) == 1 {
			line = lines[0]
		}
		return line != ""
	})
	checkLines(t, ts.logs.String())
	var rec struct {
		Metadata    map[string]string `json:"metadata"`
		MetadataCut string            `json:"metadata_cut"`
	}
	if err := json.Unmarshal([]byte(line), &rec); err != nil {
		t.Fatal(err)
	}
	t.Logf("the run line: %d bytes for %d bytes of metadata", len(line), len(body))
	if len(line) > 8<<10 {
		t.Errorf("the run line is %d bytes", len(line))
	}
	if len(rec.Metadata) != server.LogMetadataEntries {
		t.Errorf("%d metadata entries logged, want %d", len(rec.Metadata), server.LogMetadataEntries)
	}
	if v := rec.Metadata["a-big"]; v != strings.Repeat("v", server.LogMetadataValueBytes)+"…[cut 899744 bytes]" {
		t.Errorf("the big value logged as %.300q", v)
	}
	if v, ok := rec.Metadata["b-"+strings.Repeat("k", server.LogMetadataKeyBytes-2)+"…[cut 4938 bytes]"]; !ok || v != "long key" {
		t.Errorf("the long key not cut as it should be: %v", slices.Sorted(maps.Keys(rec.Metadata)))
	}
	if want := "26 of 42 entries not logged, 1 keys and 1 values cut (at most 16 entries, keys of 64 bytes, values of 256 bytes)"; rec.MetadataCut != want {
		t.Errorf("metadata_cut %q, want %q", rec.MetadataCut, want)
	}
}

// TestLoggerBounds writes records no request should be able to make the
// server write as they are: every line stays under LogLineBytes, valid
// JSON, and says what was cut.
func TestLoggerBounds(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes; cuts must fall between runes
	many := func(n, size int) []any {
		var as []any
		for i := range n {
			as = append(as, slog.String(fmt.Sprintf("k%03d", i), strings.Repeat("x", size)))
		}
		return as
	}
	for _, tc := range []struct {
		name  string
		log   func(l *slog.Logger)
		wants []string
	}{
		{"a long value", func(l *slog.Logger) { l.Info("m", "v", long) },
			[]string{`"v":"` + strings.Repeat("é", server.LogValueBytes/2) + `…[cut 4976 bytes]"`}},
		{"a long error", func(l *slog.Logger) { l.Info("m", "err", errors.New(long)) },
			[]string{`"err":"` + strings.Repeat("é", server.LogValueBytes/2) + `…[cut 4976 bytes]"`}},
		{"a long value in With", func(l *slog.Logger) { l.With("v", long).Info("m") },
			[]string{`…[cut 4976 bytes]"`}},
		{"a long value in a group", func(l *slog.Logger) { l.Info("m", slog.Group("g", "v", long)) },
			[]string{`"g":{"v":"`, `…[cut 4976 bytes]"}`}},
		{"a long key", func(l *slog.Logger) { l.Info("m", strings.Repeat("k", 200), 1) },
			[]string{`"` + strings.Repeat("k", server.LogKeyBytes) + `…[cut 72 bytes]":1`}},
		{"many attributes", func(l *slog.Logger) { l.Info("m", many(100, 1)...) },
			[]string{`"k031":"x"`, `"log_cut":"68 attributes not logged (at most 32)"`}},
		{"many long attributes", func(l *slog.Logger) { l.With("run", "run_1").Info("m", append(many(30, 2000), "short", 7)...) },
			[]string{`"msg":"m","run":"run_1","short":7,"log_cut":"a line of `, `only its short attributes are logged"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf syncBuffer
			tc.log(server.NewLogger(&buf, slog.LevelInfo))
			out := buf.String()
			checkLines(t, out)
			if n := strings.Count(out, "\n"); n != 1 {
				t.Fatalf("%d lines:\n%s", n, out)
			}
			for _, want := range tc.wants {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in\n%.600s", want, out)
				}
			}
		})
	}
}

// TestExecuteProtocolErrorFlood sends 20,000 data responses to requests
// that do not exist on one Execute stream: the server ends the stream after
// MaxProtocolErrors of them with INVALID_ARGUMENT, aborts the run (saying
// why), and logs them once.
func TestExecuteProtocolErrorFlood(t *testing.T) {
	ts := start(t, server.Config{Plans: unreachable})
	// A backstop: a server that never ends the stream fails the test
	// instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(30*time.Second))
	defer cancel()
	bidi := ts.rpc().Execute(ctx)
	if err := bidi.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Start{Start: &pb.RunRequest{
		Code: "await dataProxy.request('hold'); return 1",
	}}}); err != nil {
		t.Fatal(err)
	}
	const bogus = 20_000
	sent := make(chan int, 1)
	go func() {
		n := 0
		for ; n < bogus; n++ {
			if bidi.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_DataResponse{DataResponse: &pb.DataResponse{
				Id: int64(1_000_000 + n), Answer: &pb.DataResponse_Value{Value: structpb.NewNumberValue(1)},
			}}}) != nil {
				break // the server ended the stream
			}
		}
		sent <- n
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
			terminal = e.GetCode() + ": " + e.GetMessage()
		}
	}
	n := <-sent
	_ = bidi.CloseRequest()
	_ = bidi.CloseResponse()
	t.Logf("the client sent %d bogus answers before the stream ended", n)
	want := fmt.Sprintf("too many protocol errors on this stream: %d messages could not be applied (the last: stepbox: no data request %d is waiting for an answer); at most %d are allowed",
		server.MaxProtocolErrors, 1_000_000+server.MaxProtocolErrors-1, server.MaxProtocolErrors)
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), want) {
		t.Fatalf("the stream ended with %v, want INVALID_ARGUMENT %q", err, want)
	}
	if terminal != "ABORTED: the run was aborted: "+want {
		t.Fatalf("terminal event %q", terminal)
	}
	testenv.WaitFor(t, "the rpc line", func() bool {
		return len(logLines(ts.logs.String(), `"msg":"rpc","procedure":"Execute"`)) == 1
	})
	logs := ts.logs.String()
	checkLines(t, logs)
	lines := logLines(logs, id)
	if len(lines) > 5 {
		t.Fatalf("%d log lines about the run:\n%s", len(lines), strings.Join(lines[:10], "\n"))
	}
	if pe := logLines(logs, `"msg":"protocol errors: stream ended"`); len(pe) != 1 || !strings.Contains(pe[0], fmt.Sprintf(`"count":%d`, server.MaxProtocolErrors)) {
		t.Fatalf("protocol error lines %q", pe)
	}
	// The server is fine.
	if status, _, raw := ts.post(t, runPath, `{"code": "return 2"}`); status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
}

// TestExecuteFewProtocolErrors: fewer than MaxProtocolErrors bad messages
// do not end the run, and they are logged once, with their count.
func TestExecuteFewProtocolErrors(t *testing.T) {
	ts := start(t, server.Config{Plans: unreachable})
	bidi := ts.rpc().Execute(context.Background())
	defer bidi.CloseResponse()
	send := func(m *pb.ExecuteRequest) {
		if err := bidi.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Start{Start: &pb.RunRequest{Code: "return 1 + await dataProxy.request('x')"}}})
	var value float64
	var id string
	for {
		m, err := bidi.Receive()
		if err != nil {
			t.Fatalf("the stream ended: %v", err)
		}
		id = m.GetRunId()
		if dr := m.GetEvent().GetDataRequest(); dr != nil {
			send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_DataResponse{DataResponse: &pb.DataResponse{Id: dr.GetId() + 1, Answer: &pb.DataResponse_Value{Value: structpb.NewNumberValue(0)}}}})
			send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Start{Start: &pb.RunRequest{Code: "return 0"}}})
			send(&pb.ExecuteRequest{})
			send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_DataResponse{DataResponse: &pb.DataResponse{Id: dr.GetId(), ValueJson: "41"}}})
		}
		if r := m.GetEvent().GetResult(); r != nil {
			value = r.GetValue().GetNumberValue()
			break
		}
	}
	_ = bidi.CloseRequest()
	if value != 42 {
		t.Fatalf("value %v", value)
	}
	var pe []string
	testenv.WaitFor(t, "the protocol errors line", func() bool {
		pe = logLines(ts.logs.String(), `"msg":"protocol errors"`)
		return len(pe) > 0
	})
	if len(pe) != 1 || !strings.Contains(pe[0], `"run":"`+id+`"`) || !strings.Contains(pe[0], `"count":3,"first":"stepbox: no data request`) ||
		!strings.Contains(pe[0], `"last":"a message with nothing in it"`) {
		t.Fatalf("protocol error lines %q", pe)
	}
}
