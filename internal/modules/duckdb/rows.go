package duckdb

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Rows is a table for LoadRows given as values rather than JSON text: what
// a runtime fills from its own objects without serializing them (the
// JavaScript runtime walks the step's array). Loading Rows made from an
// array is loading that array's JSON.stringify text with Load: the same
// columns, types and stored values, by the same inference (see Load).
//
//	r := duckdb.NewRows(0)
//	region, _ := r.Column("region")
//	amount, _ := r.Column("amount")
//	r.Set(region, duckdb.StringValue("EU"))
//	r.Set(amount, duckdb.NumberValue(12.5))
//	r.EndRow()
//	err := db.LoadRows(ctx, "sales", r)
//
// A column that a row does not Set is NULL in that row. Rows is not safe
// for concurrent use; once handed to LoadRows it must not change.
type Rows struct {
	cols    []*rowsColumn
	index   map[string]int
	n       int // completed rows
	maxCols int
	size    int // approximate bytes held: names, strings, column capacity
}

type rowsColumn struct {
	name string
	vals []Value
	node node
	typ  string
}

// record adds v to what c's values were seen to be, as its JSON text
// would.
func (c *rowsColumn) record(v Value) {
	switch v.kind {
	case kindNull:
		c.node.add(descNull)
	case kindBool:
		c.node.add(descBool)
	case kindInt:
		if int64(v.n) < 0 {
			c.node.add(descSint)
		} else {
			c.node.add(descUint)
		}
	case kindFloat:
		var buf [32]byte
		c.node.addNumber(AppendNumber(buf[:0], math.Float64frombits(v.n)))
	case kindString:
		if d := c.node.add(descString); d.cand != 0 {
			d.cand &= candidates(v.s)
		}
	case kindNested:
		c.node.extract([]byte(v.s))
	}
}

// valueSize is the bytes a Value takes in a column, strings aside.
const valueSize = 32

// NewRows returns an empty table that accepts up to maxCols columns; zero
// means DefaultMaxLoadColumns.
func NewRows(maxCols int) *Rows {
	if maxCols <= 0 {
		maxCols = DefaultMaxLoadColumns
	}
	return &Rows{index: map[string]int{}, maxCols: maxCols}
}

// Column returns the index of the column called name, adding it if it is
// new: columns are in order of first appearance. It fails (KindInvalid)
// for a name Load refuses, and beyond the table's column cap.
func (r *Rows) Column(name string) (int, error) {
	if i, ok := r.index[name]; ok {
		return i, nil
	}
	if err := checkColumnName(name); err != nil {
		return 0, invalidf("load: rows[%d]: %v", r.n, err)
	}
	if len(r.cols) == r.maxCols {
		return 0, invalidf("load: more than %d columns", r.maxCols)
	}
	r.cols = append(r.cols, &rowsColumn{name: name})
	r.index[name] = len(r.cols) - 1
	r.size += len(name) + 64
	return len(r.cols) - 1, nil
}

// Set gives column col its value in the current row; setting it again
// replaces the value.
func (r *Rows) Set(col int, v Value) {
	c := r.cols[col]
	if len(c.vals) > r.n {
		r.size += len(v.s) - len(c.vals[r.n].s)
		c.vals[r.n] = v
		return
	}
	before := cap(c.vals)
	for len(c.vals) < r.n {
		c.vals = append(c.vals, Value{}) // missing from earlier rows
	}
	c.vals = append(c.vals, v)
	r.size += len(v.s) + (cap(c.vals)-before)*valueSize
}

// Grow makes room for n more rows in the columns there are, for a caller
// that knows how many rows it will add.
func (r *Rows) Grow(n int) {
	for _, c := range r.cols {
		before := cap(c.vals)
		c.vals = slices.Grow(c.vals, max(0, r.n+n-len(c.vals)))
		r.size += (cap(c.vals) - before) * valueSize
	}
}

// EndRow completes the current row; the next Set starts another.
func (r *Rows) EndRow() { r.n++ }

// Len returns the number of completed rows.
func (r *Rows) Len() int { return r.n }

// Size returns about how many bytes of memory the table holds: names,
// strings and nested values, and 32 bytes per value the columns have room
// for.
func (r *Rows) Size() int { return r.size }

// Value is one value of Rows: what a JSON value would be. The zero Value
// is null.
type Value struct {
	kind uint8
	n    uint64 // the boolean, the int64 or the float64's bits
	s    string // the string, or a nested value's JSON text
}

// The kinds of Value.
const (
	kindNull uint8 = iota
	kindBool
	kindInt
	kindFloat
	kindString
	kindNested
)

// NullValue is null.
var NullValue = Value{}

// BoolValue is true or false.
func BoolValue(b bool) Value {
	if b {
		return Value{kind: kindBool, n: 1}
	}
	return Value{kind: kindBool}
}

// NumberValue is a JavaScript number as JSON.stringify writes it: NaN and
// the infinities are null; an integer of the int64 range is an integer (it
// is written without fraction or exponent); any other number is a double.
func NumberValue(f float64) Value {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return NullValue
	case f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63:
		return Value{kind: kindInt, n: uint64(int64(f))}
	}
	return Value{kind: kindFloat, n: math.Float64bits(f)}
}

// StringValue is a string, which must be valid UTF-8.
func StringValue(s string) Value { return Value{kind: kindString, s: s} }

// JSONValue is an object or an array given as its JSON text, as
// JSON.stringify writes it.
func JSONValue(text string) Value { return Value{kind: kindNested, s: text} }

// appendJSON appends v's JSON text, as JSON.stringify writes it.
func (v Value) appendJSON(b []byte) []byte {
	switch v.kind {
	case kindBool:
		return strconv.AppendBool(b, v.n != 0)
	case kindInt:
		return strconv.AppendInt(b, int64(v.n), 10)
	case kindFloat:
		return AppendNumber(b, math.Float64frombits(v.n))
	case kindString:
		return AppendQuoted(b, v.s)
	case kindNested:
		return append(b, v.s...)
	}
	return append(b, "null"...)
}

// AppendNumber appends f as JavaScript writes a number (Number.prototype.
// toString, which JSON.stringify uses): the shortest digits that read back
// as f, without exponent from 1e-7 to below 1e21, "1e+21" and "1.5e-7"
// beyond. NaN and the infinities, which JSON has no form for, are "null".
func AppendNumber(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return append(b, "null"...)
	case f == 0:
		return append(b, '0') // -0 too
	case f < 0:
		b = append(b, '-')
		f = -f
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d.ddde±xx
	mant, exp := e, 0
	for i, c := range e {
		if c == 'e' {
			mant = e[:i]
			x, _ := strconv.Atoi(string(e[i+1:]))
			exp = x
			break
		}
	}
	var digits [24]byte
	k := 0
	for _, c := range mant {
		if c != '.' {
			digits[k] = c
			k++
		}
	}
	d := digits[:k]
	n := exp + 1 // the decimal point is after n digits
	switch {
	case k <= n && n <= 21:
		b = append(b, d...)
		for range n - k {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(b, d[:n]...)
		b = append(b, '.')
		b = append(b, d[n:]...)
	case -6 < n && n <= 0:
		b = append(b, '0', '.')
		for range -n {
			b = append(b, '0')
		}
		b = append(b, d...)
	default:
		b = append(b, d[0])
		if k > 1 {
			b = append(b, '.')
			b = append(b, d[1:]...)
		}
		b = append(b, 'e')
		if n-1 >= 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(n-1), 10)
	}
	return b
}

// AppendQuoted appends s, valid UTF-8, as JSON.stringify quotes a string:
// \" \\ \b \f \n \r \t, other controls as \u00xx, everything else as is.
func AppendQuoted(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// maxColumnName is the longest column name Load accepts, in bytes.
const maxColumnName = 255

func checkColumnName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("an empty key cannot name a column")
	case len(name) > maxColumnName:
		return fmt.Errorf("key %.20q… is longer than %d bytes", name, maxColumnName)
	case strings.IndexByte(name, 0) >= 0 || !utf8.ValidString(name):
		return fmt.Errorf("key %q cannot name a column", name)
	}
	return nil
}
