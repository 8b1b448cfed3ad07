//go:build linux

package pyrt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/pyrt"
	"github.com/stepbox/stepbox/internal/testenv"
)

// The module tests run the real DuckDB and GLPK linked into this binary,
// in the jailed worker process that hosts the Python run, as the engine
// does.

var moduleLimits = func() ipc.Limits {
	l := testLimits
	l.MemoryMB = 128
	return l
}()

func runModules(t *testing.T, modules []string, code string, lim ipc.Limits) *ipc.Event {
	t.Helper()
	h := &recorder{replies: make(chan ipc.Reply, 100)}
	ev := shared(t).Run(context.Background(), pyrt.Job{Code: code, Limits: lim, Modules: modules, Host: h, Replies: h.replies})
	if ev == nil || !ev.Terminal() {
		t.Fatalf("Run returned %+v, not a terminal event", ev)
	}
	return ev
}

var duck = []string{"duckdb"}

func TestDuckDB(t *testing.T) {
	{
		cases := []struct{ name, code, want string }{
			{"aggregate", `db = await duckdb.open()
await db.load("sales", [{"region": "EU", "amount": 12.5}, {"region": "US", "amount": 7}, {"region": "EU", "amount": 3}])
return await db.query("SELECT region, sum(amount) AS total, count(*) AS n FROM sales GROUP BY region ORDER BY region")`,
				`[{"region":"EU","total":15.5,"n":2},{"region":"US","total":7.0,"n":1}]`},
			// Integers are exact ints on both sides of 2^53, DECIMALs
			// decimal.Decimal (which, like a BigInt in JavaScript, a
			// step's result writes as an exact JSON number), DOUBLEs floats.
			{"types and big integers", `import datetime, decimal
db = await duckdb.open()
[r] = await db.query("SELECT 9007199254740991::BIGINT AS safe, 9007199254740993::BIGINT AS big, 12.5::DECIMAL(10,2) AS dec, 12345678901234567890.5::DECIMAL(38,1) AS wide, 3::DOUBLE AS f, DATE '2024-03-01' AS d, NULL AS n, [1, 2] AS l, {'a': 1} AS s, ?::HUGEINT AS p, ?::DATE AS pd, ?::DECIMAL(5,2) AS pdec", 10 ** 20, datetime.date(2024, 3, 1), decimal.Decimal("1.25"))
for k in ("dec", "wide", "pdec"):
    assert type(r[k]) is decimal.Decimal, (k, r[k])
    r[k] = str(r[k])
r["types"] = [type(r[k]).__name__ for k in ("safe", "big", "f", "p")]
r["sums"] = [r["safe"] + 1, r["big"] + 1]
return r`,
				`{"safe":9007199254740991,"big":9007199254740993,"dec":"12.50","wide":"12345678901234567890.5","f":3.0,"d":"2024-03-01","n":null,"l":[1,2],"s":{"a":1},"p":100000000000000000000,"pd":"2024-03-01","pdec":"1.25","types":["int","int","float","int"],"sums":[9007199254740992,9007199254740994]}`},
			{"a Decimal is returned as an exact number", `db = await duckdb.open()
return await db.query("SELECT 1.50::DECIMAL(3,2) AS d, 12345678901234567890.5::DECIMAL(38,1) AS w")`, `[{"d":1.50,"w":12345678901234567890.5}]`},
			{"loaded lists", `db = await duckdb.open()
await db.load("t", [{"tags": ["a", "b"], "day": "2024-03-01"}, {"tags": [], "day": None}])
return await db.query("SELECT tags[1] AS first, len(tags) AS n, typeof(day) AS t FROM t")`,
				`[{"first":"a","n":2,"t":"DATE"},{"first":null,"n":0,"t":"DATE"}]`},
			{"JSON text and exec", `db = await duckdb.open()
await db.load("t", '[{"a": 1},\n {"a": 2}]')
await db.exec("CREATE TABLE u AS SELECT a * 10 AS b FROM t; DELETE FROM u WHERE b > 10")
return await db.query("SELECT (SELECT sum(a) FROM t) AS s, (SELECT sum(b) FROM u) AS b")`, `[{"s":3,"b":10}]`},
			{"gather and async with", `import asyncio
async with await duckdb.open() as db:
    rs = await asyncio.gather(*(db.query("SELECT ? * 2 AS x", i) for i in (1, 2, 3)))
try:
    await db.query("SELECT 1")
except DuckDBError as e:
    return [r[0]["x"] for r in rs] + [str(e)]`, `[2,4,6,"duckdb: query: the database is closed"]`},
			{"one database at a time", `db = await duckdb.open()
try:
    await duckdb.open()
except duckdb.Error as e:
    msg = str(e)
await db.close()
db2 = await duckdb.open()
return [msg, (await db2.query("SELECT 1 AS one"))[0]["one"]]`,
				`["duckdb.open: a run may have 1 database open at a time; close it first",1]`},
			{"a connection's table", `c = await duckdb.connect()
t = await c.query("SELECT range AS i, range::DOUBLE / 2 AS f FROM range(3) WHERE range >= ?", 1)
return [t.num_rows, t.column_names, [f.type for f in t.schema], t.to_pylist(), t.column("f"), repr(t)]`,
				`[2,["i","f"],["BIGINT","DOUBLE"],[{"i":1,"f":0.5},{"i":2,"f":1.0}],[0.5,1.0],"<Table of 2 rows: i, f>"]`},
			{"left open and running at the end", `db = await duckdb.open()
db.query("SELECT count(*) FROM range(1000000000) a, range(1000) b")  # never awaited
return "done"`, `"done"`},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ev := runModules(t, duck, tc.code, moduleLimits)
				if tc.want == "" {
					if f := expectError(t, ev, ipc.CodeRuntime, ""); !strings.Contains(f.Message, "Decimal is not JSON serializable") {
						t.Errorf("message %q", f.Message)
					}
					return
				}
				expectResult(t, ev, tc.want)
			})
		}
	}
}

func TestDuckDBErrors(t *testing.T) {
	{
		ev := runModules(t, duck, `db = await duckdb.open()
deep = []
for _ in range(600):
    deep = [deep]
out = []
for f in [
    lambda: db.query("SELECT * FROM nope"),
    lambda: db.load("1bad", [{"a": 1}]),
    lambda: db.load("t", []),
    lambda: db.load("t", 42),
    lambda: db.load("t", "not JSON"),
    lambda: db.query(42),
    lambda: db.query("SELECT ?::INT", "x"),
    lambda: db.load("t", [{"a": float("nan")}]),
    lambda: db.load("t", deep),
    lambda: db.exec("COPY (SELECT 1) TO '/tmp/x.csv'"),
]:
    try:
        await f()
        out.append("no error")
    except Exception as e:
        out.append(type(e).__name__ + ": " + str(e).split("\n")[0])
return out`, moduleLimits)
		if ev.Kind != ipc.KindResult {
			t.Fatal(describe(ev))
		}
		var got []string
		if err := json.Unmarshal(ev.Result.Value, &got); err != nil {
			t.Fatal(err)
		}
		for i, want := range []string{
			"DuckDBError: duckdb: Catalog Error: Table with name nope does not exist!",
			`DuckDBError: duckdb: load: table name "1bad" is not a plain identifier`,
			"DuckDBError: duckdb: load: ",
			"TypeError: db.load: rows must be a list of dicts, or its JSON text",
			"DuckDBError: duckdb: load: rows is not valid JSON",
			"TypeError: db.query: the SQL must be a string",
			"DuckDBError: duckdb: Conversion Error:",
			"TypeError: db.load rows is not JSON-serializable: Out of range float values",
			"DuckDBError: db.load: the rows are JSON value nested too deeply (more than 512 levels)",
			"DuckDBError: duckdb: ",
		} {
			if i >= len(got) || !strings.HasPrefix(got[i], want) {
				t.Errorf("case %d: got %q, want %q…", i, got, want)
			}
		}
		// Uncaught: RUNTIME at the step's line.
		f := expectError(t, runModules(t, duck, "db = await duckdb.open()\n\nawait db.query('SELECT * FROM nope')", moduleLimits), ipc.CodeRuntime, "")
		if !strings.HasPrefix(f.Message, "DuckDBError: duckdb: Catalog Error: Table with name nope does not exist!") ||
			f.Position == nil || f.Position.Line != 3 {
			t.Errorf("uncaught: %+v (position %+v)", f, f.Position)
		}
	}
}

func TestDuckDBLimits(t *testing.T) {
	{
		t.Run("wall limit", func(t *testing.T) {
			l := moduleLimits
			l.WallMs = 500
			start := time.Now()
			expectError(t, runModules(t, duck, `db = await duckdb.open()
return await db.query("SELECT count(*) FROM range(1000000000) a, range(1000000) b")`, l), ipc.CodeTimeout, ipc.LimitWall)
			if took := time.Since(start); took > testenv.ScaleDuration(3*time.Second) {
				t.Errorf("took %v", took)
			}
		})
		t.Run("memory", func(t *testing.T) {
			l := moduleLimits
			l.MemoryMB = 32
			f := expectError(t, runModules(t, duck, `db = await duckdb.open()
try:
    await db.exec("CREATE TABLE big AS SELECT repeat('x', 200) || range AS s FROM range(2000000)")
except Exception:
    pass
return "escaped"`, l), ipc.CodeOOM, ipc.LimitMemory)
			if !strings.Contains(f.Message, "16 MiB") {
				t.Errorf("message %q", f.Message)
			}
		})
		t.Run("result rows", func(t *testing.T) {
			expectError(t, runModules(t, duck, `db = await duckdb.open()
return len(await db.query("SELECT * FROM range(200000)"))`, moduleLimits), ipc.CodeLimitExceeded, "duckdbResultRows")
		})
		t.Run("call bytes", func(t *testing.T) {
			l := moduleLimits
			l.MemoryMB = 16 // one call carries at most 4 MiB
			expectResult(t, runModules(t, duck, `db = await duckdb.open()
try:
    await db.load("t", [{"s": "x" * 1000}] * 5000)
except DuckDBError as e:
    return str(e).startswith("db.load: the call is 50") and str(e).endswith(" bytes of JSON, more than one module call may carry (4194304 bytes)")`, l), `true`)
		})
		t.Run("calls in flight", func(t *testing.T) {
			expectResult(t, runModules(t, duck, `db = await duckdb.open()
fs = [db.query("SELECT 1") for _ in range(64)]
try:
    db.query("SELECT 1")
except DuckDBError as e:
    msg = str(e)
await fs[0]
await db.query("SELECT 1")
return msg`, moduleLimits), `"duckdb.query: too many module calls in flight (the limit is 64); await them"`)
		})
	}
}

func TestGLPK(t *testing.T) {
	{
		ev := runModules(t, []string{"glpk"}, `r = await glpk.solve({
    "name": "LP",
    "objective": {"direction": glpk.GLP_MAX, "name": "obj", "vars": [{"name": "x1", "coef": 0.6}, {"name": "x2", "coef": 0.5}]},
    "subjectTo": [
        {"name": "cons1", "vars": [{"name": "x1", "coef": 1}, {"name": "x2", "coef": 2}], "bnds": {"type": glpk.GLP_UP, "ub": 1, "lb": 0}},
        {"name": "cons2", "vars": [{"name": "x1", "coef": 3}, {"name": "x2", "coef": 1}], "bnds": {"type": glpk.GLP_UP, "ub": 2, "lb": 0}},
    ],
}, {"msglev": glpk.GLP_MSG_OFF, "presol": True})
res = r["result"]
try:
    await glpk.solve({"name": "x", "subjectTo": []})
except GLPKError as e:
    err = str(e)
return [res["status"] == glpk.GLP_OPT, round(res["z"], 6), round(res["vars"]["x1"], 6), round(res["dual"]["cons1"], 6), err]`, moduleLimits)
		expectResult(t, ev, `[true,0.46,0.6,0.18,"glpk: model: objective is missing"]`)
	}
}

func TestModulesNotRequested(t *testing.T) {
	expectResult(t, runModules(t, duck, `out = []
for name in ("duckdb", "DuckDBError", "glpk", "GLPKError"):
    try:
        eval(name)
        out.append(name)
    except NameError:
        pass
return out`, moduleLimits), `["duckdb","DuckDBError"]`)
	expectResult(t, runStep(t, shared(t), "return 1", testLimits, nil), "1")
	h := &recorder{replies: make(chan ipc.Reply, 1)}
	expectError(t, shared(t).Run(context.Background(), pyrt.Job{Code: "return 1", Limits: testLimits, Modules: []string{"sqlite"}, Host: h, Replies: h.replies}),
		ipc.CodeValidation, "")
}

// TestUntrustedModuleCalls forges module calls from the step's process:
// each is refused as the step's exception, or ends the run, never reaching
// the module host malformed.
func TestUntrustedModuleCalls(t *testing.T) {
	for _, c := range []struct{ name, line, want string }{
		{"not granted", `{"k":"module","id":1,"op":"glpk.solve","model":{}}`, `"glpk.solve: the module \"glpk\" was not requested for this run"`},
		{"unknown op", `{"k":"module","id":1,"op":"duckdb.attach"}`, `"unknown module operation \"duckdb.attach\""`},
		{"wrong arguments", `{"k":"module","id":1,"op":"duckdb.open","sql":"x"}`, `"duckdb.open: malformed call: duckdb.open: arguments do not match the operation"`},
		{"negative handle", `{"k":"module","id":1,"op":"duckdb.exec","handle":-3,"sql":"SELECT 1"}`, `"duckdb: exec: the database is closed"`},
		{"deep params", `{"k":"module","id":1,"op":"duckdb.query","handle":1,"sql":"x","params":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`,
			`"db.query: the parameters are JSON value nested too deeply (more than 512 levels)"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := fmt.Sprintf(`import os, json
os.write(4, %q.encode() + b"\n")
return json.loads(os.read(3, 1 << 16))["error"]`, c.line)
			expectResult(t, runModules(t, duck, code, moduleLimits), c.want)
		})
	}
	for _, c := range []struct{ name, line string }{
		{"id out of sequence", `{"k":"module","id":5,"op":"duckdb.open"}`},
		{"two kinds", `{"k":"module","k":"result","value":1}`},
		{"too deep", `{"k":"module","id":1,"op":"glpk.solve","model":` + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + `}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := fmt.Sprintf("import os, time\nos.write(4, %q.encode() + b\"\\n\")\ntime.sleep(100)", c.line)
			f := expectError(t, runModules(t, duck, code, moduleLimits), ipc.CodeRuntime, "")
			if !strings.Contains(f.Message, "broke the bridge protocol") {
				t.Errorf("message %q", f.Message)
			}
		})
	}
	checkNoLeftovers(t, shared(t))
}
