package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
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
			"quickjs-raw/latency", "quickjs-raw/throughput", "quickjs-raw/transform", "quickjs-raw/bridge"},
		latencyRuns: 5, latencyWarmup: 1, pyLatencyRuns: 2, pyodideColdRuns: 1,
		throughput: 100 * time.Millisecond, throughputWarmup: 20 * time.Millisecond, pyodideTput: 100 * time.Millisecond,
		workloadRuns: 1, roundTrips: 20, bridgeRuns: 1, memInstances: 3, pyodideInstances: 1,
	}

	var stdout bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, cfg, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	got := stdout.String()
	for _, want := range []string{"| engine", "trivial p50", "runs/s", "transform", "data round trip", "idle memory", "| Stepbox, in-process", "| Stepbox, process", "× Stepbox",
		"| modernc.org/quickjs", "| Stepbox ÷ engine", "Goals (issue 16)", "Stepbox, in-process, runs/s ≥ 0.9x the engine's: "} {
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
