//go:build !(386 || arm)

package jsrt

import (
	"context"
	"encoding/json"
	"flag"
	"slices"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
)

// firstUses are the steps of BenchmarkWebFirstUse: each makes the first
// use of one global (or one member of it) in its run. "none" is a second
// trivial step, the baseline of the instruction counts (scripts/firstuse).
var firstUses = []struct{ name, code string }{
	{"none", `return 1`},
	{"btoa", `return btoa("user:pass")`},
	{"TextEncoder", `return new TextEncoder().encode("hi").length`},
	{"TextDecoder", `return new TextDecoder().decode(new Uint8Array([104, 105]))`},
	{"URL", `return new URL("https://example.com/a?b=c").host`},
	{"URLSearchParams", `return new URLSearchParams("a=1&b=2").get("b")`},
	{"crypto.randomUUID", `return crypto.randomUUID().length`},
	{"crypto.getRandomValues", `return crypto.getRandomValues(new Uint8Array(8)).length`},
	{"crypto.subtle", `return (await crypto.subtle.digest("SHA-256", new Uint8Array([1]))).byteLength`},
	{"crypto.subtle.sign", `const k = await crypto.subtle.importKey("raw", new Uint8Array([1]), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]); return (await crypto.subtle.sign("HMAC", k, new Uint8Array([2]))).byteLength`},
	{"structuredClone", `return structuredClone([1]).length`},
	{"performance", `return typeof performance.now()`},
	{"Event", `return new Event("x").type`},
	{"EventTarget", `const t = new EventTarget(); let n = 0; t.addEventListener("x", () => n++); t.dispatchEvent(new Event("x")); return n`},
	{"AbortController", `return new AbortController().signal.aborted`},
	{"AbortController.abort", `const c = new AbortController(); c.abort(); return c.signal.reason.name`},
	{"DOMException", `return new DOMException("m", "AbortError").code`},
	{"Blob", `return new Blob(["hi"]).size`},
	{"FormData", `const f = new FormData(); f.append("a", "1"); return f.get("a")`},
	{"Request", `return new Request("https://example.com/", { method: "POST", body: "x" }).method`},
	{"Intl", `return new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString("en-US", { timeZone: "Europe/Paris" })`},
}

// coldFirstUse makes BenchmarkWebFirstUse build a VM for each run on the
// run's own goroutine (no warm pool), so that no background goroutine
// works while it runs: what an instruction count under valgrind needs
// (scripts/firstuse). Timings are what a warm pool gives, without it.
var coldFirstUse = flag.Bool("firstuse.cold", false, "BenchmarkWebFirstUse: no warm pool, a VM built per run")

// BenchmarkWebFirstUse measures what a run pays the first time its step
// uses a web global (or Intl): each iteration makes a trivial run and a
// run of a step that makes that first use, in alternating order, from
// warm VMs, so that the load of a shared machine falls on both alike.
// first-use-µs is the median over the iterations of the difference of
// their wall times (rt.Run's call), first-use-cpu-µs of their CPU times
// (the run's cpuMs: the CPU its calls into the VM took on their thread,
// which a busy neighbour does not inflate as it does wall time);
// trivial-µs and trivial-cpu-µs are the trivial run's medians. A run that
// uses no web global pays nothing for them: BenchmarkBootstrap is what
// every VM costs ahead of its run.
//
//	go test ./internal/jsrt -run '^$' -bench WebFirstUse -benchtime 300x -count 3
func BenchmarkWebFirstUse(b *testing.B) {
	for _, c := range firstUses {
		b.Run(c.name, func(b *testing.B) {
			cfg := Config{}
			if *coldFirstUse {
				cfg.Warm = -1
			}
			rt, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(rt.Close)
			h := &recorder{}
			run := func(code string) (wall, cpu float64) {
				h.replies = make(chan ipc.Reply, 1)
				t0 := time.Now()
				ev := rt.Run(context.Background(), Job{Code: code, Input: json.RawMessage(`null`), Limits: testLimits, Host: h, Replies: h.replies})
				d := time.Since(t0)
				if ev.Result == nil {
					b.Fatalf("%s: %+v", c.name, ev.Error)
				}
				return float64(d.Nanoseconds()) / 1e3, ev.Result.Stats.CPUMs * 1e3
			}
			var trivWall, trivCPU, extraWall, extraCPU []float64
			for i := 0; b.Loop(); i++ {
				var tw, tc, fw, fc float64
				if i%2 == 0 {
					tw, tc = run(`return 1`)
					fw, fc = run(c.code)
				} else {
					fw, fc = run(c.code)
					tw, tc = run(`return 1`)
				}
				trivWall, trivCPU = append(trivWall, tw), append(trivCPU, tc)
				extraWall, extraCPU = append(extraWall, fw-tw), append(extraCPU, fc-tc)
			}
			b.ReportMetric(median(trivWall), "trivial-µs")
			b.ReportMetric(median(trivCPU), "trivial-cpu-µs")
			b.ReportMetric(median(extraWall), "first-use-µs")
			b.ReportMetric(median(extraCPU), "first-use-cpu-µs")
		})
	}
}

func median(v []float64) float64 {
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}
