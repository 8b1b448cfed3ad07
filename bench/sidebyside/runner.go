package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Column keys: the measures of the table, in order (the workload columns
// come from bench/workloads and sit between throughput and bridge).
const (
	colP50    = "p50"
	colP99    = "p99"
	colTput   = "runs/s"
	colBridge = "bridge"
	colMemory = "memory"
	colDuck   = "duckdb10k" // a DuckDB step: load rows, GROUP BY (duck.go)
)

// filterKey is the measure name a column answers to in -only.
func filterKey(col string) string {
	switch col {
	case colP50, colP99:
		return "latency"
	case colTput:
		return "throughput"
	}
	return col
}

// A row is one engine (or one way of running it) and its measured cells.
type row struct {
	id          string // -only key
	group       string // "js" or "python": the Stepbox row its ratios refer to
	name        string // shown in the table
	how         string // one line: what a run is, for the legend
	unavailable string // set when the engine could not be installed or loaded
	cells       map[string]*cell
	notes       []string // method details
	errs        []string // failed measures, in full
}

// A cell is one measured figure, or why there is none.
type cell struct {
	v   float64 // in the column's unit
	err string  // short text shown instead of v
}

func newRow(id, group, name, how string) *row {
	return &row{id: id, group: group, name: name, how: how, cells: map[string]*cell{}}
}

func (rw *row) set(col string, v float64) { rw.cells[col] = &cell{v: v} }

// fail records a measure's error: short in the cell, in full in the notes.
func (rw *row) fail(cols []string, err error) {
	msg := strings.TrimSpace(err.Error())
	for _, c := range cols {
		rw.cells[c] = &cell{err: "error"}
	}
	rw.errs = append(rw.errs, fmt.Sprintf("%s: %s", strings.Join(cols, ", "), msg))
}

// unavailable marks a row whose engine cannot run, keeping the columns
// selected for it in the table.
func (r *runner) unavailable(rw *row, reason string) {
	rw.unavailable = reason
	for _, c := range r.wants(rw.id, r.allColumns()...) {
		rw.cells[c] = &cell{}
	}
}

func (rw *row) notef(format string, a ...any) { rw.notes = append(rw.notes, fmt.Sprintf(format, a...)) }

// workload is one file of bench/workloads: the body of a step.
type workload struct {
	name string
	code string
}

func readWorkloads(dir string) ([]workload, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.js"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no workloads in %s", dir)
	}
	slices.Sort(files)
	var wls []workload
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		wls = append(wls, workload{name: strings.TrimSuffix(filepath.Base(f), ".js"), code: string(b)})
	}
	if !slices.ContainsFunc(wls, func(w workload) bool { return w.name == "trivial" }) {
		return nil, fmt.Errorf("%s has no trivial.js, the step of the latency and throughput columns", dir)
	}
	return wls, nil
}

// trivial is the step of the latency and throughput columns.
func (r *runner) trivial() string {
	for _, w := range r.workloads {
		if w.name == "trivial" {
			return w.code
		}
	}
	return "return 1 + 1;"
}

// timed are the workloads with a column of their own: all but trivial,
// whose time is the latency column.
func (r *runner) timed() []workload {
	return slices.DeleteFunc(slices.Clone(r.workloads), func(w workload) bool { return w.name == "trivial" })
}

// The Python counterparts of the trivial and bridge steps.
const pyTrivial = "return 1 + 1"

func pyBridgeStep(n int) string {
	return fmt.Sprintf("s = 0\nfor i in range(%d):\n    s += await data_proxy.request(\"get\", i)\nreturn s", n)
}

func jsBridgeStep(n int) string {
	return fmt.Sprintf("let s = 0;\nfor (let i = 0; i < %d; i++) s += await dataProxy.request(\"get\", i);\nreturn s;", n)
}

// runner measures the rows.
type runner struct {
	cfg       config
	log       func(format string, a ...any)
	workloads []workload

	mu       sync.Mutex
	stepbox  map[string]json.RawMessage // workload results Stepbox returned, the reference for peers
	peersErr error                      // why the Node peers could not be installed
	install  time.Duration              // how long installing them took
}

// want says whether the measure col of row id is selected by -only (and
// the row has that measure at all).
func (r *runner) want(id, col string) bool {
	if !hasColumn(id, col) {
		return false
	}
	if len(r.cfg.only) == 0 {
		return true
	}
	key := id + "/" + filterKey(col)
	for _, t := range r.cfg.only {
		if strings.Contains(key, t) {
			return true
		}
	}
	return false
}

// wants returns the selected columns of row id among cols.
func (r *runner) wants(id string, cols ...string) []string {
	var sel []string
	for _, c := range cols {
		if r.want(id, c) {
			sel = append(sel, c)
		}
	}
	return sel
}

// allColumns are the table's columns, in order.
func (r *runner) allColumns() []string {
	cols := []string{colP50, colP99, colTput}
	for _, w := range r.timed() {
		cols = append(cols, w.name)
	}
	return append(cols, colDuck, colBridge, colMemory)
}

// hasColumn says whether row id has a measure for col: the DuckDB step
// runs only in Stepbox's JavaScript rows and DuckDB-WASM's, which have no
// other measure.
func hasColumn(id, col string) bool {
	if isDuckPeer(id) {
		return col == colDuck
	}
	return col != colDuck || id == "stepbox-process" || id == "stepbox-inprocess"
}

// any says whether any measure of row id is selected.
func (r *runner) any(id string) bool { return len(r.wants(id, r.allColumns()...)) > 0 }

// all measures every selected row, Stepbox first. The Node peers are
// installed before anything is measured, so that npm does not compete
// with the measurements.
func (r *runner) all(ctx context.Context) []*row {
	nodeRows := []string{"isolated-vm", "quickjs-emscripten", duckPeer.id, duckWarmPeer.id, "pyodide", "pyodide-warm"}
	if !r.cfg.noPeers && slices.ContainsFunc(nodeRows, r.any) {
		t0 := time.Now()
		r.peersErr = r.installPeers(ctx)
		r.install = time.Since(t0)
		if r.peersErr != nil {
			r.log("peers unavailable: %v", r.peersErr)
		}
	}
	type step struct {
		id  string
		run func(context.Context) *row
	}
	// In display order, but for the first two: the in-process row's memory
	// figure wants a host process that has not run JavaScript yet.
	steps := []step{
		{"stepbox-inprocess", func(ctx context.Context) *row { return r.stepboxJS(ctx, "stepbox-inprocess") }},
		{"stepbox-process", func(ctx context.Context) *row { return r.stepboxJS(ctx, "stepbox-process") }},
		{floorID, r.floor},
		{"isolated-vm", func(ctx context.Context) *row { return r.nodePeer(ctx, ivmPeer) }},
		{"quickjs-emscripten", func(ctx context.Context) *row { return r.nodePeer(ctx, qjsPeer) }},
		{duckPeer.id, func(ctx context.Context) *row { return r.nodePeer(ctx, duckPeer) }},
		{duckWarmPeer.id, func(ctx context.Context) *row { return r.nodePeer(ctx, duckWarmPeer) }},
		{"stepbox-python", r.stepboxPython},
		{"python3", r.python3},
		{"pyodide", func(ctx context.Context) *row { return r.nodePeer(ctx, pyodidePeer) }},
		{"pyodide-warm", func(ctx context.Context) *row { return r.nodePeer(ctx, pyodideWarmPeer) }},
	}
	var rows []*row
	for _, s := range steps {
		if ctx.Err() != nil {
			break
		}
		if !r.any(s.id) {
			continue
		}
		if r.cfg.noPeers && !strings.HasPrefix(s.id, "stepbox") && s.id != floorID {
			continue
		}
		r.log("== %s", s.id)
		rows = append(rows, s.run(ctx))
	}
	if len(rows) >= 2 && rows[0].id == "stepbox-inprocess" && rows[1].id == "stepbox-process" {
		rows[0], rows[1] = rows[1], rows[0]
	}
	return rows
}

// checkResult verifies a workload's result: the values bench/workloads
// documents, and for peers the value Stepbox returned.
func (r *runner) checkResult(name string, got json.RawMessage, isStepbox bool) error {
	if err := expected(name, got); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stepbox == nil {
		r.stepbox = map[string]json.RawMessage{}
	}
	ref, ok := r.stepbox[name]
	if isStepbox {
		if !ok {
			r.stepbox[name] = canonical(got)
		}
		return nil
	}
	if ok && !bytes.Equal(canonical(got), ref) {
		return fmt.Errorf("result %s differs from Stepbox's %s", canonical(got), ref)
	}
	return nil
}

// expected checks the results bench/workloads/README.md gives.
func expected(name string, got json.RawMessage) error {
	want := map[string]string{"trivial": "2", "fib": "196418", "json": "100000", "strings": "1799999"}
	if w, ok := want[name]; ok {
		if string(canonical(got)) != w {
			return fmt.Errorf("%s returned %s, want %s", name, got, w)
		}
		return nil
	}
	switch name {
	case "sort":
		var n float64
		if json.Unmarshal(got, &n) != nil {
			return fmt.Errorf("sort returned %s, want a number", got)
		}
	case "transform":
		var names []string
		if json.Unmarshal(got, &names) != nil || len(names) != 5 {
			return fmt.Errorf("transform returned %s, want 5 album names", got)
		}
	}
	return nil
}

// canonical re-encodes a JSON value compactly (numbers as written, keys
// sorted), so that results from different engines compare byte for byte.
func canonical(v json.RawMessage) json.RawMessage {
	var x any
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if d.Decode(&x) != nil {
		return v
	}
	b, err := json.Marshal(x)
	if err != nil {
		return v
	}
	return b
}
