package typescript

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestVLQ(t *testing.T) {
	for _, tt := range []struct {
		v   int64
		enc string
	}{
		{0, "A"}, {1, "C"}, {-1, "D"}, {15, "e"}, {16, "gB"}, {-16, "hB"},
		{123, "2H"}, {-123, "3H"}, {1 << 20, "ggggC"}, {math.MaxInt32, "+/////D"}, {-math.MaxInt32, "//////D"},
	} {
		if got := string(appendVLQ(nil, tt.v)); got != tt.enc {
			t.Errorf("appendVLQ(%d) = %q, want %q", tt.v, got, tt.enc)
		}
		v, next, err := decodeVLQ(tt.enc, 0)
		if err != nil || v != tt.v || next != len(tt.enc) {
			t.Errorf("decodeVLQ(%q) = %d, %d, %v; want %d", tt.enc, v, next, err, tt.v)
		}
	}
	for _, bad := range []string{"", "g", "!", "gggggggggA", "g!"} {
		if _, _, err := decodeVLQ(bad, 0); err == nil {
			t.Errorf("decodeVLQ(%q) succeeded", bad)
		}
	}
}

func TestMappingsRoundTrip(t *testing.T) {
	for _, s := range []string{
		"",
		";;",
		"AAAA,CAAC;AACA",
		"AAAA,UAAI;EAEEA;A;",
		";AAAA,SAAS,YAAY;AACrB,IAAK,QAAL,kBAAKA,WAAL;AAAa,EAAAA,cAAA",
	} {
		lines, err := decodeMappings(s, 1, 1)
		if err != nil {
			t.Fatalf("decodeMappings(%q): %v", s, err)
		}
		if got := encodeMappings(lines); got != s {
			t.Errorf("round trip of %q gave %q", s, got)
		}
	}
	// Segments out of order are sorted.
	lines, err := decodeMappings("IAAA,DAAA", 1, 0)
	if err != nil || len(lines[0]) != 2 || lines[0][0].genCol != 3 || lines[0][1].genCol != 4 {
		t.Errorf("unsorted segments: %+v, %v", lines, err)
	}
}

func TestParseSourceMapErrors(t *testing.T) {
	for _, tt := range []struct{ name, json string }{
		{"not JSON", `{`},
		{"version 2", `{"version":2,"sources":[],"names":[],"mappings":""}`},
		{"index map", `{"version":3,"sections":[{"offset":{"line":0,"column":0},"map":{}}]}`},
		{"bad digit", `{"version":3,"sources":["a"],"names":[],"mappings":"A!AA"}`},
		{"two fields", `{"version":3,"sources":["a"],"names":[],"mappings":"AA"}`},
		{"six fields", `{"version":3,"sources":["a"],"names":["n"],"mappings":"AAAAAA"}`},
		{"source out of range", `{"version":3,"sources":["a"],"names":[],"mappings":"ACAA"}`},
		{"no sources", `{"version":3,"sources":[],"names":[],"mappings":"AAAA"}`},
		{"name out of range", `{"version":3,"sources":["a"],"names":[],"mappings":"AAAAA"}`},
		{"negative line", `{"version":3,"sources":["a"],"names":[],"mappings":"AADA"}`},
		{"negative column", `{"version":3,"sources":["a"],"names":[],"mappings":"D"}`},
		{"astral column out of range", `{"version":3,"sources":["a"],"names":[],"mappings":"AAAA","x_stepbox_astral_columns":[[5,0]]}`},
	} {
		if m, err := ParseSourceMap(tt.json); err == nil {
			t.Errorf("%s: ParseSourceMap succeeded: %+v", tt.name, m)
		}
	}
}

func TestOriginal(t *testing.T) {
	m, err := ParseSourceMap(stackMap)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		line, col         int
		wantLine, wantCol int
		wantOK            bool
	}{
		{1, 1, 1, 1, true},
		{1, 10, 1, 1, true},
		{1, 11, 1, 5, true},
		{1, 1000, 1, 5, true},
		{1, 0, 1, 1, true},  // column unknown: first mapping
		{1, -5, 1, 1, true}, // likewise
		{2, 1, 3, 7, true},  // before the first mapping: the first
		{2, 3, 3, 7, true},
		{2, math.MaxInt, 3, 7, true},
		{3, 1, 0, 0, false}, // a segment without source
		{4, 1, 0, 0, false}, // no segment
		{5, 1, 0, 0, false}, // past the end
		{0, 1, 0, 0, false},
		{-1, 1, 0, 0, false},
	} {
		line, col, ok := m.Original(tt.line, tt.col)
		if line != tt.wantLine || col != tt.wantCol || ok != tt.wantOK {
			t.Errorf("Original(%d, %d) = %d, %d, %v; want %d, %d, %v", tt.line, tt.col, line, col, ok, tt.wantLine, tt.wantCol, tt.wantOK)
		}
	}
	var nilMap *SourceMap
	if _, _, ok := nilMap.Original(1, 1); ok {
		t.Error("nil map mapped a position")
	}
}

// TestOriginalColumnsAreCodePoints compiles a step whose source has
// characters that take more than one byte or more than one UTF-16 unit
// before a mapped token, and checks that the token maps to its column in
// code points.
func TestOriginalColumnsAreCodePoints(t *testing.T) {
	src := "const a = await Promise.resolve(\"é😀é😀\"); const target = a.length;\nreturn target;"
	out := mustCompile(t, src)
	m, err := ParseSourceMap(out.Map)
	if err != nil {
		t.Fatal(err)
	}
	jsLine := lineOf(t, out.JS, "const target")
	jsCol := strings.Index(strings.Split(out.JS, "\n")[jsLine-1], "target") + 1
	line, col, ok := m.Original(jsLine, jsCol)
	wantCol := len([]rune(src[:strings.Index(src, "target")])) + 1
	if !ok || line != 1 || col != wantCol {
		t.Errorf("target maps to %d:%d (ok %v), want 1:%d", line, col, ok, wantCol)
	}

	// Without sourcesContent the column stays in UTF-16 units, one more
	// per astral character.
	bare := strings.Replace(out.Map, `"sourcesContent"`, `"ignored"`, 1)
	m, err = ParseSourceMap(bare)
	if err != nil {
		t.Fatal(err)
	}
	if _, col, _ := m.Original(jsLine, jsCol); col != wantCol+2 {
		t.Errorf("without sourcesContent: column %d, want %d", col, wantCol+2)
	}
}

// TestMapIsStandard checks the parts of Output.Map that other consumers
// rely on.
func TestMapIsStandard(t *testing.T) {
	src := "const x: number = 1;\nreturn x < 2 && x > 0;"
	out := mustCompile(t, src)
	for _, want := range []string{`"version":3`, `"file":"step.js"`, `"sources":["step.ts"]`, `"sourcesContent":["const x: number = 1;\nreturn x < 2 && x > 0;"]`} {
		if !strings.Contains(out.Map, want) {
			t.Errorf("map lacks %s:\n%s", want, out.Map)
		}
	}
	if empty := mustCompile(t, ""); !strings.Contains(empty.Map, `"sources":["step.ts"],"sourcesContent":[""]`) {
		t.Errorf("map of an empty step: %s", empty.Map)
	}
	if strings.Contains(out.Map, astralColumnsKey) {
		t.Errorf("map has %s without astral characters", astralColumnsKey)
	}
}

// FuzzSourceMapPosition feeds arbitrary maps, positions and stacks to the
// parser and the queries, which must never panic.
func FuzzSourceMapPosition(f *testing.F) {
	f.Add(stackMap, 2, 3, "    at f (step.js:2:3)\n    at step.js:1")
	f.Add(`{"version":3,"sources":["a"],"sourcesContent":["é😀\r\nx"],"names":[],"mappings":"AAAA,EAAE;AACA","x_stepbox_astral_columns":[[0,1]]}`, 1, 3, "at step.js:1:3")
	f.Add(`{"version":3,"sources":["a"],"names":[],"mappings":"+/////D,+/////D"}`, 1, math.MaxInt, "at step.js:99999999999999999999:1")
	for _, src := range []string{"return 1;", "enum E { A }\nconst x = await Promise.resolve(E.A);\nreturn x;"} {
		if out, err := Compile(src); err == nil {
			f.Add(out.Map, 2, 1, "    at <anonymous> (step.js:2:1)")
		}
	}
	f.Fuzz(func(t *testing.T, mapJSON string, line, col int, stack string) {
		m, err := ParseSourceMap(mapJSON)
		if err != nil {
			return
		}
		if l, c, ok := m.Original(line, col); ok && (l < 1 || c < 1) {
			t.Errorf("Original(%d, %d) = %d, %d, true", line, col, l, c)
		}
		m.RewriteStack(stack, col)
		m.RewriteStackFile(stack, QuickJSEvalFileName, line)
	})
}

// TestFuzzCorpusCommitted makes sure the seed corpus is in the tree.
func TestFuzzCorpusCommitted(t *testing.T) {
	files, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzSourceMapPosition"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed corpus: %v", err)
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, f.Name())
	}
	slices.Sort(names)
	t.Logf("seed corpus: %v", names)
}
