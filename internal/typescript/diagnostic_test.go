package typescript

import (
	"errors"
	"testing"

	"modernc.org/quickjs"
)

// TestDiagnostics checks the positions of compile errors: 1-based lines,
// 1-based columns in code points, in the TypeScript source, every error
// found after parsing reported together.
func TestDiagnostics(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Diagnostic
	}{
		{
			name: "syntax error",
			src:  "const a = 1;\nconst b = a +;\n",
			want: []Diagnostic{{2, 14, `Unexpected ";"`}},
		},
		{
			name: "syntax error on line 1",
			src:  "const = 5;",
			want: []Diagnostic{{1, 7, `Expected identifier but found "="`}},
		},
		{
			name: "columns count code points",
			src:  "const s = \"😀é😀\"; const t = ;",
			want: []Diagnostic{{1, 28, `Unexpected ";"`}},
		},
		{
			name: "CRLF line endings",
			src:  "const a = 1;\r\n\r\nconst b = );\r\n",
			want: []Diagnostic{{3, 11, `Unexpected ")"`}},
		},
		{
			name: "syntax error in a step with await and return",
			src:  "const v = await Promise.resolve(1);\nif (v) return v;\nreturn v +* 2;",
			want: []Diagnostic{{3, 11, `Unexpected "*"`}},
		},
		{
			name: "unterminated block",
			src:  "if (true) {\n  return 1;\n",
			want: []Diagnostic{{3, 1, "Unexpected end of file"}},
		},
		{
			name: "every error after parsing, and no top-level return error",
			src:  "await 0;\nlet x = 1;\nreturn;\nwith (x) {}\nlet y = 010;\ndelete x;\nreturn y;",
			want: []Diagnostic{
				{4, 1, "With statements cannot be used in strict mode"},
				{5, 9, "Legacy octal literals cannot be used in strict mode"},
				{6, 8, "Delete of a bare identifier cannot be used in strict mode"},
			},
		},
		{
			name: "strict mode without await too",
			src:  "let x = 1;\nwith (x) {}\nreturn x;",
			want: []Diagnostic{{2, 1, "With statements cannot be used in strict mode"}},
		},
		{
			name: "export",
			src:  "const a = await Promise.resolve(1);\n  export   const b = a;\nexport { a };\nexport function f() {}\nreturn a;",
			want: []Diagnostic{{2, 3, exportMessage}, {3, 1, exportMessage}, {4, 1, exportMessage}},
		},
		{
			name: "return inside a namespace",
			src:  "namespace N {\n  return 1;\n}",
			want: []Diagnostic{{2, 3, "A return statement cannot be used here"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Compile(tt.src)
			var cerr *CompileError
			if !errors.As(err, &cerr) {
				t.Fatalf("Compile = %v, %v; want a *CompileError", out, err)
			}
			if len(cerr.Diagnostics) != len(tt.want) {
				t.Fatalf("got %d diagnostics, want %d:\n%v", len(cerr.Diagnostics), len(tt.want), cerr)
			}
			for i, d := range cerr.Diagnostics {
				if d != tt.want[i] {
					t.Errorf("diagnostic %d = %+v, want %+v", i, d, tt.want[i])
				}
			}
		})
	}
}

func TestCompileErrorText(t *testing.T) {
	err := &CompileError{Diagnostics: []Diagnostic{{1, 2, "first"}, {3, 4, "second"}}}
	if got, want := err.Error(), "1:2: first\n3:4: second"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestWarnings(t *testing.T) {
	out := mustCompile(t, "const a = 1;\nconst s = \"é\"; a = 2;\nreturn a;")
	want := []Diagnostic{{2, 16, `This assignment will throw because "a" is a constant`}}
	if len(out.Warnings) != len(want) || out.Warnings[0] != want[0] {
		t.Errorf("Warnings = %+v, want %+v", out.Warnings, want)
	}
}

// TestQuickJSSyntaxErrorMapsBack maps the position of a QuickJS syntax
// error in compiled output (an import, which only the runtime can resolve)
// back through the source map.
func TestQuickJSSyntaxErrorMapsBack(t *testing.T) {
	src := "// leading comment\n\nimport { mean } from \"simple-statistics\";\nreturn mean([1, 2]);"
	out := mustCompile(t, src)
	err := parsesInQuickJS(t, out.JS)
	var qerr *quickjs.Error
	if !errors.As(err, &qerr) || qerr.LineNumber == 0 {
		t.Fatalf("QuickJS: got %#v, want a syntax error with a position", err)
	}
	if want := lineOf(t, out.JS, "import"); qerr.LineNumber != want {
		t.Fatalf("QuickJS reports line %d, want %d (%v)", qerr.LineNumber, want, err)
	}
	m, err := ParseSourceMap(out.Map)
	if err != nil {
		t.Fatal(err)
	}
	line, col, ok := m.Original(qerr.LineNumber, qerr.ColumnNumber)
	if !ok || line != 3 || col < 1 {
		t.Errorf("QuickJS's %d:%d maps to %d:%d (ok %v), want line 3", qerr.LineNumber, qerr.ColumnNumber, line, col, ok)
	}
}
