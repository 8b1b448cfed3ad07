package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"modernc.org/quickjs"
)

// The engine floor: modernc.org/quickjs, the engine under Stepbox, driven
// directly in this process with nothing of Stepbox around it. Each run
// gets a VM of its own (quickjs.NewVM, closed after the run), as each
// Stepbox run gets a VM no earlier run touched; the step is the body of an
// async function, as in Stepbox, and its value comes back as JSON text.

const floorID = "quickjs-raw"

// rawRun runs one step in a fresh VM and returns its value as JSON. host,
// if set, answers dataProxy.request synchronously (a Go function the step
// awaits).
func rawRun(code string, host quickjs.HostFunc) (json.RawMessage, error) {
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, err
	}
	defer vm.Close()
	vm.SetMemoryLimit(uintptr(benchPlan["default"].MemoryMB) << 20)
	prelude := ""
	if host != nil {
		if err := vm.RegisterHostFunc("__request", host); err != nil {
			return nil, err
		}
		prelude = "globalThis.dataProxy = { request: (m, p) => __request(m, p) };\n"
	}
	if _, err := vm.Eval(prelude+"globalThis.__out = undefined; globalThis.__err = undefined;\n(async () => {\n"+code+
		"\n})().then(v => { __out = JSON.stringify(v) }, e => { __err = String(e) });", quickjs.EvalGlobal); err != nil {
		return nil, err
	}
	for {
		n, err := vm.ExecutePendingJobs()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
	}
	v, err := vm.Eval(`__err === undefined ? (__out === undefined ? "undefined" : "=" + __out) : "!" + __err`, quickjs.EvalGlobal)
	if err != nil {
		return nil, err
	}
	s, _ := v.(string)
	switch {
	case len(s) > 0 && s[0] == '=':
		return json.RawMessage(s[1:]), nil
	case len(s) > 0 && s[0] == '!':
		return nil, errors.New(s[1:])
	}
	return nil, fmt.Errorf("the step did not settle (%q)", s)
}

// floor measures the raw engine's row: the same columns as Stepbox's
// JavaScript rows, the same workloads, in this process.
func (r *runner) floor(ctx context.Context) *row {
	rw := newRow(floorID, "js", "modernc.org/quickjs "+moduleVersion("modernc.org/quickjs")+", raw",
		"the engine under Stepbox, driven directly from Go in this process: quickjs.NewVM + Eval + ExecutePendingJobs + Close per run")
	trivial := r.trivial()
	if r.want(floorID, colMemory) {
		r.measure(rw, []string{colMemory}, func() error {
			// One VM first: the one-time costs (the engine's code, its
			// allocator's arenas) are not a VM's.
			if _, err := rawRun(trivial, nil); err != nil {
				return err
			}
			sample := func() int64 { runtime.GC(); debug.FreeOSMemory(); return procRSS(os.Getpid()) }
			base := settle(ctx, sample)
			n := r.cfg.memInstances
			vms := make([]*quickjs.VM, 0, n)
			defer func() {
				for _, vm := range vms {
					vm.Close()
				}
			}()
			for range n {
				vm, err := quickjs.NewVM()
				if err != nil {
					return err
				}
				vms = append(vms, vm)
				if _, err := vm.Eval("1 + 1", quickjs.EvalGlobal); err != nil {
					return err
				}
			}
			rw.set(colMemory, mb(settle(ctx, sample)-base)/float64(n))
			rw.notef("memory: RSS increase of this process per idle VM (%d VMs, one evaluation each, after GC)", n)
			return nil
		})
	}
	if cols := r.wants(floorID, colP50, colP99); len(cols) > 0 {
		r.measure(rw, cols, func() error {
			lat := make([]time.Duration, 0, r.cfg.latencyRuns)
			for i := 0; i < r.cfg.latencyWarmup+r.cfg.latencyRuns; i++ {
				t0 := time.Now()
				v, err := rawRun(trivial, nil)
				if err != nil {
					return err
				}
				if i >= r.cfg.latencyWarmup {
					lat = append(lat, time.Since(t0))
				}
				if i == 0 {
					if err := r.checkResult("trivial", v, false); err != nil {
						return err
					}
				}
			}
			p50, p99 := percentiles(lat)
			rw.set(colP50, p50)
			rw.set(colP99, p99)
			return nil
		})
	}
	if r.want(floorID, colTput) {
		r.measure(rw, []string{colTput}, func() error {
			threads := runtime.NumCPU()
			run := func() error { _, err := rawRun(trivial, nil); return err }
			if _, _, err := hammer(ctx, r.cfg.throughputWarmup, threads, run); err != nil {
				return err
			}
			n, elapsed, err := hammer(ctx, r.cfg.throughput, threads, run)
			if err != nil {
				return err
			}
			rw.set(colTput, float64(n)/elapsed.Seconds())
			rw.notef("runs/s: %d goroutines, one run each at a time (Stepbox: a slot per CPU, %d runs in flight)", threads, clients())
			return nil
		})
	}
	for _, w := range r.timed() {
		if !r.want(floorID, w.name) {
			continue
		}
		r.measure(rw, []string{w.name}, func() error {
			lat := make([]time.Duration, 0, r.cfg.workloadRuns)
			for i := 0; i < r.cfg.workloadWarmup+r.cfg.workloadRuns; i++ {
				t0 := time.Now()
				v, err := rawRun(w.code, nil)
				if err != nil {
					return err
				}
				if i >= r.cfg.workloadWarmup {
					lat = append(lat, time.Since(t0))
				}
				if i == 0 {
					if err := r.checkResult(w.name, v, false); err != nil {
						return err
					}
				}
			}
			p50, _ := percentiles(lat)
			rw.set(w.name, p50)
			return nil
		})
	}
	if r.want(floorID, colBridge) {
		r.measure(rw, []string{colBridge}, func() error {
			host := func(args []any) (any, error) {
				if len(args) != 2 {
					return nil, errors.New("request: want method and params")
				}
				return args[1], nil
			}
			once := func(n int) (time.Duration, error) {
				t0 := time.Now()
				v, err := rawRun(jsBridgeStep(n), host)
				if err != nil {
					return 0, err
				}
				if want := fmt.Sprint(n * (n - 1) / 2); string(v) != want {
					return 0, fmt.Errorf("the bridge step returned %s, want %s", v, want)
				}
				return time.Since(t0), nil
			}
			if _, err := once(r.cfg.roundTrips / 10); err != nil {
				return err
			}
			lat := make([]time.Duration, 0, r.cfg.bridgeRuns)
			for range r.cfg.bridgeRuns {
				d, err := once(r.cfg.roundTrips)
				if err != nil {
					return err
				}
				lat = append(lat, d)
			}
			p50, _ := percentiles(lat)
			rw.set(colBridge, p50*1000/float64(r.cfg.roundTrips))
			rw.notef("bridge: a synchronous Go host function (RegisterHostFunc) that the step awaits, returning the parameters")
			return nil
		})
	}
	return rw
}

// moduleVersion is the version of module path this binary was built with.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}
