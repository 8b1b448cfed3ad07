package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// A peer is an engine run by a Node script in bench/peers.
type peer struct {
	id, group, name, how string
	suffix               string   // after the name and version: ", cold", ", warm"
	pkg                  string   // npm package: its version goes into the name
	script               string   // file in bench/peers
	flags                []string // node's own flags
	latency, throughput  string   // the script's measures for those columns
	duck                 string   // the script's measure for the DuckDB step (duck.go)
	workloads            bool     // runs bench/workloads
	bridge, memory       bool
	python               bool // the trivial step is Python's
	cold                 bool // a run loads the whole interpreter: few runs
	minInstances         int  // at least this many runtimes for the memory figure
}

var (
	ivmPeer = peer{
		id: "isolated-vm", group: "js", name: "isolated-vm", pkg: "isolated-vm", script: "isolated-vm.mjs",
		how:   "a new V8 Isolate + Context per run, disposed after it (async API)",
		flags: []string{"--no-node-snapshot", "--expose-gc"}, latency: "latency", throughput: "throughput",
		workloads: true, bridge: true, memory: true,
	}
	qjsPeer = peer{
		id: "quickjs-emscripten", group: "js", name: "quickjs-emscripten", pkg: "quickjs-emscripten", script: "quickjs-emscripten.mjs",
		how:   "a new QuickJS runtime + context per run in the WebAssembly module loaded once per thread",
		flags: []string{"--expose-gc"}, latency: "latency", throughput: "throughput",
		workloads: true, bridge: true, memory: true,
		// The module's initial 16 MB of memory is resident from the start:
		// enough runtimes to outgrow it, or their RSS would not show.
		minInstances: 600,
	}
	pyodidePeer = peer{
		id: "pyodide", group: "python", name: "Pyodide", suffix: ", cold", pkg: "pyodide", script: "pyodide.mjs",
		how:   "loadPyodide() + runPython() per run, in Node, from the npm package's files (no CDN)",
		flags: []string{"--expose-gc"}, latency: "latency", throughput: "throughput",
		bridge: true, memory: true, python: true, cold: true,
	}
	pyodideWarmPeer = peer{
		id: "pyodide-warm", group: "python", name: "Pyodide", suffix: ", warm", pkg: "pyodide", script: "pyodide.mjs",
		how:   "runPython() on one already loaded interpreter: runs share its state, no isolation between them",
		flags: []string{"--expose-gc"}, latency: "warm-latency", throughput: "warm-throughput", python: true,
	}
)

// nodeOut is a Node script's answer: one JSON line, the fields of the
// measure it ran.
type nodeOut struct {
	Version   string          `json:"version"`
	Error     string          `json:"error"`
	P50       float64         `json:"p50_ms"`
	P99       float64         `json:"p99_ms"`
	N         int             `json:"n"`
	Result    json.RawMessage `json:"result"`
	RunsPerS  float64         `json:"runs_per_s"`
	Runs      int             `json:"runs"`
	Workloads map[string]struct {
		Ms     float64         `json:"ms"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	} `json:"workloads"`
	US        float64            `json:"us_per_roundtrip"`
	All       map[string]float64 `json:"all"`
	Bytes     float64            `json:"bytes_per_instance"`
	Instances int                `json:"instances"`
	How       string             `json:"how"`
}

// node runs `node FLAGS SCRIPT MEASURE PARAMS` in bench/peers and decodes
// the JSON line it prints.
func (r *runner) node(ctx context.Context, p peer, measure string, params any) (*nodeOut, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	pj, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	args := append(append([]string{}, p.flags...), p.script, measure, string(pj))
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = r.cfg.peersDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var out nodeOut
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil {
		if runErr == nil {
			runErr = fmt.Errorf("no JSON answer: %q", lines[len(lines)-1])
		}
		return nil, fmt.Errorf("node %s %s: %v: %s", p.script, measure, runErr, lastLines(stderr.String(), 3))
	}
	if out.Error != "" {
		return nil, errors.New(out.Error)
	}
	return &out, nil
}

// nodePeer measures one peer row through its Node script.
func (r *runner) nodePeer(ctx context.Context, p peer) *row {
	rw := newRow(p.id, p.group, p.name+p.suffix, p.how)
	if r.peersErr != nil {
		r.unavailable(rw, r.peersErr.Error())
		return rw
	}
	info, err := r.node(ctx, p, "info", nil)
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "Cannot find") {
			msg += " (npm did not install it: see bench/peers/npm-install.log, or delete bench/peers/node_modules to reinstall)"
		}
		r.unavailable(rw, "cannot load "+p.pkg+": "+msg)
		return rw
	}
	rw.name = strings.Replace(rw.name, p.name, p.name+" "+info.Version, 1)

	trivial := r.trivial()
	if p.python {
		trivial = "1 + 1"
	}
	if cols := r.wants(p.id, colP50, colP99); len(cols) > 0 {
		runs, warmup := r.cfg.latencyRuns, r.cfg.latencyWarmup
		if p.cold {
			runs, warmup = r.cfg.pyodideColdRuns, min(1, r.cfg.latencyWarmup)
			if r.cfg.quick {
				warmup = 0
			}
		}
		r.measure(rw, cols, func() error {
			out, err := r.node(ctx, p, p.latency, map[string]any{"code": trivial, "runs": runs, "warmup": warmup})
			if err != nil {
				return err
			}
			if err := r.checkResult("trivial", out.Result, false); err != nil {
				return err
			}
			rw.set(colP50, out.P50)
			rw.set(colP99, out.P99)
			rw.notef("latency: %s", out.How)
			return nil
		})
	}
	if r.want(p.id, colTput) {
		secs := r.cfg.throughput.Seconds()
		if p.cold {
			secs = r.cfg.pyodideTput.Seconds()
		}
		r.measure(rw, []string{colTput}, func() error {
			out, err := r.node(ctx, p, p.throughput, map[string]any{"code": trivial, "seconds": secs, "concurrency": clients()})
			if err != nil {
				return err
			}
			rw.set(colTput, out.RunsPerS)
			rw.notef("runs/s: %s; %d runs counted", out.How, out.Runs)
			return nil
		})
	}
	if p.workloads {
		r.peerWorkloads(ctx, p, rw)
	} else {
		for _, w := range r.timed() {
			if r.want(p.id, w.name) {
				rw.cells[w.name] = &cell{err: "—"}
			}
		}
	}
	r.peerDuckDB(ctx, p, rw)
	if r.want(p.id, colBridge) && p.bridge {
		r.measure(rw, []string{colBridge}, func() error {
			out, err := r.node(ctx, p, "bridge", map[string]any{"n": r.cfg.roundTrips, "runs": r.cfg.bridgeRuns})
			if err != nil {
				return err
			}
			rw.set(colBridge, out.US)
			how := out.How
			if len(out.All) > 1 {
				var alt []string
				for k, v := range out.All {
					if k != out.How {
						alt = append(alt, fmt.Sprintf("%s %.1f µs", k, v))
					}
				}
				how += " (the faster; also measured: " + strings.Join(alt, ", ") + ")"
			}
			rw.notef("bridge: %s", how)
			return nil
		})
	}
	if r.want(p.id, colMemory) && p.memory {
		n := max(r.cfg.memInstances, p.minInstances)
		if p.cold {
			n = r.cfg.pyodideInstances
		}
		r.measure(rw, []string{colMemory}, func() error {
			out, err := r.node(ctx, p, "memory", map[string]any{"instances": n})
			if err != nil {
				return err
			}
			rw.set(colMemory, out.Bytes/(1<<20))
			rw.notef("memory: %s", out.How)
			return nil
		})
	}
	return rw
}

func (r *runner) peerWorkloads(ctx context.Context, p peer, rw *row) {
	sel := map[string]string{}
	var cols []string
	for _, w := range r.timed() {
		if r.want(p.id, w.name) {
			sel[w.name] = w.code
			cols = append(cols, w.name)
		}
	}
	if len(sel) == 0 {
		return
	}
	r.measure(rw, cols, func() error {
		out, err := r.node(ctx, p, "workloads", map[string]any{"workloads": sel, "runs": r.cfg.workloadRuns, "warmup": r.cfg.workloadWarmup})
		if err != nil {
			return err
		}
		for _, c := range cols {
			w, ok := out.Workloads[c]
			if !ok {
				rw.fail([]string{c}, errors.New("no figure"))
				continue
			}
			if w.Error != "" {
				rw.fail([]string{c}, errors.New(w.Error))
				continue
			}
			if err := r.checkResult(c, w.Result, false); err != nil {
				rw.fail([]string{c}, err)
				continue
			}
			rw.set(c, w.Ms)
		}
		return nil
	})
}

// installPeers installs bench/peers' packages with the machine's npm (its
// configuration decides the registry) unless a finished install is there.
// With a lock file it runs npm ci, which installs exactly the locked
// versions. The peers are optional dependencies, so one that fails to
// build (isolated-vm compiles a native addon) leaves the others installed.
func (r *runner) installPeers(ctx context.Context) error {
	dir := r.cfg.peersDir
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("node is not installed: %w", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("npm is not installed: %w", err)
	}
	if installed(dir) {
		return nil
	}
	args := []string{"install"}
	if _, err := os.Stat(filepath.Join(dir, "package-lock.json")); err == nil {
		args = []string{"ci"}
	}
	args = append(args, "--no-audit", "--no-fund")
	if r.cfg.nodedir != "" {
		args = append(args, "--nodedir="+r.cfg.nodedir)
	}
	logPath := filepath.Join(dir, "npm-install.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	r.log("installing the peers: npm %s in %s (a few minutes: isolated-vm compiles V8 bindings; log in %s)", strings.Join(args, " "), dir, logPath)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(logPath)
		return fmt.Errorf("npm %s failed (%v): %s (full log: bench/peers/npm-install.log)", args[0], err, lastLines(string(b), 2))
	}
	r.log("installed in %s", time.Since(t0).Round(time.Second))
	return nil
}

// installed says whether node_modules holds a finished install at least as
// new as package.json and package-lock.json.
func installed(dir string) bool {
	done, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if err != nil {
		return false
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil && st.ModTime().After(done.ModTime()) {
			return false
		}
	}
	return true
}

func lastLines(s string, n int) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, " | ")
}
