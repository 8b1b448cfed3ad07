package typescript

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// astralColumnsKey names the source map extension field in which Compile
// records where the generated JavaScript has characters outside the Basic
// Multilingual Plane: a list of [line, column] pairs, both 0-based, the
// column in UTF-16 code units. Source maps count generated columns in UTF-16
// code units, QuickJS counts them in code points, and the two differ only
// after such a character. Esbuild escapes them everywhere except in comments
// and the raw text of tagged templates, so the field is almost always
// absent. Consumers that do not know it ignore it, as the format requires
// of "x_" fields.
const astralColumnsKey = "x_stepbox_astral_columns"

// sourceMapJSON is the subset of the source map v3 format that Stepbox reads
// and writes.
type sourceMapJSON struct {
	Version        int             `json:"version"`
	File           string          `json:"file,omitempty"`
	Sources        []string        `json:"sources"`
	SourcesContent []*string       `json:"sourcesContent,omitempty"`
	Names          []string        `json:"names"`
	Mappings       string          `json:"mappings"`
	AstralColumns  [][2]int        `json:"x_stepbox_astral_columns,omitempty"`
	Sections       json.RawMessage `json:"sections,omitempty"`
}

// SourceMap is a parsed source map v3 that answers position queries:
// generated JavaScript position in, original TypeScript position out.
//
//	m, err := typescript.ParseSourceMap(out.Map)
//	line, col, ok := m.Original(3, 14)
//
// Positions going in and coming out are 1-based lines and 1-based columns
// counted in Unicode code points, the unit QuickJS reports and the unit of
// Diagnostic. The map itself stores UTF-16 columns as the format requires;
// SourceMap converts on the generated side with the astral-columns extension
// Compile writes and on the original side with the map's "sourcesContent".
// Without sourcesContent, original columns come out in UTF-16 code units,
// which is the same for text without characters outside the Basic
// Multilingual Plane.
//
// Notes: a SourceMap is immutable once parsed; any number of goroutines may
// query it at once.
type SourceMap struct {
	lines    [][]mapping   // by generated line, 0-based, sorted by generated column
	sources  []string      // file names from "sources"
	contents []*sourceText // by source; nil when "sourcesContent" lacks it
	astral   [][]int32     // by generated line: UTF-16 columns of astral characters, sorted
}

// ParseSourceMap parses a source map v3 (JSON) such as Output.Map. It
// rejects index maps ("sections"), versions other than 3, and mappings that
// are malformed or refer to sources or names the map does not have.
func ParseSourceMap(mapJSON string) (*SourceMap, error) {
	var raw sourceMapJSON
	if err := json.Unmarshal([]byte(mapJSON), &raw); err != nil {
		return nil, fmt.Errorf("typescript: parse source map: %w", err)
	}
	return newSourceMap(&raw)
}

// newSourceMap builds a SourceMap from the decoded JSON.
func newSourceMap(raw *sourceMapJSON) (*SourceMap, error) {
	if raw.Version != 3 {
		return nil, fmt.Errorf("typescript: parse source map: version %d, want 3", raw.Version)
	}
	if len(raw.Sections) > 0 && string(raw.Sections) != "null" {
		return nil, errors.New("typescript: parse source map: index maps (\"sections\") are not supported")
	}
	lines, err := decodeMappings(raw.Mappings, len(raw.Sources), len(raw.Names))
	if err != nil {
		return nil, fmt.Errorf("typescript: parse source map: %w", err)
	}
	m := &SourceMap{
		lines:    lines,
		sources:  raw.Sources,
		contents: make([]*sourceText, len(raw.Sources)),
	}
	for i, c := range raw.SourcesContent {
		if i < len(m.contents) && c != nil {
			m.contents[i] = newSourceText(*c)
		}
	}
	for _, p := range raw.AstralColumns {
		line, col := p[0], p[1]
		if line < 0 || line >= len(lines) || col < 0 || col > math.MaxInt32 {
			return nil, fmt.Errorf("typescript: parse source map: %s entry [%d,%d] out of range", astralColumnsKey, line, col)
		}
		if m.astral == nil {
			m.astral = make([][]int32, len(lines))
		}
		m.astral[line] = append(m.astral[line], int32(col))
	}
	for _, cols := range m.astral {
		slices.Sort(cols)
	}
	return m, nil
}

// Original maps a position in the generated JavaScript to the TypeScript
// source: line and col are 1-based, col in code points, and so are the
// results. It reports ok false when the line has no mapping or the mapping
// found has no source, as for the helper functions esbuild adds.
//
// The mapping used is the last one at or before col on that line, as a
// debugger would use; a position before the first mapping of its line (in
// indentation) takes the first one. A col below 1 means the column is
// unknown and also takes the first mapping of the line.
func (m *SourceMap) Original(line, col int) (origLine, origCol int, ok bool) {
	seg, ok := m.lookup(line, col)
	if !ok {
		return 0, 0, false
	}
	origCol = int(seg.col)
	if t := m.contents[seg.src]; t != nil {
		origCol = t.runeColumnFromUTF16(int(seg.line), origCol)
	}
	return int(seg.line) + 1, origCol + 1, true
}

// lookup finds the mapping Original uses.
func (m *SourceMap) lookup(line, col int) (mapping, bool) {
	if m == nil || line < 1 || line > len(m.lines) {
		return mapping{}, false
	}
	segs := m.lines[line-1]
	if len(segs) == 0 {
		return mapping{}, false
	}
	seg := segs[0]
	if col >= 1 {
		c := min(col-1, math.MaxInt32)
		if m.astral != nil {
			for _, a := range m.astral[line-1] {
				if int(a) >= c {
					break
				}
				c++ // the astral character before c takes two UTF-16 units
			}
		}
		if i := sort.Search(len(segs), func(i int) bool { return int(segs[i].genCol) > c }); i > 0 {
			seg = segs[i-1]
		}
	}
	if seg.src < 0 {
		return mapping{}, false
	}
	return seg, true
}

// source returns the file name of source index i.
func (m *SourceMap) source(i int32) string {
	if name := m.sources[i]; name != "" {
		return name
	}
	return TSFileName
}
