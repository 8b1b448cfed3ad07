package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/stepbox/stepbox/sandbox"
)

// The DuckDB step (issue 20): rows (id, region, amount) given to the step,
// loaded into a table and aggregated. Stepbox's step is
// BenchmarkDuckDBRun's (sandbox/modules_bench_test.go); DuckDB-WASM's
// harness (peers/duckdb-wasm.mjs) makes the same rows and runs the same
// query.
const duckSQL = "SELECT region, count(*) AS n, sum(amount) AS total FROM sales GROUP BY region ORDER BY total DESC LIMIT 5"

const duckStep = `const db = await duckdb.open();
await db.load("sales", input.rows);
const out = await db.query(` + "`" + duckSQL + "`" + `);
await db.close();
return out;`

// duckVersionStep returns the version of Stepbox's DuckDB, for the notes.
const duckVersionStep = `const db = await duckdb.open();
const [row] = await db.query("SELECT version() AS v");
await db.close();
return row.v;`

// DuckDB-WASM, run by Node: cold (an instance per run, as a sandbox would
// need one per tenant) and warm (one instance reused, a fresh table per
// run).
var (
	duckPeer = peer{
		id: "duckdb-wasm", group: "js", name: "DuckDB-WASM", suffix: ", cold", pkg: "@duckdb/duckdb-wasm", script: "duckdb-wasm.mjs",
		how:   "the DuckDB step only: a new DuckDB instance per run (createDuckDB + instantiate + connect, the blocking Node bindings), then registerFileText + insertJSONFromPath + the query + toArray()",
		flags: []string{"--expose-gc"}, duck: "duckdb",
	}
	duckWarmPeer = peer{
		id: "duckdb-wasm-warm", group: "js", name: "DuckDB-WASM", suffix: ", warm", pkg: "@duckdb/duckdb-wasm", script: "duckdb-wasm.mjs",
		how:   "the DuckDB step only: one instance, instantiated once, reused by every run with a fresh table (loaded, queried, dropped): runs share the instance, no isolation between them",
		flags: []string{"--expose-gc"}, duck: "warm-duckdb",
	}
)

func isDuckPeer(id string) bool { return id == duckPeer.id || id == duckWarmPeer.id }

// duckRow is one row of the step's rows: the same formula in Go and in
// peers/duckdb-wasm.mjs.
type duckRow struct {
	ID     int     `json:"id"`
	Region string  `json:"region"`
	Amount float64 `json:"amount"`
}

func duckRows(n int) []duckRow {
	rows := make([]duckRow, n)
	for i := range rows {
		rows[i] = duckRow{ID: i, Region: fmt.Sprintf("r%d", i%20), Amount: float64(i%997) / 10}
	}
	return rows
}

// duckGroup is one row of the query's result.
type duckGroup struct {
	Region string  `json:"region"`
	N      int64   `json:"n"`
	Total  float64 `json:"total"`
}

// duckWant is the query's answer computed here, from the rows.
func duckWant(n int) []duckGroup {
	by := map[string]*duckGroup{}
	for _, r := range duckRows(n) {
		g := by[r.Region]
		if g == nil {
			g = &duckGroup{Region: r.Region}
			by[r.Region] = g
		}
		g.N++
		g.Total += r.Amount
	}
	var out []duckGroup
	for _, g := range by {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b duckGroup) int {
		return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Region, b.Region))
	})
	return out[:min(5, len(out))]
}

// checkDuck verifies a DuckDB step's result against duckWant: the same
// regions in the same order and counts, and totals equal to within
// rounding (engines may add the doubles in another order).
func checkDuck(n int, got json.RawMessage) error {
	var rows []duckGroup
	if err := json.Unmarshal(got, &rows); err != nil {
		return fmt.Errorf("the DuckDB step returned %.200s, want an array of {region, n, total}: %w", got, err)
	}
	want := duckWant(n)
	bad := len(rows) != len(want)
	for i := 0; !bad && i < len(want); i++ {
		g, w := rows[i], want[i]
		bad = g.Region != w.Region || g.N != w.N || math.Abs(g.Total-w.Total) > 1e-9*math.Max(1, math.Abs(w.Total))
	}
	if bad {
		wb, _ := json.Marshal(want)
		return fmt.Errorf("the DuckDB step returned %.300s, want %s", got, wb)
	}
	return nil
}

// sbDuckDB times the DuckDB step through Stepbox with the given isolation:
// the rows as the run's input, Submit to result, one run at a time, the
// median of duckRuns after duckWarmup (the first runs start DuckDB).
func (r *runner) sbDuckDB(ctx context.Context, rw *row, iso sandbox.Isolation) {
	if !r.want(rw.id, colDuck) {
		return
	}
	r.measure(rw, []string{colDuck}, func() error {
		input, err := json.Marshal(map[string]any{"rows": duckRows(r.cfg.duckRows)})
		if err != nil {
			return err
		}
		eng, done, err := engine(sandbox.Config{Isolation: iso, PoolSize: 1})
		if err != nil {
			return err
		}
		defer done()
		req := sandbox.Request{Modules: []string{sandbox.ModuleDuckDB}, Input: input, Code: duckStep}
		lat := make([]time.Duration, 0, r.cfg.duckRuns)
		for i := 0; i < r.cfg.duckWarmup+max(1, r.cfg.duckRuns); i++ {
			t0 := time.Now()
			res, err := eng.Run(ctx, req, nil)
			if err != nil {
				return err
			}
			if i >= r.cfg.duckWarmup {
				lat = append(lat, time.Since(t0))
			}
			if i == 0 {
				if err := checkDuck(r.cfg.duckRows, res.Value); err != nil {
					return err
				}
			}
		}
		p50, _ := percentiles(lat)
		rw.set(colDuck, p50)
		version := ""
		v, err := eng.Run(ctx, sandbox.Request{Modules: []string{sandbox.ModuleDuckDB}, Code: duckVersionStep}, nil)
		if err == nil {
			var s string
			if json.Unmarshal(v.Value, &s) == nil {
				version = " (DuckDB " + s + ")"
			}
		}
		rw.notef("%s: duckdb.open + db.load(\"sales\", input.rows) + db.query + db.close in a step%s, %d rows as the run's input, Submit to result", colDuck, version, r.cfg.duckRows)
		return nil
	})
}

// peerDuckDB times the DuckDB step in a DuckDB-WASM row.
func (r *runner) peerDuckDB(ctx context.Context, p peer, rw *row) {
	if p.duck == "" || !r.want(p.id, colDuck) {
		return
	}
	r.measure(rw, []string{colDuck}, func() error {
		out, err := r.node(ctx, p, p.duck, map[string]any{"rows": r.cfg.duckRows, "sql": duckSQL, "runs": max(1, r.cfg.duckRuns), "warmup": r.cfg.duckWarmup})
		if err != nil {
			return err
		}
		if err := checkDuck(r.cfg.duckRows, out.Result); err != nil {
			return err
		}
		rw.set(colDuck, out.P50)
		rw.notef("%s: %s", colDuck, out.How)
		return nil
	})
}
