package typescript

import (
	"os"
	"strings"
	"testing"
)

// TestRunInQuickJS runs compiled steps in QuickJS as the runtime does and
// checks what they return.
func TestRunInQuickJS(t *testing.T) {
	const dataProxy = `globalThis.dataProxy = { request: async (method, params) => method === "x" ? 42 : null };`
	tests := []struct {
		name    string
		prelude string
		src     string // TypeScript, or "@file" for testdata/file.ts
		want    string // JSON of the returned value
	}{
		{
			name:    "brief example",
			prelude: dataProxy,
			src: `enum Color { Red, Green }
declare const dataProxy: { request(m: string, p: object): Promise<unknown> };
const r: number = await dataProxy.request("x", {}) as number;
return { color: Color.Green, r };`,
			want: `{"color":1,"r":42}`,
		},
		{name: "await resolved promise", src: "const v = await Promise.resolve(7);\nreturn v * 6;", want: `42`},
		{name: "return without await", src: "const v: number = 1;\nreturn v + 1;", want: `2`},
		{name: "bare return", src: "await 0;\nreturn\n", want: `undefined`},
		{name: "no return", src: "const x: number = await Promise.resolve(1);", want: `undefined`},
		{name: "return on the next line is a bare return", src: "await 0;\nreturn\n42;", want: `undefined`},
		{name: "return with comment", src: "await 0;\nreturn /* c */ 5;", want: `5`},
		{name: "return with comment spanning lines", src: "await 0;\nreturn /* c\n */ 5;", want: `undefined`},
		{name: "do-while return", src: "await 0;\nlet i = 0;\ndo return; while (i++ < 3)", want: `undefined`},
		{name: "if-else return", src: "await 0;\nif (false) return 1\nelse return 2", want: `2`},
		{name: "return in arrow stays", src: "const f = () => { return 3 };\nreturn await Promise.resolve(f());", want: `3`},
		{name: "this is undefined", src: "await 0;\nreturn typeof this;", want: `"undefined"`},
		{name: "strict mode", src: "function f(this: unknown) { return this }\nreturn f() === undefined;", want: `true`},
		{
			name: "namespace, await and return together",
			src: `namespace Calc { export function twice(n: number) { return n * 2; } }
const n = await Promise.resolve(21);
if (n < 0) { return -1; }
return Calc.twice(n);`,
			want: `42`,
		},
		{name: "enums", src: "@enums", want: `{"names":["Green","DOWN"],"ab":3,"purple":20,"blue":10}`},
		{name: "namespaces", src: "@namespaces", want: `{"d":5,"unit":1,"deep":"deep"}`},
		{name: "generics", src: "@generics", want: `{"mapped":{"value":"n=2"},"same":"x","ids":[1,2],"first":7}`},
		{name: "decorators", src: "@decorators", want: `{"value":43,"calls":["tagged Counter","inc"],"name":"Counter"}`},
		{name: "satisfies and as const", src: "@satisfies_as_const", want: `{"retries":3,"mode":"fast","modes":["fast","slow"],"point":{"x":1,"y":2}}`},
		{name: "classes", src: "@classes", want: `{"areas":[6,16],"desc":"Square with area 16","count":1,"label":"square"}`},
		{name: "optional chaining", src: "@optional_chaining", want: `{"out":[{"city":"Oslo","tag":"x"},{"city":"unknown"},{"city":"unknown"}],"n":6,"big":"2000000","exp":1024}`},
		{name: "async arrows", src: "@async_arrows", want: `{"doubled":[2,4,6],"sum":3,"sleep":"function"}`},
		{
			// QuickJS has no Symbol.dispose; esbuild's helpers fall back
			// to Symbol.for("Symbol.dispose"), which a runtime can install.
			name: "using", prelude: `Symbol.dispose ??= Symbol.for("Symbol.dispose")`, src: "@using", want: `["body","dispose a"]`},
		{name: "unicode", src: "@unicode", want: `{"greeting":"héllo 😀","tagged":"raw 😀 héllo 😀","after":1}`},
		{name: "top level: bare", prelude: `globalThis.input = {mode: "bare"}`, src: "@top_level", want: `undefined`},
		{name: "top level: semi", prelude: `globalThis.input = {mode: "semi"}`, src: "@top_level", want: `undefined`},
		{name: "top level: comment", prelude: `globalThis.input = {mode: "comment"}`, src: "@top_level", want: `undefined`},
		{name: "top level: block", prelude: `globalThis.input = {mode: "block"}`, src: "@top_level", want: `{"base":40}`},
		{name: "top level: switch", prelude: `globalThis.input = {mode: "switch"}`, src: "@top_level", want: `"from switch"`},
		{name: "top level: loop", prelude: `globalThis.input = {mode: "loop"}`, src: "@top_level", want: `2`},
		{name: "top level: try", prelude: `globalThis.input = {mode: "try"}`, src: "@top_level", want: `"from try"`},
		{name: "top level: end", prelude: `globalThis.input = {mode: "label"}`, src: "@top_level", want: `42`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := tt.src
			if name, ok := strings.CutPrefix(src, "@"); ok {
				b, err := os.ReadFile("testdata/" + name + ".ts")
				if err != nil {
					t.Fatal(err)
				}
				src = string(b)
			}
			out := mustCompile(t, src)
			res := runJS(t, tt.prelude, out.JS)
			if res.Error != "" {
				t.Fatalf("step threw %s\n%s\nJS:\n%s", res.Error, res.Stack, out.JS)
			}
			if res.JSON != tt.want {
				t.Errorf("step returned %s, want %s\nJS:\n%s", res.JSON, tt.want, out.JS)
			}
		})
	}
}
