package jsrt

import (
	"reflect"
	"strings"
	"testing"
)

func TestRewriteImports(t *testing.T) {
	have := map[string]bool{"ss": true, "@s/p": true}
	cases := []struct{ name, in, want string }{
		{"namespace", `import * as s from "ss";`, `const s = __sbx_require("ss");`},
		{"named", `import { mean, median as med } from 'ss'`, `const { mean, median: med } = __sbx_require('ss');`},
		{"default", `import d from "ss";`, `const { default: d } = __sbx_require("ss");`},
		{"default and named", `import d, { a } from "ss";`, `const { default: d, a } = __sbx_require("ss");`},
		{"default and namespace", `import d, * as n from "ss";`, `const n = __sbx_require("ss"), d = n.default;`},
		{"side effect", `import "ss";`, `__sbx_require("ss");`},
		{"empty braces", `import {} from "ss";`, `__sbx_require("ss");`},
		{"string name", `import { "a-b" as ab, default as d } from "ss";`, `const { "a-b": ab, default: d } = __sbx_require("ss");`},
		{"trailing comma", `import { a, } from "ss";`, `const { a } = __sbx_require("ss");`},
		{"scoped", `import * as p from "@s/p";`, `const p = __sbx_require("@s/p");`},
		{"binding named from", `import from from "ss";`, `const { default: from } = __sbx_require("ss");`},
		{"attributes", `import * as s from "ss" with { type: "js" };`, `const s = __sbx_require("ss");`},
		{"multi-line keeps lines", "import {\n  a,\n  b\n} from \"ss\"; f()", "const { a, b } = __sbx_require(\"ss\");\n\n\n f()"},
		{"after use strict", "\"use strict\";\nimport * as s from \"ss\";\nreturn s", "\"use strict\";\nconst s = __sbx_require(\"ss\");\nreturn s"},
		{"after a statement", "const x = 1; import * as s from \"ss\";", "const x = 1; const s = __sbx_require(\"ss\");"},
		{"ASI", "import * as s from \"ss\"\nreturn s", "const s = __sbx_require(\"ss\");\nreturn s"},
		{"dynamic", `const s = await import("ss"); const t = await import('ss', {})`, `const s = await __sbx_import("ss"); const t = await __sbx_import('ss', {})`},
		{"other packages untouched", `import * as f from "fs"; import("fs")`, `import * as f from "fs"; import("fs")`},
		{"in a string", `const s = "import * as s from 'ss'"`, `const s = "import * as s from 'ss'"`},
		{"in a template", "const s = `import * as s from 'ss' ${ `import(\"ss\")` }`", "const s = `import * as s from 'ss' ${ `import(\"ss\")` }`"},
		{"template substitution code", "const s = `${ await import(\"ss\") }`", "const s = `${ await __sbx_import(\"ss\") }`"},
		{"in comments", "// import * as s from 'ss'\n/* import('ss') */", "// import * as s from 'ss'\n/* import('ss') */"},
		{"in a regular expression", `const r = /import * as s from "ss"/; const q = a / b / import("ss")`, `const r = /import * as s from "ss"/; const q = a / b / __sbx_import("ss")`},
		{"nested is not a declaration", `if (x) { import * as s from "ss" }`, `if (x) { import * as s from "ss" }`},
		{"member named import", `obj.import("ss"); x.import * 2`, `obj.import("ss"); x.import * 2`},
		{"import.meta", `import.meta`, `import.meta`},
		{"malformed is left for the engine", `import * from "ss"`, `import * from "ss"`},
		{"keyword binding refused", `import { default } from "ss"`, `import { default } from "ss"`},
		{"junk after", `import * as s from "ss" junk`, `import * as s from "ss" junk`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := rewriteImports(tc.in, have)
			if got != tc.want {
				t.Fatalf("\n in  %q\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if strings.Count(got, "\n") != strings.Count(tc.in, "\n") {
				t.Fatalf("line count changed")
			}
		})
	}
}

func TestScanImports(t *testing.T) {
	code := "\"use strict\";\nimport * as a from \"a\";\nimport { b } from 'b'\nconst c = await import(\"c\");\nconst d = await import(name);\nfunction f() { return import('e') }"
	got := ScanImports(code)
	want := []Import{{Name: "a", Line: 2}, {Name: "b", Line: 3}, {Name: "c", Line: 4, Dynamic: true}, {Name: "e", Line: 6, Dynamic: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if ScanImports("return 1") != nil {
		t.Fatal("imports in code without any")
	}
}

// FuzzRewriteImports checks that the rewrite never changes the number of
// lines and never panics, whatever the code.
func FuzzRewriteImports(f *testing.F) {
	for _, s := range []string{
		`import * as s from "ss"; return s`, "import {\n a } from 'ss'", "`${`${import('ss')}`}`", `/[/]import/`,
		`import`, `import {`, `"\`, "import d, * as", "a = b\n/import('ss')/g",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		got := rewriteImports(code, map[string]bool{"ss": true})
		if strings.Count(got, "\n") != strings.Count(code, "\n") {
			t.Fatalf("%q -> %q: line count changed", code, got)
		}
		ScanImports(code)
	})
}
