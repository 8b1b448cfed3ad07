//go:build !(386 || arm)

package jsrt

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
)

// BenchmarkWebFirstUse measures what a run pays the first time its step
// uses one of the web parts (text.js by btoa, url.js by URL, crypto.js by
// randomUUID), from warm VMs. Each iteration times a trivial run and then
// a trivial run that makes that first use, one after the other, so that
// the load of a shared machine falls on both alike; first-use-µs is the
// difference of their medians, trivial-µs the trivial run's median (a run
// that uses no web global pays nothing for them: BenchmarkBootstrap is
// what every VM costs ahead of its run).
//
//	go test ./internal/jsrt -run '^$' -bench WebFirstUse -benchtime 2000x
func BenchmarkWebFirstUse(b *testing.B) {
	for _, c := range []struct{ name, code string }{
		{"btoa", `return btoa("user:pass")`},
		{"TextDecoder", `return new TextDecoder().decode(new Uint8Array([104, 105]))`},
		{"URL", `return new URL("https://example.com/a?b=c").host`},
		{"crypto", `return crypto.randomUUID().length`},
		{"structuredClone", `return structuredClone([1]).length`},
		{"performance", `return typeof performance.now()`},
		{"Event", `return new Event("x").type`},
		{"Blob", `return new Blob(["hi"]).size`},
	} {
		b.Run(c.name, func(b *testing.B) {
			rt, err := New(Config{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(rt.Close)
			h := &recorder{}
			run := func(code string) time.Duration {
				h.replies = make(chan ipc.Reply, 1)
				t0 := time.Now()
				ev := rt.Run(context.Background(), Job{Code: code, Input: json.RawMessage(`null`), Limits: testLimits, Host: h, Replies: h.replies})
				d := time.Since(t0)
				if ev.Result == nil {
					b.Fatalf("%+v", ev.Error)
				}
				return d
			}
			var plain, first []time.Duration
			for b.Loop() {
				plain = append(plain, run(`return 1`))
				first = append(first, run(c.code))
			}
			median := func(ds []time.Duration) float64 {
				slices.Sort(ds)
				return float64(ds[len(ds)/2].Nanoseconds()) / 1e3
			}
			p, f := median(plain), median(first)
			b.ReportMetric(p, "trivial-µs")
			b.ReportMetric(f-p, "first-use-µs")
		})
	}
}
