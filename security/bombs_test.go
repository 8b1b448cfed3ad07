package security_test

import (
	"strconv"
	"strings"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// Limits of the resource rows: small, so that each ends fast.
var (
	mem4      = sandbox.Limits{MemoryMB: 4}
	mem16     = sandbox.Limits{MemoryMB: 16}
	cpu100    = sandbox.Limits{CPUMs: 100}
	cpu200mem = sandbox.Limits{CPUMs: 200, MemoryMB: 32}
	native    = sandbox.Limits{CPUMs: 100, WallMs: 300}
	native16  = sandbox.Limits{CPUMs: 100, WallMs: 300, MemoryMB: 16}
)

// The bombs exhaust a resource; each ends with the limit's documented
// error. They are split in sections only so that the sections run in
// parallel.

// memoryBombs end with OOM (memoryMb), or a RangeError where the engine
// refuses a size before allocating.
var memoryBombs = []attack{
	{"array growth", `const a = []; while (true) a.push({i: a.length})`, mem4, fails(sandbox.CodeOOM, "memoryMb")},
	{"string growth via repeat", `let s = "x"; while (true) s = s.repeat(2)`, mem4, fails(sandbox.CodeOOM, "memoryMb")},
	{"string growth via concatenation", `const parts = []; while (true) parts.push("x".repeat(1000) + parts.length)`, mem4, fails(sandbox.CodeOOM, "memoryMb")},
	{"new Array(1e9) filled", `return new Array(1e9).fill(0).length`, mem4, fails(sandbox.CodeOOM, "memoryMb")},
	{"new Array(1e9) alone is lazy", `return new Array(1e9).length`, mem16, returns(`1000000000`)},
	{"Uint8Array(2**31)", `return new Uint8Array(2 ** 31).length`, mem16, throws("RangeError: ")},
	{"Uint8Array(2**31 - 1)", `return new Uint8Array(2 ** 31 - 1).length`, mem16, fails(sandbox.CodeOOM, "memoryMb")},
	{"ArrayBuffer growth", `const a = []; while (true) a.push(new ArrayBuffer(1 << 20))`, mem4, fails(sandbox.CodeOOM, "memoryMb")},
	{"Map growth", `const m = new Map(); for (let i = 0; ; i++) m.set(i, {i})`, mem4, fails(sandbox.CodeOOM, "memoryMb")},
	{"Set of strings", `const s = new Set(); for (let i = 0; ; i++) s.add("k" + i)`, mem4, fails(sandbox.CodeOOM, "memoryMb")},
	{"object with many keys", `const o = {}; for (let i = 0; ; i++) o["k" + i] = i`, mem4, fails(sandbox.CodeOOM, "memoryMb")},
	{"String.prototype.repeat 2**30", `return "x".repeat(2 ** 30).length`, mem16, throws("RangeError: ")},
	{"String.prototype.repeat 2**28", `return "x".repeat(2 ** 28).length`, mem16, fails(sandbox.CodeOOM, "memoryMb")},
	{"String.prototype.repeat Infinity", `return "x".repeat(Infinity)`, mem16, throws("RangeError: ")},
	{"padEnd to the maximum", `return "x".padEnd(2 ** 30 - 1).length`, mem16, fails(sandbox.CodeOOM, "memoryMb").orElse(throws("RangeError: "))},
	{"JSON.stringify of a huge object", `const v = "v".repeat(1000); const o = {}; for (let i = 0; i < 2e4; i++) o["k" + i] = v; return JSON.stringify(o).length`, mem4, fails(sandbox.CodeOOM, "memoryMb")},
	{"bound-function chain", `let f = () => 1; for (let i = 0; i < 1e5; i++) f = f.bind(null, i); return f()`, sandbox.Limits{MemoryMB: 64}, fails(sandbox.CodeOOM, "memoryMb").orElse(fails(sandbox.CodeRuntime, "stackDepth"))},
	{"memory held by a pending timer closure", `const keep = []; setInterval(() => keep.push("x".repeat(1 << 20)), 0); await new Promise(() => {})`, mem4, fails(sandbox.CodeOOM, "memoryMb")},
}

// recursionBombs end with RUNTIME RangeError, limit stackDepth.
var recursionBombs = []attack{
	{"deep recursion", `function f(n) { return f(n + 1) + 1 } return f(0)`, nil0, fails(sandbox.CodeRuntime, "stackDepth").message("RangeError: Maximum call stack size exceeded")},
	{"mutual recursion through getters", `const o = {get a() { return this.b }, get b() { return this.a }}; return o.a`, nil0, fails(sandbox.CodeRuntime, "stackDepth")},
	{"recursion through a Proxy trap", `const p = new Proxy({}, {get: (t, k, r) => r[k]}); return p.x`, nil0, fails(sandbox.CodeRuntime, "stackDepth")},
	{"recursion through toString", `const o = {toString() { return String(this) }}; return String(o)`, nil0, fails(sandbox.CodeRuntime, "stackDepth")},
	{"Proxy chain 2e4 deep", `let p = {}; for (let i = 0; i < 2e4; i++) p = new Proxy(p, {}); return p.x`, nil0, fails(sandbox.CodeRuntime, "stackDepth")},
	{"String() of a 1e4-deep array", `let a = []; for (let i = 0; i < 1e4; i++) a = [a]; return String(a).length`, nil0, fails(sandbox.CodeRuntime, "stackDepth")},
	{"deep recursion caught, then recursion again", `function f() { return f() } try { f() } catch (e) {} try { f() } catch (e) { return e instanceof Error }`, nil0, returns(`true`)},
	{"async recursion", `async function f(n) { return await f(n + 1) } return await f(0)`, nil0, fails(sandbox.CodeRuntime, "stackDepth")},
}

// timeBombs end with TIMEOUT and the limit that ran out, or the error the
// engine raises before time runs out.
var timeBombs = []attack{
	{"sync infinite loop, cpu", `while (true) {}`, cpu100, fails(sandbox.CodeTimeout, "cpuMs")},
	{"sync infinite loop, wall", `while (true) {}`, wall300, fails(sandbox.CodeTimeout, "wallMs")},
	{"infinite loop inside a catch", `while (true) { try { while (true) {} } catch (e) {} finally { continue } }`, cpu100, fails(sandbox.CodeTimeout, "cpuMs")},
	{"async loop", `while (true) await null`, wall300, fails(sandbox.CodeTimeout, "wallMs")},
	{"microtask flood", `function f() { Promise.resolve().then(f) } f(); await new Promise(() => {})`, wall300, fails(sandbox.CodeTimeout, "wallMs")},
	{"microtask flood, then return", `function f() { Promise.resolve().then(f) } f(); return 1`, cpuStop, returns(`1`)},
	{"queueMicrotask flood", `function f() { queueMicrotask(f) } f(); await new Promise(() => {})`, wall300, fails(sandbox.CodeTimeout, "wallMs")},
	{"zero-delay interval", `setInterval(() => {}, 0); await new Promise(() => {})`, wall300, fails(sandbox.CodeTimeout, "wallMs")},
	{"timer flood", `for (let i = 0; i < 1e6; i++) setTimeout(() => {}, 1e9)`, nil0, throws("TypeError: too many pending timers")},
	{"timer flood caught", `let n = 0; try { for (; n < 1e6; n++) setTimeout(() => {}, 1e9) } catch (e) {} return n`, nil0, returns(`10000`)},
	{"ReDoS", `return /(a+)+$/.test("a".repeat(40) + "!")`, cpu200, fails(sandbox.CodeTimeout, "cpuMs")},
	{"ReDoS in replace", `return "a".repeat(40).concat("!").replace(/(a|aa)+$/g, "")`, cpu200, fails(sandbox.CodeTimeout, "cpuMs")},
	{"sort comparator that never returns", `[3, 2, 1].sort(() => { while (true) {} })`, cpu200, fails(sandbox.CodeTimeout, "cpuMs")},
	{"BigInt 2n ** 10000000n", `return String(2n ** 10000000n).length`, cpu200mem, throws("RangeError: ").orElse(fails(sandbox.CodeOOM, "memoryMb"), fails(sandbox.CodeTimeout, "cpuMs"))},
	{"BigInt shifted past the maximum size", `let x = 1n; for (;;) x <<= 4096n`, cpu200mem, throws("RangeError: ").orElse(fails(sandbox.CodeOOM, "memoryMb"), fails(sandbox.CodeTimeout, "cpuMs"))},
}

// jsonBombs nest deeper than the engine or the bridge allows.
var jsonBombs = []attack{
	{"JSON.parse of deeply nested text", `return JSON.parse("[".repeat(1e6) + "]".repeat(1e6))`, nil0, throws("SyntaxError: ")},
	{"eval of deeply nested source", `return eval("[".repeat(1e5) + "]".repeat(1e5))`, nil0, throws("SyntaxError: ")},
	{"deeply nested RegExp", `return new RegExp("(?:".repeat(1e5) + "a" + ")".repeat(1e5)).test("a")`, nil0, fails(sandbox.CodeRuntime, "")},
	{"100k-deep result", `let a = []; for (let i = 0; i < 1e5; i++) a = [a]; return a`, nil0, throws("TypeError: the result is not JSON-serializable: nested too deeply")},
	{"600-deep result", `let a = []; for (let i = 0; i < 600; i++) a = [a]; return a`, nil0, fails(sandbox.CodeRuntime, "jsonDepth")},
	{"600-deep params", `let a = []; for (let i = 0; i < 600; i++) a = [a]; await dataProxy.request("m", a)`, nil0, throws("TypeError: dataProxy.request: params are JSON value nested too deeply").and(noEvents(sandbox.EventDataRequest))},
	{"600-deep status", `let a = []; for (let i = 0; i < 600; i++) a = [a]; reportStatus(a)`, nil0, throws("TypeError: reportStatus: the payload is JSON value nested too deeply").and(noEvents(sandbox.EventStatus))},
}

// floods use the bridge, the result and the code beyond their limits.
var floods = []attack{
	{"console flood", `for (let i = 0; i < 5000; i++) console.log("line", i); return "done"`, sandbox.Limits{MaxConsoleEvents: 100}, returns(`"done"`).and(consoleStats(100, 4900), events(sandbox.EventConsole, 101))},
	{"console byte flood", `const s = "y".repeat(50000); for (let i = 0; i < 200; i++) console.log(s); return "done"`, sandbox.Limits{MaxConsoleBytes: 120000}, returns(`"done"`).and(consoleBytesAtMost(120000))},
	{"console of a huge object", `const o = {}; for (let i = 0; i < 2e4; i++) o["k" + i] = "v".repeat(100); console.log(o, [o], new Array(1e5).fill("x")); return "done"`, nil0, returns(`"done"`).and(consoleBytesAtMost(3 * (64<<10 + 100)))},
	{"status flood", `for (let i = 0; ; i++) reportStatus({i})`, sandbox.Limits{MaxStatusEvents: 50}, fails(sandbox.CodeLimitExceeded, "maxStatusEvents").and(events(sandbox.EventStatus, 50))},
	{"status flood caught", `for (let i = 0; ; i++) try { reportStatus({i}) } catch (e) {}`, sandbox.Limits{MaxStatusEvents: 50}, fails(sandbox.CodeLimitExceeded, "maxStatusEvents")},
	{"status bytes flood", `const s = "z".repeat(100000); for (;;) reportStatus(s)`, sandbox.Limits{MaxDataBytes: 1 << 20}, fails(sandbox.CodeLimitExceeded, "maxDataBytes")},
	{"data-request flood", `for (let i = 0; ; i++) await dataProxy.request("m", i)`, sandbox.Limits{MaxDataRequests: 50}, fails(sandbox.CodeLimitExceeded, "maxDataRequests").and(events(sandbox.EventDataRequest, 50))},
	{"data-request flood in Promise.all", `await Promise.all(Array.from({length: 1e5}, (_, i) => dataProxy.request("m", i)))`, nil0, fails(sandbox.CodeLimitExceeded, "maxDataRequests")},
	{"data-request flood caught", `for (let i = 0; ; i++) try { await dataProxy.request("m", i) } catch (e) {}`, sandbox.Limits{MaxDataRequests: 50}, fails(sandbox.CodeLimitExceeded, "maxDataRequests")},
	{"data-request bytes", `const s = "z".repeat(100000); for (;;) await dataProxy.request("m", s)`, sandbox.Limits{MaxDataBytes: 1 << 20}, fails(sandbox.CodeLimitExceeded, "maxDataBytes")},
	{"unanswered data requests", `await Promise.all([dataProxy.request("hold"), dataProxy.request("hold")])`, wall300, fails(sandbox.CodeTimeout, "wallMs")},
	{"result size", `return "x".repeat(2 << 20)`, nil0, fails(sandbox.CodeLimitExceeded, "maxResultBytes")},
	{"result size via toJSON", `return {toJSON() { return "x".repeat(2000) }}`, sandbox.Limits{MaxResultBytes: 1000}, fails(sandbox.CodeLimitExceeded, "maxResultBytes")},
	{"code size", "return 1;" + strings.Repeat(" ", 300<<10), nil0, fails(sandbox.CodeValidation, "maxCodeBytes")},
	{"code size just under the limit", "return 1;" + strings.Repeat(" ", 200<<10), nil0, returns(`1`)},
	{"fetch is off without egress", `try { await fetch("http://127.0.0.1:1/") } catch (e) { return e.message }`, nil0, returns(`"fetch failed: fetch is not enabled on this engine: give it an egress policy (stepbox run --egress FILE; the server config's egress key; Config.Egress)"`)},
}

// overstays is the safe end of a run that does not stop when its time is
// up: TIMEOUT with whichever limit the engine saw first, or, with process
// isolation, the worker killed after the grace.
var overstays = fails(sandbox.CodeTimeout, "cpuMs").orElse(fails(sandbox.CodeTimeout, "wallMs"), fails(sandbox.CodeLimitExceeded, "time"))

// nativeLoops are single calls into a built-in that loops in native code,
// where the engine's interrupt is never checked. They run last: if the
// engine cannot end them, each keeps a CPU busy for as long as the loop
// lasts (the 2^53 one, for good).
var nativeLoops = []attack{
	{"Array.prototype.join on a huge sparse array", `return new Array(2 ** 32 - 1).join("x").length`, native16, overstays.orElse(fails(sandbox.CodeOOM, "memoryMb"))},
	{"Array.prototype.indexOf on a 2^53 array-like", `return Array.prototype.indexOf.call({length: 2 ** 53 - 1}, 1)`, native, overstays},
}

// boundedNativeLoops stand in for nativeLoops in-process: long native calls
// that end by themselves, after the run's limits.
func boundedNativeLoops() []attack {
	return []attack{
		{"Array.prototype.indexOf on a long array-like", `return Array.prototype.indexOf.call({length: ` + boundedLength() + `}, 1)`, native, overstays.orElse(returns(`-1`))},
	}
}

// boundedLength is the length of an array-like whose indexOf takes about a
// second on this machine (some two under the race detector): it outlasts
// the row's limits and grace, and ends soon after. The loop's cost follows
// the measured slow-down.
func boundedLength() string { return strconv.Itoa(int(6e7 / testenv.Slowdown())) }
