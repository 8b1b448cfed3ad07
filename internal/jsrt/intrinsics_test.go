package jsrt

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"modernc.org/quickjs"

	"github.com/stepbox/stepbox/internal/ipc"
)

// The bridge must not depend on the step's globals (issue #14, item 5). The
// tests below replace every built-in a bridge could reach for with a
// recording one, then use the bridge, and look at what was recorded while
// the bridge, not the step, was running.

// recordingHarness is JavaScript that starts a step: it captures what it
// needs itself, then replaces every configurable function-valued own
// property of the built-ins (enumerated, keys and symbols) with an accessor
// that records each read and returns a wrapper that records each call, and
// wraps every built-in getter and setter (Symbol.species, Map's size, the
// typed arrays' buffer...) the same way. $own is true while the step's own
// code runs: the step sets it false around each use of the bridge, so what
// is recorded ($log, "phase: read X" / "call X" / "get X") is what the
// bridge did. The step awaits bridge promises through $mine, which gives a
// promise an own constructor, so that await takes it as it is and reads
// nothing itself.
//
// $control(name, f, want) runs f as if it were the bridge and reports the
// records in want that were missing: proof that the recording works.
const recordingHarness = `
const $apply = Reflect.apply, $construct = Reflect.construct, $ownKeys = Reflect.ownKeys;
const $desc = Object.getOwnPropertyDescriptor, $def = Object.defineProperty, $proto = Object.getPrototypeOf;
const $Promise = Promise;
const $log = [];
const $labels = [];
const $controls = {};
let $own = true;
let $phase = "setup";
function $note(what) { if (!$own) $log[$log.length] = $phase + ": " + what; }
const $CTOR = { __proto__: null, value: $Promise };
function $mine(p) { $def(p, "constructor", $CTOR); return p; }
const $ORIG = Symbol("original");
function $wrap(label, orig) {
  const w = function (...args) {
    $note("call " + label);
    return new.target === undefined ? $apply(orig, this, args) : $construct(orig, args, new.target === w ? orig : new.target);
  };
  $def(w, $ORIG, { __proto__: null, value: orig });
  return w;
}
{
  const targets = [
    ["JSON", JSON], ["Math", Math], ["Reflect", Reflect], ["Atomics", Atomics],
    ["Function.prototype", Function.prototype],
    ["%TypedArray%", $proto(Uint8Array)],
    ["%TypedArray%.prototype", $proto(Uint8Array).prototype],
    ["%IteratorPrototype%", $proto($proto([][Symbol.iterator]()))],
    ["%ArrayIteratorPrototype%", $proto([][Symbol.iterator]())],
    ["%StringIteratorPrototype%", $proto(""[Symbol.iterator]())],
    ["%MapIteratorPrototype%", $proto(new Map().entries())],
    ["%SetIteratorPrototype%", $proto(new Set().values())],
    ["%RegExpStringIteratorPrototype%", $proto(/a/[Symbol.matchAll](""))],
    ["%GeneratorPrototype%", $proto($proto((function* () {})()))],
    ["%AsyncGeneratorPrototype%", $proto($proto((async function* () {})()))],
    ["%AsyncIteratorPrototype%", $proto($proto($proto((async function* () {})())))],
    ["%IteratorHelperPrototype%", $proto([].values().map(x => x))],
    ["%WrapForValidIteratorPrototype%", $proto(Iterator.from({ next() {} }))],
    ["%AsyncFunction.prototype%", $proto(async function () {})],
  ];
  const ctors = ["Object", "Function", "Array", "String", "Number", "Boolean", "BigInt", "Symbol", "Promise",
    "Map", "Set", "WeakMap", "WeakSet", "WeakRef", "FinalizationRegistry", "RegExp", "Date", "Proxy",
    "ArrayBuffer", "SharedArrayBuffer", "DataView", "Iterator",
    "Error", "TypeError", "RangeError", "SyntaxError", "ReferenceError", "EvalError", "URIError", "AggregateError", "InternalError",
    "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
    "Float16Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"];
  for (let i = 0; i < ctors.length; i++) {
    const c = globalThis[ctors[i]];
    if (typeof c !== "function") continue;
    targets[targets.length] = [ctors[i], c];
    if (c.prototype !== null && typeof c.prototype === "object") targets[targets.length] = [ctors[i] + ".prototype", c.prototype];
  }
  const globals = ["parseInt", "parseFloat", "isNaN", "isFinite", "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "unescape"];
  const g = {};
  for (let i = 0; i < globals.length; i++) g[globals[i]] = true;
  for (let t = 0; t < targets.length; t++) {
    const name = targets[t][0], o = targets[t][1];
    const keys = $ownKeys(o);
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k];
      const d = $desc(o, key);
      if (!d.configurable) continue;
      const label = name + "." + (typeof key === "symbol" ? "[" + key.description + "]" : key);
      if (typeof d.value === "function") {
        const w = key === "constructor" ? d.value : $wrap(label, d.value);
        $def(o, key, { __proto__: null, enumerable: d.enumerable, configurable: true,
          get() { $note("read " + label); return w; },
          set(v) { $note("write " + label); $def(this, key, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true }); } });
      } else if (d.get !== undefined || d.set !== undefined) {
        $def(o, key, { __proto__: null, enumerable: d.enumerable, configurable: true,
          get: d.get && $wrap("get " + label, d.get), set: d.set && $wrap("set " + label, d.set) });
      } else {
        continue;
      }
      $labels[$labels.length] = label;
    }
  }
  const gkeys = $ownKeys(globalThis);
  for (let k = 0; k < gkeys.length; k++) {
    const key = gkeys[k];
    if (g[key] !== true) continue;
    const d = $desc(globalThis, key);
    const w = $wrap("globalThis." + key, d.value);
    $def(globalThis, key, { __proto__: null, configurable: true, get() { $note("read globalThis." + key); return w; } });
    $labels[$labels.length] = "globalThis." + key;
  }
}
function $control(name, f, want) {
  $phase = "control " + name;
  $own = false;
  try { f(); } catch (e) {}
  $own = true;
  $check(name, want);
}
function $check(name, want) {
  const missing = [];
  for (let i = 0; i < want.length; i++) {
    let found = false;
    for (let j = 0; j < $log.length; j++) if ($log[j] === $phase + ": " + want[i]) found = true;
    if (!found) missing[missing.length] = want[i];
  }
  // The control's records go; any other stay.
  let n = 0;
  for (let j = 0; j < $log.length; j++) if ($log[j].slice(0, $phase.length + 1) !== $phase + ":") $log[n++] = $log[j];
  $log.length = n;
  $controls[name] = missing;
}
$control("method", () => [].push(1), ["read Array.prototype.push", "call Array.prototype.push"]);
$control("array species", () => [1].map(x => x), ["read Array.prototype.map", "read Array.prototype.constructor", "call get Array.[Symbol.species]"]);
$control("promise species", () => $Promise.resolve(1).then(() => {}), ["read Promise.resolve", "read Promise.prototype.then", "read Promise.prototype.constructor", "call get Promise.[Symbol.species]"]);
$control("regexp species", () => "a".split(/a/), ["read String.prototype.split", "read RegExp.prototype.[Symbol.split]", "call get RegExp.[Symbol.species]"]);
$control("typed array species", () => new Uint8Array(1).slice(), ["read %TypedArray%.prototype.slice", "read Uint8Array.prototype.constructor", "call get %TypedArray%.[Symbol.species]"]);
$control("buffer species", () => new ArrayBuffer(1).slice(0), ["read ArrayBuffer.prototype.slice", "call get ArrayBuffer.[Symbol.species]"]);
$control("for-of", () => { for (const x of [1]) {} }, ["read Array.prototype.[Symbol.iterator]", "read %ArrayIteratorPrototype%.next", "call %ArrayIteratorPrototype%.next"]);
$control("string for-of", () => { for (const c of "a") {} }, ["read String.prototype.[Symbol.iterator]", "read %StringIteratorPrototype%.next"]);
$control("spread", () => [...[1]], ["read Array.prototype.[Symbol.iterator]"]);
$control("template", () => ` + "`${{}}`" + `, ["read Object.prototype.toString", "call Object.prototype.toString"]);
$control("call", () => (function () {}).call(null), ["read Function.prototype.call", "call Function.prototype.call"]);
$control("json", () => JSON.stringify([1]), ["read JSON.stringify", "call JSON.stringify"]);
$control("getter", () => new Map().size, ["call get Map.prototype.size"]);
$control("global", () => parseInt("1"), ["read globalThis.parseInt"]);
{
  // The step's first await hands its promise to the bridge, which chains
  // on it.
  const first = $mine($Promise.resolve(0));
  $phase = "start";
  $own = false;
  await first;
  $own = true;
  const q = $Promise.resolve(1);
  $phase = "control await";
  $own = false;
  await q;
  $own = true;
  $check("await", ["read Promise.prototype.constructor"]);
}
const $required = ["Array.[Symbol.species]", "Promise.[Symbol.species]", "Map.[Symbol.species]", "Set.[Symbol.species]",
  "RegExp.[Symbol.species]", "ArrayBuffer.[Symbol.species]", "%TypedArray%.[Symbol.species]",
  "%ArrayIteratorPrototype%.next", "%StringIteratorPrototype%.next", "Function.prototype.call", "Function.prototype.apply",
  "Function.prototype.bind", "Array.prototype.push", "Array.prototype.slice", "Promise.prototype.then", "Promise.resolve",
  "JSON.stringify", "JSON.parse", "Object.keys", "Object.defineProperty", "Reflect.apply", "String.prototype.slice",
  "String.prototype.split", "Error.prototype.toString", "Map.prototype.get", "Map.prototype.size", "Set.prototype.add",
  "Symbol.for", "%IteratorPrototype%.[Symbol.iterator]", "Object.prototype.toString", "%TypedArray%.prototype.length"];
const $missingLabels = [];
for (let i = 0; i < $required.length; i++) {
  let found = false;
  for (let j = 0; j < $labels.length; j++) if ($labels[j] === $required[i]) found = true;
  if (!found) $missingLabels[$missingLabels.length] = $required[i];
}
// $result is what the step returns: its toJSON runs while the bridge
// serializes it, so the records it reports include the bridge's work up
// to then.
function $result(value) {
  return { toJSON() {
    $own = true;
    const out = { leaks: $log.slice(), controls: $controls, missingLabels: $missingLabels, wrapped: $labels.length, value: value };
    $own = false;
    return out;
  } };
}
`

// bridgeSteps uses every part of the bridge, each as the bridge, and
// returns what it got.
const bridgeSteps = `
const SI = Symbol.iterator, AD = Symbol.asyncDispose;
const used = {};

$phase = "request";
$own = false;
const echoed = await $mine(dataProxy.request("echo", { a: [1, { b: "x" }], n: null, big: 7n }));
$own = true;
used.request = echoed;

$phase = "refused request";
let refused;
$own = false;
try { await $mine(dataProxy.request("fail", 1)); } catch (e) { refused = e; }
$own = true;
used.refused = refused.message;

$phase = "bad requests";
const circular = { name: "c" }; circular.self = circular;
let deep = []; for (let i = 0; i < 100000; i++) deep = [deep];
let bad1, bad2, bad3;
$own = false;
try { await $mine(dataProxy.request(1)); } catch (e) { bad1 = e; }
try { await $mine(dataProxy.request("x", deep)); } catch (e) { bad2 = e; }
try { await $mine(dataProxy.request("x", circular)); } catch (e) { bad3 = e; }
$own = true;
used.bad = [bad1.message, bad2.message, bad3.message];

$phase = "status";
$own = false;
reportStatus({ p: 50, list: [1, "two", { three: 3 }] });
reportStatus(undefined);
$own = true;

$phase = "console";
const err = new TypeError("boom");
const nested = { a: { b: { c: { d: { e: { f: 1 } } } } } };
const args = ["text", 1, true, null, undefined, 12n, Symbol("s"), function named() {}, () => 1, nested, [1, [2, [3]]],
  circular, err, new Map([["k", { v: 1 }]]), new Set([1, "two"]), new Date(0), Array(120).fill(0), Object.create(null), "x".repeat(70000)];
const log = console.log;
$own = false;
$apply(log, console, args);
console.info("info");
console.warn("warn", [1]);
console.error(err);
console.debug({ d: 1 });
console.trace("trace");
$own = true;

$phase = "timers";
let fired = "";
let resume;
const ticked = $mine(new $Promise(r => { resume = r; }));
$own = false;
const cancelled = setTimeout(() => { $own = true; fired += "cancelled;"; $own = false; }, 1);
clearTimeout(cancelled);
clearTimeout(12345);
let ticks = 0, timedOut = false;
const iv = setInterval((a, b) => {
  $own = true;
  ticks++;
  fired += "tick" + a + b + ";";
  if (ticks === 3) { $own = false; clearInterval(iv); $own = true; if (timedOut) resume(); }
  $own = false;
}, 1, "x", "y");
setTimeout(function (x) { $own = true; fired += "timeout" + x + ";"; timedOut = true; if (ticks >= 3) resume(); $own = false; }, 0, 7);
queueMicrotask(() => { $own = true; fired += "microtask;"; $own = false; });
await ticked;
$own = true;
used.timers = [ticks, fired.includes("timeout7;"), fired.includes("microtask;"), fired.includes("cancelled")];

$phase = "headers";
const hmap = new Map([["M", "6"]]);
let listed = "";
// The iterators' next is the step's to call: the step reads it, and calls
// the original, so that what is recorded is what the iterator does.
const $next = (it) => { $own = true; const next = it.next; $own = false; return next[$ORIG] || next; };
$own = false;
const h1 = new Headers([["X-A", "1"], ["x-a", "2"]]);
const h2 = new Headers({ "X-B": "3", "x-c": 4 });
const h3 = new Headers(h1);
const h4 = new Headers(hmap);
h1.append("X-C", "4");
h1.set("x-a", "5");
h1.delete("x-c");
const got = h1.get("X-A") + "|" + h1.has("x-b") + "|" + h3.get("x-a") + "|" + h4.get("m") + "|" + h2.get("nope");
h2.forEach(function (v, k) { $own = true; listed += k + "=" + v + ";"; $own = false; });
for (let it = h3.entries(), nx = $next(it), r = $apply(nx, it, []); !r.done; r = $apply(nx, it, [])) listed += r.value[0] + ":" + r.value[1] + ";";
for (let it = h2.keys(), nx = $next(it), r = $apply(nx, it, []); !r.done; r = $apply(nx, it, [])) listed += r.value + ";";
for (let it = h2.values(), nx = $next(it), r = $apply(nx, it, []); !r.done; r = $apply(nx, it, [])) listed += r.value + ";";
for (let it = h4[SI](), nx = $next(it), r = $apply(nx, it, []); !r.done; r = $apply(nx, it, [])) listed += r.value[0] + ";";
$own = true;
used.headers = [got, listed];

$phase = "fetch";
const bytes = new Uint8Array([104, 105, 255]);
const view = new DataView(new Uint8Array([1, 2, 3, 4]).buffer, 1, 2);
class Form { toString() { $own = true; const s = "a=1&b=2"; $own = false; return s; } }
const form = new Form();
const buffer = bytes.buffer;
const signal = AbortSignal.timeout(3600000); // abort.js's, library code the step uses: made by the step; it does not fire in the run, so no abort.js code runs in a later phase
let fetchErr, bodyErr, usedErr;
$own = false;
const r1 = await $mine(fetch("https://api.test/json", { method: "POST", headers: h1, body: "hi", redirect: "manual", timeoutMs: 500 }));
const j1 = await $mine(r1.json());
const r2 = await $mine(fetch("https://api.test/binary", { headers: [["A", "1"]], body: bytes, signal }));
const b2 = await $mine(r2.arrayBuffer());
const r3 = await $mine(fetch("https://api.test/binary", { body: buffer }));
const t3 = await $mine(r3.text());
const r4 = await $mine(fetch("https://api.test/text", { body: view, headers: { "Content-Type": "x/y" } }));
const b4 = await $mine(r4.arrayBuffer());
const r5 = await $mine(fetch("https://api.test/text", { body: form }));
const t5 = await $mine(r5.text());
try { await $mine(fetch("https://api.test/refused")); } catch (e) { fetchErr = e; }
try { await $mine(fetch("https://api.test/text", { body: {} })); } catch (e) { bodyErr = e; }
try { await $mine(r1.text()); } catch (e) { usedErr = e; }
const statusLine = r1.status + " " + r1.statusText + " " + r1.ok + " " + r1.url + " " + r1.redirected + " " + r1.bodyUsed + " " + r1.headers.get("x-r");
$own = true;
used.fetch = [statusLine, j1, b2.byteLength, new Uint8Array(b2)[2], t3, b4.byteLength, t5, fetchErr.message, bodyErr.message, usedErr.message];

$phase = "duckdb";
const getterRow = { get g() { $own = true; const v = 5; $own = false; return v; } };
let sqlErr, argErr;
$own = false;
const db = await $mine(duckdb.open());
await $mine(db.load("t", [{ a: 1, s: "x" }, { a: 2, s: "y" }]));
await $mine(db.load("u", '[{"b": 1}]'));
await $mine(db.load("v", [getterRow]));
await $mine(db.exec("CREATE TABLE w (x INT)"));
const q = await $mine(db.query("SELECT sum(a) AS s, ? AS p, ? AS big, (SELECT b FROM u) AS b, (SELECT g FROM v) AS g FROM t", 42, 7n));
try { await $mine(db.query("SELEC nonsense")); } catch (e) { sqlErr = e; }
try { await $mine(db.query(5)); } catch (e) { argErr = e; }
await $mine(db[AD]());
$own = true;
used.duckdb = [q, sqlErr.message.includes("Parser Error"), argErr.message];

$phase = "duckdb-wasm";
let closedErr;
$own = false;
const conn = await $mine(duckdb.connect());
const db4 = await $mine(conn.query("SELECT 1 AS a, 'x' AS s, [1, 2] AS l, 9007199254740993::BIGINT AS big UNION ALL SELECT 2, 'y', [], 3"));
const stmt = await $mine(conn.prepare("SELECT ?::INTEGER + 1 AS v"));
const tp = await $mine(stmt.query(41));
await $mine(stmt.close());
const wasmRows = db4.toArray();
const wasmOut = [db4.numRows, db4.numCols, db4.schema.fields[2].type, wasmRows[0].toJSON().s, db4.getChild("a").toArray(), db4.get(1).l.length,
  tp.get(0).v, db4.getChild("big").get(0) === 9007199254740993n, String(db4)];
await $mine(conn.close());
try { await $mine(conn.query("SELECT 1")); } catch (e) { closedErr = e; }
$own = true;
used["duckdb-wasm"] = [...wasmOut, closedErr.message];

$phase = "glpk";
const model = { name: "lp", objective: { direction: glpk.GLP_MAX, name: "z", vars: [{ name: "x", coef: 1 }] },
  subjectTo: [{ name: "c", vars: [{ name: "x", coef: 1 }], bnds: { type: glpk.GLP_UP, ub: 3 } }] };
let glpkErr;
$own = false;
const sol = await $mine(glpk.solve(model, { msglev: glpk.GLP_MSG_OFF }));
try { await $mine(glpk.solve(null)); } catch (e) { glpkErr = e; }
$own = true;
used.glpk = [sol.result.z, glpkErr.message];

$phase = "package";
$own = false;
import * as pkg from "answer";
const dyn = await $mine(import("answer"));
$own = true;
used.package = [pkg.answer, dyn === pkg];

$phase = "result";
$own = false;
return $result(used);
`

// bridgeHost answers the bridge test's data requests (method "fail" is
// refused, any other echoed) and fetches (by URL), and keeps the events.
type bridgeHost struct {
	mu      sync.Mutex
	events  []*ipc.Event
	replies chan ipc.Reply
}

func (h *bridgeHost) Emit(ctx context.Context, ev *ipc.Event) error {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
	switch {
	case ev.DataRequest != nil:
		if ev.DataRequest.Method == "fail" {
			h.replies <- ipc.Reply{ID: ev.DataRequest.ID, Error: "refused by the host"}
		} else {
			h.replies <- ipc.Reply{ID: ev.DataRequest.ID, Value: ev.DataRequest.Params}
		}
	case ev.FetchRequest != nil:
		var req struct{ URL string }
		_ = json.Unmarshal(ev.FetchRequest.Request, &req)
		switch req.URL {
		case "https://api.test/json":
			h.replies <- ipc.Reply{ID: ev.FetchRequest.ID, Value: json.RawMessage(`{"status":201,"statusText":"Created",` +
				`"headers":[["content-type","application/json"],["x-r","1"],["x-r","2"]],"body":"{\"ok\":[true]}","url":"https://api.test/json","redirected":false}`)}
		case "https://api.test/binary":
			h.replies <- ipc.Reply{ID: ev.FetchRequest.ID, Value: json.RawMessage(`{"status":200,"statusText":"OK","headers":[],` +
				`"body":"aGn/","bodyEncoding":"base64","url":"https://api.test/binary","redirected":true}`)}
		case "https://api.test/text":
			h.replies <- ipc.Reply{ID: ev.FetchRequest.ID, Value: json.RawMessage(`{"status":200,"statusText":"OK","headers":[],` +
				`"body":"h\u00e9llo \ud83d\ude00","url":"https://api.test/text","redirected":false}`)}
		default:
			h.replies <- ipc.Reply{ID: ev.FetchRequest.ID, Error: "blocked by egress policy: test"}
		}
	}
	return nil
}

// bridgeOutcome is what the recording harness returns.
type bridgeOutcome struct {
	Leaks         []string            `json:"leaks"`
	Controls      map[string][]string `json:"controls"`
	MissingLabels []string            `json:"missingLabels"`
	Wrapped       int                 `json:"wrapped"`
	Value         json.RawMessage     `json:"value"`
}

// checkRecording fails t if the harness's records show the bridge reading
// a replaced built-in, or if the recording itself did not work.
func checkRecording(t *testing.T, raw json.RawMessage) *bridgeOutcome {
	t.Helper()
	var o bridgeOutcome
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	for _, l := range o.Leaks {
		t.Errorf("the bridge used a replaceable built-in: %s", l)
	}
	if len(o.Controls) < 15 {
		t.Errorf("only %d controls ran: %v", len(o.Controls), o.Controls)
	}
	for name, missing := range o.Controls {
		if len(missing) > 0 {
			t.Errorf("control %q: the wrappers did not record %q", name, missing)
		}
	}
	if len(o.MissingLabels) > 0 {
		t.Errorf("not replaced: %q", o.MissingLabels)
	}
	if o.Wrapped < 400 {
		t.Errorf("only %d built-ins replaced", o.Wrapped)
	}
	return &o
}

// TestBridgeIgnoresReplacedBuiltins uses every bridge function from a step
// that replaced every built-in with a recording wrapper: the bridge must
// have used none of them.
func TestBridgeIgnoresReplacedBuiltins(t *testing.T) {
	rt := newRT(t)
	lim := testLimits
	lim.MaxFetchRequests, lim.MaxConsoleEvents, lim.MaxConsoleBytes = 20, 20, 1<<20
	h := &bridgeHost{replies: make(chan ipc.Reply, 100)}
	ev := rt.Run(context.Background(), Job{
		Code:     recordingHarness + bridgeSteps,
		Input:    json.RawMessage(`null`),
		Limits:   lim,
		Modules:  []string{ModuleDuckDB, ModuleGLPK},
		Packages: []ipc.Package{{Name: "answer", Version: "1.0.0", Source: `({answer: 42})`}},
		Host:     h,
		Replies:  h.replies,
	})
	if ev.Result == nil {
		t.Fatalf("%+v", ev.Error)
	}
	o := checkRecording(t, ev.Result.Value)
	t.Logf("%d built-ins replaced", o.Wrapped)

	// What the bridge delivered is what it always delivers.
	var used map[string]json.RawMessage
	if err := json.Unmarshal(o.Value, &used); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"request": `{"a":[1,{"b":"x"}],"n":null,"big":7}`,
		"refused": `"refused by the host"`,
		"bad": `["dataProxy.request: method must be a string","dataProxy.request params is not JSON-serializable: nested too deeply",` +
			`"dataProxy.request params is not JSON-serializable: circular reference"]`,
		"timers":  `[3,true,true,false]`,
		"headers": `["5|false|1, 2|6|null","x-b=3;x-c=4;x-a:1, 2;x-b;x-c;3;4;m;"]`,
		"fetch": `["201 Created true https://api.test/json false true 1, 2",{"ok":[true]},3,255,"hi` + "\ufffd" + `",11,"héllo 😀",` +
			`"fetch failed: blocked by egress policy: test","fetch: body must be a string, an ArrayBuffer, a typed array, a Blob or a URLSearchParams (use JSON.stringify for JSON)",` +
			`"Body is unusable: body has already been read"]`,
		"duckdb":      `[[{"s":3,"p":42,"big":"7","b":1,"g":5}],true,"db.query: the SQL must be a string"]`,
		"duckdb-wasm": `[2,4,"INTEGER[]","x",[1,2],0,42,true,"[Table of 2 rows: a, s, l, big]","c.query: the connection is closed"]`,
		"glpk":        `[3,"glpk.solve: the model must be an object or its JSON text"]`,
		"package":     `[42,true]`,
	}
	for k, w := range want {
		if got := string(used[k]); got != w {
			t.Errorf("%s: got %s, want %s", k, got, w)
		}
	}

	var consoles, statuses, params, fetches []string
	for _, ev := range h.events {
		switch {
		case ev.Console != nil:
			consoles = append(consoles, ev.Console.Level+" "+ev.Console.Text)
		case ev.Status != nil:
			statuses = append(statuses, string(ev.Status))
		case ev.DataRequest != nil:
			params = append(params, ev.DataRequest.Method+" "+string(ev.DataRequest.Params))
		case ev.FetchRequest != nil:
			fetches = append(fetches, string(ev.FetchRequest.Request))
		}
	}
	if got, want := strings.Join(statuses, " "), `{"p":50,"list":[1,"two",{"three":3}]} null`; got != want {
		t.Errorf("status %s, want %s", got, want)
	}
	if got, want := strings.Join(params, " "), `echo {"a":[1,{"b":"x"}],"n":null,"big":7} fail 1`; got != want {
		t.Errorf("params %s, want %s", got, want)
	}
	wantFetches := []string{
		`{"url":"https://api.test/json","method":"POST","headers":[["x-a","5"]],"body":"hi","timeoutMs":500,"redirect":"manual"}`,
		`{"url":"https://api.test/binary","method":"GET","headers":[["a","1"]],"body":"aGn/","bodyEncoding":"base64","timeoutMs":3600000}`,
		`{"url":"https://api.test/binary","method":"GET","body":"aGn/","bodyEncoding":"base64"}`,
		`{"url":"https://api.test/text","method":"GET","headers":[["content-type","x/y"]],"body":"AgM=","bodyEncoding":"base64"}`,
		`{"url":"https://api.test/text","method":"GET","body":"a=1&b=2"}`,
		`{"url":"https://api.test/refused","method":"GET"}`,
	}
	if got, want := strings.Join(fetches, "\n"), strings.Join(wantFetches, "\n"); got != want {
		t.Errorf("fetch requests\n%s\nwant\n%s", got, want)
	}
	if len(consoles) != 6 {
		t.Fatalf("console events %q", consoles)
	}
	first := consoles[0]
	for _, part := range []string{
		`log text 1 true null undefined 12n Symbol(s) [Function: named] [Function: (anonymous)] { a: { b: { c: { d: { e: [Object] } } } } } [ 1, [ 2, [ 3 ] ] ] { name: "c", self: [Circular] } TypeError: boom` + "\n" + `    at anonymous (step.js:`,
		`Map(1) [ [ "k", { v: 1 } ] ] Set(2) [ 1, "two" ] 1970-01-01T00:00:00.000Z [ 0, 0, `,
		`0, ... 20 more items ] {} xxxx`,
	} {
		if !strings.Contains(first, part) {
			t.Errorf("console.log formatted\n%.600s\nwithout\n%s", first, part)
		}
	}
	if !strings.HasSuffix(first, "x...") || len(first) > 70000 {
		t.Errorf("console.log: the long string was not cut: ...%s (%d bytes)", first[len(first)-20:], len(first))
	}
	for i, want := range []string{"info info", "warn warn [ 1 ]", "error TypeError: boom\n    at anonymous (step.js:", "debug { d: 1 }", "debug trace"} {
		if !strings.HasPrefix(consoles[i+1], want) {
			t.Errorf("console %d: %q, want %q...", i+1, consoles[i+1], want)
		}
	}
}

// TestRecordingSeesAnUnguardedBridge is the harness's own check: a bridge
// written without care, here a step's own function playing that part,
// is caught.
func TestRecordingSeesAnUnguardedBridge(t *testing.T) {
	rt := newRT(t)
	ev := runStep(t, rt, recordingHarness+`
$phase = "careless";
function careless(v) { const parts = []; parts.push(JSON.stringify(v)); return parts.map(String).join(","); }
$own = false;
careless({ a: 1 });
await $Promise.resolve(1).then(x => x);
$own = true;
return $result(null)`, testLimits, nil)
	if ev.Result == nil {
		t.Fatalf("%+v", ev.Error)
	}
	var o bridgeOutcome
	if err := json.Unmarshal(ev.Result.Value, &o); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(o.Leaks, "\n")
	for _, want := range []string{
		"careless: call Array.prototype.push", "careless: call JSON.stringify", "careless: call get Array.[Symbol.species]",
		"careless: call Array.prototype.join", "careless: call Promise.prototype.then", "careless: call get Promise.[Symbol.species]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("not recorded: %s; the records are\n%s", want, got)
		}
	}
}

// TestHostRunsNoGuestCode checks what the host itself reads in the VM when
// an exception reaches it (an interrupt, the end of a run inside a timer,
// a job that throws): nothing the step replaced. The step records into a
// global that the test reads from the VM after the run.
func TestHostRunsNoGuestCode(t *testing.T) {
	const traps = `
globalThis.$calls = [];
const $record = (what) => function () { $calls.push(what); return "forged"; };
Error.prototype.toString = $record("Error.prototype.toString");
Object.prototype.toString = $record("Object.prototype.toString");
Object.defineProperty(Object.prototype, Symbol.toPrimitive, { value: $record("Symbol.toPrimitive"), configurable: true });
for (const k of ["name", "message", "stack", "lineNumber", "columnNumber", "fileName"]) {
  for (const p of [Error.prototype, Object.prototype]) {
    try { Object.defineProperty(p, k, { get: $record("get " + k), set() {}, configurable: true }); } catch (e) {}
  }
  try { Object.defineProperty(InternalError.prototype, k, { get: $record("get InternalError " + k), configurable: true }); } catch (e) {}
}
try { InternalError.prototype.toString = $record("InternalError.prototype.toString"); } catch (e) {}
`
	cases := []struct {
		name, code string
		lim        ipc.Limits
		code2      ipc.Code
	}{
		{"a throw in a timer", `setTimeout(() => { throw new RangeError("late") }, 0); await new Promise(() => {})`, testLimits, ipc.CodeRuntime},
		{"an abort", `dataProxy.request("abort"); while (true) {}`, testLimits, ipc.CodeAborted},
		{"a job that throws", `const r = new FinalizationRegistry(() => { $calls.push("cleanup"); throw new Error("in cleanup") });
(function () { const o = {}; o.o = o; r.register(o, 1) })();
for (let i = 0; i < 300000; i++) { const a = {}; a.a = a }
await null; await null; return $calls.length`, testLimits, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, after := runThenEval(t, traps+tc.code, tc.lim, `$calls.join(", ")`)
			if tc.code2 == "" {
				if ev.Result == nil {
					t.Fatalf("%+v", ev.Error)
				}
			} else if ev.Error == nil || ev.Error.Code != tc.code2 {
				t.Fatalf("got %+v %+v, want %s", ev.Result, ev.Error, tc.code2)
			}
			want := ""
			if tc.code2 == "" {
				want = "cleanup"
			}
			if after != want {
				t.Errorf("the step's replacements ran: %q; want %q", after, want)
			}
		})
	}
}

// runThenEval runs code on a VM of its own and, after the run, evaluates
// expr (a string) in the same VM: what a step recorded after it could
// report anything. A data request with method "abort" aborts the run
// while the step goes on.
func runThenEval(t *testing.T, code string, lim ipc.Limits, expr string) (*ipc.Event, string) {
	t.Helper()
	m, err := newMachine()
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &recorder{replies: make(chan ipc.Reply, 10), answer: func(r *ipc.DataRequest) *ipc.Reply {
		if r.Method == "abort" {
			cancel()
		}
		return nil
	}}
	rn := newRun(ctx, m, Job{Code: code, Limits: lim, Host: h, Replies: h.replies}, time.Now())
	rn.rt = newRT(t)
	ev := rn.execute(code, nil, "null")
	rn.finish()
	_ = m.vm.SetEvalTimeout(0)
	v, err := m.vm.Eval(expr, quickjs.EvalGlobal)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s is %T %v", expr, v, v)
	}
	return ev, s
}

// TestBridgeFailuresIgnoreReplacedBuiltins ends runs in every way the
// bridge reports a failure, with every built-in replaced by a recording
// wrapper, and reads the records from the VM afterwards.
func TestBridgeFailuresIgnoreReplacedBuiltins(t *testing.T) {
	cases := []struct {
		name, code string
		code2      ipc.Code
		msg        string
	}{
		{"a thrown Error", `const e = new TypeError("mine"); $own = false; throw e`, ipc.CodeRuntime, "TypeError: mine"},
		{"a thrown object", `const o = { a: [1, { b: 2 }], c: new Map([[1, 2]]) }; $own = false; throw o`, ipc.CodeRuntime, "Uncaught { a: [ 1, { b: 2 } ], c: Map(1) [ [ 1, 2 ] ] }"},
		{"a thrown Error, later", `const p = $mine(new $Promise(r => { $own = false; setTimeout(r, 1); $own = true })); $own = false; await p; $own = true; const e = new RangeError("late"); $own = false; throw e`, ipc.CodeRuntime, "RangeError: late"},
		{"a throw in a timer", `const e = new Error("in timer"), p = $mine(new $Promise(() => {})); $own = false; setTimeout(() => { throw e }, 1); await p`, ipc.CodeRuntime, "Error: in timer"},
		{"a result that is not JSON", `let d = []; for (let i = 0; i < 100000; i++) d = [d]; $own = false; return d`, ipc.CodeRuntime, "TypeError: the result is not JSON-serializable: nested too deeply"},
		{"a cyclic result", `const a = {}; a.a = a; $own = false; return a`, ipc.CodeRuntime, "TypeError: the result is not JSON-serializable: circular reference"},
		{"a result past maxResultBytes", `const s = "x".repeat(2 << 20); $own = false; return s`, ipc.CodeLimitExceeded, "the result is"},
		{"an abort", `$own = false; dataProxy.request("abort"); while (true) {}`, ipc.CodeAborted, "the run was aborted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lim := testLimits
			code := recordingHarness + `
globalThis.$after = () => { $own = true; return JSON.stringify({ leaks: $log, controls: $controls, missingLabels: $missingLabels, wrapped: $labels.length }) };
$phase = "` + tc.name + `";
` + tc.code
			ev, after := runThenEval(t, code, lim, `$after()`)
			if ev.Error == nil || ev.Error.Code != tc.code2 || !strings.HasPrefix(ev.Error.Message, tc.msg) {
				t.Errorf("got %+v %+v, want %s %q...", ev.Result, ev.Error, tc.code2, tc.msg)
			}
			checkRecording(t, json.RawMessage(after))
		})
	}
}
