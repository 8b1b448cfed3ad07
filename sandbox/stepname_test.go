package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

// TestStepNotUTF8: a step with a byte that is not UTF-8 is refused before
// anything runs, naming the byte's offset, in every language; it used to
// run with U+FFFD in the byte's place.
func TestStepNotUTF8(t *testing.T) {
	e := engine(t)
	for _, tc := range []struct {
		name string
		req  sandbox.Request
		msg  string
		pos  *sandbox.Position
	}{
		{"javascript", sandbox.Request{Code: "const s = \"é\";\nreturn \"a\xffb\""},
			"the step is not valid UTF-8: byte 0xff at offset 25", &sandbox.Position{Line: 2, Column: 10}},
		{"typescript", sandbox.Request{Language: sandbox.TypeScript, Code: "const n: number = 1\xc3;\nreturn n"},
			"the step is not valid UTF-8: byte 0xc3 at offset 19", &sandbox.Position{Line: 1, Column: 20}},
		{"python", sandbox.Request{Language: sandbox.Python, Code: "return '\xe2\x82'"},
			"the step is not valid UTF-8: byte 0xe2 at offset 8", &sandbox.Position{Line: 1, Column: 9}},
		{"compiled", sandbox.Request{Language: sandbox.TypeScript, Compiled: &sandbox.Compiled{JS: "return '\x80'", Map: "{}"}},
			"the compiled step (Compiled.JS) is not valid UTF-8: byte 0x80 at offset 8", nil},
		{"step name", sandbox.Request{Code: "return 1", StepName: "r\xffport.js"},
			"stepName is not valid UTF-8: byte 0xff at offset 1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Submit(context.Background(), tc.req)
			var se *sandbox.Error
			if !errors.As(err, &se) || se.Code != sandbox.CodeValidation || se.Message != tc.msg {
				t.Fatalf("got %v, want VALIDATION %q", err, tc.msg)
			}
			if (se.Position == nil) != (tc.pos == nil) || (tc.pos != nil && *se.Position != *tc.pos) {
				t.Errorf("position %+v, want %+v", se.Position, tc.pos)
			}
		})
	}
	// Valid multi-byte text still runs as written.
	expectResult(t, "return \"é€😀\"", `"é€😀"`)
}

// TestStepName: the frames of a step's stack trace carry Request.StepName,
// in each language; a name that could forge frames is refused.
func TestStepName(t *testing.T) {
	e := engine(t)
	for _, tc := range []struct {
		name string
		req  sandbox.Request
		want []string
	}{
		{"javascript", sandbox.Request{StepName: "jobs/report.js", Code: "function f() {\n  throw new Error('x')\n}\nf()"},
			[]string{"at f (jobs/report.js:2:", "jobs/report.js:4:"}},
		{"typescript", sandbox.Request{Language: sandbox.TypeScript, StepName: "report.ts", Code: "type N = number\nfunction f(n: N): N {\n  throw new Error('x' + n)\n}\nreturn f(1)"},
			[]string{"at f (report.ts:3:", "report.ts:5:"}},
		{"python", sandbox.Request{Language: sandbox.Python, StepName: "report.py", Code: "def f():\n    raise ValueError('x')\nreturn f()"},
			[]string{`File "report.py", line 2, in f`, `File "report.py", line 3`}},
		{"default", sandbox.Request{Code: "throw new Error('x')"}, []string{"(step.js:1:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, e, tc.req, nil)
			var se *sandbox.Error
			if !errors.As(err, &se) || se.Code != sandbox.CodeRuntime {
				t.Fatalf("got %v, want RUNTIME", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(se.Stack, w) {
					t.Errorf("stack %q lacks %q", se.Stack, w)
				}
			}
			if tc.req.StepName != "" && (strings.Contains(se.Stack, "step.js") || strings.Contains(se.Stack, "step.ts") || strings.Contains(se.Stack, "step.py")) {
				t.Errorf("stack %q still names the runtime's file", se.Stack)
			}
		})
	}
	for _, name := range []string{"a\nat f (b.js:1:1)", strings.Repeat("x", 256)} {
		if _, err := e.Submit(context.Background(), sandbox.Request{Code: "return 1", StepName: name}); !errors.Is(err, sandbox.ErrValidation) {
			t.Errorf("StepName %q: got %v, want VALIDATION", name, err)
		}
	}
}

// TestModuleHint: a step that uses a built-in module its run did not ask
// for is told how to ask; a step that asked gets the module.
func TestModuleHint(t *testing.T) {
	e := engine(t)
	for _, tc := range []struct {
		req  sandbox.Request
		want string
	}{
		{sandbox.Request{Code: "return await duckdb.open()"},
			`ReferenceError: 'duckdb' is not defined (duckdb is a built-in module this run did not ask for: list "duckdb" in the request's modules; stepbox run: --modules duckdb)`},
		{sandbox.Request{Code: "return glpk.solve({})", Modules: []string{"duckdb"}},
			`ReferenceError: 'glpk' is not defined (glpk is a built-in module this run did not ask for: list "glpk" in the request's modules; stepbox run: --modules glpk)`},
		{sandbox.Request{Language: sandbox.Python, Code: "db = await duckdb.open()"},
			`NameError: name 'duckdb' is not defined (duckdb is a built-in module this run did not ask for: list "duckdb" in the request's modules; stepbox run: --modules duckdb)`},
		// Another undefined name gets no hint.
		{sandbox.Request{Code: "return duckdbx"}, `ReferenceError: 'duckdbx' is not defined`},
	} {
		_, _, err := run(t, e, tc.req, nil)
		var se *sandbox.Error
		if !errors.As(err, &se) || se.Code != sandbox.CodeRuntime || se.Message != tc.want {
			t.Errorf("%q: got %v, want RUNTIME %q", tc.req.Code, err, tc.want)
		}
	}
	if _, res, err := run(t, e, sandbox.Request{Code: "return typeof duckdb", Modules: []string{"duckdb"}}, nil); err != nil || string(res.Value) != `"object"` {
		t.Errorf("with the module: %s %v", res.Value, err)
	}
}
