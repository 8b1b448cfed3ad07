package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/modules/npm"
	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// The module tests use the real DuckDB and GLPK linked into this binary,
// and the real simple-statistics, installed with this machine's npm client
// into a temporary cache once per test binary. Without npm they fail.

var (
	modOnce sync.Once
	modEng  *sandbox.Engine
	modDir  string
	modErr  error
)

// moduleEngine returns an engine with the default catalogue installed in
// its cache, and three plans: "default" (every module), "sql" (duckdb
// only) and "none" (no module).
func moduleEngine(t testing.TB) *sandbox.Engine {
	t.Helper()
	modOnce.Do(func() {
		modDir, modErr = os.MkdirTemp("", "stepbox-packages-")
		if modErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		for _, p := range npm.DefaultCatalogue {
			if _, modErr = (npm.Cache{Dir: modDir}).Install(ctx, p, npm.InstallOptions{}); modErr != nil {
				return
			}
		}
		modEng, modErr = sandbox.New(sandbox.Config{
			Isolation:   isolation,
			Caps:        testCaps,
			Grace:       testGrace,
			Plans:       map[string]sandbox.Limits{"default": testPlan, "sql": testPlan, "none": testPlan},
			PlanModules: map[string][]string{"sql": {"duckdb"}, "none": {}},
			Packages:    sandbox.Packages{CacheDir: modDir},
		})
	})
	if modErr != nil {
		t.Fatalf("module engine (is npm installed?): %v", modErr)
	}
	return modEng
}

// closeModuleEngine runs when the test binary exits.
func closeModuleEngine() {
	if modEng != nil {
		modEng.Close(context.Background())
	}
	if modDir != "" {
		os.RemoveAll(modDir)
	}
}

// runModule runs code with modules on the module engine and returns its
// result, decoded into a generic value, or its error.
func runModule(t *testing.T, req sandbox.Request) (any, *sandbox.Error) {
	t.Helper()
	_, res, err := run(t, moduleEngine(t), req, nil)
	if err != nil {
		return nil, asError(t, err)
	}
	var v any
	if err := json.Unmarshal(res.Value, &v); err != nil {
		t.Fatal(err)
	}
	return v, nil
}

func expectModuleResult(t *testing.T, modules []string, code, want string) {
	t.Helper()
	_, res, err := run(t, moduleEngine(t), sandbox.Request{Code: code, Modules: modules}, nil)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if string(res.Value) != want {
		t.Fatalf("got  %s\nwant %s", res.Value, want)
	}
}

func expectModuleError(t *testing.T, req sandbox.Request, code sandbox.Code, limit string) *sandbox.Error {
	t.Helper()
	_, _, err := run(t, moduleEngine(t), req, nil)
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	se := asError(t, err)
	if se.Code != code || se.Limit != limit {
		t.Fatalf("got %s (limit %q): %s; want %s (limit %q)", se.Code, se.Limit, se.Message, code, limit)
	}
	return se
}

var duck = []string{"duckdb"}

func TestDuckDBQueries(t *testing.T) {
	cases := []struct{ name, code, want string }{
		{"aggregate", `
const db = await duckdb.open();
await db.load("sales", [{region: "EU", amount: 12.5}, {region: "US", amount: 7}, {region: "EU", amount: 3}]);
return await db.query("SELECT region, sum(amount) AS total, count(*) AS n FROM sales GROUP BY region ORDER BY region")`,
			`[{"region":"EU","total":15.5,"n":2},{"region":"US","total":7,"n":1}]`},
		{"join and params", `
const db = await duckdb.open();
await db.load("orders", [{id: 1, customer: 1, amount: 10}, {id: 2, customer: 2, amount: 20}, {id: 3, customer: 1, amount: 5}]);
await db.load("customers", [{id: 1, name: "Ada"}, {id: 2, name: "Bob"}]);
return await db.query("SELECT c.name, sum(o.amount) AS total FROM orders o JOIN customers c ON c.id = o.customer WHERE o.amount >= ? AND c.name <> $2 GROUP BY c.name ORDER BY c.name", 5, "nobody")`,
			`[{"name":"Ada","total":15},{"name":"Bob","total":20}]`},
		{"types", `
const db = await duckdb.open();
return await db.query("SELECT 9007199254740993::BIGINT AS big, 42::BIGINT AS small, 12.5::DECIMAL(10,2) AS dec, DATE '2024-03-01' AS d, TIMESTAMP '2024-03-01 13:45:00.123' AS ts, NULL AS n, [1, 2] AS l, {'a': 1} AS s, ?::BIGINT AS p", 10n ** 18n)`,
			// big and p are BigInts, written as exact JSON numbers; a DECIMAL
			// that a double holds exactly is a number.
			`[{"big":9007199254740993,"small":42,"dec":12.5,"d":"2024-03-01","ts":"2024-03-01T13:45:00.123Z","n":null,"l":[1,2],"s":{"a":1},"p":1000000000000000000}]`},
		{"exec and temp state", `
const db = await duckdb.open();
await db.exec("CREATE TABLE t AS SELECT range AS i FROM range(5); DELETE FROM t WHERE i > 2");
return await db.query("SELECT sum(i) AS s FROM t")`, `[{"s":3}]`},
		{"10k rows group-by and join", `
const rows = [];
for (let i = 0; i < 10000; i++) rows.push({id: i, grp: "g" + (i % 10), v: i % 7});
const db = await duckdb.open();
await db.load("r", rows);
await db.load("g", Array.from({length: 10}, (_, i) => ({grp: "g" + i, w: i})));
const agg = await db.query("SELECT grp, count(*) AS n, sum(v) AS s FROM r GROUP BY grp ORDER BY grp LIMIT 2");
const j = await db.query("SELECT sum(r.v * g.w) AS x FROM r JOIN g USING (grp)");
return {agg, j}`,
			// g0: ids 0,10,…: v = i%7 over i ≡ 0 mod 10; computed below.
			""},
		{"load JSON text", `
const db = await duckdb.open();
await db.load("t", '[{"a": 1}, {"a": 2}]');
return await db.query("SELECT sum(a) AS s FROM t")`, `[{"s":3}]`},
		{"queries in parallel queue up", `
const db = await duckdb.open();
const rs = await Promise.all([1, 2, 3].map(i => db.query("SELECT ? * 2 AS x", i)));
return rs.map(r => r[0].x)`, `[2,4,6]`},
		{"close then use", `
const db = await duckdb.open();
await db.close();
try { await db.query("SELECT 1") } catch (e) { return e.message }`, `"duckdb: query: the database is closed"`},
		{"one open database at a time", `
const db = await duckdb.open();
let msg; try { await duckdb.open() } catch (e) { msg = e.message }
await db.close();
const db2 = await duckdb.open();
return [msg, (await db2.query("SELECT 1 AS one"))[0].one]`,
			`["duckdb.open: a run may have 1 database open at a time; close it first",1]`},
		{"closed automatically at the end", `
const db = await duckdb.open();
await db.exec("CREATE TABLE t (a INT)");
db.query("SELECT count(*) FROM range(1000000000) a, range(1000) b"); // never awaited
return "done"`, `"done"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want != "" {
				expectModuleResult(t, duck, tc.code, tc.want)
				return
			}
			v, se := runModule(t, sandbox.Request{Code: tc.code, Modules: duck})
			if se != nil {
				t.Fatal(se)
			}
			// Check the 10k-row case against the same computation in Go.
			n, s := map[string]int{}, map[string]int{}
			x := 0
			for i := range 10000 {
				g := fmt.Sprintf("g%d", i%10)
				n[g]++
				s[g] += i % 7
				x += (i % 7) * (i % 10)
			}
			want := fmt.Sprintf(`{"agg":[{"grp":"g0","n":%d,"s":%d},{"grp":"g1","n":%d,"s":%d}],"j":[{"x":%d}]}`, n["g0"], s["g0"], n["g1"], s["g1"], x)
			got, _ := json.Marshal(v)
			if string(got) != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestDuckDBAwaitUsing(t *testing.T) {
	// TypeScript lowers "await using" to Symbol.asyncDispose, which a
	// database has: its close.
	_, res, err := run(t, moduleEngine(t), sandbox.Request{Language: sandbox.TypeScript, Modules: duck, Code: `
let db2: any;
{
  await using db = await duckdb.open();
  db2 = db;
  await db.exec("SELECT 1");
}
try { await db2.exec("SELECT 1"); return "open" } catch (e) { return "closed" }`}, nil)
	if err != nil || string(res.Value) != `"closed"` {
		t.Fatalf("%s %v", res.Value, err)
	}
}

func TestDuckDBErrors(t *testing.T) {
	t.Run("catchable", func(t *testing.T) {
		v, se := runModule(t, sandbox.Request{Modules: duck, Code: `
const db = await duckdb.open();
const out = [];
for (const f of [
  () => db.query("SELECT * FROM nope"),
  () => db.query("SELEC 1"),
  () => db.load("1bad", [{a: 1}]),
  () => db.load("t", []),
  () => db.load("t", 42),
  () => db.load("t", "not JSON"),
  () => db.query(42),
  () => db.query("SELECT ?::INT", "x"),
]) {
  try { await f(); out.push("no error") } catch (e) { out.push(e.name + ": " + e.message.split("\n")[0]) }
}
return out`})
		if se != nil {
			t.Fatal(se)
		}
		got := v.([]any)
		for i, want := range []string{
			"Error: duckdb: Catalog Error: Table with name nope does not exist!",
			`Error: duckdb: Parser Error: syntax error at or near "SELEC"`,
			`Error: duckdb: load: table name "1bad" is not a plain identifier`,
			"Error: duckdb: load: ",
			"TypeError: db.load: rows must be an array of objects, or its JSON text",
			"Error: duckdb: load: rows is not valid JSON",
			"TypeError: db.query: the SQL must be a string",
			"Error: duckdb: Conversion Error:",
		} {
			if s, _ := got[i].(string); !strings.HasPrefix(s, want) {
				t.Errorf("case %d: got %q, want %q…", i, s, want)
			}
		}
	})
	t.Run("uncaught is RUNTIME at the step's line", func(t *testing.T) {
		se := expectModuleError(t, sandbox.Request{Modules: duck, Code: "const db = await duckdb.open();\n\nawait db.query('SELECT * FROM nope')"}, sandbox.CodeRuntime, "")
		if !strings.HasPrefix(se.Message, "Error: duckdb: Catalog Error: Table with name nope does not exist!") {
			t.Errorf("message %q", se.Message)
		}
		if se.Position == nil || se.Position.Line != 3 {
			t.Errorf("position %+v, want line 3 (stack %q)", se.Position, se.Stack)
		}
	})
}

// royaltyModel is a JavaScript expression, a glpk.js model: print runs a,
// b, c of three titles (integers) pay royalties 5, 4 and 3 a unit, but a
// title needs its advance (10, 8, 6) paid first (binaries ya, yb, yc);
// press hours and paper are scarce. The test and the benchmark share it.
const royaltyModel = `(() => {
const v = (name, coef) => ({name, coef});
return {
  name: "royalties",
  objective: {direction: glpk.GLP_MAX, name: "profit", vars: [v("a", 5), v("b", 4), v("c", 3), v("ya", -10), v("yb", -8), v("yc", -6)]},
  subjectTo: [
    {name: "press", vars: [v("a", 2), v("b", 3), v("c", 1)], bnds: {type: glpk.GLP_UP, ub: 50}},
    {name: "paper", vars: [v("a", 4), v("b", 1), v("c", 2)], bnds: {type: glpk.GLP_UP, ub: 60}},
    {name: "runA", vars: [v("a", 1), v("ya", -20)], bnds: {type: glpk.GLP_UP, ub: 0}},
    {name: "runB", vars: [v("b", 1), v("yb", -20)], bnds: {type: glpk.GLP_UP, ub: 0}},
    {name: "runC", vars: [v("c", 1), v("yc", -20)], bnds: {type: glpk.GLP_UP, ub: 0}},
  ],
  generals: ["a", "b", "c"],
  binaries: ["ya", "yb", "yc"],
};
})()`

// refusedSQL is SQL a step must not run: it reaches files, the network,
// extensions or the configuration. The JavaScript and Python tests share it.
var refusedSQL = []string{
	"SELECT * FROM read_csv('/etc/passwd')",
	"SELECT * FROM '/etc/passwd'",
	"SELECT * FROM read_text('/proc/self/environ')",
	"COPY (SELECT 1) TO '/tmp/stepbox-duckdb-escape.csv'",
	"ATTACH '/tmp/stepbox-duckdb-escape.db' AS x",
	"INSTALL httpfs",
	"LOAD httpfs",
	"SELECT * FROM read_csv('https://example.com/x.csv')",
	"SET memory_limit = '100GB'",
	"SET enable_external_access = true",
	"SELECT getenv('HOME')",
}

// TestDuckDBSandbox checks that SQL cannot reach files, the network,
// extensions or the configuration, from inside a run.
func TestDuckDBSandbox(t *testing.T) {
	stmts := refusedSQL
	code := fmt.Sprintf(`
const db = await duckdb.open();
const out = [];
for (const sql of %s) {
  try { await db.exec(sql); out.push("allowed: " + sql) } catch (e) { out.push("refused") }
}
return out`, mustJSON(stmts))
	v, se := runModule(t, sandbox.Request{Modules: duck, Code: code})
	if se != nil {
		t.Fatal(se)
	}
	for i, r := range v.([]any) {
		if r != "refused" {
			t.Errorf("%s: %v", stmts[i], r)
		}
	}
	for _, f := range []string{"/tmp/stepbox-duckdb-escape.csv", "/tmp/stepbox-duckdb-escape.db"} {
		if _, err := os.Stat(f); err == nil {
			os.Remove(f)
			t.Errorf("%s was created", f)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestDuckDBLimits(t *testing.T) {
	t.Run("a long query stops at the wall limit", func(t *testing.T) {
		start := time.Now()
		expectModuleError(t, sandbox.Request{Modules: duck, Limits: sandbox.Limits{WallMs: 500},
			Code: `const db = await duckdb.open(); return await db.query("SELECT count(*) FROM range(1000000000) a, range(1000000) b")`},
			sandbox.CodeTimeout, "wallMs")
		if took := time.Since(start); took > testenv.ScaleDuration(3*time.Second) {
			t.Errorf("took %v", took)
		}
	})
	t.Run("timers keep running during a query", func(t *testing.T) {
		expectModuleResult(t, duck, `
const db = await duckdb.open();
let finished = false;
db.query("SELECT count(*) FROM range(3000000000)").then(() => { finished = true }, () => {});
await new Promise(r => setTimeout(r, 10)); // fires while the long query runs
return !finished`, "true")
	})
	t.Run("memory limit is OOM", func(t *testing.T) {
		se := expectModuleError(t, sandbox.Request{Modules: duck, Limits: sandbox.Limits{MemoryMB: 32},
			Code: `const db = await duckdb.open(); await db.exec("CREATE TABLE big AS SELECT repeat('x', 200) || range AS s FROM range(2000000)")`},
			sandbox.CodeOOM, "memoryMb")
		if !strings.Contains(se.Message, "16 MiB") {
			t.Errorf("message %q does not name the limit", se.Message)
		}
	})
	t.Run("OOM is not catchable", func(t *testing.T) {
		expectModuleError(t, sandbox.Request{Modules: duck, Limits: sandbox.Limits{MemoryMB: 32},
			Code: `const db = await duckdb.open(); try { await db.exec("CREATE TABLE big AS SELECT repeat('x', 200) || range AS s FROM range(2000000)") } catch (e) {} return "escaped"`},
			sandbox.CodeOOM, "memoryMb")
	})
	t.Run("result rows", func(t *testing.T) {
		expectModuleError(t, sandbox.Request{Modules: duck,
			Code: `const db = await duckdb.open(); return (await db.query("SELECT * FROM range(200000)")).length`},
			sandbox.CodeLimitExceeded, "duckdbResultRows")
	})
	t.Run("result bytes", func(t *testing.T) {
		expectModuleError(t, sandbox.Request{Modules: duck, Limits: sandbox.Limits{MemoryMB: 16},
			Code: `const db = await duckdb.open(); return (await db.query("SELECT repeat('x', 1000) AS s FROM range(5000)")).length`},
			sandbox.CodeLimitExceeded, "duckdbResultBytes")
	})
}

// result is glpk.js's result shape.
type glpkResult struct {
	Name   string  `json:"name"`
	Time   float64 `json:"time"`
	Result struct {
		Status int                `json:"status"`
		Z      float64            `json:"z"`
		Vars   map[string]float64 `json:"vars"`
		Dual   map[string]float64 `json:"dual"`
	} `json:"result"`
}

func solveGLPK(t *testing.T, code string) glpkResult {
	t.Helper()
	_, res, err := run(t, moduleEngine(t), sandbox.Request{Code: code, Modules: []string{"glpk"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var r glpkResult
	if err := json.Unmarshal(res.Value, &r); err != nil {
		t.Fatalf("%s: %v", res.Value, err)
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func TestGLPK(t *testing.T) {
	t.Run("LP with duals", func(t *testing.T) {
		// glpk.js's README example.
		r := solveGLPK(t, `return await glpk.solve({
  name: "LP",
  objective: {direction: glpk.GLP_MAX, name: "obj", vars: [{name: "x1", coef: 0.6}, {name: "x2", coef: 0.5}]},
  subjectTo: [
    {name: "cons1", vars: [{name: "x1", coef: 1}, {name: "x2", coef: 2}], bnds: {type: glpk.GLP_UP, ub: 1, lb: 0}},
    {name: "cons2", vars: [{name: "x1", coef: 3}, {name: "x2", coef: 1}], bnds: {type: glpk.GLP_UP, ub: 2, lb: 0}},
  ],
}, {msglev: glpk.GLP_MSG_OFF})`)
		if r.Name != "LP" || r.Result.Status != 5 || !near(r.Result.Z, 0.46) || !near(r.Result.Vars["x1"], 0.6) || !near(r.Result.Vars["x2"], 0.2) ||
			!near(r.Result.Dual["cons1"], 0.18) || !near(r.Result.Dual["cons2"], 0.14) {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("royalty MIP", func(t *testing.T) {
		r := solveGLPK(t, "return await glpk.solve("+royaltyModel+")")
		// The optimum, by enumeration.
		best := math.Inf(-1)
		for a := 0; a <= 20; a++ {
			for b := 0; b <= 20; b++ {
				for c := 0; c <= 20; c++ {
					if 2*a+3*b+c > 50 || 4*a+b+2*c > 60 {
						continue
					}
					p := float64(5*a + 4*b + 3*c)
					for _, x := range [][2]int{{a, 10}, {b, 8}, {c, 6}} {
						if x[0] > 0 {
							p -= float64(x[1])
						}
					}
					best = max(best, p)
				}
			}
		}
		if r.Result.Status != 5 || !near(r.Result.Z, best) || r.Result.Dual != nil {
			t.Fatalf("%+v, want z=%v", r, best)
		}
		for _, x := range []string{"a", "b", "c", "ya", "yb", "yc"} {
			if v := r.Result.Vars[x]; v != math.Trunc(v) {
				t.Errorf("%s = %v is not an integer", x, v)
			}
		}
	})
	t.Run("infeasible and unbounded are results", func(t *testing.T) {
		r := solveGLPK(t, `return await glpk.solve({name: "inf", objective: {direction: glpk.GLP_MIN, name: "o", vars: [{name: "x", coef: 1}]},
  subjectTo: [{name: "lo", vars: [{name: "x", coef: 1}], bnds: {type: glpk.GLP_LO, lb: 5}}, {name: "hi", vars: [{name: "x", coef: 1}], bnds: {type: glpk.GLP_UP, ub: 3}}]})`)
		if r.Result.Status != 4 { // GLP_NOFEAS
			t.Errorf("infeasible: %+v", r)
		}
		r = solveGLPK(t, `return await glpk.solve({name: "unb", objective: {direction: glpk.GLP_MAX, name: "o", vars: [{name: "x", coef: 1}]},
  subjectTo: [{name: "c", vars: [{name: "x", coef: 1}], bnds: {type: glpk.GLP_LO, lb: 1}}]})`)
		if r.Result.Status != 6 { // GLP_UNBND
			t.Errorf("unbounded: %+v", r)
		}
	})
	t.Run("constants", func(t *testing.T) {
		expectModuleResult(t, []string{"glpk"}, `return [glpk.GLP_MIN, glpk.GLP_MAX, glpk.GLP_FR, glpk.GLP_LO, glpk.GLP_UP, glpk.GLP_DB, glpk.GLP_FX, glpk.GLP_MSG_OFF, glpk.GLP_UNDEF, glpk.GLP_FEAS, glpk.GLP_INFEAS, glpk.GLP_NOFEAS, glpk.GLP_OPT, glpk.GLP_UNBND]`,
			`[1,2,1,2,3,4,5,0,1,2,3,4,5,6]`)
	})
	t.Run("malformed model", func(t *testing.T) {
		expectModuleResult(t, []string{"glpk"}, `try { await glpk.solve({name: "x", subjectTo: []}) } catch (e) { return e.message }`,
			`"glpk: model: objective is missing"`)
		se := expectModuleError(t, sandbox.Request{Modules: []string{"glpk"}, Code: `await glpk.solve({objective: {direction: 7, name: "o", vars: []}})`}, sandbox.CodeRuntime, "")
		if !strings.HasPrefix(se.Message, "Error: glpk: objective.direction") {
			t.Errorf("message %q", se.Message)
		}
	})
	t.Run("a model too large for the time limit", func(t *testing.T) {
		// A market split instance: hard for branch and bound.
		start := time.Now()
		expectModuleError(t, sandbox.Request{Modules: []string{"glpk"}, Limits: sandbox.Limits{WallMs: 500}, Code: marketSplitStep +
			`return await glpk.solve({name: "split", objective: {direction: glpk.GLP_MIN, name: "o", vars}, subjectTo, binaries: xs})`},
			sandbox.CodeTimeout, "wallMs")
		if took := time.Since(start); took > testenv.ScaleDuration(3*time.Second) {
			t.Errorf("took %v", took)
		}
	})
}

// TestModulesAbort aborts runs in the middle of a DuckDB query and of a
// GLPK search: each ends ABORTED at once, not at its wall limit.
func TestModulesAbort(t *testing.T) {
	for _, tc := range []struct {
		name    string
		modules []string
		code    string
	}{
		{"duckdb", duck, `const db = await duckdb.open(); const q = db.query("SELECT count(*) FROM range(1000000000) a, range(1000000) b"); reportStatus("in the work"); await q`},
		{"glpk", []string{"glpk"}, marketSplitStep + `const p = glpk.solve({name: "split", objective: {direction: glpk.GLP_MIN, name: "o", vars}, subjectTo, binaries: xs}); reportStatus("in the work"); await p`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectAbortMidWork(t, sandbox.Request{Modules: tc.modules, Code: tc.code})
		})
	}
}

// marketSplitStep builds a market split instance, hard for branch and
// bound, in vars, subjectTo and xs.
const marketSplitStep = `
let seed = 1;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) % 100;
const m = 6, n = 10 * (m - 1), vars = [], subjectTo = [];
for (let i = 0; i < m; i++) vars.push({name: "sp" + i, coef: 1}, {name: "sm" + i, coef: 1});
const xs = Array.from({length: n}, (_, j) => "x" + j);
for (let i = 0; i < m; i++) {
  let sum = 0;
  const row = xs.map(x => { const a = rnd(); sum += a; return {name: x, coef: a}; });
  row.push({name: "sp" + i, coef: 1}, {name: "sm" + i, coef: -1});
  subjectTo.push({name: "r" + i, vars: row, bnds: {type: glpk.GLP_FX, lb: Math.floor(sum / 2)}});
}
`

func TestModulesOnRequest(t *testing.T) {
	t.Run("a module not requested does not exist", func(t *testing.T) {
		expectModuleResult(t, nil, `return [typeof duckdb, typeof glpk, typeof __sbx_require, typeof __sbx_import]`, `["undefined","undefined","undefined","undefined"]`)
		expectModuleResult(t, []string{"glpk"}, `return [typeof duckdb, typeof glpk]`, `["undefined","object"]`)
	})
	for _, tc := range []struct {
		name string
		req  sandbox.Request
		msg  string
	}{
		{"unknown module", sandbox.Request{Code: "1", Modules: []string{"sqlite"}}, `unknown module "sqlite" (known: duckdb, glpk, simple-statistics)`},
		{"module not in the plan", sandbox.Request{Code: "1", Plan: "sql", Modules: []string{"duckdb", "glpk"}}, `module "glpk" is not allowed by plan "sql"`},
		{"no module in the plan", sandbox.Request{Code: "1", Plan: "none", Modules: []string{"duckdb"}}, `module "duckdb" is not allowed by plan "none"`},
		{"package not in the plan", sandbox.Request{Code: `import { mean } from "simple-statistics"`, Plan: "sql"}, `package "simple-statistics" is not allowed by plan "sql"`},
		{"package for Python", sandbox.Request{Code: "1", Language: sandbox.Python, Modules: []string{"simple-statistics"}}, `"simple-statistics" is an npm package: Python steps may use the built-in modules only (duckdb, glpk)`},
		{"Python module not in the plan", sandbox.Request{Code: "1", Language: sandbox.Python, Plan: "sql", Modules: []string{"glpk"}}, `module "glpk" is not allowed by plan "sql"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := moduleEngine(t).Submit(context.Background(), tc.req)
			var se *sandbox.Error
			if !errors.As(err, &se) || se.Code != sandbox.CodeValidation || se.Message != tc.msg {
				t.Fatalf("got %v, want VALIDATION %q", err, tc.msg)
			}
			if tc.req.Code != "1" && (se.Position == nil || se.Position.Line != 1) {
				t.Fatalf("an import's refusal without its position: %+v", se.Position)
			}
		})
	}
	t.Run("the plan's module works", func(t *testing.T) {
		_, res, err := run(t, moduleEngine(t), sandbox.Request{Code: "const db = await duckdb.open(); return (await db.query('SELECT 1 AS x'))[0].x", Plan: "sql", Modules: duck}, nil)
		if err != nil || string(res.Value) != "1" {
			t.Fatalf("%s %v", res.Value, err)
		}
	})
}

func TestConfigModules(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  sandbox.Config
		msg  string
	}{
		{"unknown plan", sandbox.Config{PlanModules: map[string][]string{"gold": {"duckdb"}}}, `planModules.gold: "gold" is not in plans`},
		{"unknown module", sandbox.Config{PlanModules: map[string][]string{"default": {"sqlite"}}}, `unknown module "sqlite"`},
		{"bad package", sandbox.Config{Packages: sandbox.Packages{Catalogue: []sandbox.Package{{Name: "x", Version: "latest", Integrity: "sha1-x"}}}}, `is not an exact version`},
		{"package named like a module", sandbox.Config{Packages: sandbox.Packages{Catalogue: []sandbox.Package{{Name: "duckdb", Version: "1.0.0", Integrity: npm.DefaultCatalogue[0].Integrity}}}}, `"duckdb" is the name of a built-in module`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Isolation = sandbox.IsolationInProcess
			_, err := sandbox.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want %q", err, tc.msg)
			}
			// ValidateModules, which a server's --check calls, says the same.
			if err := tc.cfg.ValidateModules(); err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("ValidateModules: got %v, want %q", err, tc.msg)
			}
		})
	}
}

const statsSteps = `
const xs = [1, 2, 3, 4, 10];
const lr = linearRegression([[0, 1], [1, 3], [2, 5]]);
return [mean(xs), median(xs), Math.round(standardDeviation(xs) * 1e6) / 1e6, lr.m, lr.b];`

func TestPackages(t *testing.T) {
	want := `[4,3,3.162278,2,1]`
	cases := []struct {
		name string
		lang sandbox.Language
		code string
	}{
		{"namespace import", "", `import * as ss from "simple-statistics";
const { mean, median, standardDeviation, linearRegression } = ss;` + statsSteps},
		{"named imports", "", `import { mean, median as median, standardDeviation, linearRegression } from 'simple-statistics'` + statsSteps},
		{"multi-line import", "", "import {\n  mean,\n  median,\n  standardDeviation,\n  linearRegression,\n} from \"simple-statistics\";" + statsSteps},
		{"dynamic import", "", `const { mean, median, standardDeviation, linearRegression } = await import("simple-statistics");` + statsSteps},
		{"TypeScript", sandbox.TypeScript, `import * as ss from "simple-statistics";
import { mean, median } from "simple-statistics";
const { standardDeviation, linearRegression } = ss;
const xs: number[] = [1, 2, 3, 4, 10];
const lr: { m: number; b: number } = linearRegression([[0, 1], [1, 3], [2, 5]]);
return [mean(xs), median(xs), Math.round(standardDeviation(xs) * 1e6) / 1e6, lr.m, lr.b];`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, res, err := run(t, moduleEngine(t), sandbox.Request{Language: tc.lang, Code: tc.code}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Value) != want {
				t.Fatalf("got %s, want %s", res.Value, want)
			}
		})
	}
	t.Run("lines stay where they were", func(t *testing.T) {
		se := expectModuleError(t, sandbox.Request{Code: "import {\n  mean\n} from \"simple-statistics\";\nmean([1]);\nthrow new Error('here')"}, sandbox.CodeRuntime, "")
		if se.Position == nil || se.Position.Line != 5 {
			t.Fatalf("position %+v, want line 5", se.Position)
		}
		se = expectModuleError(t, sandbox.Request{Language: sandbox.TypeScript, Code: "const n: number = 1;\nimport { mean } from \"simple-statistics\";\nmean([n]);\nthrow new Error('here')"}, sandbox.CodeRuntime, "")
		if se.Position == nil || se.Position.Line != 4 {
			t.Fatalf("TypeScript position %+v, want line 4", se.Position)
		}
	})
	t.Run("not in the catalogue", func(t *testing.T) {
		for _, code := range []string{"const a = 1;\nimport _ from 'lodash';", "import fs from 'fs'"} {
			se := expectModuleError(t, sandbox.Request{Code: code}, sandbox.CodeValidation, "")
			if !strings.Contains(se.Message, "is not in the catalogue") || se.Position == nil || strings.Contains(se.Message, "(line ") {
				t.Errorf("%q: %s %+v", code, se.Message, se.Position)
			}
		}
		// An import() of another name fails in the step, which may catch it.
		expectModuleResult(t, nil, `try { await import("lodash"); return "loaded" } catch (e) { return "refused" }`, `"refused"`)
	})
	t.Run("a built-in module is not a package", func(t *testing.T) {
		se := expectModuleError(t, sandbox.Request{Code: `import duckdb from "duckdb"`}, sandbox.CodeValidation, "")
		if !strings.Contains(se.Message, "is a built-in module") {
			t.Error(se.Message)
		}
	})
	t.Run("imports in strings and comments are not imports", func(t *testing.T) {
		expectModuleResult(t, nil, "// import x from 'lodash'\nconst s = `import y from \"fs\"`; /* import z from 'z' */\nreturn s", "\"import y from \\\"fs\\\"\"")
	})
}

func TestPackagesNotInstalled(t *testing.T) {
	dir := t.TempDir()
	cfg := sandbox.Config{Isolation: isolation, Plans: map[string]sandbox.Limits{"default": testPlan},
		Packages: sandbox.Packages{CacheDir: dir}}
	e := newEngine(t, cfg)
	_, err := e.Submit(context.Background(), sandbox.Request{Code: `import { mean } from "simple-statistics"; return mean([1, 2])`})
	// The message names the install command, and the setting in the words
	// of each of the engine's users: a server's config, Go, the CLI.
	want := "package simple-statistics@7.12.1 is not installed in " + dir + ": run `stepbox packages install --cache " + dir + "`, " +
		"or have packages installed on first use (a server's config: `packages: {autoInstall: true}`; Go: Packages.AutoInstall; `stepbox run` does unless --no-install)"
	var se *sandbox.Error
	if !errors.As(err, &se) || se.Code != sandbox.CodeUnavailable || se.Message != want {
		t.Fatalf("got %v, want UNAVAILABLE %q", err, want)
	}

	t.Run("AutoInstall", func(t *testing.T) {
		cfg.Packages.AutoInstall = true
		e := newEngine(t, cfg)
		_, res, err := run(t, e, sandbox.Request{Code: `import { mean } from "simple-statistics"; return mean([1, 2])`}, nil)
		if err != nil || string(res.Value) != "1.5" {
			t.Fatalf("%s %v", res.Value, err)
		}
	})
}

// expectAbortMidWork submits req, whose step reports a status once its
// long module call is under way (a module call leaves at once; the step
// goes on while it runs), aborts the run at that event, and expects
// ABORTED soon after: the abort stops the native work, long before any
// limit would.
func expectAbortMidWork(t *testing.T, req sandbox.Request) {
	t.Helper()
	s, err := moduleEngine(t).Submit(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var aborted time.Time
	for ev := range s.Events() {
		if ev.Kind == sandbox.EventStatus {
			aborted = time.Now()
			s.Abort()
		}
	}
	_, err = s.Wait()
	if !errors.Is(err, sandbox.ErrAborted) {
		t.Fatalf("got %v, want ABORTED", err)
	}
	if took := time.Since(aborted); took > testenv.ScaleDuration(time.Second) {
		t.Errorf("the run ended %v after the abort", took)
	}
}

// TestDuckDBWASMAPI: the DuckDB-WASM-style surface over the same
// databases: connect, query to a table (numRows, numCols, schema.fields,
// toArray, get, getChild, iteration, rows with toJSON), prepare,
// registerFileText and insertJSONFromPath, and close, each as DuckDB-WASM
// code uses it, with db.query's conversions.
func TestDuckDBWASMAPI(t *testing.T) {
	expectModuleResult(t, duck, `
const c = await duckdb.connect();
const t = await c.query("SELECT 1 AS a, 'x' AS s, [1, 2] AS l, 9007199254740993::BIGINT AS big, count(*) OVER () AS n, DATE '2026-03-01' AS d");
const rows = t.toArray();
const st = await c.prepare("SELECT ?::INTEGER + 1 AS v, ? AS s");
const r = await st.query(41, "y");
await st.close();
let closedStmt; try { await st.query(1) } catch (e) { closedStmt = e.message }
const out = {
  numRows: t.numRows, numCols: t.numCols, fields: t.schema.fields.map(f => f.name + ":" + f.type + ":" + f.nullable),
  row: rows[0].toJSON(), keys: Object.keys(rows[0]), big: typeof rows[0].big, n: typeof rows[0].n,
  json: JSON.stringify(rows, (k, v) => typeof v === "bigint" ? "big:" + v : v),
  child: t.getChild("a").toArray(), childLength: t.getChild("s").length, noChild: t.getChild("zz"),
  iter: [...t].map(x => x.s), fresh: t.toArray() !== t.toArray(), get: t.get(0).l, past: t.get(5), str: String(t),
  prepared: r.toArray().map(x => x.toJSON()), closedStmt,
};
out.second = await duckdb.open().catch(e => e.message);
await c.close();
out.closed = await c.query("SELECT 1").catch(e => e.message);
const db = await duckdb.open();
await db.registerFileText("rows.json", JSON.stringify([{ id: 1, tags: ["a", "b"] }, { id: 2, tags: ["c"] }]));
const c2 = await db.connect();
await c2.insertJSONFromPath("rows.json", { name: "t" });
out.tags = (await c2.query("SELECT tags[1] AS f, len(tags) AS n FROM t ORDER BY id")).toArray().map(x => x.toJSON());
out.noFile = await c2.insertJSONFromPath("nope.json", { name: "u" }).catch(e => e.message);
out.badSQL = await c2.query("SELEC 1").catch(e => e.message.split("\n")[0]);
await c2.close();
out.dbOpen = (await db.query("SELECT count(*) AS n FROM t"))[0].n;
return out;`, `{"numRows":1,"numCols":6,"fields":["a:INTEGER:true","s:VARCHAR:true","l:INTEGER[]:true","big:BIGINT:true","n:BIGINT:true","d:DATE:true"],`+
		`"row":{"a":1,"s":"x","l":[1,2],"big":9007199254740993,"n":1,"d":"2026-03-01"},"keys":["a","s","l","big","n","d"],"big":"bigint","n":"number",`+
		`"json":"[{\"a\":1,\"s\":\"x\",\"l\":[1,2],\"big\":\"big:9007199254740993\",\"n\":1,\"d\":\"2026-03-01\"}]",`+
		`"child":[1],"childLength":1,"noChild":null,"iter":["x"],"fresh":true,"get":[1,2],"past":null,"str":"[Table of 1 rows: a, s, l, big, n, d]",`+
		`"prepared":[{"v":42,"s":"y"}],"closedStmt":"stmt.query: the statement is closed",`+
		`"second":"duckdb.open: a run may have 1 database open at a time; close it first","closed":"c.query: the connection is closed",`+
		`"tags":[{"f":"a","n":2},{"f":"c","n":1}],"noFile":"c.insertJSONFromPath: no file \"nope.json\" was registered with db.registerFileText (a step reads no files)",`+
		`"badSQL":"duckdb: Parser Error: syntax error at or near \"SELEC\"","dbOpen":2}`)
}
