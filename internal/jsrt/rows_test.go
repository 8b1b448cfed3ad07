//go:build !(386 || arm)

package jsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/modules/duckdb"
	"github.com/stepbox/stepbox/internal/testenv"
)

func newTestVM(t *testing.T) *quickjs.VM {
	t.Helper()
	vm, err := quickjs.NewVM()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vm.Close() })
	return vm
}

func evalValue(t *testing.T, vm *quickjs.VM, js string) quickjs.Value {
	t.Helper()
	v, err := vm.EvalValue(js, quickjs.EvalGlobal)
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	t.Cleanup(func() { v.Free() })
	return v
}

func TestVMInternals(t *testing.T) {
	if !vmInternals().ok {
		t.Fatal("the quickjs wrapper's layout changed: db.load and input always take the JSON path")
	}
	vm := newTestVM(t)
	if _, _, ok := vmHandles(vm); !ok {
		t.Fatal("no handles")
	}
	if !arrayLayout().ok {
		t.Fatal("the layout of JSObject changed: arrays are read through the API")
	}
	// What the walker reads in place, it reads for plain rows.
	v := evalValue(t, vm, `[{a: 1, b: "x"}, {a: 2, b: "y"}, {a: 3, b: "z"}]`)
	w, done, ok := newRowWalker(vm, 1<<20, func() {})
	if !ok {
		t.Fatal("no walker")
	}
	defer done()
	arr := rawValue(v)
	values := w.fastArray(arr, 3)
	if values == nil {
		t.Fatal("a dense array is not read in place")
	}
	w.atoms = []uint32{}
	props, release := w.properties(values[0])
	for _, p := range props {
		w.atoms = append(w.atoms, p.Fatom)
	}
	release()
	if slots := w.shapeSlots(values[0], (*lib.TJSObject)(cmem(jsPointer(values[0]))).Fshape, nil); len(slots) != 2 {
		t.Fatalf("a plain row is not read in place: %v", slots)
	}
	holey := evalValue(t, vm, `[{a: 1}, , {a: 3}]`)
	if w.fastArray(rawValue(holey), 3) != nil {
		t.Fatal("an array with a hole is read in place")
	}
	built, ok, _ := buildJSON(vm, `[{"a": 1}, {"a": 2}]`, func() bool { return false }, false)
	if !ok {
		t.Fatal("not built")
	}
	defer built.Free()
	if w.fastArray(rawValue(built), 2) == nil {
		t.Fatal("an array built from JSON is not read in place")
	}
}

// TestNumbersAsJS checks duckdb.AppendNumber against the engine's own
// JSON.stringify: the text stored for a number in a VARCHAR or JSON column
// must be what the JSON path stored.
func TestNumbersAsJS(t *testing.T) {
	vm := newTestVM(t)
	if _, err := vm.Eval(`globalThis.js = x => JSON.stringify(x)`, quickjs.EvalGlobal); err != nil {
		t.Fatal(err)
	}
	nums := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 0.2 + 0.1, 1e21, 1e20, 123456789012345680000, 1e-6, 1e-7, 1.5e-7,
		0.000001234, 1e300, -1e-300, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 1<<53 + 2, 1 << 63,
		-(1 << 63), 9007199254740993, 2147483647, 2147483648, 4294967296.5, 100, 1e2, 12.5, 49.7, 1 / 3.0, 2 / 3.0,
		1e-5, 0.00001, 123e-20, 1.7976931348623157e308}
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testenv.Race {
		n = 2000
	}
	for range n {
		switch r.IntN(4) {
		case 0:
			nums = append(nums, math.Float64frombits(r.Uint64()))
		case 1:
			nums = append(nums, float64(r.Int64N(1<<62))*math.Pow(10, float64(r.IntN(40)-20)))
		case 2:
			nums = append(nums, float64(r.IntN(1000000))/math.Pow(10, float64(r.IntN(12))))
		default:
			nums = append(nums, r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)))
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(duckdb.AppendNumber(nil, f)); got != "null" {
			t.Errorf("%v: %s", f, got)
		}
	}
	bad := 0
	for _, f := range nums {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue // checked above; the wrapper cannot pass them
		}
		want, err := vm.Call("js", f)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(duckdb.AppendNumber(nil, f)); got != want {
			if bad++; bad < 10 {
				t.Errorf("%v (%#x): got %s, want %s", f, math.Float64bits(f), got, want)
			}
		}
	}
}

// TestQuotedAsJS checks duckdb.AppendQuoted against JSON.stringify for
// every character.
func TestQuotedAsJS(t *testing.T) {
	vm := newTestVM(t)
	if _, err := vm.Eval(`globalThis.js = x => JSON.stringify(x)`, quickjs.EvalGlobal); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	check := func() {
		s := b.String()
		want, err := vm.Call("js", s)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(duckdb.AppendQuoted(nil, s)); got != want {
			t.Fatalf("got %q\nwant %q", got, want)
		}
		b.Reset()
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xD800 && r < 0xE000 || r > 0x10000 && r%97 != 0 {
			continue
		}
		b.WriteRune(r)
		if b.Len() > 512 {
			check()
		}
	}
	check()
}

// sameAsParse is a guest function that compares two values as JSON.parse
// makes them: types, -0, own property names in order, descriptors,
// prototypes. It returns "" or where they differ.
const sameAsParse = `globalThis.same = function same(a, b, path = "$") {
  if (typeof a !== typeof b) return path + ": " + typeof a + " vs " + typeof b;
  if (a === null || typeof a !== "object") return Object.is(a, b) ? "" : path + ": " + String(a) + " vs " + String(b);
  if (Array.isArray(a) !== Array.isArray(b)) return path + ": array";
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return path + ": prototype";
  if (Object.isExtensible(a) !== Object.isExtensible(b)) return path + ": extensible";
  const ka = Reflect.ownKeys(a), kb = Reflect.ownKeys(b);
  if (ka.length !== kb.length) return path + ": keys " + JSON.stringify(ka.map(String)) + " vs " + JSON.stringify(kb.map(String));
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i]) return path + ": key " + String(ka[i]) + " vs " + String(kb[i]);
    const da = Object.getOwnPropertyDescriptor(a, ka[i]), db = Object.getOwnPropertyDescriptor(b, kb[i]);
    for (const f of ["writable", "enumerable", "configurable"]) if (da[f] !== db[f]) return path + "." + String(ka[i]) + ": " + f;
    const d = same(da.value, db.value, path + "." + String(ka[i]));
    if (d) return d;
  }
  return "";
};
globalThis.parsed = text => JSON.parse(text);`

// TestBuildJSON checks that buildJSON makes what JSON.parse makes, and
// leaves to JSON.parse what it does not take on.
func TestBuildJSON(t *testing.T) {
	vm := newTestVM(t)
	if _, err := vm.Eval(sameAsParse, quickjs.EvalGlobal); err != nil {
		t.Fatal(err)
	}
	texts := []string{
		`null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `1.0`, `1e2`, `1E+2`, `1e-2`, `0.1`, `2147483647`, `2147483648`,
		`-2147483648`, `-2147483649`, `4294967295`, `9007199254740993`, `1e400`, `-1e400`, `5e-324`, `1e-400`,
		`123456789012345678901234567890`, `-0.0`, `0e5`, `-0e-5`,
		`""`, `"x"`, `"\u0000\u001f\"\\\/\b\f\n\r\t"`, `"\u00e9\u2028\u2029\uffff"`, `"\ud83d\ude00"`, `"😀é"`, `"\uD83D\uDE00"`,
		`[]`, `{}`, ` [ 1 , 2 ] `, "\t{\n\"a\"\r: 1}\n", `[[[[]]]]`, `[{}, [], null, "", 0]`,
		`{"a": 1, "b": 2, "a": 3}`, `{"__proto__": {"x": 1}}`, `{"__proto__": null, "a": 1}`, `{"constructor": 1, "toString": 2}`,
		`{"b": 1, "2": 2, "1": 3, "01": 4, "-1": 5, "4294967295": 6, "4294967294": 7, "1.5": 8, "": 9}`,
		`{"\u00e9": 1, "e\u0301": 2, "\ud83d\ude00": 3, "a\"b": 4, "a\\b": 5}`,
		`{"length": 3}`, `[1, "2", [3], {"4": 4}]`,
		`{"rows": [{"id": 0, "region": "r0", "amount": 0}, {"id": 1, "region": "r1", "amount": 0.1}]}`,
		strings.Repeat("[", 200) + strings.Repeat("]", 200),
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		texts = append(texts, randomJSON(r, 0))
	}
	for _, text := range texts {
		v, ok, stopped := buildJSON(vm, text, func() bool { return false }, false)
		if !ok || stopped {
			t.Errorf("%.60s: not built", text)
			continue
		}
		diff, err := vm.Call("same", v, mustValue(t, vm, "parsed", text))
		v.Free()
		if err != nil {
			t.Fatal(err)
		}
		if diff != "" {
			t.Errorf("%.200s: %v", text, diff)
		}
	}
	for _, text := range []string{
		``, ` `, `[1,]`, `{"a":1,}`, `01`, `1.`, `.5`, `+1`, `1e`, `-`, `NaN`, `Infinity`, `undefined`, `'x'`, `[1 2]`,
		`{"a" 1}`, `{a: 1}`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, "\"\x01\"", "\"\xff\"", "\"a\xc3\"", `"\x41"`,
		`"\u12"`, `1 2`, `[`, `{"a":`, `nul`, `truee`,
		strings.Repeat("[", maxBuildDepth+1) + strings.Repeat("]", maxBuildDepth+1),
	} {
		if v, ok, _ := buildJSON(vm, text, func() bool { return false }, false); ok {
			v.Free()
			t.Errorf("%.40q: built", text)
		}
	}
	t.Run("stops", func(t *testing.T) {
		heap := newHeapReader(vm)
		text := `[` + strings.Repeat(`{"a":[1,"x",{"b":2}]},`, 20000) + `0]`
		before := heap.bytes()
		calls := 0
		_, ok, stopped := buildJSON(vm, text, func() bool { calls++; return calls == 3 }, false)
		if ok || !stopped {
			t.Fatalf("ok %v stopped %v", ok, stopped)
		}
		if after := heap.bytes(); after > before+4096 {
			t.Errorf("the abandoned build holds %d bytes", after-before)
		}
	})
}

// mustValue calls the guest function fn with args and returns the value.
func mustValue(t *testing.T, vm *quickjs.VM, fn string, args ...any) quickjs.Value {
	t.Helper()
	v, err := vm.CallValue(fn, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Free() })
	return v
}

func randomJSON(r *rand.Rand, depth int) string {
	switch k := r.IntN(10); {
	case k < 2 && depth < 6:
		var parts []string
		for range r.IntN(6) {
			parts = append(parts, randomJSON(r, depth+1))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case k < 4 && depth < 6:
		var parts []string
		for range r.IntN(6) {
			key, _ := json.Marshal(randomString(r))
			parts = append(parts, string(key)+":"+randomJSON(r, depth+1))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case k < 6:
		s, _ := json.Marshal(randomString(r))
		return string(s)
	case k < 8:
		return fmt.Sprint([]any{r.IntN(100), -r.Int64(), r.Int64N(1 << 40), r.Float64() * 1e6, r.NormFloat64(), math.Float64frombits(r.Uint64() &^ (0x7ff << 52))}[r.IntN(6)])
	}
	return []string{"true", "false", "null", "0", "-0", "1e5"}[r.IntN(6)]
}

func randomString(r *rand.Rand) string {
	const alphabet = "ab0_-\"\\/\n\t\x00\x1fé€😀\u2028"
	runes := []rune(alphabet)
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

// loadBoth loads rows (a guest expression) twice, read by walkRows and as
// JSON.stringify's text through Load, and returns the two tables' column
// types and text values.
func loadBoth(t *testing.T, vm *quickjs.VM, db *duckdb.DB, rows string) (walked, viaJSON string) {
	t.Helper()
	v := evalValue(t, vm, rows)
	r, ok := walkRows(vm, v, 64<<20, func() {})
	if !ok {
		t.Fatalf("%s: the walk gave up", rows)
	}
	text, err := vm.Call("JSONtext", v)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tbl := range []string{"walked", "viajson"} {
		if err := db.Exec(ctx, "DROP TABLE IF EXISTS "+tbl); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.LoadRows(ctx, "walked", r); err != nil {
		t.Fatal(err)
	}
	if err := db.Load(ctx, "viajson", json.RawMessage(text.(string))); err != nil {
		t.Fatal(err)
	}
	describe := func(tbl string) string {
		out, err := db.Query(ctx, "SELECT column_name, column_type FROM (DESCRIBE "+tbl+")", nil)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := db.Query(ctx, "SELECT COLUMNS(*)::VARCHAR FROM "+tbl, nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(out) + "\n" + string(vals)
	}
	return describe("walked"), describe("viajson")
}

// TestWalkRows checks that the rows walkRows reads load as their
// JSON.stringify text loads.
func TestWalkRows(t *testing.T) {
	vm := newTestVM(t)
	if _, err := vm.Eval(`globalThis.JSONtext = x => JSON.stringify(x);
class Sale { constructor(i) { this.id = i; this.tag = "s" + i } total() { return 1 } }
globalThis.Sale = Sale;`, quickjs.EvalGlobal); err != nil {
		t.Fatal(err)
	}
	db, err := duckdb.Open(context.Background(), duckdb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, rows := range []string{
		`Array.from({length: 1000}, (_, i) => ({id: i, region: "r" + (i % 20), amount: (i % 997) / 10}))`,
		`[{a: 1}, {a: 2.5}, {a: -0}, {a: 1e21}, {a: 2**63}, {a: -(2**63)}, {a: 2**53 + 2}, {a: 5e-324}, {a: NaN}, {a: Infinity}, {a: null}]`,
		`[{a: 1}, {a: "x"}, {a: true}, {a: 0.1 + 0.2}, {a: 1e-7}, {a: -1e300}, {a: 2**63}]`,
		`[{b: true}, {b: false}, {b: null}, {}]`,
		`[{i: 2**53}, {i: -5}, {i: 2147483648}]`,
		`[{j: {k: [1, 2, undefined, Symbol("s"), null], u: undefined, s: Symbol("x"), "e\"\n": "q\u2028\u0001😀"}}, {j: [true, -0, 1e21, 0.1]}, {j: "str"}, {j: 5}, {j: false}, {j: {}}, {j: []}]`,
		`[{j: {}}, {j: "a\"b\\c\u0000\u007f\u00e9"}, {j: 1.5}]`,
		`[{a: undefined, b: 1}, {a: Symbol("x"), b: 2}, {a: 3}]`,
		`[{"b": 1, "2": 2, "1": 3, "01": 4, "-1": 5}, {"1": 6, "b": 7}]`,
		`[Object.assign(Object.create(null), {x: 1, y: "a"}), {y: "b", x: 2}]`,
		`[Object.defineProperty({a: 1}, "hidden", {value: 2, enumerable: false}), {[Symbol("k")]: 1, a: 2}]`,
		`[new Sale(1), new Sale(2), {id: 3, tag: "plain"}]`,
		`[Object.freeze({a: 1}), Object.seal({a: 2})]`,
		`(() => { const a = [{a: 1}, {a: 2}]; a.extra = "ignored"; return a })()`,
		`[{"unit price": 1, "é": "ü", "ключ": "значение", "a\u0001": 1}]`,
		`[{a: "x".repeat(100000)}, {a: ""}]`,
		`[{d: "2024-01-02"}, {d: "2024-03-04"}]`,
	} {
		w, j := loadBoth(t, vm, db, rows)
		if w != j {
			t.Errorf("%.80s\nwalked  %.600s\nviaJSON %.600s", rows, w, j)
		}
	}
}

// TestWalkRowsGivesUp checks that walkRows leaves to JSON.stringify
// whatever it cannot read as JSON.stringify would, without running any of
// the guest's code.
func TestWalkRowsGivesUp(t *testing.T) {
	vm := newTestVM(t)
	if _, err := vm.Eval(`globalThis.calls = 0; globalThis.count = () => { calls++; return 1 };`, quickjs.EvalGlobal); err != nil {
		t.Fatal(err)
	}
	for _, rows := range []string{
		`[]`,
		`[{get a() { return count() }}]`,
		`[{a: 1}, Object.defineProperty({}, "a", {get: count, enumerable: true})]`,
		`new Proxy([{a: 1}], {get(t, k) { count(); return t[k] }, getOwnPropertyDescriptor(t, k) { count(); return Reflect.getOwnPropertyDescriptor(t, k) }})`,
		`[new Proxy({a: 1}, {get(t, k) { count(); return t[k] }, ownKeys(t) { count(); return Reflect.ownKeys(t) }})]`,
		`[{a: new Proxy({}, {ownKeys() { count(); return [] }})}]`,
		`[Object.setPrototypeOf({a: 1}, new Proxy({}, {get() { count() }, getOwnPropertyDescriptor() { count() }}))]`,
		`[{a: 1, toJSON() { count(); return {} }}]`,
		`[Object.defineProperty({a: 1}, "toJSON", {value() { count(); return {} }})]`,
		`[{a: 1}, Object.defineProperty({a: 2}, "toJSON", {value() { count(); return {} }})]`,
		`[{a: Object.defineProperty({}, "toJSON", {value() { count(); return 1 }})}]`,
		`[{a: Object.defineProperty([], "toJSON", {value() { count(); return 1 }})}]`,
		`Object.defineProperty([{a: 1}], "toJSON", {value() { count(); return [] }})`,
		`[{a: {toJSON() { count(); return 1 }}}]`,
		`(() => { class R { toJSON() { count(); return {} } }; return [new R()] })()`,
		`[{a: 1}, , {a: 2}]`,
		`(() => { const a = [{a: 1}]; a.length = 3; return a })()`,
		`[{a: [1, , 3]}]`,
		`[{a: new Date(0)}]`,
		`[{a: new Map()}]`,
		`[{a: 1n}]`,
		`[{a: () => 1}]`,
		`[{a: "\ud800"}]`,
		`[{"\udc00": 1}]`,
		`(() => { const o = {a: 1}; o.self = {o}; o.self.o = o; return [{c: o}] })()`,
		`[{a: JSON.parse("[".repeat(100) + "]".repeat(100))}]`,
		`[{"": 1}]`,
		`[{["k".repeat(300)]: 1}]`,
		`[Object.fromEntries(Array.from({length: 1001}, (_, i) => ["c" + i, i]))]`,
		`[[1, 2]]`,
		`[1]`,
		`[null]`,
		`["text"]`,
		`[new String("x")]`,
		`[new Number(1)]`,
		`[new Error("e")]`,
		`[{a: new Uint8Array(2)}]`,
		`[{a: new Number(1)}]`,
		`[{a: Object(Symbol("s"))}]`,
	} {
		v := evalValue(t, vm, rows)
		if _, ok := walkRows(vm, v, 64<<20, func() {}); ok {
			t.Errorf("%s: read", rows)
		}
		if calls, _ := vm.Eval(`calls`, quickjs.EvalGlobal); calls != 0 {
			t.Fatalf("%s: the walk ran the guest's code (%v calls)", rows, calls)
		}
	}
	t.Run("toJSON on a built-in prototype", func(t *testing.T) {
		for _, proto := range []string{"Object", "Array"} {
			vm := newTestVM(t)
			v := evalValue(t, vm, proto+`.prototype.toJSON = function () { return 1 }; [{a: 1}]`)
			if _, ok := walkRows(vm, v, 64<<20, func() {}); ok {
				t.Errorf("%s.prototype.toJSON: read", proto)
			}
		}
	})
	t.Run("memory", func(t *testing.T) {
		v := evalValue(t, vm, `Array.from({length: 1000}, (_, i) => ({s: "x".repeat(1000) + i}))`)
		if _, ok := walkRows(vm, v, 512<<10, func() {}); ok {
			t.Error("1 MB of strings read with 512 KiB allowed")
		}
		if _, ok := walkRows(vm, v, 4<<20, func() {}); !ok {
			t.Error("1 MB of strings not read with 4 MiB allowed")
		}
	})
}

// TestWalkRowsStops checks that the walk stops when check panics, as a
// stopped run's does, and holds nothing of the VM's afterwards.
func TestWalkRowsStops(t *testing.T) {
	vm := newTestVM(t)
	heap := newHeapReader(vm)
	v := evalValue(t, vm, `Array.from({length: 5000}, (_, i) => ({i, s: "é" + i, n: {k: [i]}}))`)
	before := heap.bytes()
	calls := 0
	func() {
		defer func() {
			if p := recover(); p != "stop" {
				t.Fatalf("recovered %v", p)
			}
		}()
		walkRows(vm, v, 64<<20, func() {
			if calls++; calls == 5 {
				panic("stop")
			}
		})
		t.Fatal("the walk did not stop")
	}()
	if after := heap.bytes(); after != before {
		t.Errorf("the stopped walk left %d bytes allocated", int64(after)-int64(before))
	}
	if _, ok := walkRows(vm, v, 64<<20, func() {}); !ok {
		t.Error("the VM cannot be walked after a stop")
	}
	if after := heap.bytes(); after != before {
		t.Errorf("the walk left %d bytes allocated", int64(after)-int64(before))
	}
}

// TestLoadRowsInRuns runs db.load through the runtime: plain arrays are
// read without JSON, anything else goes through JSON.stringify as before,
// with its side effects once and its errors as they were.
func TestLoadRowsInRuns(t *testing.T) {
	rt := newRT(t)
	lim := testLimits
	run := func(code string) *ipc.Event {
		return runJob(t, rt, Job{Limits: lim, Modules: []string{ModuleDuckDB}, Code: "const db = await duckdb.open();\n" + code})
	}
	before := rt.rowsRead.Load()
	expectValue(t, run(`await db.load("t", [{a: 1, b: "x"}, {a: 2.5, c: [1, {d: null}]}]);
return [await db.query("DESCRIBE t"), await db.query("SELECT a, b, c::VARCHAR AS c FROM t")]`),
		`[[{"column_name":"a","column_type":"DOUBLE","null":"YES","key":null,"default":null,"extra":null},`+
			`{"column_name":"b","column_type":"VARCHAR","null":"YES","key":null,"default":null,"extra":null},`+
			`{"column_name":"c","column_type":"JSON[]","null":"YES","key":null,"default":null,"extra":null}],`+
			`[{"a":1,"b":"x","c":null},{"a":2.5,"b":null,"c":"[1, {\"d\":null}]"}]]`)
	if rt.rowsRead.Load() != before+1 {
		t.Error("the plain array went through JSON")
	}
	for _, tc := range []struct{ name, code, want, err string }{
		{"a getter runs once", `let n = 0; await db.load("t", [{get a() { return ++n }}]); return [n, await db.query("SELECT a FROM t")]`, `[1,[{"a":1}]]`, ""},
		{"a getter that throws", `await db.load("t", [{get a() { throw new Error("no a") }}])`, "", "db.load rows is not JSON-serializable: no a"},
		{"a Proxy's traps run once", `const seen = []; const p = new Proxy({a: 1}, {ownKeys(t) { seen.push("keys"); return Reflect.ownKeys(t) }});
await db.load("t", [p]); return seen`, `["keys"]`, ""},
		{"a cycle", `const o = {}; o.o = o; await db.load("t", [{o}])`, "", "db.load rows is not JSON-serializable"},
		{"holes", `await db.load("t", [{a: 1}, , {a: 2}])`, "", "load: rows[1] is not an object"},
		// Its JSON text is an ISO timestamp, which read_json makes a TIMESTAMP.
		{"a Date", `await db.load("t", [{d: new Date(0)}]); return await db.query("SELECT d, typeof(d) AS t FROM t")`, `[{"d":"1970-01-01T00:00:00Z","t":"TIMESTAMP"}]`, ""},
		{"a BigInt", `await db.load("t", [{n: 9007199254740993n}]); return await db.query("SELECT n FROM t")`, `[{"n":9007199254740993}]`, ""},
		{"a lone surrogate", `await db.load("t", [{s: "\ud800"}]); return await db.query("SELECT s FROM t")`, `[{"s":"�"}]`, ""},
		{"an empty array", `await db.load("t", [])`, "", "load: rows is an empty array"},
		{"a bad key", `await db.load("t", [{"": 1}])`, "", "load: rows[0]: an empty key cannot name a column"},
		{"a bad table name", `await db.load("t t", [{a: 1}])`, "", "load: table name \"t t\" is not a plain identifier"},
		{"a table that exists", `await db.load("t", [{a: 1}]); await db.load("t", [{a: 1}])`, "", "Table with name \"t\" already exists"},
		{"a sparse array", `const a = []; a[1e5] = {x: 1}; await db.load("t", a)`, "", "load: rows[0] is not an object"},
		{"a huge string", `await db.load("t", [{s: "é".repeat(2 << 20)}, {s: "x"}]); return await db.query("SELECT length(s) AS n FROM t")`, `[{"n":2097152},{"n":1}]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := run(tc.code)
			if tc.err == "" {
				expectValue(t, ev, tc.want)
				return
			}
			if ev.Error == nil || ev.Error.Code != ipc.CodeRuntime || !strings.Contains(ev.Error.Message, tc.err) {
				t.Fatalf("got %+v, want RUNTIME %q", ev, tc.err)
			}
		})
	}
	t.Run("rows beyond the run's memory", func(t *testing.T) {
		// 20 MB of strings (one 5 MB string four times) in a 16 MB run:
		// too much to copy out, and JSON.stringify runs out of memory.
		small := lim
		small.MemoryMB = 16
		ev := runJob(t, rt, Job{Limits: small, Modules: []string{ModuleDuckDB}, Code: `
const db = await duckdb.open();
const s = "x".repeat(5 << 20);
await db.load("t", [{s}, {s}, {s}, {s}])`})
		if ev.Error == nil || ev.Error.Code != ipc.CodeOOM {
			t.Fatalf("%+v", ev)
		}
	})
	t.Run("the rows of a stopped run", func(t *testing.T) {
		lim := testLimits
		lim.WallMs = 300 // crossed on purpose: the loop never ends
		ev := runJob(t, rt, Job{Limits: lim, Modules: []string{ModuleDuckDB}, Code: `
const db = await duckdb.open();
const rows = Array.from({length: 5000}, (_, i) => ({i, s: "x" + i, n: {k: [i, i]}}));
for (let k = 0; ; k++) await db.load("t" + k, rows)`})
		if ev.Error == nil || ev.Error.Code != ipc.CodeTimeout {
			t.Fatalf("%+v", ev)
		}
	})
}

// TestBuildKeepsCollecting checks that values built from Go do not keep
// the cycle collector from freeing the step's garbage: a step that makes
// 60 MB of cyclic garbage in 32 MB, between replies, runs to the end.
func TestBuildKeepsCollecting(t *testing.T) {
	rt := newRT(t)
	lim := testLimits
	lim.MemoryMB = 16
	ev := runJob(t, rt, Job{Limits: lim, Modules: []string{ModuleDuckDB}, Code: `
const db = await duckdb.open();
let n = 0;
for (let k = 0; k < 80; k++) {
  const a = {s: "x".repeat(400000) + k}; const b = {a}; a.b = b;
  n += (await db.query("SELECT range AS i, 'v' || range AS s FROM range(200)")).length;
}
return n`})
	expectValue(t, ev, "16000")
}
