package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
)

// unreadStream starts an Execute stream of code with the API key key
// (none if empty), and never reads it. The stream ends with the test.
func unreadStream(t *testing.T, ts *testServer, key, code string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream := ts.rpc().Execute(ctx)
	t.Cleanup(func() {
		// The request body must end too: the transport notices the
		// cancellation only once it is no longer waiting for the body.
		cancel()
		_ = stream.CloseRequest()
		_ = stream.CloseResponse()
	})
	if key != "" {
		stream.RequestHeader().Set("Authorization", "Bearer "+key)
	}
	if err := stream.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Start{Start: &pb.RunRequest{Code: code}}}); err != nil {
		t.Fatal(err)
	}
}

// TestTenantShareOverTheNetwork: two Execute streams of one tenant that
// never read hold one slot of two, its share, the other waiting in the
// queue; another tenant's Run completes meanwhile. With two tenants
// configured, the share applies from the first run.
func TestTenantShareOverTheNetwork(t *testing.T) {
	cfg := server.Config{
		PoolSize: 2,
		Tenants: []server.Tenant{
			{Name: "acme", Keys: []string{server.HashKey(acmeKey)}},
			{Name: "other", Keys: []string{server.HashKey(otherKey)}},
		},
	}
	ts := start(t, cfg)
	const hold = "reportStatus('holding'); await new Promise(() => setInterval(() => {}, 1000))"
	unreadStream(t, ts, acmeKey, hold)
	unreadStream(t, ts, acmeKey, hold)
	load := func() (int, int) {
		running, queued, _, _ := ts.eng.Load()
		return running, queued
	}
	testenv.WaitFor(t, "acme's second run to wait in the queue, acme holding its share", func() bool {
		running, queued := load()
		return running == 1 && queued == 1
	})

	ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(10*time.Second))
	defer cancel()
	res, err := ts.client(client.Options{APIKey: otherKey}).Run(ctx, sandbox.Request{Code: "return 'other'"}, nil)
	if err != nil || string(res.Value) != `"other"` {
		t.Fatalf("the other tenant's Run beside acme's unread streams: %s %v", res.Value, err)
	}
	if running, queued := load(); running != 1 || queued != 1 {
		t.Fatalf("%d running and %d queued after the other tenant's run; want acme's 1 and 1 still there", running, queued)
	}
}

// TestExecuteClientThatStopsReading: a client that stops reading an
// Execute stream blocks the server's sends (HTTP/2 flow control), and then
// the run: at the stall limit the run ends ABORTED, saying why, the
// stream is reset, and the slot and the handler are free again.
func TestExecuteClientThatStopsReading(t *testing.T) {
	const stall = 300 * time.Millisecond // crossed on purpose
	lots := sandbox.Limits{
		CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs,
		MaxConsoleEvents: 100_000, MaxConsoleBytes: 64 << 20,
	}
	ts := start(t, server.Config{
		PoolSize:     1,
		StallTimeout: stall,
		Plans:        map[string]sandbox.Limits{"default": lots},
		Caps:         lots,
	})
	// 4 KiB lines of random letters (the messages are compressed), more
	// than the client's flow-control window and the sockets' buffers can
	// hold unread.
	unreadStream(t, ts, "", `const a = "abcdefghijklmnopqrstuvwxyz0123456789";
const line = Array.from({length: 4096}, () => a[Math.floor(Math.random() * a.length)]).join("");
for (;;) console.log(line)`)
	eventually(t, 10*time.Second, func() string {
		for _, l := range strings.Split(ts.logs.String(), "\n") {
			if strings.Contains(l, `"msg":"run"`) && strings.Contains(l, `"outcome":"ABORTED"`) &&
				strings.Contains(l, "did not read its events for 300ms (stallTimeout)") {
				return ""
			}
		}
		return "no run line of an ABORTED run whose client did not read its events:\n" + grep(ts.logs.String(), `"msg":"run"`)
	})
	// The slot is free: the pool has one.
	ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(10*time.Second))
	defer cancel()
	res, err := ts.client(client.Options{}).Run(ctx, sandbox.Request{Code: "return 1"}, nil)
	if err != nil || string(res.Value) != "1" {
		t.Fatalf("a Run after the stalled stream: %s %v", res.Value, err)
	}
	// And the stalled stream's handler has returned.
	eventually(t, 10*time.Second, func() string {
		if _, m := ts.get(t, "/metrics"); !strings.Contains(m, "stepbox_runs_in_flight 0") {
			return "the stalled stream is still in flight:\n" + grep(m, "in_flight")
		}
		return ""
	})
}
