package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestStepboxRows runs the harness in a very short mode, Stepbox rows only
// (no npm, no Node, no Python), and checks that it produces the table and
// the markdown file.
func TestStepboxRows(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "RESULTS.md")
	cfg := config{
		args: []string{"(test)"}, root: root, peersDir: filepath.Join(root, "bench", "peers"), out: out, noPeers: true,
		// The heavier workloads take seconds under the race detector:
		// transform, the shortest, stands for them.
		only: []string{"stepbox-process/latency", "stepbox-inprocess/latency", "stepbox-inprocess/throughput",
			"stepbox-inprocess/transform", "stepbox-inprocess/bridge", "stepbox-inprocess/memory",
			"quickjs-raw/latency", "quickjs-raw/throughput", "quickjs-raw/transform", "quickjs-raw/bridge",
			"stepbox-inprocess/duckdb10k"},
		latencyRuns: 5, latencyWarmup: 1, pyLatencyRuns: 2, pyodideColdRuns: 1,
		throughput: 100 * time.Millisecond, throughputWarmup: 20 * time.Millisecond, pyodideTput: 100 * time.Millisecond,
		workloadRuns: 1, roundTrips: 20, bridgeRuns: 1, memInstances: 3, pyodideInstances: 1,
		duckRows: 1_000, duckRuns: 1,
	}

	var stdout bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, cfg, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	got := stdout.String()
	for _, want := range []string{"| engine", "trivial p50", "runs/s", "transform", "data round trip", "idle memory", "| Stepbox, in-process", "| Stepbox, process", "× Stepbox",
		"| modernc.org/quickjs", "| Stepbox ÷ engine", "Goals (issue 16)", "Stepbox, in-process, runs/s ≥ 0.9x the engine's: ",
		"DuckDB 10k rows"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| fib") || strings.Contains(got, "isolated-vm") {
		t.Errorf("output has rows or columns -only excluded:\n%s", got)
	}
	// The in-process row must have measured, not failed: its cells are
	// figures. (The process row may fail where the jail is refused.)
	for _, l := range strings.Split(got, "\n") {
		if (strings.HasPrefix(l, "| Stepbox, in-process") || strings.HasPrefix(l, "| modernc.org/quickjs")) && strings.Contains(l, "error") {
			t.Errorf("in-process row failed:\n%s", got)
		}
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "# Stepbox side by side") || !strings.Contains(string(md), "| Stepbox, in-process") {
		t.Errorf("markdown file:\n%s", md)
	}
}

// TestOnly checks which rows and measures -only selects: the DuckDB step
// is a measure of Stepbox's JavaScript rows and DuckDB-WASM's only, and
// DuckDB-WASM's rows have no other.
func TestOnly(t *testing.T) {
	for _, c := range []struct {
		only    []string
		id, col string
		want    bool
	}{
		{nil, "stepbox-process", colDuck, true},
		{nil, "stepbox-inprocess", colDuck, true},
		{nil, "duckdb-wasm", colDuck, true},
		{nil, "duckdb-wasm-warm", colDuck, true},
		{nil, "duckdb-wasm", colP50, false},
		{nil, "duckdb-wasm-warm", colMemory, false},
		{nil, "isolated-vm", colDuck, false},
		{nil, "quickjs-raw", colDuck, false},
		{nil, "stepbox-python", colDuck, false},
		{nil, "isolated-vm", colP50, true},
		{[]string{"duckdb10k"}, "stepbox-process", colDuck, true},
		{[]string{"duckdb10k"}, "stepbox-process", colP50, false},
		{[]string{"duckdb10k"}, "duckdb-wasm-warm", colDuck, true},
		{[]string{"duckdb-wasm"}, "duckdb-wasm-warm", colDuck, true},
		{[]string{"duckdb-wasm"}, "stepbox-process", colDuck, false},
		{[]string{"stepbox"}, "stepbox-inprocess", colDuck, true},
		{[]string{"memory"}, "duckdb-wasm", colDuck, false},
	} {
		r := &runner{cfg: config{only: c.only}}
		if got := r.want(c.id, c.col); got != c.want {
			t.Errorf("-only %v: want(%s, %s) = %v, want %v", c.only, c.id, c.col, got, c.want)
		}
	}
	r := &runner{cfg: config{only: []string{"duckdb10k"}}}
	for id, want := range map[string]bool{"stepbox-process": true, "stepbox-inprocess": true, "duckdb-wasm": true, "duckdb-wasm-warm": true,
		"isolated-vm": false, "quickjs-emscripten": false, "quickjs-raw": false, "pyodide": false, "stepbox-python": false, "python3": false} {
		if got := r.any(id); got != want {
			t.Errorf("-only duckdb10k: any(%s) = %v, want %v", id, got, want)
		}
	}
}

// TestCheckDuck checks the DuckDB step's result check, which every row's
// figure depends on: the answer computed from the rows passes, a wrong
// count, region, order or total does not, and totals may differ in their
// last bits.
func TestCheckDuck(t *testing.T) {
	want := duckWant(10_000)
	if len(want) != 5 || want[0].N != 500 {
		t.Fatalf("duckWant(10000) = %v", want)
	}
	enc := func(g []duckGroup) json.RawMessage { b, _ := json.Marshal(g); return b }
	if err := checkDuck(10_000, enc(want)); err != nil {
		t.Errorf("the computed answer: %v", err)
	}
	near := slices.Clone(want)
	near[0].Total = math.Nextafter(near[0].Total, math.Inf(1))
	if err := checkDuck(10_000, enc(near)); err != nil {
		t.Errorf("a total one ulp off: %v", err)
	}
	for name, mutate := range map[string]func([]duckGroup) []duckGroup{
		"count":  func(g []duckGroup) []duckGroup { g[1].N++; return g },
		"region": func(g []duckGroup) []duckGroup { g[2].Region = "r99"; return g },
		"order":  func(g []duckGroup) []duckGroup { g[0], g[1] = g[1], g[0]; return g },
		"total":  func(g []duckGroup) []duckGroup { g[4].Total += 0.1; return g },
		"short":  func(g []duckGroup) []duckGroup { return g[:4] },
	} {
		if err := checkDuck(10_000, enc(mutate(slices.Clone(want)))); err == nil {
			t.Errorf("a wrong %s passed", name)
		}
	}
	if err := checkDuck(10_000, json.RawMessage(`{"error": "x"}`)); err == nil || !strings.Contains(err.Error(), "want an array") {
		t.Errorf("an object: %v", err)
	}
}
