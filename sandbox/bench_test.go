package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/sandbox"
)

// BenchmarkTrivial measures a trivial step from Submit to result, one run in
// flight: through the jailed process pool (the default) and in-process (the
// baseline), each with the warm pool, and in-process without it (every run
// builds and bootstraps its VM). It reports the latency percentiles.
func BenchmarkTrivial(b *testing.B) {
	// Large limits must cost a run nothing until it uses them.
	large := map[string]sandbox.Limits{"default": {MemoryMB: 512, MaxDataRequests: 100_000, MaxDataBytes: 1 << 30}}
	for _, bc := range []struct {
		name  string
		iso   sandbox.Isolation
		warm  int
		plans map[string]sandbox.Limits
	}{
		{"process", sandbox.IsolationProcess, 2, nil},
		{"process-large-limits", sandbox.IsolationProcess, 2, large},
		{"inprocess", sandbox.IsolationInProcess, 2, nil},
		{"inprocess-cold", sandbox.IsolationInProcess, -1, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEngine(b, sandbox.Config{Isolation: bc.iso, PoolSize: 1, Warm: bc.warm, Plans: bc.plans})
			req := sandbox.Request{Code: "return 1 + 1"}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := e.Run(context.Background(), req, nil); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkThroughput runs trivial steps from many goroutines with
// PoolSize = the number of CPUs and reports runs per second, for both
// isolations.
func BenchmarkThroughput(b *testing.B) {
	for _, iso := range []sandbox.Isolation{sandbox.IsolationProcess, sandbox.IsolationInProcess} {
		b.Run(string(iso), func(b *testing.B) {
			e := newEngine(b, sandbox.Config{Isolation: iso, QueueSize: 100_000})
			req := sandbox.Request{Code: "return 1 + 1"}
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := e.Run(context.Background(), req, nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[int(float64(len(lat)-1)*p)].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkWorkloads runs each workload shape in bench/workloads.
func BenchmarkWorkloads(b *testing.B) {
	files, err := filepath.Glob("../bench/workloads/*.js")
	if err != nil || len(files) == 0 {
		b.Fatal("no workloads", err)
	}
	e := newEngine(b, sandbox.Config{Isolation: sandbox.IsolationInProcess, PoolSize: 1, Plans: map[string]sandbox.Limits{"default": {MemoryMB: 512, CPUMs: 60_000, WallMs: 60_000}}})
	for _, f := range files {
		code, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(filepath.Base(f), ".js"), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := e.Run(context.Background(), sandbox.Request{Code: string(code)}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDataRoundTrip measures one dataProxy.request answered by the
// host: guest call, event to the caller, Respond, promise resolution.
func BenchmarkDataRoundTrip(b *testing.B) {
	for _, iso := range []sandbox.Isolation{sandbox.IsolationInProcess, sandbox.IsolationProcess} {
		b.Run(string(iso), func(b *testing.B) {
			e := newEngine(b, sandbox.Config{Isolation: iso, PoolSize: 1, Plans: map[string]sandbox.Limits{"default": {
				MaxDataRequests: 1_000_000, CPUMs: 300_000, WallMs: 300_000, MaxDataBytes: 1 << 30}}})
			const perRun = 1000
			code := "for (let i = 0; i < 1000; i++) await dataProxy.request('get', i)"
			b.ResetTimer()
			for done := 0; done < b.N; done += perRun {
				s, err := e.Submit(context.Background(), sandbox.Request{Code: code})
				if err != nil {
					b.Fatal(err)
				}
				for ev := range s.Events() {
					if dr := ev.DataRequest; dr != nil {
						_ = s.Respond(dr.ID, dr.Params)
					}
				}
				if _, err := s.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64((b.N+perRun-1)/perRun*perRun)/1e3, "µs/roundtrip")
		})
	}
}

// BenchmarkIntl measures what Intl costs a run, through the jailed process
// pool: a trivial step, the same step that also makes its first use of
// Intl (which loads it), and a loop formatting 10,000 dates in a zone.
// Node's figure for the same loop (README, Go benchmarks) is the best of
// five after a warm-up of:
//
//	node -e 'function loop() { const f = new Intl.DateTimeFormat("en-US", {timeZone: "America/New_York", dateStyle: "medium", timeStyle: "short"}); let s = 0; for (let i = 0; i < 10000; i++) s += f.format(new Date(1700000000000 + i * 3600000)).length; return s }
//	loop(); let b = Infinity; for (let k = 0; k < 5; k++) { const t = performance.now(); loop(); b = Math.min(b, performance.now() - t) } console.log(b)'
func BenchmarkIntl(b *testing.B) {
	for _, bc := range []struct{ name, code string }{
		{"trivial", "return 1 + 1"},
		{"first-use", `return new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString("en-US", { timeZone: "Europe/Paris" })`},
		{"format-10k-dates", `const f = new Intl.DateTimeFormat("en-US", {timeZone: "America/New_York", dateStyle: "medium", timeStyle: "short"});
let s = 0;
for (let i = 0; i < 10000; i++) s += f.format(new Date(1700000000000 + i * 3600000)).length;
return s`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := newEngine(b, sandbox.Config{Isolation: sandbox.IsolationProcess, PoolSize: 1, Warm: 2})
			req := sandbox.Request{Code: bc.code}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := e.Run(context.Background(), req, nil); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			reportPercentiles(b, lat)
		})
	}
}
