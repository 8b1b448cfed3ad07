package typescript

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRewriteStackQuickJS throws from known TypeScript lines in QuickJS,
// as the runtime runs a step, and maps the stack back.
func TestRewriteStackQuickJS(t *testing.T) {
	src := `interface Order { id: number; total?: number }
enum Kind { A, B }

function check(order: Order): number {
  if (order.total === undefined) {
    throw new Error("order " + order.id + " has no total");
  }
  return order.total;
}

const orders: Order[] = await Promise.resolve([{ id: 1, total: 5 }, { id: 2 }]);
const sum = orders.map(check).reduce((a, b) => a + b, 0);
return { sum, kind: Kind.B };
`
	out := mustCompile(t, src)
	res := runJS(t, "", out.JS)
	if res.Error != "Error: order 2 has no total" {
		t.Fatalf("step: got %+v, want it to throw", res)
	}
	m, err := ParseSourceMap(out.Map)
	if err != nil {
		t.Fatal(err)
	}
	got := m.RewriteStackFile(res.Stack, QuickJSEvalFileName, len(runtimePrefix))
	t.Logf("QuickJS stack:\n%s\nrewritten:\n%s", res.Stack, got)
	for _, want := range []string{
		"at check (step.ts:6:",        // the throw
		"at map (native)",             // untouched
		"at <anonymous> (step.ts:12:", // the call in the step body
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten stack lacks %q", want)
		}
	}
	if strings.Contains(got, "<eval>:") {
		t.Errorf("rewritten stack still points into the JavaScript:\n%s", got)
	}

	// The throw's column: QuickJS points at the call of Error, which
	// esbuild maps to the Error identifier.
	line, col, ok := m.Original(lineOf(t, out.JS, "throw new Error"), strings.Index(strings.Split(out.JS, "\n")[lineOf(t, out.JS, "throw new Error")-1], "Error")+1)
	if !ok || line != 6 || col != 15 {
		t.Errorf("Error identifier maps to %d:%d (ok %v), want 6:15", line, col, ok)
	}
}

// TestRewriteStackAstral checks generated columns after a character outside
// the Basic Multilingual Plane, which QuickJS counts as one column and
// source maps as two: two steps that differ only in such characters versus
// plain ones must map to the same TypeScript column.
func TestRewriteStackAstral(t *testing.T) {
	rewritten := func(chars string) string {
		src := "const v: any = await Promise.resolve(null);\nconst t = String.raw`" + chars + "` + v.boom;\nreturn t;"
		out := mustCompile(t, src)
		res := runJS(t, "", out.JS)
		if !strings.Contains(res.Error, "TypeError") {
			t.Fatalf("step: got %+v, want a TypeError", res)
		}
		m, err := ParseSourceMap(out.Map)
		if err != nil {
			t.Fatal(err)
		}
		return m.RewriteStackFile(res.Stack, QuickJSEvalFileName, len(runtimePrefix))
	}
	astral, plain := rewritten("😀😀"), rewritten("ab")
	if !strings.Contains(plain, "step.ts:2:") {
		t.Fatalf("plain stack not rewritten:\n%s", plain)
	}
	if astral != plain {
		t.Errorf("astral characters shift the column:\n%s\nversus\n%s", astral, plain)
	}
}

// stackMap is a hand-made map for the unit tests below. Generated line 1
// has "ab" at columns 0 and 10 mapping to original 1:0 and 1:4; line 2
// maps column 2 to 3:6 with a name; line 3 has only an unmapped segment;
// line 4 has no segment.
const stackMap = `{"version":3,"sources":["orig.ts"],"names":["x"],"mappings":"AAAA,UAAI;EAEEA;A;"}`

func TestRewriteStack(t *testing.T) {
	m, err := ParseSourceMap(stackMap)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, in, want string
		offset         int
	}{
		{"named frame", "    at f (step.js:2:3)", "    at f (orig.ts:3:7)", 0},
		{"anonymous frame", "    at <anonymous> (step.js:2:9)", "    at <anonymous> (orig.ts:3:7)", 0},
		{"frame without a name", "    at step.js:2:3", "    at orig.ts:3:7", 0},
		{"line only", "    at f (step.js:2)", "    at f (orig.ts:3)", 0},
		{"name with spaces and parens", "    at get (x) (step.js:2:3)", "    at get (x) (orig.ts:3:7)", 0},
		{"line 1 minus the prefix", "    at f (step.js:1:15)", "    at f (orig.ts:1:5)", 4},
		{"line 1 before the first mapping", "    at f (step.js:1:1)", "    at f (orig.ts:1:1)", 0},
		{"in the prefix", "    at f (step.js:1:4)", "    at f (step.js:1:4)", 4},
		{"unmapped segment", "    at f (step.js:3:1)", "    at f (step.js:3:1)", 0},
		{"line without mappings", "    at f (step.js:4:1)", "    at f (step.js:4:1)", 0},
		{"past the end: the runtime's suffix", "    at f (step.js:9:1)", "    at f (step.js:9:1)", 0},
		{"native", "    at map (native)", "    at map (native)", 0},
		{"other file", "    at f (lib.js:2:3)", "    at f (lib.js:2:3)", 0},
		{"file name prefix only", "    at f (step.jsx:2:3)", "    at f (step.jsx:2:3)", 0},
		{"not a number", "    at f (step.js:2:x)", "    at f (step.js:2:x)", 0},
		{"header line", "Error: step.js:2:3 failed", "Error: step.js:2:3 failed", 0},
		{"several lines", "TypeError: x\n    at f (step.js:2:3)\r\n    at g (step.js:1:11)\n", "TypeError: x\n    at f (orig.ts:3:7)\r\n    at g (orig.ts:1:5)\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.RewriteStack(tt.in, tt.offset); got != tt.want {
				t.Errorf("RewriteStack(%q, %d) =\n%q, want\n%q", tt.in, tt.offset, got, tt.want)
			}
		})
	}
	if got := m.RewriteStackFile("    at f (<eval>:2:3)", QuickJSEvalFileName, 0); got != "    at f (orig.ts:3:7)" {
		t.Errorf("RewriteStackFile with <eval> = %q", got)
	}
	var nilMap *SourceMap
	if got := nilMap.RewriteStack("    at f (step.js:2:3)", 0); got != "    at f (step.js:2:3)" {
		t.Errorf("nil map rewrote: %q", got)
	}
}

// TestRewriteStackAsyncFunctionConstructor runs the compiled step the way
// internal/jsrt does, through the AsyncFunction constructor, whose code
// QuickJS names "<input>" two lines below the body's own lines
// ("(async function anonymous(\n) {\n" comes first). Renaming those frames
// to StepFileName with the body's lines, as jsrt does, and then calling
// RewriteStack with no column offset gives TypeScript positions.
func TestRewriteStackAsyncFunctionConstructor(t *testing.T) {
	src := "const n: number = await Promise.resolve(3);\nfunction fail(k: number): never {\n  throw new RangeError(`bad ${k}`);\n}\nif (n > 2) fail(n);\nreturn n;"
	out := mustCompile(t, src)
	prelude := "globalThis.__step = " + strconv.Quote(out.JS) + ";"
	vm := runJS(t, prelude, "return await new (async function () {}).constructor(globalThis.__step)();")
	if vm.Error != "RangeError: bad 3" {
		t.Fatalf("step: %+v", vm)
	}
	throwLine := lineOf(t, out.JS, "throw new RangeError")
	if want := "(<input>:" + strconv.Itoa(throwLine+2) + ":"; !strings.Contains(vm.Stack, want) {
		t.Fatalf("stack %q lacks %q: the constructor's header is not 2 lines", vm.Stack, want)
	}
	// What jsrt's RewriteStack does: <input>:L -> step.js:L-2.
	renamed := regexp.MustCompile(`<input>:(\d+)`).ReplaceAllStringFunc(vm.Stack, func(s string) string {
		n, _ := strconv.Atoi(s[len("<input>:"):])
		return StepFileName + ":" + strconv.Itoa(n-2)
	})
	m, err := ParseSourceMap(out.Map)
	if err != nil {
		t.Fatal(err)
	}
	got := m.RewriteStack(renamed, 0)
	t.Logf("QuickJS stack:\n%s\nrenamed:\n%s\nrewritten:\n%s", vm.Stack, renamed, got)
	for _, want := range []string{"at fail (step.ts:3:", "(step.ts:5:"} {
		if !strings.Contains(got, want) {
			t.Errorf("rewritten stack lacks %q:\n%s", want, got)
		}
	}
}
