//go:build cgo

package differential

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// duckCase is one query, run through DuckDB-WASM and through Stepbox's
// duckdb. The JSON members are what duckdb.mjs and the steps read.
type duckCase struct {
	Name   string         `json:"-"`
	Tables map[string]any `json:"tables,omitempty"` // table name -> rows, loaded first
	SQL    string         `json:"sql"`
	Params []any          `json:"params,omitempty"` // through a prepared statement
	// Differs lists the README's differences the case shows, each of
	// which its results must need to compare equal (see compareDuck):
	//   "bigint":   a BIGINT (COUNT(*), len) is a BigInt in DuckDB-WASM,
	//               a number in Stepbox within ±(2^53-1);
	//   "decimal":  a DECIMAL (and a HUGEINT) is Arrow's unscaled
	//               Uint32Array in DuckDB-WASM, a number in Stepbox;
	//   "temporal": a DATE or TIMESTAMP is epoch milliseconds in
	//               DuckDB-WASM, ISO 8601 text in Stepbox;
	//   "list":     a LIST is an Arrow Vector in DuckDB-WASM, an array in
	//               Stepbox;
	//   "blob":     a BLOB is a Uint8Array in DuckDB-WASM, base64 text in
	//               Stepbox;
	//   "time":     a TIME is microseconds as a BigInt in DuckDB-WASM,
	//               "13:45:00" in Stepbox;
	//   "interval": an INTERVAL is an Int32Array of two (Arrow JS 17 drops
	//               its nanoseconds) in DuckDB-WASM, {months, days,
	//               micros} in Stepbox;
	//   "double":   NaN and ±Infinity are numbers in DuckDB-WASM, the
	//               strings "NaN", "Infinity", "-Infinity" in Stepbox;
	//   "load":     insertJSONFromPath types loaded columns as Arrow's
	//               JSON reader does (INTEGER, DOUBLE, TIMESTAMP_S for a
	//               date), Stepbox's load as DuckDB's read_json (BIGINT,
	//               DATE); Types lists the columns;
	//   "version":  DuckDB-WASM 1.32.0 is DuckDB 1.4.3, Stepbox links
	//               1.5.6: Values lists the answers that differ;
	//   "refused":  Stepbox refuses the SQL (files, settings,
	//               extensions) with an error containing Refusal, where
	//               DuckDB-WASM answers.
	Differs []string `json:"-"`
	// Types: loaded column "table.column" -> {Stepbox's type, DuckDB-WASM's}.
	Types map[string][2]string `json:"-"`
	// Values: result column -> {Stepbox's value, DuckDB-WASM's} in every row.
	Values  map[string][2]any `json:"-"`
	Refusal string            `json:"-"`
}

// duckStep does in a Stepbox step, through the DuckDB-WASM-style
// surface, what duckdb.mjs does under Node; a BigInt is tagged as there.
const duckStep = `const out = [];
const tag = (k, v) => typeof v === "bigint" ? { $bigint: String(v) } : v;
for (const c of input) {
  const db = await duckdb.open();
  const conn = await db.connect();
  try {
    const types = {};
    for (const [name, rows] of Object.entries(c.tables || {})) {
      await db.registerFileText(name + ".json", JSON.stringify(rows));
      await conn.insertJSONFromPath(name + ".json", { name });
      for (const r of (await conn.query("SELECT column_name AS c, column_type AS t FROM (DESCRIBE " + name + ")")).toArray()) types[name + "." + r.c] = r.t;
    }
    const t = c.params ? await (await conn.prepare(c.sql)).query(...c.params) : await conn.query(c.sql);
    const fields = t.schema.fields.map((f) => ({ name: f.name }));
    out.push(JSON.parse(JSON.stringify({ fields, rows: t.toArray(), types }, tag)));
  } catch (e) {
    out.push({ error: String(e && e.message) });
  } finally {
    await conn.close();
    await db.close();
  }
}
return out;`

// duckPyStep is duckStep in Python, through db.load and db.query: the
// mirror follows the same rules, so it must give what duckStep gives.
const duckPyStep = `import decimal
SAFE = (1 << 53) - 1
def tag(v):
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return v if -SAFE <= v <= SAFE else {"$bigint": str(v)}
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, list):
        return [tag(x) for x in v]
    if isinstance(v, dict):
        return {k: tag(x) for k, x in v.items()}
    return v
out = []
for c in input:
    db = await duckdb.open()
    try:
        types = {}
        for name, rows in (c.get("tables") or {}).items():
            await db.load(name, rows)
            for r in await db.query("SELECT column_name AS c, column_type AS t FROM (DESCRIBE " + name + ")"):
                types[name + "." + r["c"]] = r["t"]
        rows = await db.query(c["sql"], *(c.get("params") or []))
        names = list(rows[0].keys()) if rows else []
        out.append({"fields": [{"name": n} for n in names], "rows": tag(rows), "types": types})
    except Exception as e:
        out.append({"error": str(e)})
    finally:
        await db.close()
return out`

func duckCases() []duckCase {
	sales := []any{
		map[string]any{"id": 1, "region": "EU", "amount": 12.5, "day": "2026-01-02", "ts": "2026-01-02T03:04:05", "tags": []any{"a", "b"}, "o": map[string]any{"x": 1, "y": "s"}},
		map[string]any{"id": 2, "region": "US", "amount": 30, "day": "2026-02-03", "ts": "2026-02-03T10:00:00", "tags": []any{"c"}, "o": map[string]any{"x": 2, "y": "t"}},
		map[string]any{"id": 3, "region": "EU", "amount": 7.25, "day": "2026-02-04", "ts": "2026-02-04T11:30:00", "tags": []any{}, "o": map[string]any{"x": 3, "y": "u"}},
	}
	loaded := map[string][2]string{
		"sales.id": {"BIGINT", "INTEGER"}, "sales.day": {"DATE", "TIMESTAMP_S"}, "sales.ts": {"TIMESTAMP", "TIMESTAMP_S"},
		"sales.o": {"STRUCT(x BIGINT, y VARCHAR)", "STRUCT(x DOUBLE, y VARCHAR)"},
	}
	t := map[string]any{"sales": sales}
	return []duckCase{
		{Name: "list functions over loaded arrays", Tables: t, SQL: "SELECT id, tags[1] AS first, len(tags) AS n, list_contains(tags, 'c') AS has_c FROM sales ORDER BY id",
			Differs: []string{"bigint", "load"}, Types: loaded},
		{Name: "a struct field of loaded objects", Tables: t, SQL: "SELECT o.y AS y, o.x * 2 AS x2 FROM sales ORDER BY id",
			Differs: []string{"load"}, Types: loaded, Values: map[string][2]any{}},
		{Name: "a group-by", Tables: t, SQL: "SELECT region, count(*) AS n, sum(amount) AS total FROM sales GROUP BY region ORDER BY region",
			Differs: []string{"bigint", "load"}, Types: loaded},
		{Name: "loaded dates", Tables: t, SQL: "SELECT id, day, ts FROM sales WHERE day >= DATE '2026-02-01' ORDER BY id",
			Differs: []string{"temporal", "load"}, Types: loaded},
		{Name: "integers and doubles", SQL: "SELECT 42 AS i, 2147483647::INTEGER AS max32, 0.1::DOUBLE AS d, 3::DOUBLE AS whole, 1e300 AS huge, -0.5::FLOAT AS f, true AS b, NULL AS n, 'héllo' AS s"},
		{Name: "BIGINT both sides of 2^53", SQL: "SELECT 9007199254740991::BIGINT AS safe, 9007199254740993::BIGINT AS unsafe, (-9223372036854775808)::BIGINT AS min",
			Differs: []string{"bigint"}},
		{Name: "HUGEINT and DECIMAL", SQL: "SELECT 42::HUGEINT AS h, 12.50::DECIMAL(4,2) AS price, (-0.05)::DECIMAL(18,3) AS neg, sum(x) AS total FROM (VALUES (1.25), (2.50)) v(x)",
			Differs: []string{"decimal"}},
		{Name: "NaN and infinities", SQL: "SELECT 'NaN'::DOUBLE AS nan, 'Infinity'::DOUBLE AS inf, '-Infinity'::DOUBLE AS ninf", Differs: []string{"double"}},
		{Name: "dates and timestamps", SQL: "SELECT DATE '2024-02-29' AS d, TIMESTAMP '2024-03-01 13:45:00.123' AS ts, TIMESTAMPTZ '2024-03-01 13:45:00+02' AS tz",
			Differs: []string{"temporal"}},
		{Name: "a time of day", SQL: "SELECT TIME '13:45:00' AS t, TIME '00:00:01.5' AS frac", Differs: []string{"time"}},
		{Name: "an interval", SQL: "SELECT INTERVAL 1 DAY AS day", Differs: []string{"interval"}},
		{Name: "a blob", SQL: `SELECT '\xDE\xAD\xBE\xEF'::BLOB AS b`, Differs: []string{"blob"}},
		{Name: "lists, structs and maps", SQL: "SELECT [1, 2, 3] AS l, {'a': 1, 'b': 'x'} AS st, MAP {'k': 1, 'j': 2} AS m, [{'a': [1]}] AS nested, [] :: INTEGER[] AS empty",
			Differs: []string{"list"}},
		{Name: "strings, UUIDs and enums", SQL: "SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID AS u, 'b'::ENUM('a', 'b') AS e, repeat('x', 3) AS r, upper('ß') AS up"},
		{Name: "a prepared statement", SQL: "SELECT ?::INTEGER + 1 AS v, ? AS s, ?::DOUBLE * 2 AS d", Params: []any{41, "x", 1.25}},
		{Name: "a prepared statement over loaded rows", Tables: t, SQL: "SELECT region, count(*) AS n FROM sales WHERE amount > ? GROUP BY region ORDER BY region",
			Params: []any{10}, Differs: []string{"bigint", "load"}, Types: loaded},
		{Name: "window functions", Tables: t, SQL: "SELECT id, row_number() OVER (ORDER BY amount DESC) AS rank, sum(amount) OVER (PARTITION BY region) AS region_total FROM sales ORDER BY id",
			Differs: []string{"bigint", "load"}, Types: loaded},
		{Name: "date_trunc's type changed in DuckDB 1.5", SQL: "SELECT typeof(date_trunc('month', TIMESTAMP '2026-03-05 01:00:00')) AS t",
			Differs: []string{"version"}, Values: map[string][2]any{"t": {"TIMESTAMP", "DATE"}}},
		{Name: "a file read", SQL: "SELECT * FROM read_csv('/etc/passwd') LIMIT 1", Differs: []string{"refused"}, Refusal: "disabled by configuration"},
		{Name: "a setting", SQL: "SET memory_limit = '100MB'", Differs: []string{"refused"}, Refusal: "the configuration has been locked"},
	}
}

// TestDuckDBAgainstDuckDBWASM runs every case through DuckDB-WASM 1.32.0
// under Node and through Stepbox's duckdb in a JavaScript step (its
// DuckDB-WASM-style surface) and a Python step, and checks that each
// pair is the same or differs exactly as the case says (and as the
// README lists), and that the Python step answers as the JavaScript one.
func TestDuckDBAgainstDuckDBWASM(t *testing.T) {
	cases := duckCases()
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	b := runNode(t, "duckdb.mjs", in)
	var theirs struct {
		Version string           `json:"version"`
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(b, &theirs); err != nil {
		t.Fatal(err)
	}
	if theirs.Version != "1.32.0" || len(theirs.Results) != len(cases) {
		t.Fatalf("DuckDB-WASM %s gave %d results for %d cases", theirs.Version, len(theirs.Results), len(cases))
	}

	limits := sandbox.Limits{CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs}
	e, err := sandbox.New(sandbox.Config{Plans: map[string]sandbox.Limits{"default": limits}, Caps: limits})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	results := map[sandbox.Language][]map[string]any{}
	for _, lang := range []struct {
		lang sandbox.Language
		code string
	}{{sandbox.JavaScript, duckStep}, {sandbox.Python, duckPyStep}} {
		res, err := e.Run(context.Background(), sandbox.Request{Language: lang.lang, Code: lang.code, Input: in, Modules: []string{"duckdb"}}, nil)
		if err != nil {
			t.Fatalf("%s: %v", lang.lang, err)
		}
		var ours []map[string]any
		if err := json.Unmarshal(res.Value, &ours); err != nil {
			t.Fatal(err)
		}
		if len(ours) != len(cases) {
			t.Fatalf("%s: %d results for %d cases", lang.lang, len(ours), len(cases))
		}
		results[lang.lang] = ours
	}
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ours := results[sandbox.JavaScript][i]
			compareDuck(t, c, ours, theirs.Results[i])
			if py := results[sandbox.Python][i]; !same(py, ours) {
				t.Errorf("Python %s\nJavaScript %s", js(py), js(ours))
			}
		})
	}
}

// compareDuck checks Stepbox's result o against DuckDB-WASM's g: equal
// where the case declares no difference, and otherwise equal by exactly
// the declared differences, each of which must be needed.
func compareDuck(t *testing.T, c duckCase, o, g map[string]any) {
	t.Helper()
	if slices.Contains(c.Differs, "refused") {
		msg, _ := o["error"].(string)
		if !strings.Contains(msg, c.Refusal) || g["error"] != nil {
			t.Errorf("Stepbox %s, want an error containing %q; DuckDB-WASM %s, want an answer", js(o), c.Refusal, js(g))
		}
		return
	}
	if o["error"] != nil || g["error"] != nil {
		t.Fatalf("Stepbox %s\nDuckDB-WASM %s", js(o), js(g))
	}
	used := map[string]bool{}
	var names []string
	for _, f := range o["fields"].([]any) {
		names = append(names, f.(map[string]any)["name"].(string))
	}
	var theirNames []string
	for _, f := range g["fields"].([]any) {
		theirNames = append(theirNames, f.(map[string]any)["name"].(string))
	}
	if !slices.Equal(names, theirNames) {
		t.Errorf("columns: Stepbox %q, DuckDB-WASM %q", names, theirNames)
	}
	// Loaded column types.
	ot, _ := o["types"].(map[string]any)
	gt, _ := g["types"].(map[string]any)
	for k, v := range ot {
		want := [2]string{v.(string), fmt.Sprint(gt[k])}
		if want[0] == want[1] {
			continue
		}
		used["load"] = true
		if c.Types[k] != want {
			t.Errorf("loaded column %s: Stepbox %s, DuckDB-WASM %s: not a declared difference", k, want[0], want[1])
		}
	}
	if len(ot) != len(gt) {
		t.Errorf("loaded columns: Stepbox %v, DuckDB-WASM %v", ot, gt)
	}
	orows, grows := o["rows"].([]any), g["rows"].([]any)
	if len(orows) != len(grows) {
		t.Fatalf("%d rows, DuckDB-WASM %d\nStepbox %s\nDuckDB-WASM %s", len(orows), len(grows), js(o), js(g))
	}
	for i := range orows {
		orow, grow := orows[i].(map[string]any), grows[i].(map[string]any)
		for _, name := range names {
			if want, ok := c.Values[name]; ok {
				if !same(orow[name], want[0]) || !same(grow[name], want[1]) {
					t.Errorf("row %d column %s: Stepbox %s (want %s), DuckDB-WASM %s (want %s)", i, name, js(orow[name]), js(want[0]), js(grow[name]), js(want[1]))
				}
				used["version"] = true
				continue
			}
			if why := sameDuck(orow[name], grow[name], used); why != "" {
				t.Errorf("row %d column %s: %s: Stepbox %s, DuckDB-WASM %s", i, name, why, js(orow[name]), js(grow[name]))
			}
		}
	}
	for _, d := range c.Differs {
		if !used[d] {
			t.Errorf("declared difference %q not seen", d)
		}
		delete(used, d)
	}
	for d := range used {
		t.Errorf("difference %q seen but not declared", d)
	}
}

// sameDuck compares a Stepbox value with DuckDB-WASM's tagged one (see
// duckdb.mjs), noting in used each difference it crossed; it returns why
// they differ, or "".
func sameDuck(o, g any, used map[string]bool) string {
	if gm, ok := g.(map[string]any); ok && len(gm) >= 1 {
		switch {
		case gm["$bigint"] != nil:
			s := gm["$bigint"].(string)
			if om, ok := o.(map[string]any); ok && om["$bigint"] == s {
				return "" // beyond 2^53 both are BigInts
			}
			if os, ok := o.(string); ok { // a TIME: microseconds in DuckDB-WASM
				used["time"] = true
				if micros(os) != s {
					return "time " + os + " is not " + s + "µs"
				}
				return ""
			}
			used["bigint"] = true
			if n, ok := o.(float64); !ok || strconv.FormatFloat(n, 'f', -1, 64) != s || math.Abs(n) > 1<<53-1 {
				return "a BIGINT"
			}
			return ""
		case gm["$decimal"] != nil:
			used["decimal"] = true
			r, ok := new(big.Rat).SetString(gm["$decimal"].(string))
			if !ok {
				return "a decimal"
			}
			r.Quo(r, new(big.Rat).SetFrac(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(gm["scale"].(float64))), nil), big.NewInt(1)))
			f, _ := r.Float64()
			if n, ok := o.(float64); !ok || n != f {
				return "a DECIMAL"
			}
			return ""
		case gm["$ms"] != nil:
			used["temporal"] = true
			s, _ := o.(string)
			ts, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				ts, err = time.Parse(time.DateOnly, s)
			}
			if err != nil || float64(ts.UnixMilli()) != gm["$ms"].(float64) {
				return "an instant"
			}
			return ""
		case gm["$vector"] != nil:
			used["list"] = true
			return sameDuck(o, gm["$vector"], used)
		case gm["$bytes"] != nil:
			used["blob"] = true
			if o != gm["$bytes"] {
				return "a BLOB"
			}
			return ""
		case gm["$double"] != nil:
			used["double"] = true
			if o != gm["$double"] {
				return "a double"
			}
			return ""
		case gm["$typed"] != nil:
			used["interval"] = true
			if om, ok := o.(map[string]any); !ok || om["days"] == nil {
				return "an INTERVAL"
			}
			return ""
		}
		om, ok := o.(map[string]any)
		if !ok || len(om) != len(gm) {
			return "an object"
		}
		for k, v := range gm {
			if why := sameDuck(om[k], v, used); why != "" {
				return k + ": " + why
			}
		}
		return ""
	}
	if ga, ok := g.([]any); ok {
		oa, ok := o.([]any)
		if !ok || len(oa) != len(ga) {
			return "a list"
		}
		for i := range ga {
			if why := sameDuck(oa[i], ga[i], used); why != "" {
				return fmt.Sprintf("[%d]: %s", i, why)
			}
		}
		return ""
	}
	if !same(o, g) {
		return "a value"
	}
	return ""
}

// micros is a time of day ("13:45:00.5") in microseconds, as text.
func micros(s string) string {
	tm, err := time.Parse("15:04:05.999999", s)
	if err != nil {
		return "not a time"
	}
	return strconv.FormatInt(int64(tm.Hour())*3600e6+int64(tm.Minute())*60e6+int64(tm.Second())*1e6+int64(tm.Nanosecond()/1e3), 10)
}
