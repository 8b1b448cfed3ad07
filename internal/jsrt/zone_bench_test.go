//go:build !(386 || arm)

package jsrt

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stepbox/stepbox/internal/ipc"
)

// BenchmarkZone measures a run from a warm VM in UTC (the process's zone:
// no zone.js) and in another zone (zone.js evaluated before the step), for
// a trivial step and for a loop of 10,000 local-time reads and writes.
func BenchmarkZone(b *testing.B) {
	rt, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rt.Close)
	const loop = `let s = 0;
for (let i = 0; i < 10000; i++) { const d = new Date(2026, 0, 1 + i % 365, i % 24); s += d.getHours() + d.getDate(); d.setMinutes(i % 60) }
return s`
	for _, bc := range []struct{ name, zone, code string }{
		{"trivial/UTC", "UTC", "return 1 + 1"},
		{"trivial/Europe-Paris", "Europe/Paris", "return 1 + 1"},
		{"10k-local-dates/UTC", "UTC", loop},
		{"10k-local-dates/Europe-Paris", "Europe/Paris", loop},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := &recorder{}
			defer cpuPerOp(b)()
			for b.Loop() {
				h.replies = make(chan ipc.Reply, 1)
				ev := rt.Run(context.Background(), Job{Code: bc.code, Input: json.RawMessage(`null`), Limits: testLimits, TimeZone: bc.zone, Host: h, Replies: h.replies})
				if ev.Result == nil {
					b.Fatalf("%+v", ev.Error)
				}
			}
		})
	}
}
