//go:build !(386 || arm)

package jsrt

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stepbox/stepbox/internal/ipc"
)

// BenchmarkBootstrap measures what every run pays for its VM ahead of
// time: a new VM with the bootstrap evaluated, and its close.
func BenchmarkBootstrap(b *testing.B) {
	defer cpuPerOp(b)()
	for b.Loop() {
		m, err := newMachine()
		if err != nil {
			b.Fatal(err)
		}
		m.close()
	}
}

// BenchmarkBridge measures a run that uses the guest API: data requests
// (one refused), status, console with objects and an error, timers and
// microtasks, from a warm VM.
func BenchmarkBridge(b *testing.B) {
	rt, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rt.Close)
	lim := testLimits
	lim.MaxDataRequests, lim.MaxStatusEvents, lim.MaxConsoleEvents, lim.MaxConsoleBytes = 100, 100, 100, 1<<20
	code := `
for (let i = 0; i < 10; i++) {
  const v = await dataProxy.request("get", {i, tags: ["a", "b"]});
  reportStatus({step: i, of: 10});
  console.log("row", i, v, [1, 2, {x: v}]);
}
try { await dataProxy.request("fail") } catch (e) { console.error(e) }
await new Promise(r => setTimeout(r, 0));
await new Promise(r => queueMicrotask(r));
return {done: true, n: [1, 2, 3]}`
	h := &recorder{answer: func(r *ipc.DataRequest) *ipc.Reply {
		if r.Method == "fail" {
			return &ipc.Reply{ID: r.ID, Error: "refused"}
		}
		return &ipc.Reply{ID: r.ID, Value: r.Params}
	}}
	defer cpuPerOp(b)()
	for b.Loop() {
		h.events = h.events[:0]
		h.replies = make(chan ipc.Reply, 100)
		ev := rt.Run(context.Background(), Job{Code: code, Input: json.RawMessage(`null`), Limits: lim, Host: h, Replies: h.replies})
		if ev.Result == nil {
			b.Fatalf("%+v", ev.Error)
		}
	}
}
