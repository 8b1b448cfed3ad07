package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// testPlan gives steps time limits no machine that can run the suite
// reaches, so that a slow or loaded machine (or the race detector) never
// turns an ordinary run into a timeout; a test that crosses a time limit
// lowers it in its request, with a step that never ends by itself.
// testCaps let the plan keep these limits: the default caps are lower.
var (
	testPlan = sandbox.Limits{CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs}
	testCaps = testPlan
)

// testGrace is the test engines' grace: how long a run may outlive its
// wall limit before the engine gives up on it (kills its worker, or
// abandons its in-process runtime) with LIMIT_EXCEEDED (limit "time"). The
// default second is for a service; scaled to this machine, a run that
// stops at its wall limit but late, on a loaded machine or under the race
// detector, still ends TIMEOUT as the tests expect.
var testGrace = testenv.ScaleDuration(sandbox.DefaultGrace)

// isolation is the isolation every test engine uses: the default (jailed
// worker processes) unless STEPBOX_TEST_ISOLATION says otherwise, so that
// one suite checks both modes (scripts/test runs it twice).
var isolation = sandbox.Isolation(os.Getenv("STEPBOX_TEST_ISOLATION"))

func newEngine(t testing.TB, cfg sandbox.Config) *sandbox.Engine {
	t.Helper()
	if cfg.Isolation == "" {
		cfg.Isolation = isolation
	}
	if cfg.Plans == nil {
		cfg.Plans = map[string]sandbox.Limits{"default": testPlan}
	}
	if cfg.Caps == (sandbox.Limits{}) {
		cfg.Caps = testCaps
	}
	if cfg.Grace == 0 {
		cfg.Grace = testGrace
	}
	e, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

var (
	sharedOnce sync.Once
	shared     *sandbox.Engine
)

// engine returns an engine shared by the tests of this package that need
// no special configuration. It is closed when the binary exits.
func engine(t *testing.T) *sandbox.Engine {
	sharedOnce.Do(func() {
		var err error
		shared, err = sandbox.New(sandbox.Config{Isolation: isolation, Caps: testCaps, Grace: testGrace, Plans: map[string]sandbox.Limits{"default": testPlan}})
		if err != nil {
			t.Fatal(err)
		}
	})
	return shared
}

// run runs req to the end, answering data requests with data, and returns
// the events and the outcome.
func run(t *testing.T, e *sandbox.Engine, req sandbox.Request, data sandbox.DataHandler) ([]sandbox.Event, sandbox.Result, error) {
	t.Helper()
	s, err := e.Submit(context.Background(), req)
	if err != nil {
		return nil, sandbox.Result{}, err
	}
	var evs []sandbox.Event
	terminals := 0
	for ev := range s.Events() {
		evs = append(evs, ev)
		if ev.Terminal() {
			terminals++
		}
		if dr := ev.DataRequest; dr != nil {
			if data == nil {
				continue // never answered
			}
			v, err := data(context.Background(), dr.Method, dr.Params)
			if err != nil {
				_ = s.RespondError(dr.ID, err.Error())
			} else {
				_ = s.Respond(dr.ID, v)
			}
		}
	}
	if terminals != 1 || !evs[len(evs)-1].Terminal() {
		t.Fatalf("want exactly one terminal event, last; got %d in %v", terminals, kinds(evs))
	}
	res, err := s.Wait()
	return evs, res, err
}

func kinds(evs []sandbox.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Kind))
	}
	return out
}

func expectResult(t *testing.T, code, want string) {
	t.Helper()
	_, res, err := run(t, engine(t), sandbox.Request{Code: code, Input: json.RawMessage(`{"x":21}`)}, nil)
	if err != nil {
		t.Fatalf("%s: %v", code, err)
	}
	if string(res.Value) != want {
		t.Fatalf("%s: got %s, want %s", code, res.Value, want)
	}
}

func expectError(t *testing.T, req sandbox.Request, code sandbox.Code, limit string) *sandbox.Error {
	t.Helper()
	_, _, err := run(t, engine(t), req, nil)
	var se *sandbox.Error
	if !errors.As(err, &se) {
		t.Fatalf("%q: want %s error, got %v", req.Code, code, err)
	}
	if se.Code != code || se.Limit != limit {
		t.Fatalf("%q: want %s (limit %q), got %s (limit %q): %s", req.Code, code, limit, se.Code, se.Limit, se.Message)
	}
	if !errors.Is(err, &sandbox.Error{Code: code}) {
		t.Fatalf("errors.Is does not match the code")
	}
	return se
}

func TestResults(t *testing.T) {
	cases := []struct{ name, code, want string }{
		{"number", "return 1 + 1", "2"},
		{"input", "return input.x * 2", "42"},
		{"undefined", "const a = 1", "null"},
		{"object", "return {a: [1, 'two', null], b: {c: true}}", `{"a":[1,"two",null],"b":{"c":true}}`},
		{"top-level await", "const v = await Promise.resolve(5); return v", "5"},
		{"timers", "let n = 0; await new Promise(r => { const i = setInterval(() => { if (++n === 3) { clearInterval(i); r() } }, 1) }); return n", "3"},
		{"clearTimeout", "let hit = false; const id = setTimeout(() => hit = true, 1); clearTimeout(id); await new Promise(r => setTimeout(r, 5)); return hit", "false"},
		{"queueMicrotask", "const o = []; queueMicrotask(() => o.push(2)); o.push(1); await null; return o", "[1,2]"},
		{"toJSON", "return {toJSON() { return 'x' }}", `"x"`},
		{"date", "return new Date(0)", `"1970-01-01T00:00:00.000Z"`},
		{"unicode", `return "héllo \u2603 \ud83d\ude00"`, `"héllo ☃ 😀"`},
		{"lone surrogate", `return "\ud800"`, `"\ud800"`},
		{"no host globals", "return [typeof require, typeof process, typeof std, typeof os, typeof module, typeof __sbx_host, typeof print]", `["undefined","undefined","undefined","undefined","undefined","undefined","undefined"]`},
		{"dynamic import refused", "try { await import('fs'); return 'loaded' } catch (e) { return 'refused' }", `"refused"`},
		{"function result in object dropped", "return {f() {}, a: 1}", `{"a":1}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { expectResult(t, tc.code, tc.want) })
	}
}

func TestErrors(t *testing.T) {
	t.Run("thrown error has the user's position", func(t *testing.T) {
		se := expectError(t, sandbox.Request{Code: "const a = 1;\n\nfunction f() {\n  throw new TypeError('bad thing')\n}\nf()"}, sandbox.CodeRuntime, "")
		if se.Message != "TypeError: bad thing" {
			t.Errorf("message %q", se.Message)
		}
		if se.Position == nil || se.Position.Line != 4 {
			t.Errorf("position %+v, want line 4", se.Position)
		}
		if !strings.Contains(se.Stack, "at f (step.js:4:") || !strings.Contains(se.Stack, "step.js:6:") || strings.Contains(se.Stack, "<eval>") {
			t.Errorf("stack %q", se.Stack)
		}
	})
	t.Run("an error the guest API throws has the step's frames only", func(t *testing.T) {
		// structuredClone and crypto.subtle throw from the bootstrap's
		// parts, whose frames are dropped: the stack is the step's, in the
		// report and as console.log prints the error.
		code := "function g(v) {\n  return structuredClone(v)\n}\ntry { g(() => 1) } catch (e) { console.log(e) }\nawait crypto.subtle.digest('SHA-9', new Uint8Array(1))"
		evs, _, err := run(t, engine(t), sandbox.Request{Code: code}, nil)
		var se *sandbox.Error
		if !errors.As(err, &se) || se.Code != sandbox.CodeRuntime {
			t.Fatalf("want a RUNTIME error, got %v", err)
		}
		var logs []string
		for _, ev := range evs {
			if ev.Console != nil {
				logs = append(logs, ev.Console.Text)
			}
		}
		if se.Message != "NotSupportedError: Unrecognized algorithm name: SHA-9" || se.Stack != "    at anonymous (step.js:5:27)\n" {
			t.Errorf("message %q, stack %q", se.Message, se.Stack)
		}
		want := "DataCloneError: () => 1 could not be cloned.\n    at g (step.js:2:3)\n    at anonymous (step.js:4:8)"
		if len(logs) != 1 || logs[0] != want {
			t.Errorf("console.log(e) printed %q, want %q", logs, want)
		}
	})
	t.Run("syntax error is VALIDATION at the user's line and column", func(t *testing.T) {
		se := expectError(t, sandbox.Request{Code: "const a = 1;\nreturn a +;"}, sandbox.CodeValidation, "")
		if se.Position == nil || se.Position.Line != 2 || se.Position.Column != 11 {
			t.Errorf("position %+v, want 2:11", se.Position)
		}
		if !strings.HasPrefix(se.Message, "SyntaxError:") {
			t.Errorf("message %q", se.Message)
		}
	})
	for _, tc := range []struct{ name, code, msg string }{
		{"throw a string", "throw 'oops'", "Uncaught oops"},
		{"throw an object", "throw {code: 7}", "Uncaught { code: 7 }"},
		{"throw a symbol", "throw Symbol('s')", "Uncaught Symbol(s)"},
		{"getter that throws", "const e = new Error('x'); Object.defineProperty(e, 'message', {get() { throw 1 }}); throw e", "Error: "},
		{"cycle", "const a = {}; a.self = a; return a", "TypeError: the result is not JSON-serializable: circular reference"},
		{"function", "return function f() {}", "TypeError: the result is not JSON-serializable: function"},
		{"deep result", "let a = []; for (let i = 0; i < 100000; i++) a = [a]; return a", "TypeError: the result is not JSON-serializable: nested too deeply"},
		{"promise never settles", "await new Promise(() => {})", "the step never finished: it awaits a promise that nothing will settle"},
		{"Atomics.wait cannot block", "Atomics.wait(new Int32Array(new SharedArrayBuffer(8)), 0, 0, 10000)", "TypeError: cannot block in this thread"},
		{"error in a timer callback", "await new Promise(r => setTimeout(() => { throw new Error('in timer') }, 1))", "Error: in timer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			se := expectError(t, sandbox.Request{Code: tc.code}, sandbox.CodeRuntime, "")
			if se.Message != tc.msg {
				t.Errorf("message %q, want %q", se.Message, tc.msg)
			}
		})
	}
	t.Run("proxy thrown value that loops is stopped by its limit", func(t *testing.T) {
		expectError(t, sandbox.Request{Code: "throw new Proxy({}, {get() { while (true) {} }, ownKeys() { while (true) {} }, getPrototypeOf() { while (true) {} }})", Limits: sandbox.Limits{CPUMs: 300}}, sandbox.CodeTimeout, "cpuMs")
	})
}

// A BigInt is the JSON number of its exact digits, in a result, a status
// payload and request params alike; one that a step's toJSON turns into
// something else is that something else, as JSON.stringify does.
func TestBigIntResults(t *testing.T) {
	expectResult(t, "return [10n, -12345678901234567890123n, 2n ** 64n, {n: 0n}]", `[10,-12345678901234567890123,18446744073709551616,{"n":0}]`)
	expectResult(t, "BigInt.prototype.toJSON = function () { return 'n' + this }; return [1n]", `["n1"]`)
	se := expectError(t, sandbox.Request{Code: "const a = [1n]; a.push(a); return a"}, sandbox.CodeRuntime, "")
	if se.Message != "TypeError: the result is not JSON-serializable: circular reference" {
		t.Errorf("message %q", se.Message)
	}
}

func TestValidation(t *testing.T) {
	e := engine(t)
	for _, tc := range []struct {
		name string
		req  sandbox.Request
		want sandbox.Code
	}{
		{"unknown plan", sandbox.Request{Code: "1", Plan: "gold"}, sandbox.CodeValidation},
		{"limit above plan", sandbox.Request{Code: "1", Limits: sandbox.Limits{WallMs: testPlan.WallMs + 1}}, sandbox.CodeValidation},
		{"negative limit", sandbox.Request{Code: "1", Limits: sandbox.Limits{MemoryMB: -1}}, sandbox.CodeValidation},
		{"bad input", sandbox.Request{Code: "1", Input: json.RawMessage(`{`)}, sandbox.CodeValidation},
		{"unknown language", sandbox.Request{Code: "1", Language: "cobol"}, sandbox.CodeValidation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Submit(context.Background(), tc.req)
			if !errors.Is(err, &sandbox.Error{Code: tc.want}) {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
		})
	}
}
