package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// python3 measures `python3 -c` per run: a new interpreter process for
// every run, no jail, no bridge. It is the cold start a user gets without
// a zygote.
func (r *runner) python3(ctx context.Context) *row {
	const id = "python3"
	py := pythonPath()
	rw := newRow(id, "python", "python3 -c", fmt.Sprintf("`%s -c \"print(1 + 1)\"` per run: a new, unjailed interpreter process", py))
	if _, err := exec.LookPath(py); err != nil {
		r.unavailable(rw, "no python3: "+err.Error())
		return rw
	}
	once := func() error {
		out, err := exec.CommandContext(ctx, py, "-c", "print(1 + 1)").Output()
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(out)) != "2" {
			return fmt.Errorf("python3 -c printed %q, want 2", out)
		}
		return nil
	}
	if cols := r.wants(id, colP50, colP99); len(cols) > 0 {
		r.measure(rw, cols, func() error {
			var lat []time.Duration
			for i := 0; i < 3+r.cfg.pyLatencyRuns; i++ {
				t0 := time.Now()
				if err := once(); err != nil {
					return err
				}
				if i >= 3 {
					lat = append(lat, time.Since(t0))
				}
			}
			p50, p99 := percentiles(lat)
			rw.set(colP50, p50)
			rw.set(colP99, p99)
			return nil
		})
	}
	if r.want(id, colTput) {
		r.measure(rw, []string{colTput}, func() error {
			n, elapsed, err := hammer(ctx, r.cfg.throughput, clients(), once)
			rw.set(colTput, float64(n)/elapsed.Seconds())
			rw.notef("runs/s: %d processes at a time", clients())
			return err
		})
	}
	if r.want(id, colBridge) {
		rw.cells[colBridge] = &cell{err: "none"}
		rw.notef("bridge: none; a process per run has no host API (a pipe protocol would have to be written)")
	}
	if r.want(id, colMemory) {
		r.measure(rw, []string{colMemory}, func() error {
			v, pss, err := idlePython(ctx, py)
			rw.set(colMemory, v)
			rw.notef("memory: RSS of an idle interpreter (`python3 -c` blocked reading stdin, nothing imported beyond startup); PSS %.1f MB", pss)
			return err
		})
	}
	return rw
}

// idlePython returns the RSS and PSS, in MB, of an interpreter waiting on
// stdin.
func idlePython(ctx context.Context, py string) (rss, pss float64, err error) {
	cmd := exec.CommandContext(ctx, py, "-c", "import sys; print('ready', flush=True); sys.stdin.read()")
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		return 0, 0, fmt.Errorf("python3 did not start: %q %v", line, err)
	}
	b := settle(ctx, func() int64 { return procRSS(cmd.Process.Pid) })
	if b == 0 {
		return 0, 0, errors.New("cannot read the interpreter's RSS")
	}
	return mb(b), mb(procPSS(cmd.Process.Pid)), nil
}
