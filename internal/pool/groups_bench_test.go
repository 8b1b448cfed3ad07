package pool_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/pool"
	"github.com/stepbox/stepbox/internal/testenv"
)

// The figures of issue #15 ("One worker model"), measured on jailed
// workers of this test binary (the jail of groups_test.go, and a host uid
// per slot when the host is root, as in production):
//
//	go test ./internal/pool -run '^$' -bench BoundGroup -benchtime 500x
//	go test ./internal/pool -run '^$' -bench 'NewGroup|WorkerStartCPU' -benchtime 60x
//	go test ./internal/pool -run '^$' -bench TenantThroughput -benchtime 3s
//
// A trivial run is "return 1 + 1" from RunGroup to its terminal event.
// Wall-clock figures follow the machine's load: compare those measured in
// one run (the ratios), and read the CPU figures beside them.

// benchPool is a pool for a benchmark, with a way to wait for a state of
// its workers without sleeping: every record the pool logs (a worker
// started, exited, retired) wakes the waiter, which then reads Health.
type benchPool struct {
	*pool.Pool
	wake chan struct{}
}

// wakeHandler is a slog.Handler that formats nothing: each record only
// wakes the benchPool's waiter.
type wakeHandler struct{ wake chan struct{} }

func (h wakeHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h wakeHandler) Handle(context.Context, slog.Record) error {
	select {
	case h.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
	return nil
}
func (h wakeHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h wakeHandler) WithGroup(string) slog.Handler      { return h }

// benchUID is the first host uid of the benchmarks' pools when the host is
// root; each pool gets a range of its own (benchSlots apart).
var (
	benchUIDMu sync.Mutex
	benchUID   = 1_900_001_000
)

const benchSlots = 16

// newBenchPool starts a pool of jailed workers for b, waits until they are
// up, and closes it at the end of b.
func newBenchPool(b *testing.B, cfg pool.Config) *benchPool {
	b.Helper()
	if err := jail.Probe().Err(); err != nil {
		if testenv.RequireJail() {
			b.Fatalf("jail: %v", err)
		}
		b.Skipf("jail: %v", err)
	}
	cfg.Prepare = jailed
	if os.Geteuid() == 0 {
		benchUIDMu.Lock()
		cfg.HostIDs = pool.IDRange{First: benchUID, Count: cfg.Size + cfg.Standby}
		benchUID += benchSlots
		benchUIDMu.Unlock()
	}
	wake := make(chan struct{}, 1)
	cfg.Logger = slog.New(wakeHandler{wake})
	return &benchPool{Pool: newPool(b, cfg), wake: wake}
}

// waitFor blocks until cond holds for the pool's Health, woken by the
// pool's log records, and fails b if it does not within a budget.
func (p *benchPool) waitFor(b *testing.B, what string, cond func(pool.Health) bool) {
	b.Helper()
	deadline := time.NewTimer(testenv.ScaleDuration(15 * time.Second))
	defer deadline.Stop()
	for !cond(p.Health()) {
		select {
		case <-p.wake:
		case <-deadline.C:
			b.Fatalf("gave up waiting for %s: %+v", what, p.Health())
		}
	}
}

// ready waits until every slot has a worker and want of them are unbound.
func (p *benchPool) ready(b *testing.B, unbound int) {
	b.Helper()
	p.waitFor(b, fmt.Sprintf("every worker up, %d unbound", unbound), func(h pool.Health) bool {
		return h.Up == h.Size+h.Standby && h.Unbound >= unbound
	})
}

// trivial runs "return 1 + 1" as a run of group and fails b unless it
// returns 2.
func trivial(b testing.TB, p *benchPool, group string) {
	h := newRecorder()
	ev := p.RunGroup(context.Background(), group, jsrt.Job{Code: "return 1 + 1", Limits: testLimits, Host: h, Replies: h.replies})
	if ev.Error != nil || ev.Result == nil || string(ev.Result.Value) != "2" {
		b.Errorf("run of %q: %+v", group, ev.Error)
	}
}

// timed runs trivial and returns how long it took.
func timed(b testing.TB, p *benchPool, group string) time.Duration {
	t0 := time.Now()
	trivial(b, p, group)
	return time.Since(t0)
}

// quantileMs returns the q quantile of lat (sorted in place), in ms.
func quantileMs(lat []time.Duration, q float64) float64 {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return float64(lat[int(float64(len(lat)-1)*q)]) / float64(time.Millisecond)
}

// BenchmarkRunBoundGroup: a trivial run whose group already has a free
// worker (a pool of 1 with a standby of 1, group "a", after a first run
// bound a worker to it), against the same run on today's shared pool (a
// pool of 1, no standby, group ""), interleaved in one loop so that both
// see the same machine load. An op is one run of each; the metrics are
// per run. Issue #15's target: the bound run no slower than the shared
// one, at p50 and p99 (ratio ≤ 1).
func BenchmarkRunBoundGroup(b *testing.B) {
	bound := newBenchPool(b, pool.Config{Size: 1, Standby: 1})
	shared := newBenchPool(b, pool.Config{Size: 1})
	for range 20 {
		trivial(b, bound, "a")
		trivial(b, shared, "")
	}
	if h := bound.Health(); h.Unbound != 1 || h.Retired != 0 {
		b.Fatalf("the warm-up moved workers: %+v", h)
	}
	lb := make([]time.Duration, 0, b.N)
	ls := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 { // alternate which goes first
			lb = append(lb, timed(b, bound, "a"))
			ls = append(ls, timed(b, shared, ""))
		} else {
			ls = append(ls, timed(b, shared, ""))
			lb = append(lb, timed(b, bound, "a"))
		}
	}
	b.StopTimer()
	if h := bound.Health(); h.Retired != 0 || h.Restarts != 0 {
		b.Errorf("the bound group's runs moved workers: %+v", h)
	}
	b50, b99 := quantileMs(lb, 0.50), quantileMs(lb, 0.99)
	s50, s99 := quantileMs(ls, 0.50), quantileMs(ls, 0.99)
	b.ReportMetric(b50, "p50-ms")
	b.ReportMetric(b99, "p99-ms")
	b.ReportMetric(s50, "shared-p50-ms")
	b.ReportMetric(s99, "shared-p99-ms")
	if s50 > 0 && s99 > 0 {
		b.ReportMetric(b50/s50, "p50-ratio")
		b.ReportMetric(b99/s99, "p99-ratio")
	}
}

// BenchmarkRunNewGroup: a trivial run of a group that has no worker, each
// op a new group, on a pool of 1:
//
//   - standby: with a standby of 1, which the run binds (target p50 ≤
//     2 ms). Binding it retires the previous group's worker, whose slot
//     starts a new unbound one; the timer is stopped while the benchmark
//     waits for that refill. refill-p50-ms is the time from the run's
//     start until the new standby is up: a worker start (reap, fork,
//     jail, exec, handshake) while the run runs.
//   - standby-paced: the same, with a pause of 100 ms (outside the
//     timer and the latencies, after the refill) before each run, so that
//     the new standby has finished warming up (its VMs) and the machine
//     has settled: runs that switch now and then rather than back to
//     back. The pause paces arrivals; it synchronises nothing.
//   - no-standby: a run that must wait for the previous group's worker
//     to be killed and reaped and a new one started (target p50 ≤ 30 ms).
func BenchmarkRunNewGroup(b *testing.B) {
	for _, bc := range []struct {
		name    string
		standby int
		pause   time.Duration
	}{{"standby", 1, 0}, {"standby-paced", 1, 100 * time.Millisecond}, {"no-standby", 0, 0}} {
		b.Run(bc.name, func(b *testing.B) {
			p := newBenchPool(b, pool.Config{Size: 1, Standby: bc.standby})
			trivial(b, p, "warm-up")
			p.ready(b, bc.standby)
			lat := make([]time.Duration, 0, b.N)
			refill := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				group := fmt.Sprintf("g%d", i)
				t0 := time.Now()
				trivial(b, p, group)
				lat = append(lat, time.Since(t0))
				b.StopTimer()
				// The new group's worker is up and bound; with a standby,
				// wait for the slot of the group before to start an
				// unbound one.
				p.waitFor(b, "the standby refilled", func(h pool.Health) bool {
					if h.Up != h.Size+h.Standby || h.Unbound < bc.standby {
						return false
					}
					for _, w := range h.Workers {
						if w.Bound && w.Group != group {
							return false
						}
					}
					return true
				})
				refill = append(refill, time.Since(t0))
				time.Sleep(bc.pause)
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(quantileMs(lat, 0.50), "p50-ms")
			b.ReportMetric(quantileMs(lat, 0.99), "p99-ms")
			if bc.standby > 0 {
				b.ReportMetric(quantileMs(refill, 0.50), "refill-p50-ms")
			}
		})
	}
}

// cpuTime is the user plus system time in ru.
func cpuTime(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func rusage(b *testing.B, who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		b.Fatal(err)
	}
	return cpuTime(&ru)
}

// warmRunCPU is the CPU one trivial run costs a warm worker and the host,
// as the "warm" case of BenchmarkWorkerStartCPU last measured it.
var warmRunCPU struct {
	set          bool
	worker, host time.Duration
}

// BenchmarkWorkerStartCPU measures the CPU a worker start costs: the
// process, its jail, both executions of the binary (the jail re-executes
// it), the handshake, its warm VMs and one trivial run.
//
// Method. "fresh" is a pool of 1 with MaxRuns 1: each op is one trivial
// run, after which the worker is retired, SIGKILLed and reaped, and the
// slot starts the next one; the op ends when that one is up (so each op
// reaps exactly one worker). worker-cpu-ms is the growth of
// getrusage(RUSAGE_CHILDREN) across the op, which the kernel adds to when
// a child is reaped: the whole life of one worker, with everything it
// reaped itself, at µs resolution (its p50 over ops and its mean).
// host-cpu-ms is getrusage(RUSAGE_SELF) per op: the host's side of the
// start (pipes, jail preparation, cgroups, fork from the spawner thread,
// handshake, reaping) and of the run, plus this benchmark's own loop.
// "warm" is the same trivial run on a worker that is kept: its CPU from
// /proc/<pid>/stat (utime+stime, clock ticks; fine over many runs) and
// the host's, per run. start-*-cpu-ms is fresh minus warm: what the start
// itself costs. Kernel work done outside either process (freeing a
// network namespace runs in a kernel worker thread, for one) is in
// neither figure; the throughput benchmark sees it.
func BenchmarkWorkerStartCPU(b *testing.B) {
	b.Run("warm", func(b *testing.B) {
		p := newBenchPool(b, pool.Config{Size: 1})
		for range 20 {
			trivial(b, p, "")
		}
		pid := p.Health().Workers[0].PID
		w0, h0 := procCPU(b, pid), rusage(b, syscall.RUSAGE_SELF)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			trivial(b, p, "")
		}
		b.StopTimer()
		if got := p.Health().Workers[0].PID; got != pid {
			b.Fatalf("the worker changed (%d, then %d)", pid, got)
		}
		w := (procCPU(b, pid) - w0) / time.Duration(b.N)
		h := (rusage(b, syscall.RUSAGE_SELF) - h0) / time.Duration(b.N)
		warmRunCPU.set, warmRunCPU.worker, warmRunCPU.host = true, w, h
		b.ReportMetric(ms(w), "worker-cpu-ms")
		b.ReportMetric(ms(h), "host-cpu-ms")
	})
	b.Run("fresh", func(b *testing.B) {
		p := newBenchPool(b, pool.Config{Size: 1, MaxRuns: 1})
		trivial(b, p, "")
		p.ready(b, 1)
		per := make([]time.Duration, 0, b.N)
		c0, h0 := rusage(b, syscall.RUSAGE_CHILDREN), rusage(b, syscall.RUSAGE_SELF)
		prev := c0
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			trivial(b, p, "")
			p.ready(b, 1) // the run's worker reaped, the next one up
			c := rusage(b, syscall.RUSAGE_CHILDREN)
			per = append(per, c-prev)
			prev = c
		}
		b.StopTimer()
		if h := p.Health(); h.Retired < b.N {
			b.Fatalf("retired %d workers in %d ops", h.Retired, b.N)
		}
		n := time.Duration(b.N)
		child := (rusage(b, syscall.RUSAGE_CHILDREN) - c0) / n
		host := (rusage(b, syscall.RUSAGE_SELF) - h0) / n
		b.ReportMetric(quantileMs(per, 0.50), "worker-cpu-p50-ms")
		b.ReportMetric(ms(child), "worker-cpu-ms")
		b.ReportMetric(ms(host), "host-cpu-ms")
		if warmRunCPU.set {
			b.ReportMetric(ms(child-warmRunCPU.worker), "start-worker-cpu-ms")
			b.ReportMetric(ms(host-warmRunCPU.host), "start-host-cpu-ms")
			b.ReportMetric(ms(child+host-warmRunCPU.worker-warmRunCPU.host), "start-cpu-ms")
		}
	})
}

// BenchmarkWorkerStartHostHeap measures the host's CPU per worker start
// (a pool with MaxRuns 1: every run starts a worker) while the host holds
// a heap of 256 MB that it keeps writing to, as a busy server does:
// "direct" forks jailed workers from the host itself, "forkserver" from
// the fork server. A fork copies the forking process's page tables and
// makes its pages copy-on-write, so the direct host pays in proportion to
// its heap.
func BenchmarkWorkerStartHostHeap(b *testing.B) {
	heap := make([][]byte, 256)
	for i := range heap {
		heap[i] = bytes.Repeat([]byte{1}, 1<<20)
	}
	touch := func() {
		for _, m := range heap {
			for j := 0; j < len(m); j += 4096 {
				m[j]++
			}
		}
	}
	for _, c := range []struct {
		name   string
		policy pool.ForkServerPolicy
	}{{"direct", pool.ForkServerNever}, {"forkserver", pool.ForkServerAlways}} {
		b.Run(c.name, func(b *testing.B) {
			p := newBenchPool(b, pool.Config{Size: 1, MaxRuns: 1, ForkServer: c.policy})
			trivial(b, p, "")
			p.ready(b, 1)
			touch()
			t0 := rusage(b, syscall.RUSAGE_SELF)
			var touching time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				trivial(b, p, "")
				p.ready(b, 1)
				t1 := rusage(b, syscall.RUSAGE_SELF)
				touch()
				touching += rusage(b, syscall.RUSAGE_SELF) - t1
			}
			b.StopTimer()
			// The host's CPU less what touching the heap costs when no
			// fork made it copy-on-write is not separable: report both.
			n := time.Duration(b.N)
			b.ReportMetric(ms((rusage(b, syscall.RUSAGE_SELF)-t0-touching)/n), "host-cpu-ms")
			b.ReportMetric(ms(touching/n), "touch-cpu-ms")
		})
	}
	runtime.KeepAlive(heap)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// clockTick is the unit of /proc/<pid>/stat times (USER_HZ, 100 on every
// Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// procCPU is utime+stime of process pid, from /proc/<pid>/stat.
func procCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields that follow count from the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	var utime, stime int64
	// After ')': state ppid pgrp session tty_nr tpgid flags minflt cminflt
	// majflt cmajflt utime stime.
	var state string
	var skip int64
	if _, err := fmt.Sscan(string(stat[i+1:]), &state, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &utime, &stime); err != nil {
		b.Fatalf("/proc/%d/stat: %v", pid, err)
	}
	return time.Duration(utime+stime) * clockTick
}

// tenantRunsPerSec is the runs/s of the single-tenant case of
// BenchmarkTenantThroughput, as last measured, for the others' ratio.
var tenantRunsPerSec float64

// BenchmarkTenantThroughput: trivial runs of 8 tenants interleaved at
// random on a pool of 2 with a standby of 1, two runs in flight (the
// engine's scheduler keeps PoolSize runs in flight):
//
//   - tenants=1: one tenant, the baseline;
//   - tenants=8,groups=1: the 8 tenants in one isolation group (target:
//     within 10 % of tenants=1);
//   - tenants=8,groups=8: each tenant its own group, the default policy
//     (target ≥ 100 runs/s on 2 cores): most runs switch, and each switch
//     costs a worker start.
//
// ratio is runs/s ÷ tenants=1's runs/s (when tenants=1 ran first);
// starts/run is the worker starts per run.
func BenchmarkTenantThroughput(b *testing.B) {
	for _, bc := range []struct {
		name            string
		tenants, groups int
	}{{"tenants=1", 1, 1}, {"tenants=8,groups=1", 8, 1}, {"tenants=8,groups=8", 8, 8}} {
		b.Run(bc.name, func(b *testing.B) {
			p := newBenchPool(b, pool.Config{Size: 2, Standby: 1})
			group := func(tenant int) string { return fmt.Sprintf("g%d", tenant%bc.groups) }
			for t := range bc.tenants {
				trivial(b, p, group(t))
			}
			p.ready(b, 1)
			r0 := p.Health().Restarts
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range 2 {
				wg.Add(1) // Done when this runner has taken its last op.
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
					for next.Add(1) <= int64(b.N) {
						trivial(b, p, group(r.IntN(bc.tenants)))
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			rps := float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(rps, "runs/s")
			b.ReportMetric(float64(p.Health().Restarts-r0)/float64(b.N), "starts/run")
			switch {
			case bc.tenants == 1:
				tenantRunsPerSec = rps
			case tenantRunsPerSec > 0:
				b.ReportMetric(rps/tenantRunsPerSec, "ratio")
			}
		})
	}
}
