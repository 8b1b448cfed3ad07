//go:build linux

package pyrt_test

import (
	"context"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// coldStart is the mean time of "python3 -c" with the same interpreter,
// unjailed: what a run would cost without the zygote.
var coldStart = sync.OnceValues(func() (time.Duration, error) {
	rt := sharedRT
	const n = 10
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := exec.Command(rt.l.Python(), "-c", "import json; print(json.dumps(1 + 1))").Run(); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / n, nil
})

// BenchmarkPythonTrivial measures a whole run of "return 1 + 1": the job
// to a forked, jailed process, the result back, every process reaped.
// back-to-back includes forking the next spare (the zygote forks it once
// the previous run is gone); spare-ready leaves the zygote time to fork
// it between runs, as a worker that is not saturated does. Each reports
// how many times faster it is than "python3 -c" (cold-x).
func BenchmarkPythonTrivial(b *testing.B) {
	rt := shared(b)
	cold, err := coldStart()
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B) {
		h := &recorder{replies: make(chan ipc.Reply, 1)}
		ev := rt.Run(context.Background(), pyrt.Job{Code: "return 1 + 1", Limits: testLimits, Host: h, Replies: h.replies})
		if ev.Kind != ipc.KindResult || string(ev.Result.Value) != "2" {
			b.Fatalf("got %s", describe(ev))
		}
	}
	report := func(b *testing.B, per time.Duration) {
		b.ReportMetric(float64(per)/float64(time.Millisecond), "ms/run")
		b.ReportMetric(float64(cold)/float64(per), "cold-x")
	}
	b.Run("back-to-back", func(b *testing.B) {
		for b.Loop() {
			run(b)
		}
		report(b, b.Elapsed()/time.Duration(b.N))
	})
	b.Run("spare-ready", func(b *testing.B) {
		var total time.Duration
		for b.Loop() {
			b.StopTimer()
			time.Sleep(10 * time.Millisecond)
			b.StartTimer()
			t0 := time.Now()
			run(b)
			total += time.Since(t0)
		}
		report(b, total/time.Duration(b.N))
	})
	b.Run("python3 -c", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(rt.l.Python(), "-c", "import json; print(json.dumps(1 + 1))").Run(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N))/float64(time.Millisecond), "ms/run")
	})
}
