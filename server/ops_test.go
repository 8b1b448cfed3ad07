package server_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"
)

func TestMetrics(t *testing.T) {
	ts := start(t, server.Config{})
	for _, code := range []string{"return 1", "return 2", "throw new Error('x')", "console.log(1); return 3"} {
		ts.post(t, runPath, `{"code": "`+code+`"}`)
	}
	ts.post(t, runPath, `{"code": "return 1", "plan": "nope"}`)
	status, m := ts.get(t, "/metrics")
	if status != 200 {
		t.Fatal(status)
	}
	for _, want := range []string{
		`stepbox_runs_total{language="javascript",outcome="ok",tenant="none"} 3`,
		`stepbox_runs_total{language="javascript",outcome="RUNTIME",tenant="none"} 1`,
		`stepbox_runs_total{language="javascript",outcome="VALIDATION",tenant="none"} 1`,
		`stepbox_run_duration_seconds_count{language="javascript",outcome="ok"} 3`,
		`stepbox_queue_duration_seconds_count 4`,
		`stepbox_runs_in_flight 0`,
		`stepbox_console_events_total 1`,
		`stepbox_rpc_requests_total{code="ok",procedure="Run"} 4`,
		`stepbox_rpc_requests_total{code="invalid_argument",procedure="Run"} 1`,
		`stepbox_ready 1`,
		`stepbox_build_info{version="test"} 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("no %q in\n%s", want, grep(m, "stepbox_"))
		}
	}
}

func TestHealthzAndReadyz(t *testing.T) {
	// One slot and no queue: one run saturates the engine.
	ts := start(t, server.Config{PoolSize: 1, QueueSize: -1, Plans: slowLimits})
	if status, body := ts.get(t, "/healthz"); status != 200 || body != "ok\n" {
		t.Fatalf("healthz %d %q", status, body)
	}
	eventually(t, 10*time.Second, func() string { // ready once the worker is up
		if status, body := ts.get(t, "/readyz"); status != 200 {
			return body
		}
		return ""
	})
	// The standard gRPC health service says the same.
	for _, name := range []string{"", "stepbox.v1.StepboxService"} {
		if status, code := ts.grpcHealth(t, name); status != 1 || code != "0" {
			t.Fatalf("grpc health %q when ready: status %d, grpc-status %q; want SERVING", name, status, code)
		}
	}
	if _, code := ts.grpcHealth(t, "no.such.Service"); code != "5" {
		t.Fatalf("grpc health of an unknown service: grpc-status %q, want 5 (NOT_FOUND)", code)
	}
	c := ts.client(client.Options{})
	st, err := c.Submit(context.Background(), sandbox.Request{Code: "return await dataProxy.request('go')"})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-st.Events()
	status, body := ts.get(t, "/readyz")
	if status != 503 || !strings.Contains(body, "saturated") {
		t.Fatalf("readyz with the engine full: %d %q", status, body)
	}
	if h, err := c.Health(context.Background()); err != nil || h.GetStatus() != "NOT_SERVING" || h.GetInFlight() != 1 {
		t.Fatalf("health %v %v", h, err)
	}
	if status, code := ts.grpcHealth(t, ""); status != 2 || code != "0" {
		t.Fatalf("grpc health with the engine full: status %d, grpc-status %q; want NOT_SERVING", status, code)
	}
	// The engine refuses what it cannot queue: 503 UNAVAILABLE.
	if status, resp, raw := ts.post(t, runPath, `{"code": "return 1"}`); status != 503 || dig(resp, "code") != "unavailable" {
		t.Fatalf("queue full: %d %s", status, raw)
	}
	st.Respond(ev.DataRequest.ID, 1)
	for range st.Events() {
	}
	eventually(t, 5*time.Second, func() string {
		if status, body := ts.get(t, "/readyz"); status != 200 {
			return body
		}
		return ""
	})
}

func TestGracefulShutdownDeliversRunsInFlight(t *testing.T) {
	ts := start(t, server.Config{Plans: slowLimits})
	c := ts.client(client.Options{GRPC: true})
	st, err := c.Submit(context.Background(), sandbox.Request{Code: "const v = await dataProxy.request('last'); return v + 1"})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-st.Events()
	shut := make(chan error, 1)
	go func() { shut <- ts.shutdown(t, testenv.ScaleDuration(20*time.Second)) }()

	// Draining: the run in flight goes on; new work is refused.
	eventually(t, 5*time.Second, func() string {
		if strings.Contains(ts.logs.String(), `"msg":"shutting down"`) {
			return ""
		}
		return "not shutting down"
	})
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned with a run in flight: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := st.Respond(ev.DataRequest.ID, 41); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for ev := range st.Events() {
		kinds = append(kinds, string(ev.Kind))
	}
	res, err := st.Wait()
	if err != nil || string(res.Value) != "42" || strings.Join(kinds, ",") != "result" {
		t.Fatalf("%s %v %v", res.Value, err, kinds)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestShutdownDeadlineAbortsRuns(t *testing.T) {
	ts := start(t, server.Config{Plans: slowLimits})
	st, err := ts.client(client.Options{}).Submit(context.Background(), sandbox.Request{Code: "reportStatus(0); while (true) {}"})
	if err != nil {
		t.Fatal(err)
	}
	<-st.Events()
	unary := make(chan error, 1)
	go func() {
		_, err := ts.client(client.Options{}).Run(context.Background(), sandbox.Request{Code: "await new Promise(() => setInterval(() => {}, 1000))"}, nil)
		unary <- err
	}()
	eventually(t, 5*time.Second, func() string {
		if !strings.Contains(ts.logs.String(), `"msg":"run accepted"`) || strings.Count(ts.logs.String(), `"msg":"run accepted"`) < 2 {
			return "the unary run did not start"
		}
		return ""
	})
	start := time.Now()
	if err := ts.shutdown(t, 300*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > testenv.ScaleDuration(5*time.Second) {
		t.Fatalf("Shutdown took %v", d)
	}
	for range st.Events() {
	}
	if _, err := st.Wait(); !errors.Is(err, sandbox.ErrAborted) {
		t.Fatalf("stream: %v, want its terminal ABORTED event", err)
	}
	if err := <-unary; !errors.Is(err, sandbox.ErrAborted) {
		t.Fatalf("unary: %v, want its ABORTED answer", err)
	}
}

// TestREADMECurl posts the body of the README's curl example, byte for
// byte, and checks the answer the README shows.
func TestREADMECurl(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)<!-- curl-run:.*?```sh\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("no curl-run example in README.md")
	}
	cmd := string(block[1])
	m := regexp.MustCompile(`(?s) -d '(.*?)'\n`).FindStringSubmatch(cmd)
	if m == nil || !strings.Contains(cmd, runPath) || !strings.Contains(cmd, "Content-Type: application/json") {
		t.Fatalf("unexpected curl example:\n%s", cmd)
	}
	ts := start(t, server.Config{})
	status, resp, raw := ts.post(t, runPath, m[1])
	if status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	if jsonOf(dig(resp, "result", "value")) != `{"greeting":"hi Ada"}` || jsonOf(dig(resp, "events", 0, "status")) != `{"stage":"start"}` ||
		dig(resp, "events", 1, "dataRequest", "method") != "user" || dig(resp, "events", 2, "console", "text") != "hello Ada" {
		t.Fatalf("answer %s", raw)
	}
	// With a key, as the example sends it.
	cfg := server.Config{Tenants: []server.Tenant{{Name: "t", Keys: []string{server.HashKey("k-123")}}}}
	ts = start(t, cfg)
	if status, _, raw := ts.post(t, runPath, m[1], "Authorization", "Bearer k-123"); status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
}

// TestWorkerDeathInMetricsAndHealth kills the engine's worker from outside,
// as the kernel's OOM killer would, and reads the replacement in the
// metrics, the Health RPC and the log. Without a standby worker, the
// engine has one worker process.
func TestWorkerDeathInMetricsAndHealth(t *testing.T) {
	ts := start(t, server.Config{PoolSize: 1, Workers: sandbox.Workers{Standby: -1}})
	if status, _, raw := ts.post(t, runPath, `{"code": "return 1"}`); status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	_, m := ts.get(t, "/metrics")
	for _, want := range []string{"stepbox_pool_size 1", "stepbox_workers_up 1", "stepbox_workers_busy 0", "stepbox_worker_restarts_total 0"} {
		if !strings.Contains(m, want+"\n") {
			t.Fatalf("no %q in\n%s", want, grep(m, "stepbox_"))
		}
	}
	workers := childPIDs(t)
	if len(workers) != 1 {
		t.Fatalf("want one worker process, found %v", workers)
	}
	if err := syscall.Kill(workers[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() string {
		_, m := ts.get(t, "/metrics")
		if !strings.Contains(m, "stepbox_worker_restarts_total 1\n") || !strings.Contains(m, "stepbox_workers_up 1\n") {
			return grep(m, "stepbox_worker")
		}
		return ""
	})
	h, err := ts.client(client.Options{}).Health(context.Background())
	if err != nil || h.GetStatus() != "SERVING" || h.GetWorkersUp() != 1 || h.GetWorkerRestarts() != 1 || h.GetPoolSize() != 1 {
		t.Fatalf("health %v %v", h, err)
	}
	if !strings.Contains(ts.logs.String(), `"msg":"worker died"`) || !strings.Contains(ts.logs.String(), strconv.Itoa(workers[0])) {
		t.Fatalf("no worker death in the log:\n%s", ts.logs.String())
	}
	if status, _, raw := ts.post(t, runPath, `{"code": "return 2"}`); status != 200 {
		t.Fatalf("after the replacement: %d %s", status, raw)
	}
}

// childPIDs lists the processes whose parent is this test: the engines'
// workers (and Python zygotes, once started), not their fork servers.
func childPIDs(t *testing.T) []int {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == self && f[0] != "Z" {
			if cmd, _ := os.ReadFile("/proc/" + d.Name() + "/cmdline"); bytes.HasPrefix(cmd, []byte("stepbox-forkserver\x00")) {
				continue
			}
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestProcessesInMetrics: the metrics count the jailed processes of both
// languages. A Python run starts its worker's zygote, which the metrics
// then show beside the workers.
func TestProcessesInMetrics(t *testing.T) {
	ts := start(t, server.Config{PoolSize: 1})
	metric := func(m, name string) int {
		for _, line := range strings.Split(m, "\n") {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				return n
			}
		}
		t.Fatalf("no %s in\n%s", name, grep(m, "stepbox_"))
		return 0
	}
	if status, _, raw := ts.post(t, runPath, `{"language": "python", "code": "return 1"}`); status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	_, m := ts.get(t, "/metrics")
	if z := metric(m, `stepbox_worker_processes{kind="zygote"}`); z != 1 {
		t.Fatalf("%d zygotes after a Python run, want 1:\n%s", z, grep(m, "stepbox_"))
	}
	if w, up := metric(m, `stepbox_worker_processes{kind="worker"}`), metric(m, "stepbox_workers_up"); w != up || w < 1 {
		t.Fatalf("%d worker processes, %d workers up:\n%s", w, up, grep(m, "stepbox_"))
	}
	metric(m, "stepbox_workers_unbound")
	metric(m, "stepbox_workers_retired_total")
}
