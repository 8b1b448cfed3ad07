//go:build cgo

package duckdb

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	duck "github.com/duckdb/duckdb-go/v2"
)

// tableName is what Load accepts as a table name: a plain SQL identifier,
// so that the step's later SQL can name the table without quoting.
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Load creates table and fills it with rows, a JSON array of objects. The
// columns are the union of the objects' keys in order of first appearance;
// a key missing from an object is NULL in that row. Each column's type is
// the one DuckDB's read_json infers for the same rows (doc.go has the
// table): LISTs, STRUCTs, MAPs, ISO dates and timestamps, HUGEINT, JSON
// where kinds mix.
//
// An integer is a JSON number written without fraction or exponent. The
// table must not exist; its name must be a plain identifier (letters,
// digits, underscores, not starting with a digit, at most 63 bytes). An
// empty rows array is an error, since it gives no columns.
//
//	err := db.Load(ctx, "sales", json.RawMessage(`[{"region":"EU","amount":12.5,"tags":["a"]},{"region":"US","amount":7}]`))
//	// CREATE TABLE sales (region VARCHAR, amount DOUBLE, tags VARCHAR[])
//
// If filling the table fails, the table is dropped. The caller bounds
// len(rows): it is parsed in the Go heap, outside DuckDB's memory limit.
func (db *DB) Load(ctx context.Context, table string, rows json.RawMessage) error {
	if !tableName.MatchString(table) {
		return badTableName(table)
	}
	data, err := parseRows(rows, db.cfg.MaxLoadColumns)
	if err != nil {
		return err
	}
	return db.load(ctx, table, data)
}

// LoadRows is Load with the rows given as values (see Rows): the same
// table as Load of the JSON text those values stand for.
//
//	err := db.LoadRows(ctx, "sales", rows)
func (db *DB) LoadRows(ctx context.Context, table string, rows *Rows) error {
	if !tableName.MatchString(table) {
		return badTableName(table)
	}
	if rows.n == 0 {
		return invalidf("load: rows is an empty array: there are no columns to create")
	}
	if len(rows.cols) > db.cfg.MaxLoadColumns {
		return invalidf("load: more than %d columns", db.cfg.MaxLoadColumns)
	}
	for _, c := range rows.cols {
		for len(c.vals) < rows.n {
			c.vals = append(c.vals, Value{})
		}
		for _, v := range c.vals {
			c.record(v)
		}
		c.typ = typeOfNode(&c.node, "JSON")
	}
	return db.load(ctx, table, rows)
}

func badTableName(table string) error {
	return invalidf("load: table name %q is not a plain identifier (letters, digits and _, not starting with a digit, at most 63 bytes)", table)
}

// table is what db.load fills a table from: parsed JSON or Rows.
type table interface {
	// columns returns the column names and their SQL types.
	columns() (names, types []string)
	rowCount() int
	// row sets dest to row i's values, as the appender takes them.
	row(i int, dest []driver.Value) error
}

// load creates table with src's columns and fills it. If filling the table
// fails, the table is dropped.
func (db *DB) load(ctx context.Context, table string, src table) error {
	conn, ctx, release, err := db.acquire(ctx, "load")
	if err != nil {
		return err
	}
	defer release()

	names, types := src.columns()
	if _, err := conn.ExecContext(ctx, createTable(table, names, types), nil); err != nil {
		return wrap(ctx, "load", err)
	}
	if err := appendRows(ctx, conn, table, types, src); err != nil {
		// Best effort: without the drop, a failed Load would leave a
		// half-filled table behind. If even that fails, the first
		// failure is the one to report.
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+quoteIdent(table), nil)
		return wrap(ctx, "load", err)
	}
	return nil
}

// column is one column of parsed rows: where in the input each row's value
// is, the zero span where the row has no such key.
type column struct {
	name string
	vals []span
	node node   // what the values were seen to be
	typ  string // SQL type, set by infer
}

// span locates a raw JSON value in rowData.b. Offsets rather than slices:
// no pointers, so growing a column is a plain copy.
type span struct{ start, end uint32 }

type rowData struct {
	b    []byte // the input
	cols []*column
	n    int // rows
}

// raw returns the JSON text of row i of c, nil if missing.
func (d *rowData) raw(c *column, i int) []byte {
	v := c.vals[i]
	if v.end == 0 {
		return nil
	}
	return d.b[v.start:v.end]
}

// parseRows splits a JSON array of objects into columns of raw values. It
// validates the whole input first, so that the scanner below may assume
// well-formed JSON.
func parseRows(rows json.RawMessage, maxCols int) (*rowData, error) {
	if !json.Valid(rows) {
		return nil, invalidf("load: rows is not valid JSON")
	}
	if len(rows) >= 1<<32 {
		return nil, invalidf("load: rows is larger than 4 GiB")
	}
	s := scanner{b: rows}
	s.space()
	if !s.consume('[') {
		return nil, invalidf("load: rows must be an array of objects")
	}
	d := &rowData{b: rows}
	index := map[string]*column{}
	s.space()
	if s.consume(']') {
		return nil, invalidf("load: rows is an empty array: there are no columns to create")
	}
	for {
		s.space()
		if !s.consume('{') {
			return nil, invalidf("load: rows[%d] is not an object", d.n)
		}
		s.space()
		if !s.consume('}') {
			for {
				s.space()
				raw, ok := s.rawString()
				if !ok {
					return nil, invalidf("load: rows[%d]: a key is not a string", d.n)
				}
				s.space()
				s.consume(':')
				s.space()
				start := s.i
				s.value()
				val := span{uint32(start), uint32(s.i)}
				c := index[string(raw[1:len(raw)-1])] // no allocation; escaped keys miss and are decoded below
				if c == nil {
					key, err := unquote(raw)
					if err != nil {
						return nil, invalidf("load: rows[%d]: bad key: %v", d.n, err)
					}
					if c = index[key]; c == nil {
						if err := checkColumnName(key); err != nil {
							return nil, invalidf("load: rows[%d]: %v", d.n, err)
						}
						if len(d.cols) == maxCols {
							return nil, invalidf("load: more than %d columns", maxCols)
						}
						c = &column{name: key}
						index[key] = c
						d.cols = append(d.cols, c)
					}
				}
				for len(c.vals) < d.n {
					c.vals = append(c.vals, span{}) // the key was missing from earlier rows
				}
				if len(c.vals) == d.n {
					c.vals = append(c.vals, val)
				} else {
					c.vals[d.n] = val // a repeated key: the last one wins, as in JSON.parse
				}
				s.space()
				if s.consume('}') {
					break
				}
				s.consume(',')
			}
		}
		d.n++
		s.space()
		if s.consume(']') {
			break
		}
		s.consume(',')
	}
	for _, c := range d.cols {
		for len(c.vals) < d.n {
			c.vals = append(c.vals, span{})
		}
		d.infer(c)
	}
	return d, nil
}

// infer sets c.typ from the values (see Load).
func (d *rowData) infer(c *column) {
	for i := range c.vals {
		if v := d.raw(c, i); v != nil {
			c.node.extract(v)
		}
	}
	c.typ = typeOfNode(&c.node, "JSON")
}

func createTable(table string, names, types []string) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(quoteIdent(table))
	b.WriteString(" (")
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(name))
		b.WriteByte(' ')
		b.WriteString(types[i])
	}
	b.WriteByte(')')
	return b.String()
}

func (d *rowData) columns() (names, types []string) {
	for _, c := range d.cols {
		names = append(names, c.name)
		types = append(types, c.typ)
	}
	return names, types
}

func (d *rowData) rowCount() int { return d.n }

func (d *rowData) row(i int, dest []driver.Value) error {
	for j, c := range d.cols {
		v, err := c.value(d.raw(c, i))
		if err != nil {
			return fmt.Errorf("rows[%d].%s: %w", i, c.name, err)
		}
		dest[j] = v
	}
	return nil
}

// direct reports whether the appender takes values of type typ as they
// are; the other columns travel as JSON text that DuckDB casts (see
// appendRows).
func direct(typ string) bool {
	switch typ {
	case "BOOLEAN", "BIGINT", "DOUBLE", "VARCHAR", "JSON":
		return true
	}
	return false
}

// appendRows fills the created table through DuckDB's appender. Columns of
// nested, temporal, UUID and HUGEINT types are appended as their JSON text
// and cast by DuckDB's JSON transform, the one read_json uses, in a query
// appender's INSERT.
func appendRows(ctx context.Context, conn *duck.Conn, table string, types []string, src table) (err error) {
	var a *duck.Appender
	if !slices.ContainsFunc(types, func(t string) bool { return !direct(t) }) {
		a, err = duck.NewAppenderFromConn(conn, "", table)
	} else {
		a, err = queryAppender(conn, table, types)
	}
	if err != nil {
		return err
	}
	defer func() {
		if cerr := a.CloseWithCancel(ctx); err == nil {
			err = cerr
		}
	}()
	row := make([]driver.Value, len(types))
	for i := range src.rowCount() {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := src.row(i, row); err != nil {
			return err
		}
		if err := a.AppendRow(row...); err != nil {
			return err
		}
	}
	return nil
}

// queryAppender returns an appender whose rows are inserted into table by
// an INSERT that casts the JSON text of the columns that need it.
func queryAppender(conn *duck.Conn, table string, types []string) (*duck.Appender, error) {
	infos := make([]duck.TypeInfo, len(types))
	var sel strings.Builder
	for i, t := range types {
		kind := duck.TYPE_VARCHAR
		switch t {
		case "BOOLEAN":
			kind = duck.TYPE_BOOLEAN
		case "BIGINT":
			kind = duck.TYPE_BIGINT
		case "DOUBLE":
			kind = duck.TYPE_DOUBLE
		}
		info, err := duck.NewTypeInfo(kind)
		if err != nil {
			return nil, err
		}
		infos[i] = info
		if i > 0 {
			sel.WriteString(", ")
		}
		col := "col" + strconv.Itoa(i+1)
		switch {
		case t == "JSON":
			sel.WriteString(col + "::JSON")
		case direct(t):
			sel.WriteString(col)
		default:
			// json_transform, unlike a cast, takes objects without
			// some of a STRUCT's keys.
			structure := AppendQuoted(nil, t)
			sel.WriteString("json_transform(" + col + ", '" + strings.ReplaceAll(string(structure), "'", "''") + "')")
		}
	}
	return duck.NewQueryAppender(conn, "INSERT INTO "+quoteIdent(table)+" SELECT "+sel.String()+" FROM appended_data", "", infos, nil)
}

func (r *Rows) columns() (names, types []string) {
	for _, c := range r.cols {
		names = append(names, c.name)
		types = append(types, c.typ)
	}
	return names, types
}

func (r *Rows) rowCount() int { return r.n }

func (r *Rows) row(i int, dest []driver.Value) error {
	for j, c := range r.cols {
		dest[j] = c.value(c.vals[i])
	}
	return nil
}

// value converts v to what the appender takes for c.typ: the value Load
// stores for v's JSON text.
func (c *rowsColumn) value(v Value) driver.Value {
	if v.kind == kindNull {
		return nil
	}
	switch c.typ {
	case "BOOLEAN":
		return v.n != 0
	case "BIGINT":
		return int64(v.n)
	case "DOUBLE":
		if v.kind == kindInt {
			return float64(int64(v.n))
		}
		return math.Float64frombits(v.n)
	case "VARCHAR":
		return v.s // only strings
	}
	return string(v.appendJSON(nil)) // JSON, or cast by DuckDB
}

// value converts a raw value of c (nil if missing) to what the appender
// takes for c.typ.
func (c *column) value(v []byte) (driver.Value, error) {
	if v == nil || v[0] == 'n' {
		return nil, nil
	}
	switch c.typ {
	case "BOOLEAN":
		return v[0] == 't', nil
	case "BIGINT":
		return strconv.ParseInt(string(v), 10, 64)
	case "DOUBLE":
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil && !isRangeErr(err) {
			return nil, err
		}
		return f, nil // ±Inf for numbers beyond the double range
	case "VARCHAR":
		return unquote(v) // only strings
	}
	return string(v), nil // JSON, or cast by DuckDB
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
