package security_test

import (
	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// hostNames is JavaScript for the names of host objects a global object g
// must not have: Node, Deno, Bun, the QuickJS shell (std, os, print,
// scriptArgs, bjson) and Stepbox's own raw entry point.
const hostNames = `["process", "require", "module", "exports", "__filename", "global", "Buffer", "Deno", "Bun",
  "std", "os", "print", "scriptArgs", "bjson", "__loadScript", "__sbx_host", "__sbx_boot", "__sbx_dispatch", "host"]
  .filter(k => { try { return g[k] !== undefined || k in g } catch (e) { return true } })`

// reachable is a step tail that returns whether g is the real global and
// which host names it exposes: [true, []] is the safe answer.
const reachable = "; return [g === globalThis, " + hostNames + "]"

// small limits for rows that cross a time limit on purpose.
var (
	cpu200  = sandbox.Limits{CPUMs: 200}
	wall300 = sandbox.Limits{WallMs: 300}
)

// Limits for rows that must not cross them: they stop the runaway loop or
// timer of an engine that fails the row, and a correct engine stays far
// below them on this machine (they never exceed the plan's).
var (
	cpuStop  = sandbox.Limits{CPUMs: min(testenv.Scale(200), plan.CPUMs)}
	wallStop = sandbox.Limits{WallMs: min(testenv.Scale(1000), plan.WallMs)}
)

// escapes are attempts to reach the host or to take the bootstrap's place.
var escapes = []attack{
	// Constructor chains and eval: every route to the global object finds
	// the same global, and nothing of the host on it.
	{"this.constructor.constructor", `const g = this.constructor.constructor("return this")()` + reachable, nil0, returns(`[true,[]]`)},
	{"({}).constructor.constructor", `const g = ({}).constructor.constructor("return globalThis")()` + reachable, nil0, returns(`[true,[]]`)},
	{"Function(return globalThis)", `const g = Function("return globalThis")()` + reachable, nil0, returns(`[true,[]]`)},
	{"async function constructor", `const g = await (async () => {}).constructor("return this")()` + reachable, nil0, returns(`[true,[]]`)},
	{"generator constructor", `const g = (function* () {}).constructor("yield this")().next().value` + reachable, nil0, returns(`[true,[]]`)},
	{"async generator constructor", `const g = (await (async function* () {}).constructor("yield this")().next()).value` + reachable, nil0, returns(`[true,[]]`)},
	{"direct eval", `const g = eval("this")` + reachable, nil0, returns(`[true,[]]`)},
	{"indirect eval", `const g = (0, eval)("this")` + reachable, nil0, returns(`[true,[]]`)},
	{"eval of the host entry point", `return [eval("typeof __sbx_host"), (0, eval)("typeof __sbx_host"), Function("return typeof __sbx_host")()]`, nil0, returns(`["undefined","undefined","undefined"]`)},
	{"callback this", `const g = await new Promise(r => setTimeout(function () { r(this) }, 0)) || globalThis` + reachable, nil0, returns(`[true,[]]`)},
	{"every name on the global's prototype chain", `const names = []; for (let o = globalThis; o; o = Object.getPrototypeOf(o)) names.push(...Object.getOwnPropertyNames(o), ...Object.getOwnPropertySymbols(o).map(String)); return names.filter(n => /sbx|host|process|require|^std$|^os$|print|script|Deno|Bun|module/i.test(n))`, nil0, returns(`[]`)},
	{"globalThis.__proto__ walk", `const g = globalThis.__proto__.constructor.constructor("return this")()` + reachable, nil0, returns(`[true,[]]`)},
	{"callers of a callback the bootstrap called", `const caller = f => { try { return typeof f.caller } catch (e) { return "restricted" } }; let c; await new Promise(r => setTimeout(function cb() { c = caller(cb); r() }, 0)); return [c, typeof arguments.callee, caller(arguments.callee)]`, nil0, returns(`["undefined","function","restricted"]`)},
	{"guest API functions keep no host reference", `return [dataProxy.request, reportStatus, setTimeout, console.log, fetch].map(f => Object.getOwnPropertyNames(f).filter(k => !["length", "name", "prototype"].includes(k)))`, nil0, returns(`[[],[],[],[],[]]`)},
	{"a Proxy as the global's prototype sees no bootstrap lookups", `const seen = []; Object.setPrototypeOf(globalThis, new Proxy(Object.create(Object.prototype), {has(t, k) { seen.push(String(k)); return Reflect.has(t, k) }, get(t, k, r) { seen.push(String(k)); return Reflect.get(t, k, r) }})); const v = await dataProxy.request("m", {a: 1}); reportStatus(1); console.log(v); await new Promise(r => setTimeout(r, 1)); try { await dataProxy.request("fail") } catch (e) {} return seen`, nil0, returns(`[]`)},

	// Module loading: there is no loader.
	{"import(fs)", `try { await import("fs"); return "loaded" } catch (e) { return "refused" }`, nil0, returns(`"refused"`)},
	{"import(std)", `try { await import("std"); return "loaded" } catch (e) { return "refused" }`, nil0, returns(`"refused"`)},
	{"import(os)", `try { await import("os"); return "loaded" } catch (e) { return "refused" }`, nil0, returns(`"refused"`)},
	{"import of a file path", `try { await import("/etc/passwd"); return "loaded" } catch (e) { return "refused" }`, nil0, returns(`"refused"`)},
	{"import of a data URL", `try { await import("data:text/javascript,export default 1"); return "loaded" } catch (e) { return "refused" }`, nil0, returns(`"refused"`)},
	{"import of a URL", `try { await import("http://127.0.0.1:1/x.js"); return "loaded" } catch (e) { return "refused" }`, nil0, returns(`"refused"`)},
	{"import from eval", `try { await eval("import('fs')"); return "loaded" } catch (e) { return "refused" }`, nil0, returns(`"refused"`)},
	{"static import", `import fs from "fs"; return 1`, nil0, fails(sandbox.CodeValidation, "")},
	{"import.meta", `return import.meta.url`, nil0, fails(sandbox.CodeValidation, "")},
	{"require", `return require("fs")`, nil0, throws("ReferenceError: ")},

	// Stack-trace hooks have no effect on the host's view.
	{"Error.prepareStackTrace", `Error.prepareStackTrace = () => { reportStatus("hooked"); return "forged" }; throw new Error("boom")`, nil0, throws("Error: boom").and(noEvents(sandbox.EventStatus), stackHas("step.js:1:"))},
	{"Error.captureStackTrace", `Error.captureStackTrace = () => { reportStatus("hooked") }; Error.stackTraceLimit = 0; throw new TypeError("boom")`, nil0, throws("TypeError: boom").and(noEvents(sandbox.EventStatus), stackHas("step.js:1:"))},
	{"Error.prototype.toString", `Error.prototype.toString = () => "forged"; throw new RangeError("boom")`, nil0, throws("RangeError: boom")},
	{"stack getter that loops", `const e = new Error("x"); Object.defineProperty(e, "stack", {get() { while (true) {} }}); throw e`, cpu200, fails(sandbox.CodeTimeout, "cpuMs")},
	{"name getter that throws", `const e = new Error("x"); Object.defineProperty(e, "name", {get() { throw e }}); throw e`, nil0, throws("Error: x")},

	// Values read once: the host sees what the guest serialised, once.
	{"params getter changes after first read", `let n = 0; const p = {get v() { return ++n }}; const echoed = await dataProxy.request("m", p); return {echoed, n}`, nil0, returns(`{"echoed":{"v":1},"n":1}`).and(paramsSeen(`{"v":1}`))},
	{"Proxy as params", `let calls = 0; const p = new Proxy({}, {ownKeys: () => ["a", "b"], getOwnPropertyDescriptor: () => ({value: 0, enumerable: true, configurable: true}), get: (t, k) => k === "toJSON" ? undefined : ++calls}); const echoed = await dataProxy.request("m", p); return {echoed, calls}`, nil0, returns(`{"echoed":{"a":1,"b":2},"calls":2}`).and(paramsSeen(`{"a":1,"b":2}`))},
	{"Proxy params whose traps loop", `await dataProxy.request("m", new Proxy({}, {ownKeys() { while (true) {} }}))`, cpu200, fails(sandbox.CodeTimeout, "cpuMs").and(noEvents(sandbox.EventDataRequest))},
	{"Proxy params whose traps throw", `try { await dataProxy.request("m", new Proxy({}, {ownKeys() { throw new Error("trap") }})) } catch (e) { return e.message }`, nil0, returns(`"dataProxy.request params is not JSON-serializable: trap"`).and(noEvents(sandbox.EventDataRequest))},
	{"status getter read once", `let n = 0; reportStatus({get v() { return ++n }}); return n`, nil0, returns(`1`).and(statusSeen(`{"v":1}`))},
	{"result getter read once", `let n = 0; return {get a() { return ++n }, get b() { return n }}`, nil0, returns(`{"a":1,"b":1}`)},
	{"Proxy as the result", `return new Proxy({a: 1}, {get: (t, k) => k === "toJSON" ? undefined : "forged-" + String(k)})`, nil0, returns(`{"a":"forged-a"}`)},
	{"Proxy result whose traps loop", `return new Proxy({}, {ownKeys() { while (true) {} }})`, cpu200, fails(sandbox.CodeTimeout, "cpuMs")},
	{"array Proxy result of length 2^32-1", `return new Proxy([], {get: (t, k) => k === "length" ? 2 ** 32 - 1 : 1})`, cpu200, fails(sandbox.CodeTimeout, "cpuMs").orElse(fails(sandbox.CodeOOM, "memoryMb"))},
	{"Proxy as the thrown value", `throw new Proxy({}, {get() { throw 1 }, ownKeys() { throw 2 }, getPrototypeOf() { throw 3 }})`, nil0, throws("Uncaught ")},
	{"Proxy thrown value whose traps loop", `throw new Proxy({}, {get() { while (true) {} }, ownKeys() { while (true) {} }, getPrototypeOf() { while (true) {} }})`, cpu200, fails(sandbox.CodeTimeout, "cpuMs")},
	{"revoked Proxy thrown", `const {proxy, revoke} = Proxy.revocable({}, {}); revoke(); throw proxy`, nil0, throws("Uncaught [unformattable thrown value]")},
	{"revoked Proxy as the result", `const {proxy, revoke} = Proxy.revocable({}, {}); revoke(); return proxy`, nil0, throws("TypeError: revoked proxy")},
	{"toJSON that loops", `return {toJSON() { while (true) {} }}`, cpu200, fails(sandbox.CodeTimeout, "cpuMs")},
	{"toJSON that throws", `return {toJSON() { throw new Error("nope") }}`, nil0, throws("TypeError: the result is not JSON-serializable: nope")},

	// Replaced built-ins: the bootstrap uses what it captured, so the run
	// still returns its own result.
	{"JSON.stringify replaced", `JSON.stringify = () => '"forged"'; await dataProxy.request("m", {a: 1}); reportStatus({s: 1}); return {a: 1}`, nil0, returns(`{"a":1}`).and(paramsSeen(`{"a":1}`), statusSeen(`{"s":1}`))},
	{"JSON.parse replaced", `JSON.parse = () => ({forged: true}); return await dataProxy.request("m", {a: 1})`, nil0, returns(`{"a":1}`)},
	{"call, apply, bind, Reflect.apply replaced", `const boom = function () { throw new Error("hijacked") }; Function.prototype.call = boom; Function.prototype.apply = boom; Function.prototype.bind = boom; Reflect.apply = boom; console.log("still", {a: 1}); const v = await dataProxy.request("m", {a: 1}); await new Promise(r => setTimeout(r, 1)); queueMicrotask(() => {}); return v`, nil0, returns(`{"a":1}`).and(events(sandbox.EventConsole, 1))},
	{"Promise.prototype.then that throws", `Promise.prototype.then = function () { throw new Error("hijacked") }; const v = await dataProxy.request("m", 1); await new Promise(r => setTimeout(r, 1)); return v`, nil0, returns(`1`)},
	{"Promise.prototype.then that never settles", `Promise.prototype.then = function () {}; return Promise.resolve(1)`, nil0, throws("the step never finished")},
	{"Promise species getter that throws", `Object.defineProperty(Promise.prototype, "constructor", {get() { throw new Error("species") }}); return 1`, nil0, returns(`1`)},
	{"Promise species constructor", `Promise.prototype.constructor = function Fake(ex) { ex(() => {}, () => {}) }; Promise.prototype.constructor[Symbol.species] = Promise.prototype.constructor; return 1`, nil0, returns(`1`)},
	{"Array.prototype methods replaced", `for (const m of ["push", "join", "indexOf", "map", "filter", "slice", "pop"]) Array.prototype[m] = function () { throw new Error("hijacked " + m) }; try { console.log([1, 2], {a: 1}) } catch (e) {} throw {code: 7}`, nil0, throws("Uncaught ")},
	{"Map and Object built-ins replaced", `Map.prototype.get = Map.prototype.set = Map.prototype.delete = Map.prototype.has = () => { throw new Error("hijacked") }; Object.keys = Object.defineProperty = Object.freeze = () => { throw new Error("hijacked") }; const v = await dataProxy.request("m", 2); await new Promise(r => setTimeout(r, 1)); return v`, nil0, returns(`2`)},
	{"globals the bootstrap used deleted", `for (const k of ["Object", "JSON", "Promise", "Array", "Error", "TypeError", "String", "Reflect", "Map", "Symbol", "Uint8Array", "ArrayBuffer"]) globalThis[k] = undefined; const v = await dataProxy.request("m", {a: [1]}); reportStatus(v); try { await dataProxy.request("fail") } catch (e) { return [v, e.message] }`, nil0, returns(`[{"a":[1]},"refused by the host"]`)},
	{"Object.prototype setters on bootstrap field names", `for (const k of ["id", "resolve", "reject", "message", "then", "url", "method", "headers", "body", "status", "name", "stack", "line", "column", "value", "done"]) Object.defineProperty(Object.prototype, k, {__proto__: null, set() { throw new Error("setter " + k) }, configurable: true}); const v = await dataProxy.request("m", {a: 1}); reportStatus({s: 1}); console.log("x"); await new Promise(r => setTimeout(r, 1)); let caught; try { await dataProxy.request("fail") } catch (e) { caught = e.message } return {v, caught}`, nil0, returns(`{"v":{"a":1},"caught":"refused by the host"}`).and(statusSeen(`{"s":1}`))},
	{"Object.prototype.then makes every object a thenable", `Object.prototype.then = function (r) { r(99) }; return {a: 1}`, nil0, returns(`99`)},
	{"Array.prototype index getter", `Object.defineProperty(Array.prototype, 3, {get() { return undefined }, configurable: true}); let msg; try { await dataProxy.request("fail") } catch (e) { msg = e.message } return msg`, nil0, returns(`"refused by the host"`)},
	{"Object.prototype[0] setter, then throw", `Object.defineProperty(Object.prototype, "0", {set() { throw new Error("setter") }}); throw new TypeError("mine")`, nil0, throws("TypeError: mine")},
	{"Object.prototype[0] setter, then return an object", `Object.defineProperty(Object.prototype, "0", {set() { throw new Error("setter") }}); return {a: 1}`, nil0, returns(`{"a":1}`).orElse(throws("TypeError: the result is not JSON-serializable: setter"))},
	{"Object.prototype[0] setter, throw with a timer pending", `Object.defineProperty(Object.prototype, "0", {set() { throw 1 }}); setInterval(() => {}, 5); throw new TypeError("mine")`, wallStop, throws("TypeError: mine")},

	// Symbols.
	{"Symbol.toPrimitive on a thrown value", `throw {[Symbol.toPrimitive]() { while (true) {} }, toString() { while (true) {} }, valueOf() { while (true) {} }}`, nil0, throws("Uncaught ")},
	{"Symbol.toPrimitive on the result", `return {[Symbol.toPrimitive]() { while (true) {} }, a: 1}`, nil0, returns(`{"a":1}`)},
	{"Symbol.hasInstance on Error throws", `Object.defineProperty(Error, Symbol.hasInstance, {value() { throw 1 }}); throw new Error("x")`, nil0, throws("Error: x")},
	{"Symbol.hasInstance on Error lies", `Object.defineProperty(Error, Symbol.hasInstance, {value: () => true}); throw 42`, nil0, fails(sandbox.CodeRuntime, "")},
	{"Symbol.hasInstance on Error loops", `Object.defineProperty(Error, Symbol.hasInstance, {value() { while (true) {} }}); throw new Error("x")`, cpu200, throws("Error: x")},
	{"a Symbol as the result", `return Symbol("s")`, nil0, throws("TypeError: the result is not JSON-serializable: symbol")},

	// Bridge arguments that are not JSON: the host only ever gets JSON.
	{"status payload that is a function", `reportStatus(() => 1); return 1`, nil0, returns(`1`).orElse(throws("TypeError: reportStatus payload is not JSON-serializable"))},
	{"status payload that is a Symbol", `reportStatus(Symbol("s")); return 1`, nil0, returns(`1`).orElse(throws("TypeError: reportStatus payload is not JSON-serializable"))},
	{"params that are a function", `return await dataProxy.request("m", () => 1)`, wallStop, returns(`null`).orElse(throws("TypeError: dataProxy.request params is not JSON-serializable"))},
	{"params that are a Symbol", `return await dataProxy.request("m", Symbol("s"))`, nil0, throws("TypeError: dataProxy.request params is not JSON-serializable")},
	{"method that is not a string", `return await dataProxy.request({toString() { return "m" }}, 1)`, nil0, throws("TypeError: dataProxy.request: method must be a string").and(noEvents(sandbox.EventDataRequest))},
	{"method too long", `return await dataProxy.request("m".repeat(300), 1)`, nil0, throws("TypeError: dataProxy.request: method must be 1 to 256 characters").and(noEvents(sandbox.EventDataRequest))},
	{"dataProxy is frozen", `dataProxy.request = () => "forged"; return await dataProxy.request("m", 5)`, nil0, returns(`5`)},

	// Code that closes the function's braces runs when the step is built:
	// it is the step's code all the same, under the same limits, and its
	// errors are the step's errors (RUNTIME), not VALIDATION.
	{"code that closes the function body", `}); reportStatus("early"); (async function () { return "second"`, nil0, returns(`"second"`).and(statusSeen(`"early"`))},
	{"code that closes the function body and loops", `}); while (true) {} (async function () {`, cpu200, fails(sandbox.CodeTimeout, "cpuMs")},
	{"code that closes the function body and throws SyntaxError", `}); reportStatus("ran"); throw new SyntaxError("forged"); (async function () {`, nil0, throws("SyntaxError: forged")},

	// Blocking and callbacks after the end.
	{"Atomics.wait", `Atomics.wait(new Int32Array(new SharedArrayBuffer(8)), 0, 0, 1e9)`, nil0, throws("TypeError: cannot block in this thread")},
	{"Atomics.wait forever", `Atomics.wait(new Int32Array(new SharedArrayBuffer(8)), 0, 0)`, nil0, throws("TypeError: cannot block in this thread")},
	{"FinalizationRegistry callback after the run", `const r = new FinalizationRegistry(() => reportStatus("finalized")); (function () { for (let i = 0; i < 1000; i++) r.register({}, i) })(); return 1`, nil0, returns(`1`).and(noEvents(sandbox.EventStatus))},
	{"WeakRef target after the run", `globalThis.w = new WeakRef({a: 1}); setTimeout(() => reportStatus(String(w.deref())), 0); return 1`, nil0, returns(`1`).and(noEvents(sandbox.EventStatus))},
	{"timers after the result are dropped", `setTimeout(() => reportStatus("late"), 0); setInterval(() => { while (true) {} }, 0); return 1`, cpuStop, returns(`1`).and(noEvents(sandbox.EventStatus))},
	{"microtask bridge call after the result", `(async () => { for (let i = 0; i < 3; i++) await null; reportStatus("late") })(); return 1`, nil0, returns(`1`).and(noEvents(sandbox.EventStatus))},
	{"microtask loop after the result", `(async () => { for (let i = 0; i < 3; i++) await null; while (true) {} })(); return 1`, cpuStop, returns(`1`)},
	{"timer error after the result", `setTimeout(() => { throw new Error("late") }, 0); return 1`, nil0, returns(`1`)},
}

// nil0 reads as "no limit changes" in a row.
var nil0 = sandbox.Limits{}
