//go:build cgo

package duckdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/modules/duckdb"
)

// TestConversions pins the JSON form of each SQL type (doc.go's table).
func TestConversions(t *testing.T) {
	db := open(t, duckdb.Config{})
	cases := []struct{ name, expr, want string }{
		{"null", "NULL", `null`},
		{"boolean", "true", `true`},
		{"tinyint", "(-7)::TINYINT", `-7`},
		{"integer", "2147483647::INTEGER", `2147483647`},
		{"bigint safe", "9007199254740991::BIGINT", `9007199254740991`},
		{"bigint negative safe", "(-9007199254740991)::BIGINT", `-9007199254740991`},
		{"bigint unsafe", "9007199254740992::BIGINT", `9007199254740992`},
		{"bigint min", "(-9223372036854775808)::BIGINT", `-9223372036854775808`},
		{"ubigint", "18446744073709551615::UBIGINT", `18446744073709551615`},
		{"hugeint small", "42::HUGEINT", `42`},
		{"hugeint", "170141183460469231731687303715884105727::HUGEINT", `170141183460469231731687303715884105727`},
		{"sum is hugeint", "(SELECT sum(range) FROM range(10))", `45`},
		{"uhugeint", "340282366920938463463374607431768211455::UHUGEINT", `340282366920938463463374607431768211455`},
		{"double", "0.1::DOUBLE", `0.1`},
		{"double int", "3::DOUBLE", `3.0`},
		{"double beyond 2^53", "2e20::DOUBLE", `200000000000000000000.0`},
		{"double tiny", "1e-7::DOUBLE", `1.0e-7`},
		{"double huge", "1.5e300::DOUBLE", `1.5e+300`},
		{"float", "0.1::FLOAT", `0.1`},
		{"nan", "'NaN'::DOUBLE", `"NaN"`},
		{"inf", "'Infinity'::DOUBLE", `"Infinity"`},
		{"-inf", "'-Infinity'::DOUBLE", `"-Infinity"`},
		{"decimal", "123.4500::DECIMAL(10,4)", `123.45`},
		{"decimal small", "0.05::DECIMAL(4,2)", `0.05`},
		{"decimal negative", "(-0.05)::DECIMAL(18,3)", `-0.05`},
		{"decimal wide but short", "12345.5::DECIMAL(38,9)", `12345.5`},
		{"decimal scale 0", "42::DECIMAL(5,0)", `42.0`},
		{"decimal literal", "1.5", `1.5`},
		{"varchar", "'héllo \"x\"\n'", `"héllo \"x\"\n"`},
		{"enum", "'b'::ENUM('a', 'b')", `"b"`},
		{"blob", `'\xDE\xAD\xBE\xEF'::BLOB`, `"3q2+7w=="`},
		{"uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID", `"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"`},
		{"bit", "'0101'::BIT", `"0101"`},
		{"date", "DATE '2024-02-29'", `"2024-02-29"`},
		{"date old", "DATE '0044-03-15'", `"0044-03-15"`},
		{"date infinity", "'infinity'::DATE", `"infinity"`},
		{"date -infinity", "'-infinity'::DATE", `"-infinity"`},
		{"time", "TIME '13:45:00'", `"13:45:00"`},
		{"time fraction", "TIME '13:45:00.5'", `"13:45:00.5"`},
		{"timetz", "TIMETZ '13:45:00+02:00'", `"13:45:00+02:00"`},
		{"timestamp", "TIMESTAMP '2024-03-01 13:45:00.123456'", `"2024-03-01T13:45:00.123456Z"`},
		{"timestamp whole", "TIMESTAMP '2024-03-01 13:45:00'", `"2024-03-01T13:45:00Z"`},
		{"timestamp_s", "TIMESTAMP_S '2024-03-01 13:45:00'", `"2024-03-01T13:45:00Z"`},
		{"timestamp_ms", "TIMESTAMP_MS '2024-03-01 13:45:00.123'", `"2024-03-01T13:45:00.123Z"`},
		{"timestamp_ns", "'2024-03-01 13:45:00.123456789'::TIMESTAMP_NS", `"2024-03-01T13:45:00.123456789Z"`},
		{"timestamptz", "TIMESTAMPTZ '2024-03-01 13:45:00+02'", `"2024-03-01T11:45:00Z"`},
		{"timestamp infinity", "'infinity'::TIMESTAMP", `"infinity"`},
		{"timestamp -infinity", "'-infinity'::TIMESTAMP", `"-infinity"`},
		{"timestamp far", "TIMESTAMP '20000-01-01 00:00:00'", `"+020000-01-01T00:00:00Z"`},
		{"interval", "INTERVAL 1 MONTH + INTERVAL 2 DAY + INTERVAL '3.5 seconds'", `{"months":1,"days":2,"micros":3500000}`},
		{"list", "[1, 2, NULL]", `[1,2,null]`},
		{"list of dates", "[DATE '2024-01-01']", `["2024-01-01"]`},
		{"array", "[1.5, 2.5]::DOUBLE[2]", `[1.5,2.5]`},
		{"struct order", "{'z': 1, 'a': DATE '2024-01-01', 'm': [TIMESTAMP '2024-01-01 00:00:00']}", `{"z":1,"a":"2024-01-01","m":["2024-01-01T00:00:00Z"]}`},
		{"struct odd names", `{'a"b': 1, 'c d': 2}`, `{"a\"b":1,"c d":2}`},
		{"nested struct", "{'s': {'d': 1.10::DECIMAL(4,2)}, 'l': [{'u': '00000000-0000-0000-0000-000000000001'::UUID}]}", `{"s":{"d":1.1},"l":[{"u":"00000000-0000-0000-0000-000000000001"}]}`},
		{"map", "MAP {'b': 1, 'a': 2}", `{"b":1,"a":2}`},
		{"map int keys", "MAP {2: DATE '2024-01-01', 1: NULL}", `{"2":"2024-01-01","1":null}`},
		{"union", "union_value(d := DATE '2024-01-01')::UNION(n INTEGER, d DATE)", `"2024-01-01"`},
		{"json", `'{"b": [1, 2.5, "x"], "a": null}'::JSON`, `{"a":null,"b":[1,2.5,"x"]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := query(t, db, "SELECT "+c.expr+" AS v")
			want := `[{"v":` + c.want + `}]`
			if got != want {
				t.Errorf("SELECT %s\n got %s\nwant %s", c.expr, got, want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("invalid JSON %s", got)
			}
		})
	}
}

func TestDuplicateColumnNames(t *testing.T) {
	db := open(t, duckdb.Config{})
	expectQuery(t, db, "SELECT 1 AS a, 2 AS a, 3 AS a_1, 4 AS a", `[{"a":1,"a_1":2,"a_1_1":3,"a_2":4}]`)
}

func TestEmptyResults(t *testing.T) {
	db := open(t, duckdb.Config{})
	expectQuery(t, db, "SELECT 1 AS a WHERE false", `[]`)
	exec(t, db, "CREATE TABLE t (a INTEGER)")
	expectQuery(t, db, "INSERT INTO t VALUES (1), (2)", `[{"Count":2}]`)
}

func TestParams(t *testing.T) {
	db := open(t, duckdb.Config{})
	load(t, db, "t", `[{"id": 1, "name": "a", "x": 1.5, "d": "2024-01-01"}, {"id": 2, "name": "b", "x": 2.5, "d": "2024-06-01"}]`)
	cases := []struct {
		name, sql string
		params    []any
		want      string
	}{
		{"float that is an integer", "SELECT name FROM t WHERE id = ?", []any{2.0}, `[{"name":"b"}]`},
		{"string", "SELECT id FROM t WHERE name = ?", []any{"a"}, `[{"id":1}]`},
		{"double", "SELECT id FROM t WHERE x > ?", []any{2.0}, `[{"id":2}]`},
		{"fraction", "SELECT id FROM t WHERE x > ?", []any{1.75}, `[{"id":2}]`},
		{"json.Number", "SELECT id FROM t WHERE x < ?", []any{json.Number("2")}, `[{"id":1}]`},
		{"numbered", "SELECT $2::VARCHAR || $1::VARCHAR AS s", []any{"x", "y"}, `[{"s":"yx"}]`},
		{"null", "SELECT ? IS NULL AS n", []any{nil}, `[{"n":true}]`},
		{"bool", "SELECT NOT ? AS b", []any{true}, `[{"b":false}]`},
		{"limit", "SELECT id FROM t ORDER BY id LIMIT ?", []any{1.0}, `[{"id":1}]`},
		{"date from string", "SELECT id FROM t WHERE d::DATE > ?::DATE", []any{"2024-03-01"}, `[{"id":2}]`},
		{"large integer stays exact", "SELECT ?::BIGINT::VARCHAR AS v", []any{json.Number("9007199254740993")}, `[{"v":"9007199254740993"}]`},
		{"list", "SELECT list_sum(?) AS s", []any{[]any{1.0, 2.0, 3.5}}, `[{"s":6.5}]`},
		{"json", "SELECT (?::JSON)->>'$.a' AS a", []any{map[string]any{"a": "z"}}, `[{"a":"z"}]`},
		{"in list", "SELECT count(*) AS n FROM t WHERE list_contains(?, name)", []any{[]any{"a", "b", "c"}}, `[{"n":2}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expectQuery(t, db, c.sql, c.want, c.params...)
		})
	}

	_, err := db.Query(context.Background(), "SELECT ? + ?", []any{1.0})
	de := expectKind(t, err, duckdb.KindSQL)
	if !strings.Contains(de.Message, "argument count") {
		t.Errorf("message %q", de.Message)
	}
	_, err = db.Query(context.Background(), "SELECT ?", []any{struct{}{}})
	expectKind(t, err, duckdb.KindInvalid)
}

// TestDecimals: a DECIMAL no double gives back fails the query rather
// than becoming another number; with ExactDecimals every DECIMAL is its
// unscaled integer and scale, and integers stay exact on both sides of
// 2^53.
func TestDecimals(t *testing.T) {
	db := open(t, duckdb.Config{})
	_, err := db.Query(context.Background(), "SELECT 12345678901234567890123456789.123456789::DECIMAL(38,9) AS v", nil)
	var de *duckdb.Error
	if !errors.As(err, &de) || de.Kind != duckdb.KindInvalid || !strings.Contains(de.Message, "cast it to VARCHAR") {
		t.Errorf("wide DECIMAL: got %v, want a KindInvalid error saying to cast", err)
	}
	expectQuery(t, db, "SELECT 12345678901234567890123456789.123456789::DECIMAL(38,9)::VARCHAR AS v",
		`[{"v":"12345678901234567890123456789.123456789"}]`)
	exact := open(t, duckdb.Config{ExactDecimals: true})
	for expr, want := range map[string]string{
		"123.4500::DECIMAL(10,4)": `1234500e-4`,
		"42::DECIMAL(5,0)":        `42e-0`,
		"(-0.05)::DECIMAL(18,3)":  `-50e-3`,
		"12345678901234567890123456789.123456789::DECIMAL(38,9)": `12345678901234567890123456789123456789e-9`,
		"9007199254740993::BIGINT":                               `9007199254740993`,
		"0.5::DOUBLE":                                            `0.5`,
	} {
		expectQuery(t, exact, "SELECT "+expr+" AS v", `[{"v":`+want+`}]`)
	}
}

// TestQueryTable: the table form carries DuckDB's column names (made
// unique as Query's keys) and type names, and rows as arrays converted as
// Query's; its limits are Query's.
func TestQueryTable(t *testing.T) {
	db := open(t, duckdb.Config{MaxResultRows: 3, MaxResultBytes: 1000})
	out, err := db.QueryTable(context.Background(),
		"SELECT 1 AS a, 'x' AS a, 9007199254740993::BIGINT AS big, [1, 2] AS l, DATE '2024-03-01' AS d, ?::DECIMAL(5,2) AS m", []any{12.5})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"columns":[{"name":"a","type":"INTEGER"},{"name":"a_1","type":"VARCHAR"},{"name":"big","type":"BIGINT"},` +
		`{"name":"l","type":"INTEGER[]"},{"name":"d","type":"DATE"},{"name":"m","type":"DECIMAL(5,2)"}],` +
		`"rows":[[1,"x",9007199254740993,[1,2],"2024-03-01",12.5]]}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	out, err = db.QueryTable(context.Background(), "SELECT 1 AS a WHERE false", nil)
	if err != nil || string(out) != `{"columns":[{"name":"a","type":"INTEGER"}],"rows":[]}` {
		t.Errorf("empty: %s, %v", out, err)
	}
	_, err = db.QueryTable(context.Background(), "SELECT range AS r FROM range(4)", nil)
	if de := expectKind(t, err, duckdb.KindLimit); de.Limit != duckdb.LimitResultRows {
		t.Errorf("limit %q", de.Limit)
	}
	_, err = db.QueryTable(context.Background(), "SELECT repeat('x', 2000) AS s", nil)
	if de := expectKind(t, err, duckdb.KindLimit); de.Limit != duckdb.LimitResultBytes {
		t.Errorf("limit %q", de.Limit)
	}
}
