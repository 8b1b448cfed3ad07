package jsrt

import (
	"bytes"
	"context"
	"testing"
)

// TestUseBootstrap: a worker accepts the host's bootstrap bytecode only
// with this build's ID, and its VMs then run steps with it.
func TestUseBootstrap(t *testing.T) {
	id, code, err := Bootstrap()
	if err != nil || id == "" || len(code) == 0 {
		t.Fatalf("Bootstrap: %q, %d bytes, %v", id, len(code), err)
	}
	if UseBootstrap("another build", code) || UseBootstrap(id, nil) {
		t.Fatal("accepted a bootstrap of another build, or an empty one")
	}
	if presetBootstrap.Load() != nil {
		t.Skip("another test set the bootstrap")
	}
	if !UseBootstrap(id, code) {
		t.Fatal("refused this build's bootstrap")
	}
	defer presetBootstrap.Store(nil)
	got, _ := bootstrapCode()
	if !bytes.Equal(got.encode(), code) || &got.boot[0] == &code[len(code)-len(got.boot)] {
		t.Fatal("the VMs do not load a copy of the bytecode handed over")
	}
	rt, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	h := &recorder{}
	ev := rt.Run(context.Background(), Job{Code: "return 1 + 1", Limits: testLimits, Host: h, Replies: h.replies})
	if ev.Result == nil || string(ev.Result.Value) != "2" {
		t.Fatalf("run: %+v", ev.Error)
	}
}

// TestLazyParts: the fetch API's globals are loaded when a step first
// reads one, and then look as they would have at boot; a step's own value
// assigned first wins; a step that changed the built-ins before the part
// loads gets the bridge's fetch API all the same (the part uses what the
// boot captured).
func TestLazyParts(t *testing.T) {
	rt := newRT(t)
	for _, c := range []struct{ name, code, want string }{
		{"before and after", `
const d = () => { const x = Object.getOwnPropertyDescriptor(globalThis, "fetch"); return [typeof x.get, typeof x.value, x.writable, x.enumerable, x.configurable] };
const before = d();
const t = typeof fetch;
return [before, t, d(), Object.keys(globalThis).includes("Headers")]`,
			`[["function","undefined",null,false,true],"function",["undefined","function",true,false,true],false]`},
		{"the step's own first", `globalThis.fetch = 1; Response = "mine"; return [fetch, Response, typeof Headers]`, `[1,"mine","function"]`},
		{"changed built-ins", `
Reflect.apply = () => { throw new Error("tampered apply") };
Object.defineProperty = () => { throw new Error("tampered defineProperty") };
Object.freeze = () => { throw new Error("tampered freeze") };
Array.prototype[Symbol.iterator] = () => { throw new Error("tampered iterator") };
Object.defineProperty.call = () => { throw new Error("tampered call") };
String.prototype.toLowerCase = () => "tampered";
Object.prototype.__defineSetter__("status", () => { throw new Error("tampered setter") });
const h = new Headers([["X-A", "1"], ["x-a", "2"]]);
return [h.get("x-a"), h.has("X-A"), typeof fetch]`, `["1, 2",true,"function"]`},
		{"frozen global object", `Object.freeze(globalThis); return [typeof fetch, typeof AbortSignal.timeout]`, `["function","function"]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := runStep(t, rt, c.code, testLimits, nil)
			if ev.Error != nil || string(ev.Result.Value) != c.want {
				t.Fatalf("got %+v %+v, want %s", ev.Result, ev.Error, c.want)
			}
		})
	}
}
