package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// The Python mirrors of duckdb and glpk, on the module engine of
// modules_test.go: real DuckDB and GLPK, in a jailed worker leased for
// the run (or in the host, with STEPBOX_TEST_ISOLATION=inprocess).

func pyModule(modules []string, code string) sandbox.Request {
	return sandbox.Request{Language: sandbox.Python, Modules: modules, Code: code}
}

func expectPyModuleResult(t *testing.T, modules []string, code, want string) {
	t.Helper()
	_, res, err := run(t, moduleEngine(t), pyModule(modules, code), nil)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if string(res.Value) != want {
		t.Fatalf("got  %s\nwant %s", res.Value, want)
	}
}

func TestPythonDuckDB(t *testing.T) {
	t.Run("10k rows, group-by and join", func(t *testing.T) {
		v, se := runModule(t, pyModule(duck, `
rows = [{"id": i, "grp": "g%d" % (i % 10), "v": i % 7} for i in range(10000)]
db = await duckdb.open()
await db.load("r", rows)
await db.load("g", [{"grp": "g%d" % i, "w": i} for i in range(10)])
agg = await db.query("SELECT grp, count(*) AS n, sum(v) AS s FROM r GROUP BY grp ORDER BY grp LIMIT 2")
j = await db.query("SELECT sum(r.v * g.w) AS x FROM r JOIN g USING (grp)")
return {"agg": agg, "j": j}`))
		if se != nil {
			t.Fatal(se)
		}
		n, s := map[string]int{}, map[string]int{}
		x := 0
		for i := range 10000 {
			g := fmt.Sprintf("g%d", i%10)
			n[g]++
			s[g] += i % 7
			x += (i % 7) * (i % 10)
		}
		want := fmt.Sprintf(`{"agg":[{"grp":"g0","n":%d,"s":%d},{"grp":"g1","n":%d,"s":%d}],"j":[{"x":%d}]}`, n["g0"], s["g0"], n["g1"], s["g1"], x)
		if got := mustJSON(v); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("parameters", func(t *testing.T) {
		expectPyModuleResult(t, duck, `
db = await duckdb.open()
await db.load("orders", [{"id": 1, "customer": 1, "amount": 10}, {"id": 2, "customer": 2, "amount": 20}, {"id": 3, "customer": 1, "amount": 5}])
await db.load("customers", [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}])
a = await db.query("SELECT c.name, sum(o.amount) AS total FROM orders o JOIN customers c ON c.id = o.customer WHERE o.amount >= ? AND c.name <> $2 GROUP BY c.name ORDER BY c.name", 5, "nobody")
b = await db.query("SELECT ?::HUGEINT + 1 AS big, ? AS f, ? AS t, ?::INT[] AS l, ? IS NULL AS n", 10 ** 20, 2.5, True, [1, 2], None)
return [a, b]`,
			`[[{"name":"Ada","total":15},{"name":"Bob","total":20}],[{"big":100000000000000000001,"f":2.5,"t":true,"l":[1,2],"n":true}]]`)
	})
	t.Run("the same values as JavaScript", func(t *testing.T) {
		// The JavaScript test's query (modules_test.go), with 10n ** 18n
		// as Python's 10 ** 18.
		expectPyModuleResult(t, duck, `
db = await duckdb.open()
return await db.query("SELECT 9007199254740993::BIGINT AS big, 42::BIGINT AS small, 12.5::DECIMAL(10,2) AS dec, DATE '2024-03-01' AS d, TIMESTAMP '2024-03-01 13:45:00.123' AS ts, NULL AS n, [1, 2] AS l, {'a': 1} AS s, ?::BIGINT AS p", 10 ** 18)`,
			// The same JSON values; a decimal.Decimal keeps its scale.
			`[{"big":9007199254740993,"small":42,"dec":12.50,"d":"2024-03-01","ts":"2024-03-01T13:45:00.123Z","n":null,"l":[1,2],"s":{"a":1},"p":1000000000000000000}]`)
	})
	t.Run("closed at the end of the run", func(t *testing.T) {
		expectPyModuleResult(t, duck, `
db = await duckdb.open()
await db.exec("CREATE TABLE t (a INT)")
db.query("SELECT count(*) FROM range(1000000000) a, range(1000) b")  # never awaited
return "done"`, `"done"`)
		// The next run gets a fresh database.
		expectPyModuleResult(t, duck, `
db = await duckdb.open()
return len(await db.query("SELECT * FROM duckdb_tables()"))`, `0`)
	})
	t.Run("SQL errors are catchable", func(t *testing.T) {
		expectPyModuleResult(t, duck, `
db = await duckdb.open()
try:
    await db.query("SELEC 1")
except DuckDBError as e:
    return str(e).split("\n")[0]`, `"duckdb: Parser Error: syntax error at or near \"SELEC\""`)
	})
	t.Run("uncaught is RUNTIME at the step's line", func(t *testing.T) {
		se := expectModuleError(t, pyModule(duck, "db = await duckdb.open()\n\nawait db.query('SELECT * FROM nope')"), sandbox.CodeRuntime, "")
		if !strings.HasPrefix(se.Message, "DuckDBError: duckdb: Catalog Error: Table with name nope does not exist!") {
			t.Errorf("message %q", se.Message)
		}
		if se.Position == nil || se.Position.Line != 3 {
			t.Errorf("position %+v, want line 3 (stack %q)", se.Position, se.Stack)
		}
	})
}

// TestPythonDuckDBSandbox refuses, from Python, the SQL that the JavaScript
// test refuses.
func TestPythonDuckDBSandbox(t *testing.T) {
	stmts := refusedSQL
	v, se := runModule(t, pyModule(duck, fmt.Sprintf(`
db = await duckdb.open()
out = []
for sql in %s:
    try:
        await db.exec(sql)
        out.append("allowed: " + sql)
    except DuckDBError:
        out.append("refused")
return out`, mustJSON(stmts))))
	if se != nil {
		t.Fatal(se)
	}
	for i, r := range v.([]any) {
		if r != "refused" {
			t.Errorf("%s: %v", stmts[i], r)
		}
	}
}

func TestPythonDuckDBLimits(t *testing.T) {
	t.Run("a long query stops at the wall limit", func(t *testing.T) {
		req := pyModule(duck, `db = await duckdb.open()
return await db.query("SELECT count(*) FROM range(1000000000) a, range(1000000) b")`)
		req.Limits = sandbox.Limits{WallMs: 500}
		start := time.Now()
		expectModuleError(t, req, sandbox.CodeTimeout, "wallMs")
		if took := time.Since(start); took > testenv.ScaleDuration(3*time.Second) {
			t.Errorf("took %v", took)
		}
	})
	t.Run("the step runs during a query", func(t *testing.T) {
		expectPyModuleResult(t, duck, `import asyncio
db = await duckdb.open()
q = db.query("SELECT count(*) FROM range(3000000000)")
await asyncio.sleep(0.01)
return not q.done()`, "true")
	})
	t.Run("memory limit is OOM, not catchable", func(t *testing.T) {
		req := pyModule(duck, `db = await duckdb.open()
try:
    await db.exec("CREATE TABLE big AS SELECT repeat('x', 200) || range AS s FROM range(2000000)")
except BaseException:
    pass
return "escaped"`)
		req.Limits = sandbox.Limits{MemoryMB: 32}
		se := expectModuleError(t, req, sandbox.CodeOOM, "memoryMb")
		if !strings.Contains(se.Message, "16 MiB") {
			t.Errorf("message %q does not name the limit", se.Message)
		}
	})
	t.Run("result bytes", func(t *testing.T) {
		req := pyModule(duck, `db = await duckdb.open()
return len(await db.query("SELECT repeat('x', 1000) AS s FROM range(5000)"))`)
		req.Limits = sandbox.Limits{MemoryMB: 16}
		expectModuleError(t, req, sandbox.CodeLimitExceeded, "duckdbResultBytes")
	})
}

// TestDuckDBWASMAPIPython: the DuckDB-WASM-style surface in Python's
// names, with TestDuckDBWASMAPI's queries and answers: connect, query to
// a Table (num_rows, num_columns, schema, to_pylist, column, iteration),
// prepare, register_file_text and insert_json_from_path, close; a Table's
// values are db.query's rows.
func TestDuckDBWASMAPIPython(t *testing.T) {
	t.Run("the JavaScript test's calls", func(t *testing.T) {
		expectPyModuleResult(t, duck, `import json
c = await duckdb.connect()
t = await c.query("SELECT 1 AS a, 'x' AS s, [1, 2] AS l, 9007199254740993::BIGINT AS big, count(*) OVER () AS n, DATE '2026-03-01' AS d")
rows = t.to_pylist()
st = await c.prepare("SELECT ?::INTEGER + 1 AS v, ? AS s")
r = await st.query(41, "y")
await st.close()
try:
    await st.query(1)
except DuckDBError as e:
    closed_stmt = str(e)
try:
    t.column("zz")
except KeyError as e:
    no_child = e.args[0]
out = {
    "numRows": t.num_rows, "numCols": t.num_columns, "fields": [f.name + ":" + f.type + ":" + json.dumps(f.nullable) for f in t.schema.fields],
    "row": rows[0], "keys": list(rows[0]), "big": type(rows[0]["big"]).__name__, "n": type(rows[0]["n"]).__name__,
    "json": json.dumps(rows, separators=(",", ":")),
    "child": t.column("a"), "childLength": len(t.column("s")), "noChild": no_child,
    "iter": [x["s"] for x in t], "fresh": t.to_pylist() is not t.to_pylist() and t.to_pylist()[0] is not rows[0], "get": rows[0]["l"], "len": len(t), "str": repr(t),
    "prepared": r.to_pylist(), "closedStmt": closed_stmt,
}
try:
    await duckdb.open()
except DuckDBError as e:
    out["second"] = str(e)
await c.close()
try:
    await c.query("SELECT 1")
except DuckDBError as e:
    out["closed"] = str(e)
db = await duckdb.open()
await db.register_file_text("rows.json", json.dumps([{"id": 1, "tags": ["a", "b"]}, {"id": 2, "tags": ["c"]}]))
c2 = await db.connect()
await c2.insert_json_from_path("rows.json", name="t")
out["tags"] = (await c2.query("SELECT tags[1] AS f, len(tags) AS n FROM t ORDER BY id")).to_pylist()
try:
    await c2.insert_json_from_path("nope.json", name="u")
except DuckDBError as e:
    out["noFile"] = str(e)
try:
    await c2.query("SELEC 1")
except DuckDBError as e:
    out["badSQL"] = str(e).split("\n")[0]
await c2.close()
out["dbOpen"] = (await db.query("SELECT count(*) AS n FROM t"))[0]["n"]
return out`, `{"numRows":1,"numCols":6,"fields":["a:INTEGER:true","s:VARCHAR:true","l:INTEGER[]:true","big:BIGINT:true","n:BIGINT:true","d:DATE:true"],`+
			`"row":{"a":1,"s":"x","l":[1,2],"big":9007199254740993,"n":1,"d":"2026-03-01"},"keys":["a","s","l","big","n","d"],"big":"int","n":"int",`+
			`"json":"[{\"a\":1,\"s\":\"x\",\"l\":[1,2],\"big\":9007199254740993,\"n\":1,\"d\":\"2026-03-01\"}]",`+
			`"child":[1],"childLength":1,"noChild":"table.column: no column \"zz\"; the columns are a, s, l, big, n, d","iter":["x"],"fresh":true,"get":[1,2],"len":1,"str":"<Table of 1 rows: a, s, l, big, n, d>",`+
			`"prepared":[{"v":42,"s":"y"}],"closedStmt":"stmt.query: the statement is closed",`+
			`"second":"duckdb.open: a run may have 1 database open at a time; close it first","closed":"c.query: the connection is closed",`+
			`"tags":[{"f":"a","n":2},{"f":"c","n":1}],"noFile":"c.insert_json_from_path: no file \"nope.json\" was registered with db.register_file_text (a step reads no files)",`+
			`"badSQL":"duckdb: Parser Error: syntax error at or near \"SELEC\"","dbOpen":2}`)
	})
	t.Run("a table's values are db.query's rows", func(t *testing.T) {
		// The README's types, a Decimal's scale and big parameters
		// included, through both calls on one database.
		expectPyModuleResult(t, duck, `import decimal
db = await duckdb.open()
c = await db.connect()
sql = "SELECT 9007199254740993::BIGINT AS big, 12.5::DECIMAL(10,2) AS dec, 3::DOUBLE AS f, DATE '2024-03-01' AS d, TIMESTAMP '2024-03-01 13:45:00.123' AS ts, NULL AS n, {'a': 1} AS s, INTERVAL 1 DAY AS i, ?::HUGEINT AS p, ?::DECIMAL(5,2) AS pd"
args = (10 ** 20, decimal.Decimal("1.25"))
t = await c.query(sql, *args)
rows = await db.query(sql, *args)
st = await c.prepare(sql)
return {"same": t.to_pylist() == rows and (await st.query(*args)).to_pylist() == rows, "dec": repr(t.column("dec")[0]),
        "row": t.to_pylist()[0], "types": t.schema.types, "names": t.schema.names, "shape": list(t.shape),
        "dict": t.to_pydict()["p"], "byIndex": t.column(-1), "field": repr(t.schema["pd"]), "nullable": t.schema.field(0).nullable}`,
			`{"same":true,"dec":"Decimal('12.50')",`+
				`"row":{"big":9007199254740993,"dec":12.50,"f":3.0,"d":"2024-03-01","ts":"2024-03-01T13:45:00.123Z","n":null,"s":{"a":1},"i":{"months":0,"days":1,"micros":0},"p":100000000000000000000,"pd":1.25},`+
				`"types":["BIGINT","DECIMAL(10,2)","DOUBLE","DATE","TIMESTAMP","INTEGER","STRUCT(\"a\" INTEGER)","INTERVAL","HUGEINT","DECIMAL(5,2)"],`+
				`"names":["big","dec","f","d","ts","n","s","i","p","pd"],"shape":[1,10],"dict":[100000000000000000000],"byIndex":[1.25],"field":"Field('pd', 'DECIMAL(5,2)')","nullable":true}`)
	})
	t.Run("async with, the dict form, errors", func(t *testing.T) {
		expectPyModuleResult(t, duck, `out = []
async def catch(f):
    try:
        await f()
    except Exception as e:
        out.append(type(e).__name__ + ": " + str(e))
async with await duckdb.connect() as c:
    n = (await c.query("SELECT 2 AS n")).column("n")
async with await duckdb.open() as db:  # the connection closed its database
    await db.register_file_text("r.json", b'[{"x": 1}, {"x": 2}]')
    async with await db.connect() as c2:
        await c2.insert_json_from_path("r.json", {"name": "r"})
        s = (await c2.query("SELECT sum(x) AS s FROM r")).column(0)
    await c2.close()  # again: nothing
    await catch(lambda: c2.prepare("SELECT 1"))
    c3 = await db.connect()
    await catch(lambda: c3.query(1))
    await catch(lambda: c3.prepare(None))
    await catch(lambda: c3.insert_json_from_path("r.json"))
    await catch(lambda: c3.insert_json_from_path("r.json", "r"))
    await catch(lambda: c3.insert_json_from_path("r.json", {"name": "a"}, name="b"))
    await catch(lambda: db.register_file_text(1, "[]"))
    await catch(lambda: db.register_file_text("x", None))
    st = await c3.prepare("SELECT ? AS v")
    await c3.close()
    await catch(lambda: st.query(1))
    t = await db.query("SELECT 1 AS one")
await catch(lambda: c3.query("SELECT 1"))
return [n, s, t] + out`,
			`[[2],[3],[{"one":1}],"DuckDBError: c.prepare: the connection is closed","TypeError: c.query: the SQL must be a string","TypeError: c.prepare: the SQL must be a string",`+
				`"TypeError: c.insert_json_from_path: the table name (name= or options[\"name\"]) must be a string","TypeError: c.insert_json_from_path: options must be a dict, {\"name\": table}",`+
				`"TypeError: c.insert_json_from_path: give name= or options, not both","TypeError: db.register_file_text: the name must be a string","TypeError: db.register_file_text: the text must be a string",`+
				`"DuckDBError: stmt.query: the connection is closed","DuckDBError: c.query: the connection is closed"]`)
	})
}

func TestPythonGLPK(t *testing.T) {
	solve := func(t *testing.T, code string) glpkResult {
		t.Helper()
		_, res, err := run(t, moduleEngine(t), pyModule([]string{"glpk"}, code), nil)
		if err != nil {
			t.Fatal(err)
		}
		var r glpkResult
		if err := json.Unmarshal(res.Value, &r); err != nil {
			t.Fatalf("%s: %v", res.Value, err)
		}
		return r
	}
	t.Run("LP with duals", func(t *testing.T) {
		r := solve(t, `return await glpk.solve({
    "name": "LP",
    "objective": {"direction": glpk.GLP_MAX, "name": "obj", "vars": [{"name": "x1", "coef": 0.6}, {"name": "x2", "coef": 0.5}]},
    "subjectTo": [
        {"name": "cons1", "vars": [{"name": "x1", "coef": 1}, {"name": "x2", "coef": 2}], "bnds": {"type": glpk.GLP_UP, "ub": 1, "lb": 0}},
        {"name": "cons2", "vars": [{"name": "x1", "coef": 3}, {"name": "x2", "coef": 1}], "bnds": {"type": glpk.GLP_UP, "ub": 2, "lb": 0}},
    ],
}, {"msglev": glpk.GLP_MSG_OFF, "presol": True})`)
		if r.Name != "LP" || r.Result.Status != 5 || !near(r.Result.Z, 0.46) || !near(r.Result.Vars["x1"], 0.6) || !near(r.Result.Vars["x2"], 0.2) ||
			!near(r.Result.Dual["cons1"], 0.18) || !near(r.Result.Dual["cons2"], 0.14) {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("MIP", func(t *testing.T) {
		// The knapsack of glpk.js's tests: values 8, 11, 6, 4; weights
		// 5, 7, 4, 3; capacity 14. The optimum takes items 2, 3 and 4.
		r := solve(t, `
items = [("a", 8, 5), ("b", 11, 7), ("c", 6, 4), ("d", 4, 3)]
return await glpk.solve({
    "name": "knapsack",
    "objective": {"direction": glpk.GLP_MAX, "name": "value", "vars": [{"name": n, "coef": v} for n, v, _ in items]},
    "subjectTo": [{"name": "weight", "vars": [{"name": n, "coef": w} for n, _, w in items], "bnds": {"type": glpk.GLP_UP, "ub": 14}}],
    "binaries": [n for n, _, _ in items],
}, {"mipgap": 0, "tmlim": 5})`)
		if r.Result.Status != 5 || !near(r.Result.Z, 21) || r.Result.Dual != nil ||
			r.Result.Vars["a"] != 0 || r.Result.Vars["b"] != 1 || r.Result.Vars["c"] != 1 || r.Result.Vars["d"] != 1 {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("infeasible and unbounded are results", func(t *testing.T) {
		r := solve(t, `return await glpk.solve({"name": "inf", "objective": {"direction": glpk.GLP_MIN, "name": "o", "vars": [{"name": "x", "coef": 1}]},
    "subjectTo": [{"name": "lo", "vars": [{"name": "x", "coef": 1}], "bnds": {"type": glpk.GLP_LO, "lb": 5}},
                  {"name": "hi", "vars": [{"name": "x", "coef": 1}], "bnds": {"type": glpk.GLP_UP, "ub": 3}}]})`)
		if r.Result.Status != 4 { // GLP_NOFEAS
			t.Errorf("infeasible: %+v", r)
		}
		r = solve(t, `return await glpk.solve({"name": "unb", "objective": {"direction": glpk.GLP_MAX, "name": "o", "vars": [{"name": "x", "coef": 1}]},
    "subjectTo": [{"name": "c", "vars": [{"name": "x", "coef": 1}], "bnds": {"type": glpk.GLP_LO, "lb": 1}}]})`)
		if r.Result.Status != 6 { // GLP_UNBND
			t.Errorf("unbounded: %+v", r)
		}
	})
	t.Run("constants", func(t *testing.T) {
		expectPyModuleResult(t, []string{"glpk"}, `return [glpk.GLP_MIN, glpk.GLP_MAX, glpk.GLP_FR, glpk.GLP_LO, glpk.GLP_UP, glpk.GLP_DB, glpk.GLP_FX, glpk.GLP_MSG_OFF, glpk.GLP_UNDEF, glpk.GLP_FEAS, glpk.GLP_INFEAS, glpk.GLP_NOFEAS, glpk.GLP_OPT, glpk.GLP_UNBND]`,
			`[1,2,1,2,3,4,5,0,1,2,3,4,5,6]`)
	})
	t.Run("malformed model", func(t *testing.T) {
		expectPyModuleResult(t, []string{"glpk"}, `try:
    await glpk.solve({"name": "x", "subjectTo": []})
except GLPKError as e:
    return str(e)`, `"glpk: model: objective is missing"`)
		se := expectModuleError(t, pyModule([]string{"glpk"}, `await glpk.solve({"objective": {"direction": 7, "name": "o", "vars": []}})`), sandbox.CodeRuntime, "")
		if !strings.HasPrefix(se.Message, "GLPKError: glpk: objective.direction") {
			t.Errorf("message %q", se.Message)
		}
	})
	t.Run("a model too large for the time limit", func(t *testing.T) {
		req := pyModule([]string{"glpk"}, marketSplitPython+`
return await glpk.solve({"name": "split", "objective": {"direction": glpk.GLP_MIN, "name": "o", "vars": vars}, "subjectTo": subject_to, "binaries": xs})`)
		req.Limits = sandbox.Limits{WallMs: 500}
		start := time.Now()
		expectModuleError(t, req, sandbox.CodeTimeout, "wallMs")
		if took := time.Since(start); took > testenv.ScaleDuration(3*time.Second) {
			t.Errorf("took %v", took)
		}
	})
}

// marketSplitPython is marketSplitStep in Python.
const marketSplitPython = `
seed = 1
def rnd():
    nonlocal seed  # the step is the body of a function
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % 100
m = 6
n = 10 * (m - 1)
vars, subject_to = [], []
for i in range(m):
    vars += [{"name": "sp%d" % i, "coef": 1}, {"name": "sm%d" % i, "coef": 1}]
xs = ["x%d" % j for j in range(n)]
for i in range(m):
    row = [{"name": x, "coef": rnd()} for x in xs]
    total = sum(r["coef"] for r in row)
    row += [{"name": "sp%d" % i, "coef": 1}, {"name": "sm%d" % i, "coef": -1}]
    subject_to.append({"name": "r%d" % i, "vars": row, "bnds": {"type": glpk.GLP_FX, "lb": total // 2}})
`

// TestPythonModulesAbort aborts Python runs in the middle of a DuckDB query
// and of a GLPK search: each ends ABORTED at once.
func TestPythonModulesAbort(t *testing.T) {
	for _, tc := range []struct {
		name    string
		modules []string
		code    string
	}{
		{"duckdb", duck, `db = await duckdb.open()
q = db.query("SELECT count(*) FROM range(1000000000) a, range(1000000) b")
report_status("in the work")
await q`},
		{"glpk", []string{"glpk"}, marketSplitPython + `p = glpk.solve({"name": "split", "objective": {"direction": glpk.GLP_MIN, "name": "o", "vars": vars}, "subjectTo": subject_to, "binaries": xs})
report_status("in the work")
await p`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectAbortMidWork(t, pyModule(tc.modules, tc.code))
		})
	}
}

func TestPythonModulesOnRequest(t *testing.T) {
	t.Run("a module not requested does not exist", func(t *testing.T) {
		expectPyModuleResult(t, nil, `out = []
for name in ("duckdb", "glpk", "DuckDBError", "GLPKError"):
    try:
        eval(name)
    except NameError as e:
        out.append(str(e))
return out`, `["name 'duckdb' is not defined","name 'glpk' is not defined","name 'DuckDBError' is not defined","name 'GLPKError' is not defined"]`)
		se := expectModuleError(t, pyModule([]string{"glpk"}, "db = await duckdb.open()"), sandbox.CodeRuntime, "")
		if !strings.HasPrefix(se.Message, "NameError: name 'duckdb' is not defined (") || !strings.Contains(se.Message, "--modules duckdb") {
			t.Errorf("message %q, want the NameError and how to ask for the module", se.Message)
		}
	})
	t.Run("the plan's modules", func(t *testing.T) {
		for _, tc := range []struct {
			plan    string
			modules []string
			msg     string
		}{
			{"sql", []string{"duckdb", "glpk"}, `module "glpk" is not allowed by plan "sql"`},
			{"none", duck, `module "duckdb" is not allowed by plan "none"`},
		} {
			req := pyModule(tc.modules, "return 1")
			req.Plan = tc.plan
			_, err := moduleEngine(t).Submit(context.Background(), req)
			var se *sandbox.Error
			if !errors.As(err, &se) || se.Code != sandbox.CodeValidation || se.Message != tc.msg {
				t.Errorf("%s %v: %v, want VALIDATION %q", tc.plan, tc.modules, err, tc.msg)
			}
		}
		req := pyModule(duck, "db = await duckdb.open()\nreturn (await db.query('SELECT 1 AS x'))[0]['x']")
		req.Plan = "sql"
		_, res, err := run(t, moduleEngine(t), req, nil)
		if err != nil || string(res.Value) != "1" {
			t.Fatalf("%s %v", res.Value, err)
		}
	})
}
