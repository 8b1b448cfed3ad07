//go:build cgo

package duckdb_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2" // the oracle: DuckDB's own JSON reader, outside the sandbox

	"github.com/stepbox/stepbox/internal/modules/duckdb"
)

// OracleTables are row sets that db.Load must load as DuckDB's read_json
// does: the same column types and the same values. The JavaScript and
// Python runtimes' tests load them too.
var OracleTables = []struct {
	name, rows string
	queries    []string // beside SELECT * and DESCRIBE
	// jsonOnly: the rows hold numbers a JavaScript number cannot (-0
	// stringifies as 0, 2^63 as 9223372036854776000), so only their JSON
	// text loads them as written.
	jsonOnly bool
}{
	{name: "lists", rows: `[{"tags":["a","b"]},{"tags":["c"]},{"tags":[]},{"tags":null}]`, queries: []string{"SELECT tags[1] AS first, len(tags) AS n FROM t"}},
	{name: "nested lists", rows: `[{"m":[[1,2],[3]]},{"m":[[],[4.5]]}]`, queries: []string{"SELECT m[2][1] AS x FROM t"}},
	{name: "structs", rows: `[{"p":{"x":1,"y":"s"}},{"p":{"x":2,"z":[true]}},{"p":null}]`, queries: []string{"SELECT p.x AS x, p.y AS y, p.z AS z FROM t"}},
	{name: "varying keys", rows: `[{"a":{"k1":1}},{"a":{"k2":2}},{"a":{"k3":3}},{"a":{"k4":4}},{"a":{"k5":5}},{"a":{"k6":6}},` +
		`{"a":{"k7":7}},{"a":{"k8":8}},{"a":{"k9":9}},{"a":{"k10":10}},{"a":{"k11":11}}]`, queries: []string{"SELECT a['k3'] AS k3, cardinality(a) AS n FROM t"}},
	{name: "empty object", rows: `[{"o":{}},{"o":{}}]`},
	{name: "mixed numbers", rows: `[{"n":1,"b":-0,"h":9223372036854775808},{"n":2.5,"b":3,"h":1},{"n":1e3,"b":null,"h":null}]`, queries: []string{"SELECT sum(n) AS s, max(h)::VARCHAR AS h FROM t"}, jsonOnly: true},
	{name: "integer signs", rows: `[{"u":1,"s":-1,"m":-1,"big":18446744073709551615},{"u":2,"s":-2,"m":3,"big":1}]`, jsonOnly: true},
	{name: "scalars", rows: `[{"b":true,"i":42,"f":1.5,"s":"x","z":null}]`},
	{name: "mixed kinds", rows: `[{"v":1,"w":[1,"x"],"o":{"x":1}},{"v":"x","w":[],"o":[1]}]`},
	{name: "timestamps", rows: `[{"t":"2024-03-01T13:45:00Z","d":"2024-03-01","ts":"2024-03-01 13:45:00.5","tm":"13:45:00","tt":"2024-03-01T13:45:00"},` +
		`{"t":"2024-12-31T23:59:59Z","d":"2024-02-29","ts":"2024-03-01 13:45:00","tm":"23:59","tt":null}]`, queries: []string{"SELECT max(t) AS t, min(d) AS d, max(tm) AS tm FROM t"}},
	{name: "not quite dates", rows: `[{"d":"2024-03-01","s":"2024-13-01"},{"d":"soon","s":"2024-03-01"}]`},
	{name: "uuids", rows: `[{"u":"550e8400-e29b-41d4-a716-446655440000"},{"u":"00000000-0000-0000-0000-000000000000"}]`},
	{name: "nested temporal", rows: `[{"e":[{"at":"2024-01-01","n":1}]},{"e":[{"at":"2024-01-02","n":null,"x":"13:00:00"}]}]`, queries: []string{"SELECT e[1].at AS at, e[1].x AS x FROM t"}},
	{name: "unicode", rows: `[{"u":"ünïcödé","e":"🎉","k":["日本","€"]},{"u":"\u0000nul","e":"tab\there","k":[]}]`, queries: []string{"SELECT length(u) AS n, k[1] AS k FROM t"}},
	{name: "nulls only", rows: `[{"a":null},{"a":null}]`},
	{name: "missing keys", rows: `[{"a":1},{"b":[1]},{"a":3,"c":{"d":"2024-01-01"}}]`},
}

// oracleLoad loads rows through read_json in a plain DuckDB of the test's
// own, from a temporary file, and returns the connection.
func oracleLoad(t *testing.T, rows string) *sql.DB {
	t.Helper()
	var objs []json.RawMessage
	if err := json.Unmarshal([]byte(rows), &objs); err != nil {
		t.Fatal(err)
	}
	var nd bytes.Buffer
	for _, o := range objs {
		nd.Write(o)
		nd.WriteByte('\n')
	}
	file := filepath.Join(t.TempDir(), "rows.json")
	if err := os.WriteFile(file, nd.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, stmt := range []string{"SET TimeZone = 'UTC'", "CREATE TABLE t AS SELECT * FROM read_json('" + file + "')"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("oracle: %s: %v", stmt, err)
		}
	}
	return db
}

// oracleRows returns the rows of q in the oracle, each row's values as
// DuckDB's own VARCHAR casts.
func oracleRows(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query("SELECT CAST(COLUMNS(*) AS VARCHAR) FROM (" + q + ")")
	if err != nil {
		t.Fatalf("oracle: %s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for i, v := range vals {
			s := "NULL"
			if v.Valid {
				s = v.String
			}
			parts = append(parts, cols[i]+"="+s)
		}
		out = append(out, strings.Join(parts, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// sandboxRows is oracleRows through db.Query.
func sandboxRows(t *testing.T, db *duckdb.DB, q string) string {
	t.Helper()
	out, err := db.Query(context.Background(), "SELECT CAST(COLUMNS(*) AS VARCHAR) FROM ("+q+")", nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	d := json.NewDecoder(bytes.NewReader(out))
	d.UseNumber()
	var rows []map[string]any
	if err := d.Decode(&rows); err != nil {
		t.Fatal(err)
	}
	cols := columnOrder(out)
	var lines []string
	for _, r := range rows {
		var parts []string
		for _, c := range cols {
			s := "NULL"
			if v, ok := r[c].(string); ok {
				s = v
			}
			parts = append(parts, c+"="+s)
		}
		lines = append(lines, strings.Join(parts, " "))
	}
	return strings.Join(lines, "\n")
}

// columnOrder returns the keys of the first object of a Query result, in
// order.
func columnOrder(out []byte) []string {
	d := json.NewDecoder(bytes.NewReader(out))
	var keys []string
	depth := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return keys
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			continue
		case json.Delim(']'), json.Delim('}'):
			depth--
			if depth == 1 {
				return keys
			}
			continue
		}
		if depth == 2 {
			keys = append(keys, tok.(string))
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return keys
			}
		}
	}
}

// TestLoadOracle loads each table of OracleTables with Load and with
// LoadRows, and through read_json, and compares the column types and the
// answers of the same queries.
func TestLoadOracle(t *testing.T) {
	for _, tc := range OracleTables {
		t.Run(tc.name, func(t *testing.T) {
			oracle := oracleLoad(t, tc.rows)
			queries := append([]string{"DESCRIBE t", "SELECT * FROM t"}, tc.queries...)
			for _, via := range []string{"json", "values"} {
				if via == "values" && tc.jsonOnly {
					continue
				}
				db := open(t, duckdb.Config{})
				var err error
				if via == "json" {
					err = db.Load(context.Background(), "t", json.RawMessage(tc.rows))
				} else {
					err = db.LoadRows(context.Background(), "t", rowsOf(t, tc.rows))
				}
				if err != nil {
					t.Fatalf("%s: Load: %v", via, err)
				}
				for _, q := range queries {
					if q == "DESCRIBE t" {
						q = "SELECT column_name, column_type FROM (DESCRIBE t)"
					}
					want := oracleRows(t, oracle, q)
					if got := sandboxRows(t, db, q); got != want {
						t.Errorf("%s: %s\n got %s\nwant %s", via, q, got, want)
					}
				}
			}
		})
	}
}

// rowsOf makes Rows from a JSON array of objects, as the JavaScript
// runtime does from its values: nested values as their JSON text.
func rowsOf(t *testing.T, text string) *duckdb.Rows {
	t.Helper()
	var objs []json.RawMessage
	if err := json.Unmarshal([]byte(text), &objs); err != nil {
		t.Fatal(err)
	}
	r := duckdb.NewRows(0)
	for _, o := range objs {
		d := json.NewDecoder(bytes.NewReader(o))
		d.UseNumber()
		d.Token() // {
		for d.More() {
			k, _ := d.Token()
			var raw json.RawMessage
			if err := d.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			col, err := r.Column(k.(string))
			if err != nil {
				t.Fatal(err)
			}
			r.Set(col, valueOf(t, raw))
		}
		r.EndRow()
	}
	return r
}

func valueOf(t *testing.T, raw json.RawMessage) duckdb.Value {
	switch raw[0] {
	case 'n':
		return duckdb.NullValue
	case 't', 'f':
		return duckdb.BoolValue(raw[0] == 't')
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		return duckdb.StringValue(s)
	case '[', '{':
		return duckdb.JSONValue(string(raw))
	}
	var f float64
	if _, err := fmt.Sscan(string(raw), &f); err != nil {
		t.Fatal(err)
	}
	return duckdb.NumberValue(f)
}
