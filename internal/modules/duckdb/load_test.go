//go:build cgo

package duckdb_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/modules/duckdb"
)

func load(t testing.TB, db *duckdb.DB, table, rows string) {
	t.Helper()
	if err := db.Load(context.Background(), table, json.RawMessage(rows)); err != nil {
		t.Fatalf("Load(%s): %v", table, err)
	}
}

// describe returns "name TYPE, …" for table.
func describe(t testing.TB, db *duckdb.DB, table string) string {
	t.Helper()
	var cols []struct {
		Name string `json:"column_name"`
		Type string `json:"column_type"`
	}
	if err := json.Unmarshal([]byte(query(t, db, "DESCRIBE "+table)), &cols); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, c := range cols {
		parts = append(parts, c.Name+" "+c.Type)
	}
	return strings.Join(parts, ", ")
}

func TestLoadInference(t *testing.T) {
	db := open(t, duckdb.Config{})
	load(t, db, "t", `[
		{"b": true, "i": 1, "f": 1, "s": "x", "d": "2024-01-02", "j": {"k": [1, 2]}, "m": 1, "n": null, "mix": 1},
		{"b": false, "i": -9007199254740993, "f": 2.5, "s": "y\n\"z\"", "d": "2024-01-03", "j": [true], "m": "one", "n": null, "mix": "1"},
		{"b": null, "i": null, "f": 1e3, "s": null, "d": null, "j": "str", "m": true, "extra": "only here", "mix": true}
	]`)
	if got, want := describe(t, db, "t"),
		// As read_json: integers of both signs are HUGEINT, ISO dates
		// DATE, mixed kinds and nulls only JSON.
		"b BOOLEAN, i HUGEINT, f DOUBLE, s VARCHAR, d DATE, j JSON, m JSON, n JSON, mix JSON, extra VARCHAR"; got != want {
		t.Errorf("columns\n got %s\nwant %s", got, want)
	}
	expectQuery(t, db, "SELECT b, i::VARCHAR AS i, f, s, d, j, m, n, mix, extra FROM t",
		`[{"b":true,"i":"1","f":1.0,"s":"x","d":"2024-01-02","j":{"k":[1,2]},"m":1,"n":null,"mix":1,"extra":null},`+
			`{"b":false,"i":"-9007199254740993","f":2.5,"s":"y\n\"z\"","d":"2024-01-03","j":[true],"m":"one","n":null,"mix":"1","extra":null},`+
			`{"b":null,"i":null,"f":1000.0,"s":null,"d":null,"j":"str","m":true,"n":null,"mix":true,"extra":"only here"}]`)
	// ISO dates are DATEs.
	expectQuery(t, db, "SELECT max(d::DATE) AS d FROM t", `[{"d":"2024-01-03"}]`)
	// JSON columns work with DuckDB's JSON functions.
	expectQuery(t, db, "SELECT j->>'$.k[1]' AS k FROM t WHERE j->>'$.k[1]' IS NOT NULL", `[{"k":"2"}]`)
}

func TestLoadColumnNames(t *testing.T) {
	db := open(t, duckdb.Config{})
	load(t, db, "t", `[{"select": 1, "with space": 2, "quote\"d": 3, "ünï": 4, "\u00e9\\n": 5}]`)
	expectQuery(t, db, `SELECT "select", "with space", "quote""d", "ünï", "é\n" FROM t`,
		`[{"select":1,"with space":2,"quote\"d":3,"ünï":4,"é\\n":5}]`)
}

func TestLoadErrors(t *testing.T) {
	db := open(t, duckdb.Config{MaxLoadColumns: 3})
	load(t, db, "exists", `[{"a": 1}]`)
	cases := []struct {
		name, table, rows string
		kind              duckdb.Kind
		want              string
	}{
		{"bad table", "a b", `[{"a":1}]`, duckdb.KindInvalid, "not a plain identifier"},
		{"qualified table", "main.t", `[{"a":1}]`, duckdb.KindInvalid, "not a plain identifier"},
		{"digit table", "1t", `[{"a":1}]`, duckdb.KindInvalid, "not a plain identifier"},
		{"long table", strings.Repeat("t", 64), `[{"a":1}]`, duckdb.KindInvalid, "not a plain identifier"},
		{"not json", "t", `[{"a":1}`, duckdb.KindInvalid, "not valid JSON"},
		{"object", "t", `{"a":1}`, duckdb.KindInvalid, "must be an array of objects"},
		{"empty", "t", `[]`, duckdb.KindInvalid, "empty array"},
		{"scalar row", "t", `[{"a":1}, 2]`, duckdb.KindInvalid, "rows[1] is not an object"},
		{"array row", "t", `[[1]]`, duckdb.KindInvalid, "rows[0] is not an object"},
		{"empty key", "t", `[{"":1}]`, duckdb.KindInvalid, "empty key"},
		{"long key", "t", `[{"` + strings.Repeat("k", 256) + `":1}]`, duckdb.KindInvalid, "longer than 255"},
		{"nul key", "t", `[{"a\u0000":1}]`, duckdb.KindInvalid, "cannot name a column"},
		{"too many columns", "t", `[{"a":1,"b":2},{"c":3,"d":4}]`, duckdb.KindInvalid, "more than 3 columns"},
		{"exists", "exists", `[{"a":1}]`, duckdb.KindSQL, "already exists"},
		{"case-insensitive duplicate", "t", `[{"a":1,"A":2}]`, duckdb.KindSQL, "Column with name A already exists"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := db.Load(context.Background(), c.table, json.RawMessage(c.rows))
			de := expectKind(t, err, c.kind)
			if !strings.Contains(de.Message, c.want) {
				t.Errorf("message %q does not contain %q", de.Message, c.want)
			}
		})
	}
	// Failed loads left no table behind.
	expectQuery(t, db, "SELECT table_name FROM duckdb_tables() ORDER BY 1", `[{"table_name":"exists"}]`)
}

// TestLoad10k loads 10,000 rows into two tables and checks a group-by and
// a join against the same computation in Go.
func TestLoad10k(t *testing.T) {
	db := open(t, duckdb.Config{})
	regions := []string{"EU", "US", "APAC", "LATAM"}
	type sale struct {
		ID     int     `json:"id"`
		Region string  `json:"region"`
		Amount float64 `json:"amount"`
		Units  int     `json:"units"`
		Cust   int     `json:"customer"`
	}
	sales := make([]sale, 10_000)
	type agg struct {
		n     int
		units int
		sum   float64
	}
	want := map[string]*agg{}
	for _, r := range regions {
		want[r] = &agg{}
	}
	for i := range sales {
		s := sale{ID: i, Region: regions[i%len(regions)], Amount: float64(i%97) + 0.25, Units: i % 13, Cust: i % 100}
		sales[i] = s
		a := want[s.Region]
		a.n++
		a.units += s.Units
		a.sum += s.Amount
	}
	b, _ := json.Marshal(sales)
	load(t, db, "sales", string(b))
	customers := make([]map[string]any, 100)
	for i := range customers {
		customers[i] = map[string]any{"id": i, "tier": []string{"gold", "silver"}[i%2]}
	}
	b, _ = json.Marshal(customers)
	load(t, db, "customers", string(b))

	var got []struct {
		Region string  `json:"region"`
		N      int     `json:"n"`
		Units  int     `json:"units"`
		Sum    float64 `json:"total"`
	}
	if err := json.Unmarshal([]byte(query(t, db,
		"SELECT region, count(*) AS n, sum(units) AS units, sum(amount) AS total FROM sales GROUP BY region ORDER BY region")), &got); err != nil {
		t.Fatal(err)
	}
	sort.Strings(regions)
	if len(got) != len(regions) {
		t.Fatalf("%d groups", len(got))
	}
	for i, r := range regions {
		g, w := got[i], want[r]
		if g.Region != r || g.N != w.n || g.Units != w.units || math.Abs(g.Sum-w.sum) > 1e-6 {
			t.Errorf("group %s: got %+v, want %+v", r, g, *w)
		}
	}

	wantTier := map[string]int{}
	for _, s := range sales {
		wantTier[[]string{"gold", "silver"}[s.Cust%2]] += s.Units
	}
	expectQuery(t, db, "SELECT c.tier, sum(s.units) AS units FROM sales s JOIN customers c ON s.customer = c.id GROUP BY ALL ORDER BY 1",
		fmt.Sprintf(`[{"tier":"gold","units":%d},{"tier":"silver","units":%d}]`, wantTier["gold"], wantTier["silver"]))
}

func TestLoadCanceled(t *testing.T) {
	db := open(t, duckdb.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := db.Load(ctx, "t", json.RawMessage(`[{"a":1}]`))
	expectKind(t, err, duckdb.KindCanceled)
	expectQuery(t, db, "SELECT count(*) AS n FROM duckdb_tables()", `[{"n":0}]`)
}
