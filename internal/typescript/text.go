package typescript

import (
	"sort"
	"unicode/utf8"
)

// sourceText is a text split into lines the way esbuild counts them, so that
// esbuild's line numbers index it directly.
type sourceText struct {
	text   string
	starts []int // byte offset at which each line starts
}

// newSourceText splits s at "\n", "\r\n", "\r", U+2028 and U+2029: the line
// terminators of ECMAScript, which esbuild uses for its diagnostics and its
// source maps alike.
func newSourceText(s string) *sourceText {
	starts := []int{0}
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\n':
			i++
			starts = append(starts, i)
		case c == '\r':
			i++
			if i < len(s) && s[i] == '\n' {
				i++
			}
			starts = append(starts, i)
		case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9):
			i += 3
			starts = append(starts, i)
		default:
			i++
		}
	}
	return &sourceText{text: s, starts: starts}
}

// line returns line k (0-based) without its terminator.
func (t *sourceText) line(k int) (string, bool) {
	if k < 0 || k >= len(t.starts) {
		return "", false
	}
	end := len(t.text)
	if k+1 < len(t.starts) {
		end = t.starts[k+1]
	}
	s := t.text[t.starts[k]:end]
	switch {
	case len(s) >= 2 && s[len(s)-2:] == "\r\n":
		s = s[:len(s)-2]
	case len(s) >= 1 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r'):
		s = s[:len(s)-1]
	case len(s) >= 3 && (s[len(s)-3:] == "\u2028" || s[len(s)-3:] == "\u2029"):
		s = s[:len(s)-3]
	}
	return s, true
}

// offset returns the byte offset in the whole text of byte column col of
// line k (both 0-based), or -1.
func (t *sourceText) offset(k, col int) int {
	s, ok := t.line(k)
	if !ok || col < 0 || col > len(s) {
		return -1
	}
	return t.starts[k] + col
}

// runeColumnFromUTF16 converts col16, a 0-based column in UTF-16 code units
// (the unit of source maps), into a 0-based column in Unicode code points
// (the unit of Diagnostic, SourceMap.Original and QuickJS) for line k. A
// column past the end of the line is extrapolated one unit per code point.
func (t *sourceText) runeColumnFromUTF16(k, col16 int) int {
	s, ok := t.line(k)
	if !ok {
		return col16
	}
	return utf16ToRunes(s, col16)
}

// utf16ToRunes converts a 0-based UTF-16 column within line into code points.
func utf16ToRunes(line string, col16 int) int {
	units, runes := 0, 0
	for _, r := range line {
		if units >= col16 {
			return runes
		}
		units += utf16Len(r)
		runes++
	}
	if units >= col16 {
		return runes
	}
	return runes + col16 - units
}

// bytesToUTF16 converts a 0-based byte column within line into UTF-16 units.
func bytesToUTF16(line string, col int) int {
	extra := 0
	if col > len(line) {
		extra = col - len(line)
		col = len(line)
	}
	units := 0
	for _, r := range line[:col] {
		units += utf16Len(r)
	}
	return units + extra
}

// bytesToRunes converts a 0-based byte column within line into code points.
func bytesToRunes(line string, col int) int {
	if col <= len(line) {
		return utf8.RuneCountInString(line[:col])
	}
	return utf8.RuneCountInString(line) + col - len(line)
}

// utf16ToBytes converts a 0-based UTF-16 column within line into a byte
// offset, or -1 if the column is not on a character boundary of line.
func utf16ToBytes(line string, col16 int) int {
	units := 0
	for i, r := range line {
		if units == col16 {
			return i
		}
		if units > col16 {
			return -1
		}
		units += utf16Len(r)
	}
	if units == col16 {
		return len(line)
	}
	return -1
}

// utf16Len is the number of UTF-16 code units of r. Invalid UTF-8, which
// ranging over a string yields as utf8.RuneError, counts as one unit.
func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// runesToBytes converts a 0-based code point column within line into a
// byte offset, at most len(line).
func runesToBytes(line string, col int) int {
	n := 0
	for i := range line {
		if n == col {
			return i
		}
		n++
	}
	return len(line)
}

// position returns the 0-based line and UTF-16 column of byte offset off.
func (t *sourceText) position(off int) (line, col16 int) {
	line = sort.SearchInts(t.starts, off+1) - 1
	text, _ := t.line(line)
	return line, bytesToUTF16(text, off-t.starts[line])
}
