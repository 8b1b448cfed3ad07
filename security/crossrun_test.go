package security_test

import (
	"context"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

// pollute changes everything a step can change in its runtime, schedules
// work for later, and ends in the way the pair asks.
const pollute = `
Object.prototype.polluted = "A"; Array.prototype.polluted = "A"; Function.prototype.polluted = "A";
globalThis.leak = "A"; var leakVar = "A";
Object.defineProperty(Object.prototype, "trap", {get() { return "A" }, configurable: false});
JSON.stringify = () => '"forged"'; JSON.parse = () => "forged";
Function.prototype.call = () => "forged"; Array.prototype.push = () => 0; Promise.prototype.then = function () {};
Object.setPrototypeOf(globalThis, Object.create(Object.prototype, {fromA: {value: "A"}}));
dataProxy.forged = true; globalThis.reportStatus = () => "forged"; globalThis.setTimeout = () => 0;
String.prototype.toString = () => "forged"; Symbol.for("stepbox.leak");
const r = new FinalizationRegistry(() => { globalThis.finalized = "A" }); r.register({}, 1);
Object.freeze(Object.prototype); Object.freeze(Array.prototype);
`

// probe reports what a fresh runtime should show: ["undefined", ...] and
// native built-ins.
const probe = `
const native = f => typeof f === "function" && /\[native code\]/.test(Function.prototype.toString.apply(f));
return {
  names: [({}).polluted, [].polluted, (function () {}).polluted, globalThis.leak, globalThis.leakVar, ({}).trap, globalThis.fromA, globalThis.finalized, globalThis.late, dataProxy.forged].map(v => typeof v),
  natives: [JSON.stringify, JSON.parse, Function.prototype.call, Array.prototype.push, Promise.prototype.then, String.prototype.toString].every(native),
  frozen: Object.isFrozen(Object.prototype) || Object.isFrozen(Array.prototype),
  globalProto: Object.getPrototypeOf(globalThis) === Object.prototype,
  bridge: [typeof reportStatus, typeof setTimeout, String(reportStatus).includes("forged")],
  echo: await dataProxy.request("m", {a: [1]}),
};`

const pristine = `{"names":["undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined"],"natives":true,"frozen":false,"globalProto":true,"bridge":["function","function",false],"echo":{"a":[1]}}`

// noStateAcrossRuns runs a polluting step, then a probe, on an engine with
// one slot, so that the probe runs right after the polluter; for each way
// the polluting run can end, with and without warm runtimes.
func noStateAcrossRuns(t *testing.T, iso isolation) {
	ends := []struct {
		name   string
		tail   string
		limits sandbox.Limits
		want   sandbox.Code
	}{
		{"result", `setInterval(() => { globalThis.late = 1 }, 0); return "polluted"`, nil0, ""},
		{"throw", `throw new Error("polluted")`, nil0, sandbox.CodeRuntime},
		{"timeout", `while (true) {}`, cpu100, sandbox.CodeTimeout},
		{"oom", `let s = "x"; while (true) s = s.repeat(2)`, mem16, sandbox.CodeOOM},
		{"pending timer", `await new Promise(() => { setInterval(() => { globalThis.late = 1 }, 0) })`, wall300, sandbox.CodeTimeout},
	}
	for _, warm := range []int{0, -1} {
		tg := newTarget(t, iso, sandbox.Config{PoolSize: 1, Warm: warm})
		for _, end := range ends {
			name := end.name
			if warm < 0 {
				name += "/cold"
			}
			t.Run(name, func(t *testing.T) {
				for i := 0; i < 2; i++ {
					o := tg.run(t, sandbox.Request{Code: pollute + end.tail, Limits: end.limits})
					if o == nil {
						return
					}
					if got := codeOf(o); got != end.want {
						t.Fatalf("the polluting run ended with %q (%v); want %q", got, o.err, end.want)
					}
					o = tg.run(t, sandbox.Request{Code: probe})
					if o == nil {
						return
					}
					assertOutcome(t, returns(pristine), o)
				}
			})
		}
		tg.finish(t)
	}
	// Runs on one engine at once see nothing of each other either.
	t.Run("concurrent", func(t *testing.T) {
		tg := newTarget(t, iso, sandbox.Config{PoolSize: 2})
		s, err := tg.engine().Submit(context.Background(), sandbox.Request{Code: pollute + `await dataProxy.request("hold")`})
		if err != nil {
			t.Fatal(err)
		}
		for ev := range s.Events() {
			if ev.DataRequest != nil {
				o := tg.run(t, sandbox.Request{Code: probe})
				if o != nil {
					assertOutcome(t, returns(pristine), o)
				}
				s.Abort()
			}
		}
		if _, err := s.Wait(); !isCode(err, sandbox.CodeAborted) {
			t.Errorf("the held run ended with %v; want ABORTED", err)
		}
		tg.finish(t)
	})
}

func codeOf(o *outcome) sandbox.Code {
	if o.err == nil {
		return ""
	}
	return o.err.Code
}

func isCode(err error, c sandbox.Code) bool {
	se, ok := err.(*sandbox.Error)
	return ok && se.Code == c
}
