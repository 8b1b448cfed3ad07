package jsrt

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/testenv"
)

func runJob(t *testing.T, rt *Runtime, job Job) *ipc.Event {
	t.Helper()
	h := &recorder{replies: make(chan ipc.Reply, 100)}
	job.Host, job.Replies = h, h.replies
	if job.Limits == (ipc.Limits{}) {
		job.Limits = testLimits
	}
	return rt.Run(context.Background(), job)
}

func expectValue(t *testing.T, ev *ipc.Event, want string) {
	t.Helper()
	if ev.Result == nil {
		t.Fatalf("error %+v, want %s", ev.Error, want)
	}
	if got := string(ev.Result.Value); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestModules(t *testing.T) {
	rt := newRT(t)
	t.Run("duckdb and glpk", func(t *testing.T) {
		ev := runJob(t, rt, Job{Modules: []string{ModuleDuckDB, ModuleGLPK}, Code: `
const db = await duckdb.open();
await db.load("t", [{a: 1}, {a: 2}]);
const r = await db.query("SELECT sum(a) AS s, ? AS p FROM t", 42);
const sol = await glpk.solve({name: "lp", objective: {direction: glpk.GLP_MAX, name: "z", vars: [{name: "x", coef: 1}]},
  subjectTo: [{name: "c", vars: [{name: "x", coef: 1}], bnds: {type: glpk.GLP_UP, ub: 3}}]});
return [r, sol.result.z, sol.result.dual]`})
		expectValue(t, ev, `[[{"s":3,"p":42}],3,{"c":1}]`)
	})
	t.Run("only what the job asks for", func(t *testing.T) {
		expectValue(t, runJob(t, rt, Job{Code: `return [typeof duckdb, typeof glpk]`}), `["undefined","undefined"]`)
		expectValue(t, runJob(t, rt, Job{Modules: []string{ModuleGLPK}, Code: `return [typeof duckdb, typeof glpk]`}), `["undefined","object"]`)
	})
	t.Run("unknown module", func(t *testing.T) {
		ev := runJob(t, rt, Job{Modules: []string{"sqlite"}, Code: `return 1`})
		if ev.Error == nil || ev.Error.Code != ipc.CodeValidation {
			t.Fatalf("%+v", ev)
		}
	})
	t.Run("calls in flight are bounded", func(t *testing.T) {
		ev := runJob(t, rt, Job{Modules: []string{ModuleDuckDB}, Code: `
const db = await duckdb.open();
const ps = [];
for (let i = 0; i < 100; i++) ps.push(db.query("SELECT ? AS i", i));
const rs = await Promise.allSettled(ps);
return [rs.filter(r => r.status === "fulfilled").length, rs.find(r => r.status === "rejected").reason.message]`})
		expectValue(t, ev, `[64,"duckdb.query: too many module calls in flight (the limit is 64); await them"]`)
	})
	t.Run("module work is off the VM goroutine", func(t *testing.T) {
		lim := testLimits
		lim.WallMs = 400
		start := time.Now()
		ev := runJob(t, rt, Job{Limits: lim, Modules: []string{ModuleDuckDB}, Code: `
const db = await duckdb.open();
await db.query("SELECT count(*) FROM range(1000000000) a, range(1000000) b")`})
		if ev.Error == nil || ev.Error.Code != ipc.CodeTimeout || ev.Error.Limit != ipc.LimitWall {
			t.Fatalf("%+v", ev)
		}
		if took := time.Since(start); took > testenv.ScaleDuration(2*time.Second) {
			t.Fatalf("took %v", took)
		}
		// The query ran for the whole wall limit; had it counted as guest
		// CPU, CPU time would be about the wall time.
		if cpu, wall := ev.Error.Stats.CPUMs, ev.Error.Stats.WallMs; cpu > wall/2 {
			t.Errorf("the query counted as guest CPU: %v ms of %v ms", cpu, wall)
		}
	})
}

func TestModuleMemory(t *testing.T) {
	for _, tc := range []struct {
		mb   int
		want int64
	}{{16, 16 << 20}, {32, 16 << 20}, {128, 64 << 20}, {1024, 512 << 20}} {
		if got := ModuleMemoryBytes(tc.mb); got != tc.want {
			t.Errorf("memoryMb %d: %d, want %d", tc.mb, got, tc.want)
		}
	}
}

// pkg is a package bundle as package npm makes them, small.
var pkg = ipc.Package{Name: "tiny", Version: "1.0.0", Source: `(function () {
var __sbx_pkg = (() => { const ns = {}; ns.double = x => 2 * x; ns.default = "dflt"; return ns })();
return __sbx_pkg;
})()`}

func TestPackageImports(t *testing.T) {
	rt := newRT(t)
	expectValue(t, runJob(t, rt, Job{Packages: []ipc.Package{pkg}, Code: `import * as t from "tiny";
import d, { double } from "tiny";
const u = await import("tiny");
return [t.double(2), d, double(3), u === t]`}), `[4,"dflt",6,true]`)

	t.Run("the next run gets a VM with the package evaluated", func(t *testing.T) {
		job := Job{Packages: []ipc.Package{pkg}, Code: `import { double } from "tiny"; return double(5)`}
		expectValue(t, runJob(t, rt, job), `10`)
		// The filler prepares a VM for the next run.
		testenv.WaitFor(t, "a VM with the package preloaded", rt.hasPreloaded)
		before := rt.preloaded.Load()
		expectValue(t, runJob(t, rt, job), `10`)
		if rt.preloaded.Load() != before+1 {
			t.Fatal("the run did not get the prepared VM")
		}
	})
	t.Run("each run has its own namespace", func(t *testing.T) {
		expectValue(t, runJob(t, rt, Job{Packages: []ipc.Package{pkg}, Code: `import * as t from "tiny"; t.double = () => 0; return t.double(1)`}), `0`)
		expectValue(t, runJob(t, rt, Job{Packages: []ipc.Package{pkg}, Code: `import * as t from "tiny"; return t.double(1)`}), `2`)
	})
	t.Run("a package that throws", func(t *testing.T) {
		bad := ipc.Package{Name: "bad", Version: "1.0.0", Source: `(function () { throw new Error("boom") })()`}
		ev := runJob(t, rt, Job{Packages: []ipc.Package{bad}, Code: `import "bad"; return 1`})
		if ev.Error == nil || ev.Error.Code != ipc.CodeRuntime || !strings.Contains(ev.Error.Message, "package bad@1.0.0 failed to load") {
			t.Fatalf("%+v", ev)
		}
	})
	t.Run("a package that does not compile", func(t *testing.T) {
		bad := ipc.Package{Name: "bad", Version: "1.0.1", Source: `(function () {`}
		ev := runJob(t, rt, Job{Packages: []ipc.Package{bad}, Code: `import "bad"; return 1`})
		if ev.Error == nil || ev.Error.Code != ipc.CodeUnavailable {
			t.Fatalf("%+v", ev)
		}
	})
	t.Run("a package's memory counts", func(t *testing.T) {
		hog := ipc.Package{Name: "hog", Version: "1.0.0", Source: `(function () { const a = []; while (true) a.push("x".repeat(100000) + a.length) })()`}
		lim := testLimits
		lim.MemoryMB = 16
		// Without warm VMs, so without a preload of hog (bounded, but slow
		// under the race detector).
		cold, err := New(Config{Warm: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer cold.Close()
		ev := runJob(t, cold, Job{Limits: lim, Packages: []ipc.Package{hog}, Code: `import "hog"`})
		if ev.Error == nil || ev.Error.Code != ipc.CodeOOM {
			t.Fatalf("%+v %+v", ev, ev.Error)
		}
	})
}

// TestDuckDBValues: loaded arrays are LISTs (tags[1] is the first tag), and
// every integer type is a number within ±(2^53-1) and a BigInt beyond, so
// that v + 1 is exact or a TypeError, never a string. Beyond int64 the
// BigInt comes from JSON.parse's reviver, as the builder gives up.
func TestDuckDBValues(t *testing.T) {
	rt := newRT(t)
	for _, tc := range []struct{ name, code, want string }{
		{"lists", `await db.load("t", [{tags: ["a", "b"]}, {tags: []}]);
return await db.query("SELECT tags[1] AS first, len(tags) AS n FROM t")`, `[{"first":"a","n":2},{"first":null,"n":0}]`},
		{"structs", `await db.load("t", [{p: {x: 1, when: "2024-03-01"}}, {p: {x: 2}}]);
return await db.query("SELECT p.x AS x, typeof(p) AS t FROM t")`, `[{"x":1,"t":"STRUCT(x BIGINT, \"when\" DATE)"},{"x":2,"t":"STRUCT(x BIGINT, \"when\" DATE)"}]`},
		{"2^53 - 1 is a number", `const [r] = await db.query("SELECT 9007199254740991::BIGINT AS v, count(*) AS n FROM range(3)");
return [typeof r.v, r.v + 1, typeof r.n, r.n + 1]`, `["number",9007199254740992,"number",4]`},
		{"2^53 + 1 is a BigInt", `const [r] = await db.query("SELECT 9007199254740993::BIGINT AS v, (-9007199254740993)::BIGINT AS m");
return [typeof r.v, String(r.v + 1n), String(r.m), (() => { try { return r.v + 1 } catch (e) { return e.name } })()]`,
			`["bigint","9007199254740994","-9007199254740993","TypeError"]`},
		{"UBIGINT and HUGEINT", `const [r] = await db.query("SELECT 18446744073709551615::UBIGINT AS u, 170141183460469231731687303715884105727::HUGEINT AS h, 5::HUGEINT AS s, [9007199254740993] AS l");
return [typeof r.u, String(r.u), String(r.h), typeof r.s, typeof r.l[0]]`,
			`["bigint","18446744073709551615","170141183460469231731687303715884105727","number","bigint"]`},
		{"doubles stay numbers", `const [r] = await db.query("SELECT 2e20::DOUBLE AS d, 3::DOUBLE AS i");
return [typeof r.d, r.d === 2e20, r.i]`, `["number",true,3]`},
		{"DECIMAL is a number", `const [r] = await db.query("SELECT 12.50::DECIMAL(5,2) AS d");
return [typeof r.d, r.d + 1]`, `["number",13.5]`},
		{"a wide DECIMAL fails", `try { await db.query("SELECT 12345678901234567890.5::DECIMAL(38,1) AS d") } catch (e) { return e.message.includes("cast it to VARCHAR") }`, `true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectValue(t, runJob(t, rt, Job{Modules: []string{ModuleDuckDB}, Code: "const db = await duckdb.open();\n" + tc.code}), tc.want)
		})
	}
}
