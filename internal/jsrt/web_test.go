package jsrt

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestWebGolden: the web globals give what Node gives for the table in
// testdata/web/cases.js (URL parsing, TextDecoder on invalid sequences,
// base64, structuredClone, digests, HMAC, AES-GCM...), whose output under
// Node is golden.json (gen.sh makes it).
func TestWebGolden(t *testing.T) {
	cases, err := os.ReadFile("testdata/web/cases.js")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/web/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	rt := newRT(t)
	ev := runStep(t, rt, string(cases)+"\nreturn await run();", testLimits, nil)
	if ev.Error != nil {
		t.Fatalf("the table failed: %+v", ev.Error)
	}
	var want, got map[string]any
	if err := json.Unmarshal(golden, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ev.Result.Value, &got); err != nil {
		t.Fatal(err)
	}
	for key, w := range want {
		g, ok := got[key]
		if !ok {
			t.Errorf("%s: missing", key)
			continue
		}
		if reflect.DeepEqual(g, w) {
			continue
		}
		wl, wok := w.([]any)
		gl, gok := g.([]any)
		if !wok || !gok || len(wl) != len(gl) {
			t.Errorf("%s:\n got %s\nwant %s", key, show(g), show(w))
			continue
		}
		for i := range wl {
			if !reflect.DeepEqual(gl[i], wl[i]) {
				t.Errorf("%s[%d]:\n got %s\nwant %s", key, i, show(gl[i]), show(wl[i]))
			}
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("%s: not in golden.json (run testdata/web/gen.sh)", key)
		}
	}
}

func show(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestWebGlobals: every web global is there, of the right type, and none is
// enumerable (as the built-ins are not).
func TestWebGlobals(t *testing.T) {
	rt := newRT(t)
	want := map[string]string{
		"atob": "function", "btoa": "function", "TextEncoder": "function", "TextDecoder": "function",
		"structuredClone": "function", "DOMException": "function", "Event": "function", "EventTarget": "function",
		"AbortController": "function", "AbortSignal": "function", "performance": "object", "Blob": "function",
		"File": "function", "FormData": "function", "URL": "function", "URLSearchParams": "function",
		"crypto": "object", "Crypto": "function", "CryptoKey": "function", "SubtleCrypto": "function",
		"fetch": "function", "Headers": "function", "Response": "function", "Request": "function",
		"crypto.subtle": "object", "crypto.getRandomValues": "function", "crypto.randomUUID": "function",
		"crypto.subtle.digest": "function", "crypto.subtle.importKey": "function", "crypto.subtle.sign": "function",
		"crypto.subtle.verify": "function", "crypto.subtle.encrypt": "function", "crypto.subtle.decrypt": "function",
		"performance.now": "function", "AbortSignal.timeout": "function", "AbortSignal.any": "function",
		"URL.canParse": "function",
	}
	var names []string
	for k := range want {
		names = append(names, k)
	}
	code := `const names = ` + show(names) + `;
const out = {};
for (const n of names) out[n] = typeof n.split(".").reduce((o, k) => o[k], globalThis);
out.enumerable = Object.keys(globalThis).filter((k) => names.includes(k));
return out`
	ev := runStep(t, rt, code, testLimits, nil)
	if ev.Error != nil {
		t.Fatalf("%+v", ev.Error)
	}
	var got map[string]any
	if err := json.Unmarshal(ev.Result.Value, &got); err != nil {
		t.Fatal(err)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("typeof %s = %v, want %s", k, got[k], w)
		}
	}
	if e, _ := got["enumerable"].([]any); len(e) > 0 {
		t.Errorf("enumerable globals: %v", e)
	}
}

// TestWebIsolation: a step that breaks a web global's prototype, or
// replaces the built-ins before the web parts load, breaks only what it
// broke: the other globals and the bridge still work.
func TestWebIsolation(t *testing.T) {
	rt := newRT(t)
	for _, c := range []struct{ name, code, want string }{
		{"a broken prototype", `
TextEncoder.prototype.encode = () => { throw new Error("mine") };
Object.defineProperty(globalThis, "TextDecoder", { value: 1 });
const h = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array([97]))).slice(0, 2));
return [btoa("hi"), new URL("http://a/b").href, h, new Headers({ A: "1" }).get("a")]`,
			`["aGk=","http://a/b",[202,151],"1"]`},
		{"the step's own globals first", `globalThis.URL = "mine"; atob = 5; return [URL, atob, typeof btoa, typeof URLSearchParams]`,
			`["mine",5,"function","function"]`},
		{"frozen global object", `Object.freeze(globalThis); return [btoa("a"), typeof crypto.randomUUID(), new URL("x:y").protocol]`,
			`["YQ==","string","x:"]`},
		{"tampered built-ins before the load", `
Reflect.apply = () => { throw new Error("tampered apply") };
Object.freeze = () => { throw new Error("tampered freeze") };
String.fromCharCode = () => "tampered";
const sig = await crypto.subtle.sign("HMAC",
  await crypto.subtle.importKey("raw", new Uint8Array([1]), { name: "HMAC", hash: "SHA-1" }, false, ["sign"]), new Uint8Array(0));
return new Uint8Array(sig).length`, `20`},
		{"tampered reflection before the load", `
const gpo = Object.getPrototypeOf;
Object.defineProperty(gpo(Uint8Array.prototype), Symbol.toStringTag, { get() { return "Uint8Array" }, configurable: true });
Object.getOwnPropertyDescriptor = () => { throw new Error("tampered getOwnPropertyDescriptor") };
Object.getPrototypeOf = () => { throw new Error("tampered getPrototypeOf") };
Reflect.apply = () => { throw new Error("tampered apply") };
String.fromCharCode = () => "tampered";
let refused;
try { crypto.getRandomValues(new Float64Array(1)); } catch (e) { refused = e.name; }
return [new TextDecoder().decode(new Uint8Array([104, 105])), new TextDecoder().decode(new Uint16Array([0x6968])),
  crypto.getRandomValues(new Uint8Array(3)).length, refused, new Uint8Array(await crypto.subtle.digest("SHA-1", new Uint8Array(0)))[0]]`,
			`["hi","hi",3,"TypeMismatchError",218]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := runStep(t, rt, c.code, testLimits, nil)
			if ev.Error != nil || string(ev.Result.Value) != c.want {
				t.Fatalf("got %+v %+v, want %s", ev.Result, ev.Error, c.want)
			}
		})
	}
}

// TestWebFetchSignal: fetch takes abort.js's AbortSignal: one aborted before
// the call rejects at once with its reason, one aborted while the request
// is out rejects then, and a timeout's delay reaches the host.
func TestWebFetchSignal(t *testing.T) {
	rt := newRT(t)
	lim := testLimits
	lim.MaxFetchRequests = 3
	h := &recorder{}
	ev := runStep(t, rt, `
const a = await fetch("https://x.test/", { signal: AbortSignal.abort("early") }).catch((e) => e);
const c = new AbortController();
const p = fetch("https://x.test/late", { signal: c.signal }).catch((e) => e.name);
c.abort();
const b = await p;
fetch(new Request("https://x.test/t", { signal: AbortSignal.timeout(1234), method: "PUT", body: "x" }));
return [a, b]`, lim, h)
	if ev.Error != nil || string(ev.Result.Value) != `["early","AbortError"]` {
		t.Fatalf("got %+v %+v", ev.Result, ev.Error)
	}
	var reqs []string
	for _, e := range h.events {
		if e.FetchRequest != nil {
			reqs = append(reqs, string(e.FetchRequest.Request))
		}
	}
	if len(reqs) != 2 || !strings.Contains(reqs[0], `"url":"https://x.test/late"`) ||
		!strings.Contains(reqs[1], `"method":"PUT"`) || !strings.Contains(reqs[1], `"timeoutMs":1234`) || !strings.Contains(reqs[1], `"body":"x"`) {
		t.Fatalf("fetch requests: %q", reqs)
	}
}

// TestWebWhereNodeDiffers: where Node 20 departs from the standards, the
// guest follows the standards: an event's phase while it is dispatched,
// the name of the error exporting a key that is not extractable, and the
// encodings other than UTF-8, which the guest does not have (a RangeError,
// as for any label it does not know).
func TestWebWhereNodeDiffers(t *testing.T) {
	rt := newRT(t)
	ev := runStep(t, rt, `
let phase;
const t = new EventTarget();
t.addEventListener("x", (e) => { phase = e.eventPhase; });
t.dispatchEvent(new Event("x"));
const k = await crypto.subtle.importKey("raw", new Uint8Array(16), "AES-GCM", false, ["encrypt"]);
const exported = await crypto.subtle.exportKey("raw", k).catch((e) => e.name + " " + e.code);
const labels = ["latin2", "utf-16le", "nope"].map((l) => { try { return new TextDecoder(l).encoding } catch (e) { return e.name } });
return [phase, exported, labels]`, testLimits, nil)
	if ev.Error != nil || string(ev.Result.Value) != `[2,"InvalidAccessError 15",["RangeError","RangeError","RangeError"]]` {
		t.Fatalf("got %+v %+v", ev.Result, ev.Error)
	}
}

// TestPerformanceNowCoarse: performance.now() is coarsened to 100 µs, as
// the README's table and docs/security.md's side-channel note say: every
// reading is a whole number of tenths of a millisecond, and none goes back.
func TestPerformanceNowCoarse(t *testing.T) {
	rt := newRT(t)
	ev := runStep(t, rt, `
let prev = 0, fine = [], back = 0;
for (let i = 0; i < 5000; i++) {
  const n = performance.now();
  if (Math.abs(n * 10 - Math.round(n * 10)) > 1e-6 && fine.length < 3) fine.push(n);
  if (n < prev) back++;
  prev = n;
}
return { fine, back }`, testLimits, nil)
	if ev.Error != nil || string(ev.Result.Value) != `{"fine":[],"back":0}` {
		t.Fatalf("got %+v %+v", ev.Result, ev.Error)
	}
}

// TestWebPartsOnFirstUse: a run loads no web part until its step reads a
// web global, and then the parts that global needs and no others: each
// group of globals is a part of its own, a DOMException (dom.js) comes when
// one is made, the text codecs when a value needs them.
func TestWebPartsOnFirstUse(t *testing.T) {
	var mu sync.Mutex
	var loaded []string
	partLoaded = func(name string) {
		mu.Lock()
		defer mu.Unlock()
		loaded = append(loaded, name)
	}
	rt := newRT(t)
	t.Cleanup(func() { rt.Close(); partLoaded = nil })
	for _, c := range []struct{ code, want, parts string }{
		{`return 1`, `1`, ``},
		{`return [typeof setTimeout, typeof console.log, typeof dataProxy]`, `["function","function","object"]`, ``},
		{`return btoa("user:pass")`, `"dXNlcjpwYXNz"`, `text`},
		{`return atob(btoa("a")) + new TextDecoder().decode(new TextEncoder().encode("b"))`, `"ab"`, `text`},
		{`try { atob("*") } catch (e) { return e instanceof DOMException && e.name }`, `"InvalidCharacterError"`, `dom text`},
		{`return new URL("http://a/b").href`, `"http://a/b"`, `url urlcore`},
		{`return new URL("http://ex%61mple.com/").host`, `"example.com"`, `text url urlcore urlparse`},
		{`return new URL("/c?d", "https://example.com/a/b").href`, `"https://example.com/c?d"`, `url urlcore`},
		{`return new URL("../c", "https://example.com/a/b").href`, `"https://example.com/c"`, `url urlcore urlparse`},
		{`const u = new URL("http://a/b"); u.hash = "c"; return u.href`, `"http://a/b#c"`, `url urlcore urlparse`},
		{`return new URL("http://a/?x=1+2").searchParams.get("x")`, `"1 2"`, `params url urlcore`},
		{`return new URLSearchParams("a=1&b=%C3%A9").get("b")`, `"é"`, `params`},
		{`return new URLSearchParams({ a: "é" }).toString()`, `"a=%C3%A9"`, `params`},
		{`return new URLSearchParams("a=%FF").get("a").charCodeAt(0)`, `65533`, `params text`},
		{`return crypto.randomUUID().length`, `36`, `crypto`},
		{`return /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID())`, `true`, `crypto`},
		{`return crypto.getRandomValues(new Uint8Array(4)).length`, `4`, `crypto`},
		{`try { crypto.getRandomValues(new Uint8Array(1 << 17)) } catch (e) { return e.name }`, `"QuotaExceededError"`, `crypto dom`},
		{`return (await crypto.subtle.digest("SHA-1", new Uint8Array(0))).byteLength`, `20`, `crypto subtle`},
		{`return (await crypto.subtle.digest("SHA-1", new ArrayBuffer(0))).byteLength`, `20`, `bytes crypto subtle`},
		{`return new TextDecoder().decode(new Uint16Array([0x6968]))`, `"hi"`, `bytes text`},
		{`return typeof CryptoKey`, `"function"`, `keys subtle`},
		{`return typeof SubtleCrypto`, `"function"`, `subtle`},
		{`const k = await crypto.subtle.importKey("raw", new Uint8Array([1]), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]); return (await crypto.subtle.sign("HMAC", k, new Uint8Array(0))).byteLength`, `32`, `crypto keys subtle`},
		{`return structuredClone(new Map([[1, [2]]])).get(1)[0]`, `2`, `clone`},
		{`try { structuredClone(() => 1) } catch (e) { return e instanceof DOMException && e.name }`, `"DataCloneError"`, `clone dom`},
		{`return structuredClone(new DOMException("m", "AbortError")).name`, `"AbortError"`, `clone dom`},
		{`return typeof performance.now()`, `"number"`, `performance`},
		{`return new Event("x").type`, `"x"`, `events`},
		{`return new DOMException("m", "AbortError").code`, `20`, `dom`},
		{`const c = new AbortController(); return c.signal.aborted`, `false`, `abort events`},
		{`const c = new AbortController(); c.abort(); return c.signal.aborted`, `true`, `abort dom events`},
		{`return new Blob(["hi"]).size`, `2`, `blob`},
		{`return new Blob(["hé"]).size`, `3`, `blob text`},
		{`const f = new FormData(); f.append("a", "1"); return f.get("a")`, `"1"`, `form`},
		{`const f = new FormData(); f.append("a", new Blob(["x"])); return f.get("a").name`, `"blob"`, `blob form`},
		{`return new Headers({ a: "1" }).get("a")`, `"1"`, `headers`},
		{`return typeof fetch`, `"function"`, `fetch headers`},
		{`return new Request("https://example.com/", { method: "POST", body: "x" }).method`, `"POST"`, `headers request urlcore`},
		{`return new Request("https://example.com/").signal.aborted`, `false`, `abort events headers request urlcore`},
		{`return new Request("https://example.com/", { method: "PUT", body: new Uint8Array(1) }).method`, `"PUT"`, `fetch headers request urlcore`},
	} {
		mu.Lock()
		loaded = nil
		mu.Unlock()
		ev := runStep(t, rt, c.code, testLimits, nil)
		got := `null`
		if ev.Result != nil {
			got = string(ev.Result.Value)
		}
		mu.Lock()
		parts := slices.Sorted(slices.Values(loaded))
		mu.Unlock()
		if got != c.want || strings.Join(parts, " ") != c.parts {
			t.Errorf("%s: got %s with parts %q (error %+v), want %s with parts %q", c.code, got, parts, ev.Error, c.want, c.parts)
		}
	}
}

// TestWebCloneSlots: structuredClone tells a built-in by its internal
// slots, not by its tag or prototype (a subclass of Map, a Date whose tag
// says "Map", a Set moved onto Array.prototype), but an object of
// Object.prototype or of no prototype is taken for a plain one without
// checking for a Map's, Set's, ArrayBuffer's or BigInt's slots: one the
// step moved there clones as a plain object (where Node gives the
// built-in), which spares every plain object four exceptions.
func TestWebCloneSlots(t *testing.T) {
	rt := newRT(t)
	ev := runStep(t, rt, `
const tag = (v) => Object.prototype.toString.call(v);
class M extends Map {}
const d = new Date(5);
Object.defineProperty(d, Symbol.toStringTag, { value: "Map" });
const b = Object(false);
Object.defineProperty(b, Symbol.toStringTag, { value: "Set" });
const moved = Object.setPrototypeOf(new Map([[1, 2]]), null);
return [
  tag(structuredClone(new M([[1, 2]]))), structuredClone(new M([[1, 2]])).get(1),
  structuredClone(d).getTime(), tag(structuredClone(b)),
  tag(structuredClone(moved)), Object.keys(structuredClone(moved)).length,
  tag(structuredClone(Object.setPrototypeOf(new Set([1]), Object.prototype))),
  tag(structuredClone(Object.setPrototypeOf(new Set([1]), Array.prototype))),
]`, testLimits, nil)
	want := `["[object Map]",2,5,"[object Boolean]","[object Object]",0,"[object Object]","[object Set]"]`
	if ev.Error != nil || string(ev.Result.Value) != want {
		t.Fatalf("got %+v %+v, want %s", ev.Result, ev.Error, want)
	}
}
