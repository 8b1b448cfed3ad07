package typescript_test

import (
	"errors"
	"fmt"

	"github.com/stepbox/stepbox/internal/typescript"
)

func ExampleCompile() {
	src := `enum Color { Red, Green }
const r: number = await Promise.resolve(2);
return { color: Color.Green, r };`

	out, err := typescript.Compile(src)
	if err != nil {
		panic(err)
	}
	fmt.Print(out.JS)

	// Where does "return" (line 8 of the JavaScript) come from?
	m, err := typescript.ParseSourceMap(out.Map)
	if err != nil {
		panic(err)
	}
	line, col, ok := m.Original(8, 1)
	fmt.Println(line, col, ok)
	// Output:
	// "use strict";
	// var Color = /* @__PURE__ */ ((Color2) => {
	//   Color2[Color2["Red"] = 0] = "Red";
	//   Color2[Color2["Green"] = 1] = "Green";
	//   return Color2;
	// })(Color || {});
	// const r = await Promise.resolve(2);
	// return { color: 1 /* Green */, r };
	// 3 1 true
}

func ExampleCompileError() {
	_, err := typescript.Compile("const total: number = 1;\nreturn total +;")
	var cerr *typescript.CompileError
	if errors.As(err, &cerr) {
		for _, d := range cerr.Diagnostics {
			fmt.Printf("step.ts:%d:%d: %s\n", d.Line, d.Column, d.Message)
		}
	}
	// Output:
	// step.ts:2:15: Unexpected ";"
}

func ExampleSourceMap_RewriteStackFile() {
	out, err := typescript.Compile("const n: number = await Promise.resolve(1);\nif (n > 0) {\n  throw new Error(\"positive\");\n}")
	if err != nil {
		panic(err)
	}
	m, err := typescript.ParseSourceMap(out.Map)
	if err != nil {
		panic(err)
	}
	// A stack as QuickJS gives it for out.JS run through VM.Eval as
	// "(async function(){" + out.JS + "\n})".
	stack := "Error: positive\n    at <anonymous> (<eval>:4:18)\n"
	fmt.Print(m.RewriteStackFile(stack, typescript.QuickJSEvalFileName, len("(async function(){")))
	// Output:
	// Error: positive
	//     at <anonymous> (step.ts:3:13)
}
