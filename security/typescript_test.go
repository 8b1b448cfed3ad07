package security_test

import "github.com/stepbox/stepbox/sandbox"

// typescript repeats the escapes as TypeScript steps: they compile, and are
// contained exactly like JavaScript.
var typescript = []attack{
	{"constructor chain", `const g: any = (({}) as any).constructor.constructor("return this")()` + reachable, nil0, returns(`[true,[]]`)},
	{"async function constructor", `const AF = (async () => {}).constructor as FunctionConstructor; const g: any = await AF("return globalThis")()` + reachable, nil0, returns(`[true,[]]`)},
	{"indirect eval", `const g: any = (0, eval)("this")` + reachable, nil0, returns(`[true,[]]`)},
	{"declared host globals", `declare const __sbx_host: any, process: any, require: any, std: any; return [typeof __sbx_host, typeof process, typeof require, typeof std]`, nil0, returns(`["undefined","undefined","undefined","undefined"]`)},
	{"enum initialised by an escape", `enum E { A = (globalThis as any).constructor.constructor("return typeof require")() === "undefined" ? 1 : 2 } return E.A`, nil0, returns(`1`)},
	{"namespace holding an escape", `namespace N { export const leak = (0, eval)("typeof std") } return N.leak`, nil0, returns(`"undefined"`)},
	{"class with a static block", `class C { static g: any; static { C.g = Function("return this")() } } const g = C.g` + reachable, nil0, returns(`[true,[]]`)},
	{"dynamic import", `const m: unknown = await import("fs").catch((e: unknown) => "refused"); return m`, nil0, returns(`"refused"`)},
	{"static import", `import * as fs from "fs"; return typeof fs`, nil0, fails(sandbox.CodeValidation, "")},
	{"import = require", `import fs = require("fs"); return typeof fs`, nil0, fails(sandbox.CodeValidation, "").orElse(throws("ReferenceError: "))},
	{"prototype pollution, then the bridge", `(Object.prototype as any).then = undefined; (JSON as any).stringify = () => '"forged"'; (Function.prototype as any).call = () => { throw new Error("hijacked") }; const v = await dataProxy.request("m", {a: 1} as const); return v`, nil0, returns(`{"a":1}`).and(paramsSeen(`{"a":1}`))},
	{"getter params read once", `let n = 0; const p = { get v(): number { return ++n } }; await dataProxy.request("m", p); return n`, nil0, returns(`1`).and(paramsSeen(`{"v":1}`))},
	{"Proxy as the thrown value", `throw new Proxy<object>({}, { get(): never { throw 1 } })`, nil0, throws("Uncaught ")},
	{"Atomics.wait", `Atomics.wait(new Int32Array(new SharedArrayBuffer(8)), 0, 0, 1e9)`, nil0, throws("TypeError: cannot block in this thread")},
	{"infinite loop", `let i: number = 0; while (true) { i++ }`, cpu100, fails(sandbox.CodeTimeout, "cpuMs")},
	{"deep recursion", `function f(n: number): number { return f(n + 1) + 1 } return f(0)`, nil0, fails(sandbox.CodeRuntime, "stackDepth")},
	{"memory", `let s: string = "x"; while (true) s = s.repeat(2)`, mem4, fails(sandbox.CodeOOM, "memoryMb")},
	{"a syntax error", `const x: number = ;`, nil0, fails(sandbox.CodeValidation, "")},
	{"code that closes the function body", `}); reportStatus("early"); (async function () { return "second"`, nil0, fails(sandbox.CodeValidation, "")},
}
