// Command sidebyside runs the same workloads through Stepbox and through the
// engines a user would otherwise pick, in one run on one machine, and prints
// one table with each figure's ratio to Stepbox, on the terminal and to a
// markdown file.
//
//	make bench                                  # = go run ./bench/sidebyside
//	go run ./bench/sidebyside -quick            # a smoke run: fewer iterations
//	go run ./bench/sidebyside -only stepbox     # rows or measures whose key matches
//	go run ./bench/sidebyside -out /tmp/r.md    # markdown elsewhere (default bench/RESULTS.md)
//
// JavaScript: Stepbox with jailed worker processes (the default) and
// in-process, the engine under it (modernc.org/quickjs driven directly, a
// fresh VM per run: the floor, with a table of Stepbox's ratios to it),
// isolated-vm (V8 isolates) and quickjs-emscripten (QuickJS in
// WebAssembly); for a DuckDB step (10,000 rows loaded and grouped),
// DuckDB-WASM in Node, cold (an instance per run) and warm. Python:
// Stepbox's jailed CPython, `python3 -c` per run, and Pyodide in Node, cold
// (loaded per run) and warm. The Node peers are npm
// packages installed into bench/peers at run time (npm ci, the machine's
// npm configuration); a peer that cannot be installed or loaded shows as
// "unavailable: <reason>" in its row, and the Stepbox rows run regardless.
// See bench/README.md for what each column measures and how.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// config is one run's parameters: the flags, resolved.
type config struct {
	args     []string // the command line, for the report
	quick    bool
	out      string   // markdown file; "" writes none
	only     []string // filter terms; empty means everything
	root     string   // the repository root
	peersDir string
	nodedir  string // --nodedir for npm (isolated-vm's native build); "" passes none
	noPeers  bool   // skip the Node peers and python3 -c (the test's mode)

	latencyRuns      int           // trivial runs timed per JavaScript engine
	latencyWarmup    int           //
	pyLatencyRuns    int           // trivial runs timed for Stepbox Python and python3 -c
	pyodideColdRuns  int           // loadPyodide()+runPython() runs timed
	throughput       time.Duration // measured phase of each runs/s figure
	throughputWarmup time.Duration
	pyodideTput      time.Duration // Pyodide cold loads take seconds each
	workloadRuns     int           // timed runs per workload (median reported)
	workloadWarmup   int
	roundTrips       int // data requests in each measured bridge run
	bridgeRuns       int // measured bridge runs (median reported)
	memInstances     int // idle runtimes created for the memory figure
	duckRows         int // rows the DuckDB step loads
	duckRuns         int // timed DuckDB steps per row (median reported)
	duckWarmup       int
	pyodideInstances int
}

func defaults(quick bool) config {
	if quick {
		return config{
			quick: true, latencyRuns: 50, latencyWarmup: 5, pyLatencyRuns: 20, pyodideColdRuns: 2,
			throughput: 500 * time.Millisecond, throughputWarmup: 100 * time.Millisecond, pyodideTput: 2 * time.Second,
			workloadRuns: 1, workloadWarmup: 0, roundTrips: 200, bridgeRuns: 1, memInstances: 20, pyodideInstances: 1,
			duckRows: 10_000, duckRuns: 3, duckWarmup: 1,
		}
	}
	return config{
		latencyRuns: 500, latencyWarmup: 20, pyLatencyRuns: 100, pyodideColdRuns: 5,
		throughput: 3 * time.Second, throughputWarmup: 300 * time.Millisecond, pyodideTput: 6 * time.Second,
		workloadRuns: 3, workloadWarmup: 1, roundTrips: 2000, bridgeRuns: 3, memInstances: 50, pyodideInstances: 3,
		duckRows: 10_000, duckRuns: 10, duckWarmup: 3,
	}
}

func main() {
	quick := flag.Bool("quick", false, "a smoke run: fewer iterations and shorter phases")
	out := flag.String("out", "", "markdown file to write (default bench/RESULTS.md in the repository; \"-\" for none)")
	only := flag.String("only", "", "comma-separated terms; run only the measures whose key ROW/MEASURE contains one\n(rows: stepbox-process, stepbox-inprocess, quickjs-raw, isolated-vm, quickjs-emscripten,\nduckdb-wasm, duckdb-wasm-warm, stepbox-python, python3, pyodide, pyodide-warm; measures:\nlatency, throughput, the workload names, duckdb10k, bridge, memory)")
	nodedir := flag.String("nodedir", "auto", "--nodedir passed to npm for isolated-vm's native build: auto means /usr when\n/usr/include/node/node.h exists (Debian's node headers; node-gyp cannot download them offline)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "sidebyside: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(2)
	}
	cfg := defaults(*quick)
	cfg.args = os.Args[1:]
	cfg.root = root
	cfg.peersDir = filepath.Join(root, "bench", "peers")
	switch *out {
	case "":
		cfg.out = filepath.Join(root, "bench", "RESULTS.md")
	case "-":
	default:
		cfg.out = *out
	}
	cfg.only = splitTerms(*only)
	cfg.nodedir = *nodedir
	if cfg.nodedir == "auto" {
		cfg.nodedir = ""
		if _, err := os.Stat("/usr/include/node/node.h"); err == nil {
			cfg.nodedir = "/usr"
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

func splitTerms(s string) []string {
	var terms []string
	for _, t := range strings.Split(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			terms = append(terms, t)
		}
	}
	return terms
}

// repoRoot is the nearest directory at or above the working directory
// holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the repository (no go.mod above the working directory)")
		}
		dir = parent
	}
}

// run measures every selected row, then prints the report to stdout and
// writes it to cfg.out. Progress goes to progress. Failures of a measure
// become cells of the table; run returns an error only when there is
// nothing to report.
func run(ctx context.Context, cfg config, stdout, progress io.Writer) error {
	r := &runner{cfg: cfg, log: func(format string, a ...any) { fmt.Fprintf(progress, format+"\n", a...) }}
	wls, err := readWorkloads(filepath.Join(cfg.root, "bench", "workloads"))
	if err != nil {
		return err
	}
	r.workloads = wls
	start := time.Now()
	env := machine(ctx, cfg.root, !cfg.noPeers)

	rows := r.all(ctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	rep := report{cfg: cfg, env: env, rows: rows, workloads: wls, took: time.Since(start) - r.install, install: r.install, loadAfter: loadavg()}
	text := rep.markdown()
	if _, err := io.WriteString(stdout, rep.terminal()); err != nil {
		return err
	}
	if cfg.out != "" {
		if err := os.WriteFile(cfg.out, []byte(text), 0o644); err != nil {
			return err
		}
		r.log("wrote %s", cfg.out)
	}
	return nil
}
