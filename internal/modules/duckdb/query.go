//go:build cgo

package duckdb

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Query runs sql with params bound to its placeholders (? or $1, $2, …)
// and returns the rows of its last statement as a JSON array of objects,
// one key per column in column order. Doc.go has the table of how each SQL
// type becomes JSON.
//
//	out, err := db.Query(ctx, "SELECT region, count(*) AS n FROM sales WHERE amount > ? GROUP BY ALL ORDER BY n DESC", []any{10.0})
//	// [{"region":"EU","n":2}]
//
// params are JSON values as encoding/json decodes them (nil, bool,
// float64 or json.Number, string, []any, map[string]any); Go integer types
// are accepted too. A number that is an integer within ±(2^53-1) binds as
// BIGINT, any other number as DOUBLE; DuckDB casts either to the type the
// placeholder needs. An array binds as a LIST (DOUBLE[] if it mixes
// integers and fractions), an object as its JSON text (use ?::JSON).
//
// A column name that repeats an earlier one gets a suffix, as DuckDB does
// for tables: a, a_1, a_2. Rows beyond Config.MaxResultRows or JSON beyond
// Config.MaxResultBytes fail the whole call with KindLimit; nothing partial
// is returned.
func (db *DB) Query(ctx context.Context, sql string, params []any) (json.RawMessage, error) {
	return db.query(ctx, sql, params, false)
}

// QueryTable runs sql as Query does and returns its result as a table:
//
//	{"columns": [{"name": "region", "type": "VARCHAR"}, {"name": "n", "type": "BIGINT"}],
//	 "rows": [["EU", 2]]}
//
// one array per row, values in column order and converted as Query's;
// "type" is DuckDB's name for the column's type. It serves the step's
// DuckDB-WASM-style connections, whose tables carry a schema. The limits
// are Query's, counted on the same JSON.
func (db *DB) QueryTable(ctx context.Context, sql string, params []any) (json.RawMessage, error) {
	return db.query(ctx, sql, params, true)
}

func (db *DB) query(ctx context.Context, sql string, params []any, table bool) (json.RawMessage, error) {
	args, err := bindArgs(params)
	if err != nil {
		return nil, err
	}
	conn, ctx, release, err := db.acquire(ctx, "query")
	if err != nil {
		return nil, err
	}
	defer release()

	rows, err := conn.QueryContext(ctx, sql, args)
	if err != nil {
		return nil, wrap(ctx, "query", err)
	}
	defer rows.Close()
	out, err := db.encodeRows(rows, table)
	if err != nil {
		return nil, wrap(ctx, "query", err)
	}
	return out, nil
}

// encodeRows reads all rows and encodes them, within the result caps: as
// an array of objects, or with table as QueryTable's table.
func (db *DB) encodeRows(rows driver.Rows, table bool) (json.RawMessage, error) {
	cols := rows.Columns()
	names := uniqueNames(cols)
	keys := make([][]byte, len(cols))
	for i, name := range names {
		var e encoder
		e.string(name)
		keys[i] = append(e.buf, ':')
	}
	types := make([]*sqlType, len(cols))
	typeNames := make([]string, len(cols))
	if tn, ok := rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		for i := range cols {
			typeNames[i] = tn.ColumnTypeDatabaseTypeName(i)
			types[i] = parseType(typeNames[i])
		}
	}

	maxRows, maxBytes := db.cfg.MaxResultRows, db.cfg.MaxResultBytes
	e := encoder{buf: make([]byte, 0, 4096), exactDecimals: db.cfg.ExactDecimals}
	open, end, tail := byte('{'), byte('}'), 1 // tail: the bytes that close the JSON
	if table {
		e.buf = append(e.buf, `{"columns":[`...)
		for i, name := range names {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = append(e.buf, `{"name":`...)
			e.string(name)
			e.buf = append(e.buf, `,"type":`...)
			e.string(typeNames[i])
			e.buf = append(e.buf, '}')
		}
		e.buf = append(e.buf, `],"rows":`...)
		open, end, tail = '[', ']', 2
	}
	e.buf = append(e.buf, '[')
	dest := make([]driver.Value, len(cols))
	for n := 0; ; n++ {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if n == maxRows {
			return nil, &Error{Kind: KindLimit, Limit: LimitResultRows,
				Message: fmt.Sprintf("query: the result has more than %d rows; aggregate or add a LIMIT", maxRows)}
		}
		if n > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, open)
		for i, v := range dest {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if !table {
				e.buf = append(e.buf, keys[i]...)
			}
			if err := e.value(v, types[i]); err != nil {
				return nil, invalidf("query: column %q: %v", cols[i], err)
			}
		}
		e.buf = append(e.buf, end)
		if len(e.buf)+tail > maxBytes {
			return nil, &Error{Kind: KindLimit, Limit: LimitResultBytes,
				Message: fmt.Sprintf("query: the result is larger than %d bytes of JSON; select fewer columns or rows", maxBytes)}
		}
	}
	e.buf = append(e.buf, ']')
	if table {
		e.buf = append(e.buf, '}')
	}
	return e.buf, nil
}

// uniqueNames renames repeated column names: a, a → a, a_1.
func uniqueNames(cols []string) []string {
	seen := make(map[string]bool, len(cols))
	out := make([]string, len(cols))
	for i, c := range cols {
		name := c
		for k := 1; seen[name]; k++ {
			name = c + "_" + strconv.Itoa(k)
		}
		seen[name] = true
		out[i] = name
	}
	return out
}

// bindArgs converts the guest's parameters to driver values.
func bindArgs(params []any) ([]driver.NamedValue, error) {
	if len(params) == 0 {
		return nil, nil
	}
	args := make([]driver.NamedValue, len(params))
	for i, p := range params {
		v, err := bindValue(p)
		if err != nil {
			return nil, invalidf("query: parameter %d: %v", i+1, err)
		}
		args[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return args, nil
}

func bindValue(p any) (driver.Value, error) {
	switch v := p.(type) {
	case nil, bool, string, int64, int32, int16, int8, uint32, uint16, uint8:
		return v, nil
	case int:
		return int64(v), nil
	case uint64:
		return v, nil
	case float32:
		return bindFloat(float64(v)), nil
	case float64:
		return bindFloat(v), nil
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, err
		}
		return f, nil
	case []any:
		out := make([]any, len(v))
		ints, floats := 0, 0
		for i, x := range v {
			bx, err := bindValue(x)
			if err != nil {
				return nil, err
			}
			switch bx.(type) {
			case int64:
				ints++
			case float64:
				floats++
			}
			out[i] = bx
		}
		if ints > 0 && floats > 0 {
			// A LIST has one element type: [1, 2.5] is DOUBLE[].
			for i, x := range out {
				if n, ok := x.(int64); ok {
					out[i] = float64(n)
				}
			}
		}
		return out, nil
	case map[string]any:
		// As JSON text: a JSON placeholder (?::JSON) takes it as is, and
		// DuckDB's JSON functions read it.
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	default:
		return nil, fmt.Errorf("a value of type %s cannot be bound", strings.TrimPrefix(fmt.Sprintf("%T", p), "*"))
	}
}

func bindFloat(f float64) driver.Value {
	if f == math.Trunc(f) && math.Abs(f) <= maxSafeInt {
		return int64(f)
	}
	return f
}
