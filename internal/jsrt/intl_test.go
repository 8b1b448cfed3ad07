package jsrt

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestIntlDoneWhen: the two examples.
func TestIntlDoneWhen(t *testing.T) {
	rt := newRT(t)
	ev := runStep(t, rt, `return [new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString("en-US", { timeZone: "Europe/Paris" }), (1234567.891).toLocaleString()]`, testLimits, nil)
	if ev.Error != nil || string(ev.Result.Value) != `["7/1/2026, 2:00:00 PM","1,234,567.891"]` {
		t.Fatalf("got %+v %+v", ev.Result, ev.Error)
	}
}

// TestIntlAgainstNode runs testdata/intl/cases.js in a step and compares
// every value with node's (golden.json, written by gen.sh). The "exact"
// cases must agree; the "locale" ones (other locales than English, which
// this Intl resolves to en-US) are counted. One difference is allowed for:
// node's ICU writes U+202F before AM/PM in formatToParts and "at" dates,
// this Intl an ordinary space.
func TestIntlAgainstNode(t *testing.T) {
	src, err := os.ReadFile("testdata/intl/cases.js")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/intl/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Node  string      `json:"node"`
		Cases [][3]string `json:"cases"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	lim := testLimits
	lim.MaxResultBytes = 8 << 20
	ev := runStep(t, newRT(t), string(src)+"\nreturn evaluate()", lim, nil)
	if ev.Error != nil {
		t.Fatalf("run: %+v", ev.Error)
	}
	var got [][3]string
	if err := json.Unmarshal(ev.Result.Value, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(golden.Cases) {
		t.Fatalf("%d cases, golden.json has %d: run gen.sh", len(got), len(golden.Cases))
	}
	norm := strings.NewReplacer("\\u202f", " ", "\u202f", " ")
	exact, locale, agree := 0, 0, 0
	for i, want := range golden.Cases {
		if got[i][1] != want[1] {
			t.Fatalf("case %d is %s, golden.json has %s: run gen.sh", i, got[i][1], want[1])
		}
		same := norm.Replace(got[i][2]) == norm.Replace(want[2])
		switch want[0] {
		case "exact":
			exact++
			if !same {
				t.Errorf("%s\n  got  %s\n  node %s", want[1], got[i][2], want[2])
			}
		default:
			locale++
			if same {
				agree++
			} else {
				t.Logf("other locale: %s\n  got  %s\n  node %s", want[1], got[i][2], want[2])
			}
		}
	}
	t.Logf("node %s: %d exact cases; other locales agree in %d of %d", golden.Node, exact, agree, locale)
}

// TestIntlLazy: Intl and the locale methods are loaded on first use, by
// either; until then Intl is an accessor and the methods are wrappers; a
// step's own Intl or method set first is kept.
//
// What the step changes of the other built-ins before its first use of
// Intl, the part sees (it captures them as it loads): that is the step's
// own realm, and nothing of the host's depends on it.
func TestIntlLazy(t *testing.T) {
	rt := newRT(t)
	for _, c := range []struct{ name, code, want string }{
		{"before and after", `
const d = () => { const x = Object.getOwnPropertyDescriptor(globalThis, "Intl"); return [typeof x.get, typeof x.value, x.enumerable, x.configurable] };
const before = d();
const m = Date.prototype.toLocaleString;
const shape = [m.name, m.length, String.prototype.localeCompare.length, Object.keys(globalThis).includes("Intl")];
const t = Object.prototype.toString.call(Intl);
return [before, shape, t, d(), Date.prototype.toLocaleString === m, typeof Intl.PluralRules, Intl === Intl]`,
			`[["function","undefined",false,true],["toLocaleString",0,1,false],"[object Intl]",["undefined","object",false,true],false,"function",true]`},
		{"a method first", `
const r = [new Date(0).toLocaleString(), "a".localeCompare("B"), (12345n).toLocaleString()];
const x = Object.getOwnPropertyDescriptor(globalThis, "Intl");
return [r, typeof x.value, new Intl.NumberFormat("en-US", {style: "percent"}).format(0.5)]`,
			`[["1/1/1970, 12:00:00 AM",-1,"12,345"],"object","50%"]`},
		{"the step's own Intl", `globalThis.Intl = 1; return [Intl, (5).toLocaleString("en-US", {minimumFractionDigits: 1}), Intl]`, `[1,"5.0",1]`},
		{"the step's own method", `
Number.prototype.toLocaleString = function () { return "mine" };
return [(1).toLocaleString(), new Date(0).toLocaleDateString(), (1).toLocaleString(), typeof Intl.DateTimeFormat]`,
			`["mine","1/1/1970","mine","function"]`},
		{"default time zone", `return [new Intl.DateTimeFormat().resolvedOptions().timeZone, new Date(Date.UTC(2026, 0, 1)).toLocaleTimeString()]`, `["UTC","12:00:00 AM"]`},
		{"bad input", `
const e = f => { try { f(); return "no error" } catch (x) { return x.name } };
return [e(() => new Intl.PluralRules("en", {type: "big"})), e(() => Intl.PluralRules("en")), e(() => new Intl.DateTimeFormat("en", {timeZone: "Nowhere/City"})),
  e(() => Intl.getCanonicalLocales("en_US")), e(() => Intl.PluralRules.prototype.select.call({}, 1)), e(() => "a".localeCompare("b", "en", {sensitivity: "x"}))]`,
			`["RangeError","TypeError","RangeError","RangeError","TypeError","RangeError"]`},
		// Loading Intl defines it on the global object and the methods on
		// the prototypes: frozen first, they cannot have it, and say so.
		{"frozen global object", `Object.freeze(globalThis); try { return (1).toLocaleString() } catch (e) { return e.message }`, `"the Intl API could not be loaded"`},
		{"a failed load keeps the step's Intl", `
const e = f => { try { return f() } catch (x) { return x.message } };
globalThis.Intl = "mine";
Object.freeze(Date.prototype);
const r = [e(() => (1).toLocaleString()), Intl];
Object.preventExtensions(globalThis);
return r.concat([e(() => (1).toLocaleString()), Intl])`,
			`["the Intl API could not be loaded","mine","the Intl API could not be loaded","mine"]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := runStep(t, rt, c.code, testLimits, nil)
			if ev.Error != nil || string(ev.Result.Value) != c.want {
				t.Fatalf("got %+v %+v, want %s", ev.Result, ev.Error, c.want)
			}
		})
	}
}
