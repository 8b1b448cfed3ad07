package security_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

// The bridge must not use the step's globals (issue #14, item 5): a step
// that replaces the built-ins with recording wrappers must see the bridge
// use none of them. Each row starts with recording, which replaces every
// configurable function-valued own property of the built-ins (enumerated:
// string and symbol keys of JSON, Math, Reflect, Function.prototype, the
// constructors from Object to the typed arrays and their prototypes, the
// iterator prototypes, the error constructors) with an accessor that
// records each read and returns a wrapper that records each call, and
// wraps every built-in getter and setter (Symbol.species included) the
// same way. A row sets $own false around each use of the bridge, so that
// what is recorded then is the bridge's doing; it awaits the bridge's
// promises through $mine, which lets await take a promise without reading
// anything. Every row runs controls first, which record the step's own
// calls as if they were the bridge's: the recording cannot pass by
// recording nothing. A row returns $result(value): its toJSON runs while
// the bridge serializes the result, and reports every record, the controls
// and value.
const recording = `
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
    ["%TypedArray%", $proto(Uint8Array)], ["%TypedArray%.prototype", $proto(Uint8Array).prototype],
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
  let n = 0;
  for (let j = 0; j < $log.length; j++) if ($log[j].slice(0, $phase.length + 1) !== $phase + ":") $log[n++] = $log[j];
  $log.length = n;
  $controls[name] = missing;
}
$control("method", () => [].push(1), ["read Array.prototype.push", "call Array.prototype.push"]);
$control("array species", () => [1].map(x => x), ["read Array.prototype.constructor", "call get Array.[Symbol.species]"]);
$control("promise species", () => $Promise.resolve(1).then(() => {}), ["read Promise.prototype.then", "call get Promise.[Symbol.species]"]);
$control("typed array species", () => new Uint8Array(1).slice(), ["call get %TypedArray%.[Symbol.species]"]);
$control("for-of", () => { for (const x of [1]) {} }, ["read Array.prototype.[Symbol.iterator]", "call %ArrayIteratorPrototype%.next"]);
$control("string for-of", () => { for (const c of "a") {} }, ["call %StringIteratorPrototype%.next"]);
$control("template", () => ` + "`${{}}`" + `, ["call Object.prototype.toString"]);
$control("call", () => (function () {}).call(null), ["call Function.prototype.call"]);
$control("getter", () => new Map().size, ["call get Map.prototype.size"]);
{
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
function $result(value) {
  return { toJSON() {
    $own = true;
    const out = { leaks: $log.slice(), controls: $controls, wrapped: $labels.length, value: value };
    $own = false;
    return out;
  } };
}
`

// recordsNothing expects a row's $result: no records, every control
// recorded, and value (exact JSON).
func recordsNothing(value string) expect {
	return succeeds().and(func(t *testing.T, o *outcome) {
		t.Helper()
		var r struct {
			Leaks    []string            `json:"leaks"`
			Controls map[string][]string `json:"controls"`
			Wrapped  int                 `json:"wrapped"`
			Value    json.RawMessage     `json:"value"`
		}
		if err := json.Unmarshal(o.res.Value, &r); err != nil {
			t.Fatalf("result %s: %v", o.res.Value, err)
		}
		for _, l := range r.Leaks {
			t.Errorf("the bridge used a replaceable built-in: %s", l)
		}
		if len(r.Controls) != 10 {
			t.Errorf("%d controls ran, want 10: %v", len(r.Controls), r.Controls)
		}
		for name, missing := range r.Controls {
			if len(missing) > 0 {
				t.Errorf("control %q: the wrappers did not record %q", name, missing)
			}
		}
		if r.Wrapped < 400 {
			t.Errorf("only %d built-ins replaced", r.Wrapped)
		}
		if string(r.Value) != value {
			t.Errorf("value %s, want %s", r.Value, value)
		}
	})
}

// intrinsics are the rows: each uses part of the bridge as the bridge.
var intrinsics = []attack{
	{"data requests", `
$phase = "request";
let refused;
$own = false;
const v = await $mine(dataProxy.request("echo", { a: [1, { b: "x" }], n: null }));
try { await $mine(dataProxy.request("fail", [1])); } catch (e) { refused = e; }
$own = true;
return $result([v, refused.message])`, nil0, recordsNothing(`[{"a":[1,{"b":"x"}],"n":null},"refused by the host"]`).and(paramsSeen(`{"a":[1,{"b":"x"}],"n":null}`, `[1]`))},

	{"refused data requests", `
const circular = {}; circular.self = circular;
$phase = "request";
let e1, e2, e3;
$own = false;
try { await $mine(dataProxy.request(1)); } catch (e) { e1 = e; }
try { await $mine(dataProxy.request("x", () => 1n)); } catch (e) { e2 = e; }
try { await $mine(dataProxy.request("x", circular)); } catch (e) { e3 = e; }
$own = true;
return $result([e1.message, e2.message, e3.message])`, nil0, recordsNothing(`["dataProxy.request: method must be a string",` +
		`"dataProxy.request params is not JSON-serializable: function",` +
		`"dataProxy.request params is not JSON-serializable: circular reference"]`).and(noEvents(sandbox.EventDataRequest))},

	{"status", `
$phase = "status";
$own = false;
reportStatus({ p: 50, list: [1, "two", { three: 3 }] });
reportStatus(undefined);
reportStatus("done");
$own = true;
return $result(null)`, nil0, recordsNothing(`null`).and(statusSeen(`{"p":50,"list":[1,"two",{"three":3}]}`, `null`, `"done"`))},

	{"console", `
const circular = { name: "c" }; circular.self = circular;
const err = new TypeError("boom");
const args = ["text", 1, true, null, undefined, 12n, Symbol("s"), function named() {}, { a: { b: { c: { d: { e: { f: 1 } } } } } },
  [1, [2, [3]]], circular, err, new Map([["k", { v: 1 }]]), new Set([1, "two"]), new Date(0), Array(120).fill(0), Object.create(null)];
const log = console.log;
$phase = "console";
$own = false;
$apply(log, console, args);
console.info("info");
console.warn("warn", [1]);
console.error(err);
console.debug({ d: 1 });
console.trace("trace");
$own = true;
return $result(null)`, nil0, recordsNothing(`null`).and(events(sandbox.EventConsole, 6), func(t *testing.T, o *outcome) {
		t.Helper()
		for _, ev := range o.events {
			if ev.Console != nil && ev.Console.Level == "log" {
				for _, want := range []string{`text 1 true null undefined 12n Symbol(s) [Function: named] { a: { b: { c: { d: { e: [Object] } } } } } [ 1, [ 2, [ 3 ] ] ] { name: "c", self: [Circular] } TypeError: boom`,
					"\n    at anonymous (step.js:", `Map(1) [ [ "k", { v: 1 } ] ] Set(2) [ 1, "two" ] 1970-01-01T00:00:00.000Z [ 0, 0, `, `0, ... 20 more items ] {}`} {
					if !strings.Contains(ev.Console.Text, want) {
						t.Errorf("console.log wrote %.500q, without %q", ev.Console.Text, want)
					}
				}
			}
		}
	})},

	{"timers", `
let fired = "", tickArgs = "", ticks = 0, timedOut = false, resume;
const done = $mine(new $Promise(r => { resume = r; }));
$phase = "timers";
$own = false;
const cancelled = setTimeout(() => { $own = true; fired += "cancelled;"; $own = false; }, 1);
clearTimeout(cancelled);
clearTimeout(12345);
const iv = setInterval((a, b) => {
  $own = true;
  ticks++;
  tickArgs += a + b;
  if (ticks === 3) { $own = false; clearInterval(iv); $own = true; if (timedOut) resume(); }
  $own = false;
}, 1, "x", "y");
setTimeout(function (x) { $own = true; fired += "timeout" + x; timedOut = true; if (ticks >= 3) resume(); $own = false; }, 0, 7);
queueMicrotask(() => { $own = true; fired += "microtask"; $own = false; });
await done;
$own = true;
return $result([ticks, fired.includes("timeout7"), fired.includes("microtask"), tickArgs === "xyxyxy", fired.includes("cancelled")])`, nil0, recordsNothing(`[3,true,true,true,false]`)},

	{"Headers", `
const SI = Symbol.iterator;
const hmap = new Map([["M", "6"]]);
let listed = "";
// The iterators' next is the step's to call: the step reads it, and calls
// the original, so that what is recorded is what the iterator does.
const $next = (it) => { $own = true; const next = it.next; $own = false; return next[$ORIG] || next; };
$phase = "headers";
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
return $result([got, listed])`, nil0, recordsNothing(`["5|false|1, 2|6|null","x-b=3;x-c=4;x-a:1, 2;x-b;x-c;3;4;m;"]`)},

	{"fetch", `
const bytes = new Uint8Array([104, 105, 255]);
const buffer = bytes.buffer;
const view = new DataView(new Uint8Array([1, 2, 3, 4]).buffer, 1, 2);
class Form { toString() { $own = true; const s = "a=1&b=2"; $own = false; return s; } }
const form = new Form();
const signal = new AbortController().signal; // abort.js's, library code the step uses: made by the step; it never fires, so no abort.js code runs in a later phase
let denied, badBody, reused;
$phase = "fetch";
$own = false;
const r1 = await $mine(fetch("http://127.0.0.1:$PORT/json", { method: "POST", headers: [["X-A", "1"]], body: "hi" }));
const j1 = await $mine(r1.json());
const r2 = await $mine(fetch("http://127.0.0.1:$PORT/binary", { method: "POST", body: bytes, signal }));
const b2 = await $mine(r2.arrayBuffer());
const r3 = await $mine(fetch("http://127.0.0.1:$PORT/echo", { method: "PUT", body: buffer, headers: { "Content-Type": "application/octet-stream" } }));
const t3 = await $mine(r3.text());
const r4 = await $mine(fetch("http://127.0.0.1:$PORT/echo", { method: "POST", body: view }));
const b4 = await $mine(r4.arrayBuffer());
const r5 = await $mine(fetch("http://127.0.0.1:$PORT/echo", { method: "POST", body: form, headers: new Headers({ "content-type": "text/x-form" }) }));
const t5 = await $mine(r5.text());
const r6 = await $mine(fetch("http://127.0.0.1:$PORT/binary"));
const t6 = await $mine(r6.text());
try { await $mine(fetch("http://10.0.0.1/")); } catch (e) { denied = e; }
try { await $mine(fetch("http://127.0.0.1:$PORT/json", { body: {} })); } catch (e) { badBody = e; }
try { await $mine(r1.text()); } catch (e) { reused = e; }
const line = r1.status + " " + r1.ok + " " + r1.bodyUsed + " " + r1.headers.get("x-r") + " " + r1.headers.has("x-a");
$own = true;
return $result([line, j1, b2.byteLength, t3, b4.byteLength, t5, t6, denied.message.startsWith("fetch failed: blocked by egress policy"), badBody.message, reused.message])`, sandbox.Limits{MaxFetchRequests: 20},
		recordsNothing(`["201 true true 1, 2 false",{"method":"POST","ok":[true]},3,"PUT application/octet-stream hi` + "\ufffd" + `",8,"POST text/x-form a=1&b=2","hi` + "\ufffd" + `",` +
			`true,"fetch: body must be a string, an ArrayBuffer, a typed array, a Blob or a URLSearchParams (use JSON.stringify for JSON)","Body is unusable: body has already been read"]`)},

	{"duckdb", `
const AD = Symbol.asyncDispose;
const getterRow = { get g() { $own = true; const v = 5; $own = false; return v; } };
let sqlErr, argErr;
$phase = "duckdb";
$own = false;
const db = await $mine(duckdb.open());
await $mine(db.load("t", [{ a: 1, s: "x" }, { a: 2, s: "y" }]));
await $mine(db.load("u", '[{"b": 1}]'));
await $mine(db.load("v", [getterRow]));
await $mine(db.exec("CREATE TABLE w (x INT)"));
const q = await $mine(db.query("SELECT sum(a) AS s, ? AS p, (SELECT b FROM u) AS b, (SELECT g FROM v) AS g FROM t", 42));
try { await $mine(db.query("SELEC nonsense")); } catch (e) { sqlErr = e; }
try { await $mine(db.query(5)); } catch (e) { argErr = e; }
await $mine(db[AD]());
$own = true;
return $result([q, sqlErr.message.includes("Parser Error"), argErr.message])`, nil0, recordsNothing(`[[{"s":3,"p":42,"b":1,"g":5}],true,"db.query: the SQL must be a string"]`)},

	{"glpk", `
const model = { name: "lp", objective: { direction: glpk.GLP_MAX, name: "z", vars: [{ name: "x", coef: 1 }] },
  subjectTo: [{ name: "c", vars: [{ name: "x", coef: 1 }], bnds: { type: glpk.GLP_UP, ub: 3 } }] };
let bad;
$phase = "glpk";
$own = false;
const sol = await $mine(glpk.solve(model, { msglev: glpk.GLP_MSG_OFF }));
try { await $mine(glpk.solve(null)); } catch (e) { bad = e; }
$own = true;
return $result([sol.result.z, bad.message])`, nil0, recordsNothing(`[3,"glpk.solve: the model must be an object or its JSON text"]`)},

	{"a nested result", `
$phase = "result";
$own = false;
return $result({ a: [1, { b: [true, null, "s"] }], c: { d: { e: 1.5 } } })`, nil0, recordsNothing(`{"a":[1,{"b":[true,null,"s"]}],"c":{"d":{"e":1.5}}}`)},
}

// intrinsicsServer serves the fetch row: /json a JSON body (201, two
// X-R headers) that names the method, /binary three bytes that are not
// UTF-8, /echo the method, content type and body it got.
func intrinsicsServer(t *testing.T) int {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Add("X-R", "1")
			w.Header().Add("X-R", "2")
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{"method":"` + r.Method + `","ok":[true]}`))
		case "/binary":
			w.Write([]byte{104, 105, 255})
		case "/echo":
			body := make([]byte, 1024)
			n, _ := r.Body.Read(body)
			w.Write([]byte(r.Method + " " + r.Header.Get("Content-Type") + " "))
			w.Write(body[:n])
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// TestIntrinsics runs the intrinsics rows against an engine with fetch
// (to a loopback server that this policy alone allows) and both modules,
// in every isolation.
func TestIntrinsics(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range intrinsics {
		if seen[a.name] {
			t.Fatalf("row %q appears twice", a.name)
		}
		seen[a.name] = true
	}
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			t.Parallel()
			port := intrinsicsServer(t)
			cfg := sandbox.Config{Egress: &sandbox.Egress{Policy: sandbox.EgressPolicy{
				Schemes:              []string{"http"},
				Hosts:                []string{"127.0.0.1", "10.0.0.1"},
				Ports:                []int{80, port},
				UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			}}}
			tg := newTarget(t, iso, cfg)
			for _, a := range intrinsics {
				t.Run(a.name, func(t *testing.T) {
					code := recording + strings.ReplaceAll(a.code, "$PORT", strconv.Itoa(port))
					o := tg.run(t, sandbox.Request{Code: code, Limits: a.limits, Modules: []string{"duckdb", "glpk"}})
					if o == nil {
						return // reported as a hang
					}
					assertOutcome(t, a.want, o)
				})
			}
			tg.finish(t)
		})
	}
}
