package typescript

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// A source map's "mappings" field is a list of generated lines separated by
// ';', each a list of segments separated by ','. A segment is 1, 4 or 5
// base64 VLQ numbers: generated column, source index, original line,
// original column, name index. The generated column is relative to the
// previous segment of the same line; every other field is relative to the
// same field of the previous segment that had it, across lines. See
// https://tc39.es/ecma426/ for the format.

const base64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// base64Values maps a byte to its base64 digit value, or -1.
var base64Values = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := range len(base64Digits) {
		t[base64Digits[i]] = int8(i)
	}
	return t
}()

// mapping is one decoded segment with absolute values. Columns count UTF-16
// code units and, like lines, are 0-based.
type mapping struct {
	genCol int32
	src    int32 // index into sources, -1 for a segment without a source
	line   int32 // original line
	col    int32 // original column
	name   int32 // index into names, -1 for none
}

// errVLQ reports a malformed "mappings" field.
var errVLQ = errors.New("malformed mappings")

// decodeVLQ decodes one base64 VLQ number starting at s[i].
func decodeVLQ(s string, i int) (v int64, next int, err error) {
	var acc uint64
	for shift := uint(0); ; shift += 5 {
		if i >= len(s) {
			return 0, i, fmt.Errorf("%w: number cut short at offset %d", errVLQ, i)
		}
		d := base64Values[s[i]]
		if d < 0 {
			return 0, i, fmt.Errorf("%w: %q at offset %d is not a base64 digit", errVLQ, s[i], i)
		}
		if shift > 30 {
			return 0, i, fmt.Errorf("%w: number too large at offset %d", errVLQ, i)
		}
		i++
		acc |= uint64(d&31) << shift
		if d&32 == 0 {
			break
		}
	}
	v = int64(acc >> 1)
	if acc&1 != 0 {
		v = -v
	}
	return v, i, nil
}

// appendVLQ appends v as a base64 VLQ number.
func appendVLQ(dst []byte, v int64) []byte {
	u := uint64(v) << 1
	if v < 0 {
		u = uint64(-v)<<1 | 1
	}
	for {
		d := u & 31
		u >>= 5
		if u != 0 {
			d |= 32
		}
		dst = append(dst, base64Digits[d])
		if u == 0 {
			return dst
		}
	}
}

// decodeMappings decodes a "mappings" field into segments with absolute
// values, one slice per generated line, each sorted by generated column.
// Indexes are checked against nSources and nNames, and every value must fit
// an int32 and not be negative.
func decodeMappings(s string, nSources, nNames int) ([][]mapping, error) {
	lines := make([][]mapping, 0, strings.Count(s, ";")+1)
	var cur []mapping
	var genCol, src, line, col, name int64
	fields := make([]int64, 0, 5)
	for i := 0; ; {
		if i == len(s) || s[i] == ';' {
			if !slices.IsSortedFunc(cur, cmpGenCol) {
				slices.SortStableFunc(cur, cmpGenCol)
			}
			lines = append(lines, cur)
			if i == len(s) {
				return lines, nil
			}
			cur, genCol = nil, 0
			i++
			continue
		}
		if s[i] == ',' {
			i++ // an empty segment: tolerated, as other decoders do
			continue
		}
		fields = fields[:0]
		for i < len(s) && s[i] != ',' && s[i] != ';' {
			if len(fields) == 5 {
				return nil, fmt.Errorf("%w: segment with more than 5 fields at offset %d", errVLQ, i)
			}
			v, next, err := decodeVLQ(s, i)
			if err != nil {
				return nil, err
			}
			fields = append(fields, v)
			i = next
		}
		m := mapping{src: -1, name: -1}
		genCol += fields[0]
		if genCol < 0 || genCol > math.MaxInt32 {
			return nil, fmt.Errorf("%w: generated column %d out of range", errVLQ, genCol)
		}
		m.genCol = int32(genCol)
		switch len(fields) {
		case 1:
		case 4, 5:
			src += fields[1]
			line += fields[2]
			col += fields[3]
			if src < 0 || src >= int64(nSources) {
				return nil, fmt.Errorf("%w: source index %d out of range", errVLQ, src)
			}
			if line < 0 || line > math.MaxInt32 || col < 0 || col > math.MaxInt32 {
				return nil, fmt.Errorf("%w: original position %d:%d out of range", errVLQ, line, col)
			}
			m.src, m.line, m.col = int32(src), int32(line), int32(col)
			if len(fields) == 5 {
				name += fields[4]
				if name < 0 || name >= int64(nNames) {
					return nil, fmt.Errorf("%w: name index %d out of range", errVLQ, name)
				}
				m.name = int32(name)
			}
		default:
			return nil, fmt.Errorf("%w: segment with %d fields", errVLQ, len(fields))
		}
		cur = append(cur, m)
	}
}

func cmpGenCol(a, b mapping) int { return int(a.genCol) - int(b.genCol) }

// encodeMappings is the inverse of decodeMappings.
func encodeMappings(lines [][]mapping) string {
	var b []byte
	var src, line, col, name int64
	for i, segs := range lines {
		if i > 0 {
			b = append(b, ';')
		}
		var genCol int64
		for j, m := range segs {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendVLQ(b, int64(m.genCol)-genCol)
			genCol = int64(m.genCol)
			if m.src < 0 {
				continue
			}
			b = appendVLQ(b, int64(m.src)-src)
			b = appendVLQ(b, int64(m.line)-line)
			b = appendVLQ(b, int64(m.col)-col)
			src, line, col = int64(m.src), int64(m.line), int64(m.col)
			if m.name >= 0 {
				b = appendVLQ(b, int64(m.name)-name)
				name = int64(m.name)
			}
		}
	}
	return string(b)
}
