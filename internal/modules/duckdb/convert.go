//go:build cgo

package duckdb

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	duck "github.com/duckdb/duckdb-go/v2"
)

// maxSafeInt is the largest integer a JavaScript number holds exactly
// (Number.MAX_SAFE_INTEGER).
const maxSafeInt = 1<<53 - 1

// sqlType is a parsed DuckDB type name, as the driver reports it for a
// result column ("DATE", "DECIMAL(18,3)", "STRUCT(\"a\" DATE, \"b\" INTEGER[])",
// "MAP(VARCHAR, TIMESTAMP)", …). Only what the conversion needs is kept:
// the base name, the element type of lists and arrays, the fields of
// structs and unions, and the key and value types of maps. A nil *sqlType
// is an unknown type: values are then converted by their Go type alone.
type sqlType struct {
	name   string // upper case: "DATE", "LIST", "STRUCT", "MAP", "UNION", …
	elem   *sqlType
	fields []field // STRUCT and UNION, in declaration order
	key    *sqlType
	value  *sqlType
}

type field struct {
	name string
	typ  *sqlType
}

// parseType parses a type name; it returns nil if it cannot.
func parseType(s string) *sqlType {
	p := typeParser{s: s}
	t := p.typ()
	if p.err || p.i != len(p.s) {
		return nil
	}
	return t
}

type typeParser struct {
	s   string
	i   int
	err bool
}

func (p *typeParser) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *typeParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *typeParser) expect(c byte) {
	p.space()
	if p.peek() != c {
		p.err = true
		return
	}
	p.i++
}

func (p *typeParser) word() string {
	p.space()
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			p.i++
			continue
		}
		break
	}
	if p.i == start {
		p.err = true
	}
	return p.s[start:p.i]
}

// fieldName reads a struct or union member name: "quoted" ("" escapes a
// quote) or bare.
func (p *typeParser) fieldName() string {
	p.space()
	if p.peek() != '"' {
		return p.word()
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		if c == '"' {
			if p.peek() == '"' {
				b.WriteByte('"')
				p.i++
				continue
			}
			return b.String()
		}
		b.WriteByte(c)
	}
	p.err = true
	return ""
}

func (p *typeParser) typ() *sqlType {
	if p.err {
		return nil
	}
	t := &sqlType{name: strings.ToUpper(p.word())}
	p.space()
	if p.peek() == '(' {
		p.i++
		switch t.name {
		case "STRUCT", "UNION":
			for !p.err {
				name := p.fieldName()
				t.fields = append(t.fields, field{name: name, typ: p.typ()})
				p.space()
				if p.peek() == ',' {
					p.i++
					continue
				}
				break
			}
			p.expect(')')
		case "MAP":
			t.key = p.typ()
			p.expect(',')
			t.value = p.typ()
			p.expect(')')
		default: // DECIMAL(18,3) and the like: skip the arguments
			depth := 1
			for p.i < len(p.s) && depth > 0 {
				switch p.s[p.i] {
				case '(':
					depth++
				case ')':
					depth--
				}
				p.i++
			}
			if depth != 0 {
				p.err = true
			}
		}
	}
	for !p.err {
		p.space()
		if p.peek() != '[' {
			break
		}
		// T[] is a LIST, T[n] an ARRAY; both convert alike.
		for p.i < len(p.s) && p.s[p.i] != ']' {
			p.i++
		}
		p.expect(']')
		t = &sqlType{name: "LIST", elem: t}
	}
	return t
}

// encoder appends JSON for the values of a result. Integers are written
// exactly, without fraction or exponent, whatever their size; doubles
// always with a fraction or an exponent (1.0, 1e+21), so that a reader can
// tell the two apart: the JavaScript runtime makes BigInts of the
// integers beyond ±(2^53-1), Python ints of all of them.
type encoder struct {
	buf []byte
	// exactDecimals: DECIMAL values as their unscaled integer and scale,
	// 1250e-2 for 12.50 (Config.ExactDecimals); otherwise as the double
	// that reads back as the same decimal, or an error if there is none.
	exactDecimals bool
}

// value appends v, a value of type t as the driver returns it.
func (e *encoder) value(v any, t *sqlType) error {
	name := ""
	if t != nil {
		name = t.name
	}
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case bool:
		e.buf = strconv.AppendBool(e.buf, v)
	case int8:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	case int16:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	case int32:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	case int64:
		e.int(v)
	case int:
		e.int(int64(v))
	case uint8:
		e.buf = strconv.AppendUint(e.buf, uint64(v), 10)
	case uint16:
		e.buf = strconv.AppendUint(e.buf, uint64(v), 10)
	case uint32:
		e.buf = strconv.AppendUint(e.buf, uint64(v), 10)
	case uint64:
		e.buf = strconv.AppendUint(e.buf, v, 10)
	case float32:
		e.float(float64(v), 32)
	case float64:
		if (t == nil || name == "JSON") && v == math.Trunc(v) && math.Abs(v) <= maxSafeInt {
			// A number inside a JSON value, which the driver decodes as a
			// double: an integer as JSON.parse would give it.
			e.buf = strconv.AppendInt(e.buf, int64(v), 10)
			return nil
		}
		e.float(v, 64)
	case *big.Int: // HUGEINT, UHUGEINT, BIGNUM
		e.buf = v.Append(e.buf, 10)
	case duck.Decimal:
		return e.decimal(v)
	case string: // VARCHAR, ENUM, BIT
		e.string(v)
	case []byte:
		if name == "UUID" && len(v) == 16 {
			e.buf = append(e.buf, '"')
			e.buf = appendUUID(e.buf, v)
			e.buf = append(e.buf, '"')
			return nil
		}
		// BLOB, GEOMETRY: standard base64.
		e.buf = append(e.buf, '"')
		e.buf = base64.StdEncoding.AppendEncode(e.buf, v)
		e.buf = append(e.buf, '"')
	case time.Time:
		e.buf = append(e.buf, '"')
		e.buf = appendTime(e.buf, v, name)
		e.buf = append(e.buf, '"')
	case duck.Interval:
		e.buf = append(e.buf, `{"months":`...)
		e.buf = strconv.AppendInt(e.buf, int64(v.Months), 10)
		e.buf = append(e.buf, `,"days":`...)
		e.buf = strconv.AppendInt(e.buf, int64(v.Days), 10)
		e.buf = append(e.buf, `,"micros":`...)
		e.buf = strconv.AppendInt(e.buf, v.Micros, 10)
		e.buf = append(e.buf, '}')
	case []any: // LIST, ARRAY, JSON array
		var elem *sqlType
		if t != nil {
			elem = t.elem
		}
		e.buf = append(e.buf, '[')
		for i, x := range v {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(x, elem); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	case map[string]any: // STRUCT, JSON object
		return e.object(v, t)
	case duck.OrderedMap: // MAP
		return e.mapValue(v, t)
	case duck.Union:
		var mt *sqlType
		if t != nil {
			for _, f := range t.fields {
				if f.name == v.Tag {
					mt = f.typ
				}
			}
		}
		return e.value(v.Value, mt)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("a value of Go type %T cannot be converted: %w", v, err)
		}
		e.buf = append(e.buf, b...)
	}
	return nil
}

// int appends an integer, exactly.
func (e *encoder) int(v int64) {
	e.buf = strconv.AppendInt(e.buf, v, 10)
}

// decimal appends a DECIMAL: its unscaled value and scale (1250e-2) if
// e.exactDecimals, else the double whose shortest text is the same
// decimal (12.5), or fails if there is no such double: a JavaScript
// number would silently be another value.
func (e *encoder) decimal(d duck.Decimal) error {
	if d.Value == nil {
		d.Value = new(big.Int)
	}
	if e.exactDecimals {
		e.buf = d.Value.Append(e.buf, 10)
		e.buf = append(e.buf, 'e', '-')
		e.buf = strconv.AppendUint(e.buf, uint64(d.Scale), 10)
		return nil
	}
	text := appendDecimal(nil, d)
	f, err := strconv.ParseFloat(string(text), 64)
	exact, _ := new(big.Rat).SetString(string(text))
	if err == nil {
		back, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
		if back != nil && exact != nil && back.Cmp(exact) == 0 {
			e.float(f, 64)
			return nil
		}
	}
	return fmt.Errorf("the DECIMAL %s has more digits than a JavaScript number holds (about 15); "+
		"cast it to VARCHAR for its exact text, or to DOUBLE for the nearest number", text)
}

// float appends a number as encoding/json writes it; NaN and the
// infinities, which JSON lacks, become the strings "NaN", "Infinity" and
// "-Infinity" (what String(x) gives in JavaScript).
func (e *encoder) float(f float64, bits int) {
	switch {
	case math.IsNaN(f):
		e.buf = append(e.buf, `"NaN"`...)
		return
	case math.IsInf(f, 1):
		e.buf = append(e.buf, `"Infinity"`...)
		return
	case math.IsInf(f, -1):
		e.buf = append(e.buf, `"-Infinity"`...)
		return
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	start := len(e.buf)
	e.buf = strconv.AppendFloat(e.buf, f, format, -1, bits)
	if format == 'f' && !slices.Contains(e.buf[start:], '.') {
		e.buf = append(e.buf, '.', '0') // a double, not an integer: 1.0
	}
	if format == 'e' {
		if i := slices.Index(e.buf[start:], 'e'); i >= 0 && !slices.Contains(e.buf[start:start+i], '.') {
			// 1e+21 → 1.0e+21: an exponent without a fraction is a DECIMAL
			// (see encoder.decimal).
			e.buf = slices.Insert(e.buf, start+i, '.', '0')
		}
		// clean up e-09 to e-9, as encoding/json does
		n := len(e.buf) - start
		if n >= 4 && e.buf[len(e.buf)-4] == 'e' && e.buf[len(e.buf)-3] == '-' && e.buf[len(e.buf)-2] == '0' {
			e.buf[len(e.buf)-2] = e.buf[len(e.buf)-1]
			e.buf = e.buf[:len(e.buf)-1]
		}
	}
}

// object appends a STRUCT in declaration order, or a JSON object with its
// keys sorted (the driver decodes JSON into a Go map, which has no order).
func (e *encoder) object(m map[string]any, t *sqlType) error {
	var fields []field
	if t != nil && t.name == "STRUCT" && len(t.fields) == len(m) {
		fields = t.fields
		for _, f := range fields {
			if _, ok := m[f.name]; !ok {
				fields = nil
				break
			}
		}
	}
	if fields == nil {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fields = make([]field, len(keys))
		for i, k := range keys {
			fields[i] = field{name: k}
		}
	}
	e.buf = append(e.buf, '{')
	for i, f := range fields {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.string(f.name)
		e.buf = append(e.buf, ':')
		if err := e.value(m[f.name], f.typ); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// mapValue appends a MAP as an object in the map's order. Keys that are not
// strings are written as their JSON text (1 → "1"), as DuckDB's to_json does.
func (e *encoder) mapValue(m duck.OrderedMap, t *sqlType) error {
	var kt, vt *sqlType
	if t != nil {
		kt, vt = t.key, t.value
	}
	keys, vals := m.Keys(), m.Values()
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if s, ok := k.(string); ok {
			e.string(s)
		} else {
			ke := encoder{exactDecimals: e.exactDecimals}
			if err := ke.value(k, kt); err != nil {
				return err
			}
			ks := ke.buf
			if len(ks) > 0 && ks[0] == '"' {
				e.buf = append(e.buf, ks...) // already a JSON string
			} else {
				e.string(string(ks))
			}
		}
		e.buf = append(e.buf, ':')
		if err := e.value(vals[i], vt); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// string appends s as a JSON string. Invalid UTF-8 becomes U+FFFD; U+2028
// and U+2029 are escaped so the output is also valid JavaScript.
func (e *encoder) string(s string) {
	const hexDigits = "0123456789abcdef"
	e.buf = append(e.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			e.buf = append(e.buf, s[start:i]...)
			switch c {
			case '"', '\\':
				e.buf = append(e.buf, '\\', c)
			case '\n':
				e.buf = append(e.buf, '\\', 'n')
			case '\r':
				e.buf = append(e.buf, '\\', 'r')
			case '\t':
				e.buf = append(e.buf, '\\', 't')
			default:
				e.buf = append(e.buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			e.buf = append(e.buf, s[start:i]...)
			e.buf = append(e.buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			e.buf = append(e.buf, s[start:i]...)
			e.buf = append(e.buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	e.buf = append(e.buf, s[start:]...)
	e.buf = append(e.buf, '"')
}

// appendDecimal writes d with exactly d.Scale fractional digits:
// DECIMAL(10,2) 1.5 is "1.50".
func appendDecimal(b []byte, d duck.Decimal) []byte {
	if d.Value == nil {
		return append(b, '0')
	}
	digits := d.Value.String()
	neg := strings.HasPrefix(digits, "-")
	if neg {
		digits = digits[1:]
		b = append(b, '-')
	}
	scale := int(d.Scale)
	if scale == 0 {
		return append(b, digits...)
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	b = append(b, digits[:len(digits)-scale]...)
	b = append(b, '.')
	return append(b, digits[len(digits)-scale:]...)
}

func appendUUID(b []byte, u []byte) []byte {
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:], u[10:])
	return append(b, s[:]...)
}

// DuckDB's infinite temporal values, as the driver decodes them.
const (
	infDateDays = math.MaxInt32 // DATE 'infinity' is day 2^31-1 after the epoch
	infMicros   = math.MaxInt64 // TIMESTAMP 'infinity' is 2^63-1 µs after the epoch
)

// appendTime writes a temporal value by its SQL type:
//
//	DATE                         2024-03-01
//	TIME                         13:45:00, 13:45:00.5
//	TIMETZ                       13:45:00+02:00
//	TIMESTAMP[_S|_MS|_NS]        2024-03-01T13:45:00.123456Z (RFC 3339, read as UTC)
//	TIMESTAMPTZ                  2024-03-01T12:45:00Z (the instant, in UTC)
//	'infinity', '-infinity'      infinity, -infinity
//
// Years outside 0000-9999 use the ISO 8601 expanded form: +275760-09-13.
func appendTime(b []byte, t time.Time, name string) []byte {
	switch name {
	case "DATE":
		days := t.Unix() / 86400
		switch days {
		case infDateDays:
			return append(b, "infinity"...)
		case -infDateDays:
			return append(b, "-infinity"...)
		}
		b = appendYear(b, t.Year())
		return append(b, t.Format("-01-02")...)
	case "TIME":
		return t.AppendFormat(b, "15:04:05.999999")
	case "TIMETZ":
		return t.AppendFormat(b, "15:04:05.999999-07:00")
	}
	switch t.UnixMicro() {
	case infMicros:
		return append(b, "infinity"...)
	case -infMicros:
		return append(b, "-infinity"...)
	}
	t = t.UTC()
	b = appendYear(b, t.Year())
	return t.AppendFormat(b, "-01-02T15:04:05.999999999Z07:00")
}

func appendYear(b []byte, y int) []byte {
	if y >= 0 && y <= 9999 {
		return fmt.Appendf(b, "%04d", y)
	}
	if y < 0 {
		return fmt.Appendf(b, "-%06d", -y)
	}
	return fmt.Appendf(b, "+%06d", y)
}
