package typescript

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGolden compiles every testdata/*.ts. For a file named error_*.ts the
// diagnostics must match testdata/error_*.err.golden; for any other the
// JavaScript must match testdata/*.js.golden, must parse in QuickJS as a
// step body (unless it imports, which only the runtime resolves), and its
// source map must parse and point inside the source.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.ts")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".ts")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Compile(string(src))
			if strings.HasPrefix(name, "error_") {
				var cerr *CompileError
				if !errors.As(err, &cerr) {
					t.Fatalf("Compile: got %v, want a *CompileError", err)
				}
				checkGolden(t, filepath.Join("testdata", name+".err.golden"), cerr.Error()+"\n")
				return
			}
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			checkGolden(t, filepath.Join("testdata", name+".js.golden"), out.JS)
			if !strings.Contains(out.JS, "\nimport ") {
				if err := parsesInQuickJS(t, out.JS); err != nil {
					t.Errorf("QuickJS rejects the output: %v", err)
				}
			}
			checkMap(t, string(src), out)
		})
	}
}

// checkMap checks that out.Map parses, covers out.JS and points inside src.
func checkMap(t *testing.T, src string, out *Output) {
	t.Helper()
	m, err := ParseSourceMap(out.Map)
	if err != nil {
		t.Fatalf("ParseSourceMap: %v", err)
	}
	jsLines := strings.Split(out.JS, "\n")
	if len(m.lines) > len(jsLines) {
		t.Errorf("map has %d generated lines, JS has %d", len(m.lines), len(jsLines))
	}
	srcText := newSourceText(src)
	mapped := 0
	for i, segs := range m.lines {
		for _, s := range segs {
			if s.src < 0 {
				continue
			}
			mapped++
			line, ok := srcText.line(int(s.line))
			if !ok {
				t.Errorf("generated %d:%d maps to line %d, past the source's end", i+1, s.genCol, s.line+1)
				continue
			}
			if utf16Cols := bytesToUTF16(line, len(line)); int(s.col) > utf16Cols {
				t.Errorf("generated %d:%d maps to %d:%d, past the line's end (%d)", i+1, s.genCol, s.line+1, s.col, utf16Cols)
			}
		}
	}
	if mapped == 0 && strings.TrimSpace(src) != "" {
		t.Error("no mappings")
	}
}
