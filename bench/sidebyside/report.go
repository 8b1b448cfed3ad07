package main

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// report renders the measured rows.
type report struct {
	cfg       config
	env       env
	rows      []*row
	workloads []workload
	took      time.Duration // measuring
	install   time.Duration // installing the peers, when it was needed
	loadAfter string
}

// runs is "1 run" or "N runs", with a qualifier before the noun.
func runs(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %srun", what)
	}
	return fmt.Sprintf("%d %sruns", n, what)
}

func (rep *report) duration() string {
	s := rep.took.Round(time.Second).String()
	if rep.install >= time.Second {
		s += fmt.Sprintf(", after %s installing the peers", rep.install.Round(time.Second))
	}
	return s
}

func (rep *report) columns() []string {
	cols := []string{colP50, colP99, colTput}
	for _, w := range rep.workloads {
		if w.name != "trivial" {
			cols = append(cols, w.name)
		}
	}
	cols = append(cols, colDuck, colBridge, colMemory)
	// Only the columns some row has a cell in.
	var used []string
	for _, c := range cols {
		for _, rw := range rep.rows {
			if rw.cells[c] != nil {
				used = append(used, c)
				break
			}
		}
	}
	return used
}

func title(col string) string {
	switch col {
	case colP50:
		return "trivial p50"
	case colP99:
		return "trivial p99"
	case colTput:
		return "runs/s"
	case colBridge:
		return "data round trip"
	case colMemory:
		return "idle memory"
	case colDuck:
		return "DuckDB 10k rows"
	}
	return col
}

func unit(col string) string {
	switch col {
	case colTput:
		return ""
	case colBridge:
		return "µs"
	case colMemory:
		return "MB"
	}
	return "ms"
}

// refRow is the id of the row col's ratios of rw compare with; "" means
// no ratio (rw is the reference, or the comparison would mislead).
func refRow(rw *row, col string) string {
	ref := "stepbox-python"
	if rw.group == "js" {
		ref = "stepbox-process"
		if col == colMemory {
			// Per VM against per isolate or context; a worker process
			// is a different unit.
			if rw.id == "stepbox-process" {
				return ""
			}
			ref = "stepbox-inprocess"
		}
	}
	if rw.id == ref {
		return ""
	}
	return ref
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func ratio(x float64) string {
	switch {
	case x >= 10:
		return fmt.Sprintf("×%.0f", x)
	case x >= 1:
		return fmt.Sprintf("×%.1f", x)
	default:
		return fmt.Sprintf("×%.2f", x)
	}
}

func (rep *report) find(id string) *row {
	for _, rw := range rep.rows {
		if rw.id == id {
			return rw
		}
	}
	return nil
}

// text is one cell of the table.
func (rep *report) text(rw *row, col string) string {
	c := rw.cells[col]
	if c == nil {
		return ""
	}
	if c.err != "" {
		return c.err
	}
	s := num(c.v)
	if u := unit(col); u != "" {
		s += " " + u
	}
	ref := rep.find(refRow(rw, col))
	if ref == nil || ref.cells[col] == nil || ref.cells[col].err != "" || ref.cells[col].v <= 0 || c.v <= 0 {
		return s
	}
	x := c.v / ref.cells[col].v
	if col == colTput {
		x = ref.cells[col].v / c.v
	}
	return s + " " + ratio(x)
}

// table is the markdown table, padded so that it reads on a terminal too.
func (rep *report) table() string {
	cols := rep.columns()
	head := []string{"engine"}
	for _, c := range cols {
		head = append(head, title(c))
	}
	grid := [][]string{head}
	for _, rw := range rep.rows {
		line := []string{rw.name}
		if rw.unavailable != "" && len(cols) > 0 {
			reason := rw.unavailable
			if utf8.RuneCountInString(reason) > 100 {
				reason = string([]rune(reason)[:99]) + "…"
			}
			line = append(line, "unavailable: "+reason)
			for range len(cols) - 1 {
				line = append(line, "")
			}
		} else {
			for _, c := range cols {
				t := rep.text(rw, c)
				if t == "" {
					t = "—" // not measured for this row
				}
				line = append(line, t)
			}
		}
		grid = append(grid, line)
	}
	return render(grid)
}

// render lays out grid (its first line the header) as a markdown table,
// padded so that it reads on a terminal too.
func render(grid [][]string) string {
	head := grid[0]
	width := make([]int, len(head))
	for _, line := range grid {
		for i, s := range line {
			// An unavailable row's reason spans the row: it does not
			// widen the column.
			if n := utf8.RuneCountInString(s); n > width[i] && !strings.HasPrefix(s, "unavailable: ") {
				width[i] = n
			}
		}
	}
	var b strings.Builder
	write := func(line []string) {
		b.WriteString("|")
		for i, s := range line {
			pad := strings.Repeat(" ", max(0, width[i]-utf8.RuneCountInString(s)))
			if i == 0 || strings.HasPrefix(s, "unavailable: ") {
				b.WriteString(" " + s + pad + " |")
			} else {
				b.WriteString(" " + pad + s + " |")
			}
		}
		b.WriteString("\n")
	}
	write(grid[0])
	b.WriteString("|")
	for i := range head {
		if i == 0 {
			b.WriteString(" " + strings.Repeat("-", width[i]) + " |")
		} else {
			b.WriteString(" " + strings.Repeat("-", max(1, width[i]-1)) + ": |")
		}
	}
	b.WriteString("\n")
	for _, line := range grid[1:] {
		write(line)
	}
	return b.String()
}

// floorGoals are issue 16's goals for Stepbox against its engine: the most
// Stepbox may cost as a multiple of the engine's figure (for runs/s, the
// least share of the engine's runs/s).
var floorGoals = []struct {
	row, col string
	goal     float64
}{
	{"stepbox-process", colTput, 0.8},
	{"stepbox-process", colP50, 1.3},
	{"stepbox-inprocess", colTput, 0.9},
}

// floorTable shows each Stepbox JavaScript figure as a ratio to the raw
// engine's, and which of the goals hold; "" without the engine's row.
func (rep *report) floorTable() string {
	fl := rep.find(floorID)
	if fl == nil || fl.unavailable != "" {
		return ""
	}
	var cols []string
	for _, c := range rep.columns() {
		if c != colMemory && fl.cells[c] != nil && fl.cells[c].err == "" && fl.cells[c].v > 0 {
			cols = append(cols, c)
		}
	}
	head := []string{"Stepbox ÷ engine"}
	for _, c := range cols {
		head = append(head, title(c))
	}
	grid := [][]string{head}
	of := func(rw *row, col string) (float64, bool) {
		c := rw.cells[col]
		if c == nil || c.err != "" || c.v <= 0 {
			return 0, false
		}
		return c.v / fl.cells[col].v, true
	}
	for _, id := range []string{"stepbox-process", "stepbox-inprocess"} {
		rw := rep.find(id)
		if rw == nil {
			continue
		}
		line := []string{rw.name}
		for _, c := range cols {
			if x, ok := of(rw, c); ok {
				line = append(line, fmt.Sprintf("%.2fx", x))
			} else {
				line = append(line, "—")
			}
		}
		grid = append(grid, line)
	}
	if len(grid) == 1 {
		return ""
	}
	var b strings.Builder
	b.WriteString(render(grid))
	b.WriteString("\nEach figure is Stepbox's ÷ the engine's, measured in this run: time ÷ time (latency, workloads, round trip), runs/s ÷ runs/s. " +
		"Below 1 for time, or above 1 for runs/s, Stepbox does better than the bare engine.\n\nGoals (issue 16):\n\n")
	for _, g := range floorGoals {
		rw := rep.find(g.row)
		if rw == nil {
			continue
		}
		x, ok := of(rw, g.col)
		verdict := "not measured"
		want := fmt.Sprintf("≤ %.1fx", g.goal)
		if g.col == colTput {
			want = fmt.Sprintf("≥ %.1fx", g.goal)
		}
		if ok {
			met := x <= g.goal
			if g.col == colTput {
				met = x >= g.goal
			}
			verdict = fmt.Sprintf("%.2fx: not met", x)
			if met {
				verdict = fmt.Sprintf("%.2fx: met", x)
			}
		}
		fmt.Fprintf(&b, "- %s, %s %s the engine's: %s\n", rw.name, title(g.col), want, verdict)
	}
	return b.String()
}

const ratioNote = "**× Stepbox** after a figure is the row's cost ÷ Stepbox's: row time ÷ Stepbox time (latency, workloads, DuckDB step, round trip), " +
	"Stepbox runs/s ÷ row runs/s, row memory ÷ Stepbox memory. **Above 1, Stepbox is faster (or smaller) by that factor; below 1, the row is.** " +
	"JavaScript rows compare with *Stepbox, process*, except memory, which compares with *Stepbox, in-process* (a VM against an isolate or a context); " +
	"Python rows compare with *Stepbox Python*."

func (rep *report) command() string {
	return strings.TrimSpace("go run ./bench/sidebyside " + strings.Join(rep.cfg.args, " "))
}

func (rep *report) machine() string {
	e := rep.env
	s := fmt.Sprintf("%s CPUs (%s), %s RAM, Linux %s; %s", e.cpus, e.cpuModel, e.memory, e.kernel, e.goVersion)
	if e.node != "" {
		s += fmt.Sprintf("; node %s, npm %s; %s (%s)", e.node, e.npm, e.python, pythonPath())
	}
	return s
}

// terminal is what the harness prints: the table and how to read it.
func (rep *report) terminal() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n%s — %s; load average %s before, %s after; took %s\n\n", rep.command(), rep.env.date, rep.machine(), rep.env.loadBefore, rep.loadAfter, rep.duration())
	b.WriteString(rep.table())
	b.WriteString("\n" + ratioNote + "\n")
	if f := rep.floorTable(); f != "" {
		b.WriteString("\n" + f)
	}
	if notes := rep.problems(); notes != "" {
		b.WriteString("\n" + notes)
	}
	return b.String()
}

// problems lists unavailable rows and failed measures in full.
func (rep *report) problems() string {
	var b strings.Builder
	for _, rw := range rep.rows {
		if rw.unavailable != "" {
			fmt.Fprintf(&b, "- %s: unavailable: %s\n", rw.name, rw.unavailable)
		}
		for _, e := range rw.errs {
			fmt.Fprintf(&b, "- %s: %s\n", rw.name, e)
		}
	}
	return b.String()
}

// markdown is the file the harness writes.
func (rep *report) markdown() string {
	c := rep.cfg
	var b strings.Builder
	b.WriteString("# Stepbox side by side\n\n")
	b.WriteString("Written by `bench/sidebyside` (the method: [README.md](README.md)). `make bench` runs it without flags; this file comes from:\n\n")
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", rep.command())
	fmt.Fprintf(&b, "- **Date**: %s (measuring took %s)\n", rep.env.date, rep.duration())
	if rep.env.commit != "" {
		fmt.Fprintf(&b, "- **Stepbox**: commit %s\n", rep.env.commit)
	}
	fmt.Fprintf(&b, "- **Machine**: %s\n", rep.machine())
	fmt.Fprintf(&b, "- **Load average** (1, 5, 15 min): %s before, %s after. ", rep.env.loadBefore, rep.loadAfter)
	b.WriteString("Other jobs may share the machine: compare figures within one run, and expect noise, in the p99 column most.\n\n")
	b.WriteString(rep.table())
	b.WriteString("\n" + ratioNote + "\n\n")
	if f := rep.floorTable(); f != "" {
		b.WriteString("## Stepbox against its engine\n\n" + f + "\n")
	}
	if p := rep.problems(); p != "" {
		b.WriteString("Problems:\n\n" + p + "\n")
	}

	b.WriteString("## Rows\n\n")
	for _, rw := range rep.rows {
		fmt.Fprintf(&b, "- **%s**: %s.\n", rw.name, rw.how)
	}
	b.WriteString("\n## Columns\n\n")
	fmt.Fprintf(&b, "- **trivial p50 / p99**: `bench/workloads/trivial.js` (`return 1 + 1`; Python: `1 + 1`), one run at a time, from the host's call to the result back in the host: %s after %s (Stepbox Python and `python3 -c`: %d; Pyodide cold: %d, so its p99 is the slowest run). Every run gets a fresh runtime except in *Pyodide, warm*.\n",
		runs(c.latencyRuns, ""), runs(c.latencyWarmup, "warm-up "), c.pyLatencyRuns, c.pyodideColdRuns)
	fmt.Fprintf(&b, "- **runs/s**: trivial runs completed per second over %s (Pyodide cold: %s) after %s of warm-up, keeping every core busy: Stepbox with a pool of one slot per CPU and %d runs in flight; isolated-vm with %d runs in flight on its own threads; quickjs-emscripten and Pyodide with one worker thread (one WebAssembly instance) per CPU; `python3 -c` with %d processes at a time.\n",
		c.throughput, c.pyodideTput, c.throughputWarmup, clients(), clients(), clients())
	fmt.Fprintf(&b, "- **fib … transform**: the other `bench/workloads`, each the body of an async function (peers run it as `(async () => { … })()`), in a fresh runtime per run with a 512 MB memory limit where the engine has one: the median of %s after %s, call to result. Every result is checked against the workloads' README and against Stepbox's.\n",
		runs(c.workloadRuns, ""), runs(c.workloadWarmup, "warm-up "))
	fmt.Fprintf(&b, "- **DuckDB 10k rows** (`duckdb10k`): a step given %d rows (`{id, region, amount}`) that loads them into a table and runs `%s`, end to end, one run at a time: the median of %s after %s. "+
		"Stepbox: the rows are the run's input; the step is `duckdb.open()`, `db.load(\"sales\", input.rows)`, `db.query(…)`, `db.close()`, Submit to result (`BenchmarkDuckDBRun`'s step). "+
		"DuckDB-WASM in Node (blocking bindings), from `JSON.stringify(rows)` to the result's rows as plain values: `db.registerFileText` + `conn.insertJSONFromPath(…, {name: \"sales\"})` + `conn.query(…).toArray()`; "+
		"cold: a new instance per run (`createDuckDB` + `instantiate` + `connect` included), the isolation a sandbox needs when tenants never share one; "+
		"warm: one instance made before the runs, each run connecting, loading a fresh table and dropping it, no isolation between runs. Every result is checked against the answer computed from the rows.\n",
		c.duckRows, duckSQL, runs(c.duckRuns, ""), runs(c.duckWarmup, "warm-up "))
	fmt.Fprintf(&b, "- **data round trip**: one run of a step awaiting %d host data requests in a row (`await dataProxy.request(\"get\", i)`, the host answering asynchronously with the parameters), after a warm-up run of %d; the run's wall time ÷ %d. Each engine's bridge is under its row in Notes.\n",
		c.roundTrips, max(1, c.roundTrips/10), c.roundTrips)
	fmt.Fprintf(&b, "- **idle memory**: what one idle, ready runtime costs. Stepbox, process: RSS of a jailed worker process (its Go runtime, QuickJS and 2 warm VMs), the mean over the engine's workers, without its fork server — the cost of one pool slot, no ratio. modernc.org/quickjs, raw: this process's RSS increase for %d idle VMs, ÷ %d, after GC. Stepbox, in-process: the host's RSS increase for %d warm VMs, ÷ %d, after GC, with a first engine up before the baseline. isolated-vm and quickjs-emscripten: Node's RSS increase from half of N idle isolates / runtimes to all N (each with a context, the bridge installed and one evaluation done), per isolate / runtime, after GC: N = %d (quickjs-emscripten: %d, enough to outgrow its WebAssembly memory's initial 16 MB, resident from the start). Stepbox Python: RSS of the processes the Python pool starts (the jailed zygote with its preloaded modules, and the child it keeps forked ahead). `python3 -c`: RSS of one idle interpreter. Pyodide: Node's RSS increase per loaded interpreter (%d, after a first one). RSS counts shared pages in full; the notes give PSS for the processes, and QuickJS's own count of its allocations.\n",
		c.memInstances, c.memInstances, c.memInstances, c.memInstances, c.memInstances, max(c.memInstances, qjsPeer.minInstances), c.pyodideInstances)
	b.WriteString("\n## Notes\n\n")
	for _, rw := range rep.rows {
		if len(rw.notes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "- **%s**: %s.\n", rw.name, strings.Join(rw.notes, "; "))
	}
	return b.String()
}
