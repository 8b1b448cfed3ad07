package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepbox/stepbox/sandbox"
)

// Limits of the plan the measures run under: the defaults are too small
// for the heavier workloads and the bridge's thousands of requests.
var benchPlan = map[string]sandbox.Limits{"default": {
	MemoryMB: 512, CPUMs: 120_000, WallMs: 120_000,
	MaxDataRequests: 100_000, MaxDataBytes: 1 << 30,
}}

// stepboxJS measures JavaScript steps through Stepbox with the isolation
// the row names.
func (r *runner) stepboxJS(ctx context.Context, id string) *row {
	iso := sandbox.IsolationProcess
	rw := newRow(id, "js", "Stepbox, process", "jailed worker process (the default); a fresh QuickJS VM per run, taken from the worker's warm pool")
	if id == "stepbox-inprocess" {
		iso = sandbox.IsolationInProcess
		rw = newRow(id, "js", "Stepbox, in-process", "host goroutine (IsolationInProcess); a fresh QuickJS VM per run, taken from the warm pool")
	}
	js := func(code string) sandbox.Request { return sandbox.Request{Code: code} }

	// Memory first: in-process, what earlier measures freed would be reused
	// by the VMs counted and hide them.
	if r.want(id, colMemory) {
		r.measure(rw, []string{colMemory}, func() error {
			var mb float64
			var how string
			var err error
			if iso == sandbox.IsolationProcess {
				mb, how, err = r.sbWorkerMemory(ctx, sandbox.Config{Isolation: iso, PoolSize: 1}, js(r.trivial()))
			} else {
				mb, how, err = r.sbInProcessMemory(ctx)
			}
			rw.set(colMemory, mb)
			rw.notef("memory: %s", how)
			return err
		})
	}
	if cols := r.wants(id, colP50, colP99); len(cols) > 0 {
		r.measure(rw, cols, func() error {
			p50, p99, err := r.sbLatency(ctx, sandbox.Config{Isolation: iso, PoolSize: 1}, js(r.trivial()), r.cfg.latencyRuns, r.cfg.latencyWarmup, "trivial")
			rw.set(colP50, p50)
			rw.set(colP99, p99)
			return err
		})
	}
	if r.want(id, colTput) {
		r.measure(rw, []string{colTput}, func() error {
			v, how, err := r.sbThroughput(ctx, sandbox.Config{Isolation: iso}, js(r.trivial()))
			rw.set(colTput, v)
			rw.notef("runs/s: %s", how)
			return err
		})
	}
	r.sbWorkloads(ctx, rw, iso)
	r.sbDuckDB(ctx, rw, iso)
	if r.want(id, colBridge) {
		r.measure(rw, []string{colBridge}, func() error {
			us, err := r.sbBridge(ctx, sandbox.Config{Isolation: iso, PoolSize: 1}, sandbox.JavaScript, jsBridgeStep)
			rw.set(colBridge, us)
			return err
		})
		rw.notef("bridge: dataProxy.request answered with Session.Respond from the Events loop")
	}
	return rw
}

// stepboxPython measures Python steps through Stepbox. Python always runs
// in jailed processes; the engine is in-process for JavaScript so that its
// only child processes are Python's.
func (r *runner) stepboxPython(ctx context.Context) *row {
	const id = "stepbox-python"
	rw := newRow(id, "python", "Stepbox Python", "jailed CPython process forked per run from a warm zygote")
	cfg := func(pool int) sandbox.Config {
		return sandbox.Config{Isolation: sandbox.IsolationInProcess, PoolSize: pool}
	}
	py := sandbox.Request{Language: sandbox.Python, Code: pyTrivial}
	if cols := r.wants(id, colP50, colP99); len(cols) > 0 {
		r.measure(rw, cols, func() error {
			p50, p99, err := r.sbLatency(ctx, cfg(1), py, r.cfg.pyLatencyRuns, 3, "trivial")
			rw.set(colP50, p50)
			rw.set(colP99, p99)
			return err
		})
	}
	if r.want(id, colTput) {
		r.measure(rw, []string{colTput}, func() error {
			v, how, err := r.sbThroughput(ctx, cfg(0), py)
			rw.set(colTput, v)
			rw.notef("runs/s: %s", how)
			return err
		})
	}
	if r.want(id, colBridge) {
		r.measure(rw, []string{colBridge}, func() error {
			us, err := r.sbBridge(ctx, cfg(1), sandbox.Python, pyBridgeStep)
			rw.set(colBridge, us)
			return err
		})
		rw.notef("bridge: data_proxy.request answered with Session.Respond from the Events loop")
	}
	if r.want(id, colMemory) {
		r.measure(rw, []string{colMemory}, func() error {
			mb, how, err := r.sbWorkerMemory(ctx, cfg(1), py)
			rw.set(colMemory, mb)
			rw.notef("memory: %s", how)
			return err
		})
	}
	return rw
}

// measure runs one measure, turning its error (or panic) into the cells'.
func (r *runner) measure(rw *row, cols []string, f func() error) {
	r.log("   %s %s", rw.id, strings.Join(cols, ", "))
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return f()
	}()
	if err != nil {
		rw.fail(cols, err)
		r.log("   %s: %v", rw.id, err)
	}
}

// engine starts an engine for one measure; its close waits for it to stop.
func engine(cfg sandbox.Config) (*sandbox.Engine, func(), error) {
	if cfg.Plans == nil {
		cfg.Plans = benchPlan
	}
	eng, err := sandbox.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return eng, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = eng.Close(ctx)
	}, nil
}

// sbLatency times runs one at a time, Submit to result, after warm-up
// runs; it returns p50 and p99 in milliseconds.
func (r *runner) sbLatency(ctx context.Context, cfg sandbox.Config, req sandbox.Request, n, warmup int, check string) (p50, p99 float64, err error) {
	eng, done, err := engine(cfg)
	if err != nil {
		return 0, 0, err
	}
	defer done()
	lat := make([]time.Duration, 0, n)
	for i := 0; i < warmup+n; i++ {
		t0 := time.Now()
		res, err := eng.Run(ctx, req, nil)
		if err != nil {
			return 0, 0, err
		}
		if i >= warmup {
			lat = append(lat, time.Since(t0))
		}
		if i == 0 {
			if err := r.checkResult(check, res.Value, true); err != nil {
				return 0, 0, err
			}
		}
	}
	p50, p99 = percentiles(lat)
	return p50, p99, nil
}

// percentiles returns p50 and p99 of lat in milliseconds, the rule the
// Node harnesses use too: the element at floor((n-1)*p) of the sorted list.
func percentiles(lat []time.Duration) (p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[int(float64(len(lat)-1)*p)]) / 1e6 }
	return at(0.50), at(0.99)
}

// clients is how many runs the throughput figures keep in flight.
func clients() int { return 2 * runtime.NumCPU() }

// sbThroughput runs trivial steps from clients() goroutines, with the
// engine's default pool (one slot per CPU), for the throughput phase after
// a warm-up, and returns successful runs per second.
func (r *runner) sbThroughput(ctx context.Context, cfg sandbox.Config, req sandbox.Request) (float64, string, error) {
	cfg.QueueSize = 100_000
	eng, done, err := engine(cfg)
	if err != nil {
		return 0, "", err
	}
	defer done()
	if _, _, err := hammer(ctx, r.cfg.throughputWarmup, clients(), func() error { _, err := eng.Run(ctx, req, nil); return err }); err != nil {
		return 0, "", err
	}
	n, elapsed, err := hammer(ctx, r.cfg.throughput, clients(), func() error { _, err := eng.Run(ctx, req, nil); return err })
	if err != nil {
		return 0, "", err
	}
	_, _, pool, _ := eng.Load()
	return float64(n) / elapsed.Seconds(), fmt.Sprintf("pool of %d, %d runs in flight", pool, clients()), nil
}

// hammer calls run from c goroutines until d has passed, and returns the
// calls that succeeded and the time until the last one ended. The first
// error stops it.
func hammer(ctx context.Context, d time.Duration, c int, run func() error) (int, time.Duration, error) {
	var n atomic.Int64
	var first error
	var once sync.Once
	stop := make(chan struct{})
	end := time.Now().Add(d)
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) && ctx.Err() == nil {
				select {
				case <-stop:
					return
				default:
				}
				if err := run(); err != nil {
					once.Do(func() { first = err; close(stop) })
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return int(n.Load()), time.Since(t0), first
}

// sbWorkloads times each selected workload: warm-up runs, then the median
// of the timed runs, Submit to result, one run at a time.
func (r *runner) sbWorkloads(ctx context.Context, rw *row, iso sandbox.Isolation) {
	var sel []workload
	for _, w := range r.timed() {
		if r.want(rw.id, w.name) {
			sel = append(sel, w)
		}
	}
	if len(sel) == 0 {
		return
	}
	eng, done, err := engine(sandbox.Config{Isolation: iso, PoolSize: 1})
	if err != nil {
		rw.fail(names(sel), err)
		return
	}
	defer done()
	for _, w := range sel {
		r.measure(rw, []string{w.name}, func() error {
			lat := make([]time.Duration, 0, r.cfg.workloadRuns)
			for i := 0; i < r.cfg.workloadWarmup+r.cfg.workloadRuns; i++ {
				t0 := time.Now()
				res, err := eng.Run(ctx, sandbox.Request{Code: w.code}, nil)
				if err != nil {
					return err
				}
				if i >= r.cfg.workloadWarmup {
					lat = append(lat, time.Since(t0))
				}
				if i == 0 {
					if err := r.checkResult(w.name, res.Value, true); err != nil {
						return err
					}
				}
			}
			p50, _ := percentiles(lat)
			rw.set(w.name, p50)
			return nil
		})
	}
}

func names(wls []workload) []string {
	var n []string
	for _, w := range wls {
		n = append(n, w.name)
	}
	return n
}

// sbBridge runs a step that makes n awaited data requests, each answered
// by the host with its parameters: a warm-up run of n/10, then bridgeRuns
// runs of n. It returns the median run's wall time divided by n, in
// microseconds.
func (r *runner) sbBridge(ctx context.Context, cfg sandbox.Config, lang sandbox.Language, step func(int) string) (float64, error) {
	eng, done, err := engine(cfg)
	if err != nil {
		return 0, err
	}
	defer done()
	once := func(n int) (time.Duration, error) {
		t0 := time.Now()
		s, err := eng.Submit(ctx, sandbox.Request{Language: lang, Code: step(n)})
		if err != nil {
			return 0, err
		}
		for ev := range s.Events() {
			if dr := ev.DataRequest; dr != nil {
				_ = s.Respond(dr.ID, dr.Params)
			}
		}
		res, err := s.Wait()
		if err != nil {
			return 0, err
		}
		var sum int64
		if err := json.Unmarshal(res.Value, &sum); err != nil || sum != int64(n)*int64(n-1)/2 {
			return 0, fmt.Errorf("bridge step returned %s, want %d", res.Value, int64(n)*int64(n-1)/2)
		}
		return time.Since(t0), nil
	}
	if _, err := once(max(1, r.cfg.roundTrips/10)); err != nil {
		return 0, err
	}
	var ds []time.Duration
	for range r.cfg.bridgeRuns {
		d, err := once(r.cfg.roundTrips)
		if err != nil {
			return 0, err
		}
		ds = append(ds, d)
	}
	p50, _ := percentiles(ds)
	return p50 * 1000 / float64(r.cfg.roundTrips), nil
}

// sbWorkerMemory starts an engine of one slot, makes one run so that its
// processes are up and warm, waits for their memory to settle, and returns
// the RSS of the processes it started, in MB: the JavaScript worker with
// its warm VMs, or Python's zygote and its spare child.
func (r *runner) sbWorkerMemory(ctx context.Context, cfg sandbox.Config, req sandbox.Request) (float64, string, error) {
	before := descendants(os.Getpid())
	eng, done, err := engine(cfg)
	if err != nil {
		return 0, "", err
	}
	defer done()
	if _, err := eng.Run(ctx, req, nil); err != nil {
		return 0, "", err
	}
	// JavaScript: the workers, per worker (a pool slot; a standby worker
	// is one too). Python: the zygote and the processes it keeps ready,
	// not the worker that drives them. Neither counts the pool's fork
	// server, one per engine.
	keep := func(p int) bool {
		name := procName(p)
		if req.Language == sandbox.Python {
			return name != "stepbox-worker" && name != "stepbox-forkserver"
		}
		return name == "stepbox-worker"
	}
	var pids []int
	rss := settle(ctx, func() int64 {
		pids = slices.DeleteFunc(descendants(os.Getpid()), func(p int) bool { return slices.Contains(before, p) || !keep(p) })
		var sum int64
		for _, p := range pids {
			sum += procRSS(p)
		}
		return sum
	})
	if len(pids) == 0 {
		return 0, "", errors.New("the engine started no process")
	}
	var pss int64
	for _, p := range pids {
		pss += procPSS(p)
	}
	if req.Language == sandbox.Python {
		return mb(rss), fmt.Sprintf("RSS of Python's jailed zygote and the processes it keeps ready, %d process(es), after one run; PSS %.1f MB", len(pids), mb(pss)), nil
	}
	n := int64(len(pids))
	return mb(rss / n), fmt.Sprintf("RSS of a JavaScript worker (with its default 2 warm VMs), the mean of the engine's %d worker(s) (the run's and the standby), after one run; PSS %.1f MB", n, mb(pss/n)), nil
}

// sbInProcessMemory measures the RSS an idle, bootstrapped VM adds to the
// host process: an engine with memInstances warm VMs, its RSS increase
// divided by their number. A first engine, started before the baseline,
// takes the one-time costs (code, the bootstrap's bytecode).
func (r *runner) sbInProcessMemory(ctx context.Context) (float64, string, error) {
	cfg := sandbox.Config{Isolation: sandbox.IsolationInProcess, PoolSize: 1, Warm: 1}
	first, done, err := engine(cfg)
	if err != nil {
		return 0, "", err
	}
	defer done() // open until the end: memory it frees would be reused below
	res, err := first.Run(ctx, sandbox.Request{Code: r.trivial()}, nil)
	if err != nil {
		return 0, "", err
	}
	sample := func() int64 { runtime.GC(); debug.FreeOSMemory(); return procRSS(os.Getpid()) }
	base := settle(ctx, sample)
	cfg.Warm = r.cfg.memInstances
	_, done2, err := engine(cfg)
	if err != nil {
		return 0, "", err
	}
	defer done2()
	after := settle(ctx, sample)
	n := r.cfg.memInstances
	return mb(after-base) / float64(n), fmt.Sprintf("RSS increase of the host per idle warm VM (an engine with Warm=%d, after GC); QuickJS's own count for a VM after the trivial run (Stats.HeapMB) %.0f KB", n, res.Stats.HeapMB*1024), nil
}

// settle polls sample until two readings in a row are within 1% of each
// other (at most 5 s), and returns the last.
func settle(ctx context.Context, sample func() int64) int64 {
	last := sample()
	stable := 0
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(250 * time.Millisecond)
		v := sample()
		if d := v - last; d < 0 && -d <= last/100 || d >= 0 && d <= last/100 {
			stable++
			if stable >= 2 {
				return v
			}
		} else {
			stable = 0
		}
		last = v
	}
	return last
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }
