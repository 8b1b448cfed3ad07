package sandbox_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

func echo(_ context.Context, _ string, params json.RawMessage) (any, error) {
	return params, nil
}

// TestLimits crosses every limit of the run contract once.
func TestLimits(t *testing.T) {
	bigCode := "return 1;" + strings.Repeat(" ", 300<<10)
	cases := []struct {
		name  string
		req   sandbox.Request
		data  sandbox.DataHandler
		code  sandbox.Code
		limit string
	}{
		{"memoryMb", sandbox.Request{Code: "const a = []; while (true) a.push('x'.repeat(100) + a.length)", Limits: sandbox.Limits{MemoryMB: 16}}, nil, sandbox.CodeOOM, "memoryMb"},
		{"memoryMb in one allocation", sandbox.Request{Code: "return new Array(50e6).fill(1.5).length", Limits: sandbox.Limits{MemoryMB: 16}}, nil, sandbox.CodeOOM, "memoryMb"},
		{"memoryMb string growth", sandbox.Request{Code: "let s = 'x'; while (true) s = s.repeat(2); return s.length", Limits: sandbox.Limits{MemoryMB: 16}}, nil, sandbox.CodeOOM, "memoryMb"},
		{"string length cap", sandbox.Request{Code: "let s = 'x'; while (true) s = s + s; return s.length", Limits: sandbox.Limits{MemoryMB: 16}}, nil, sandbox.CodeRuntime, ""},
		{"cpuMs", sandbox.Request{Code: "while (true) {}", Limits: sandbox.Limits{CPUMs: 100}}, nil, sandbox.CodeTimeout, "cpuMs"},
		{"wallMs busy", sandbox.Request{Code: "while (true) {}", Limits: sandbox.Limits{WallMs: 150}}, nil, sandbox.CodeTimeout, "wallMs"},
		{"wallMs await loop", sandbox.Request{Code: "while (true) { await null }", Limits: sandbox.Limits{WallMs: 150}}, nil, sandbox.CodeTimeout, "wallMs"},
		{"wallMs unanswered data request", sandbox.Request{Code: "await dataProxy.request('never')", Limits: sandbox.Limits{WallMs: 150}}, nil, sandbox.CodeTimeout, "wallMs"},
		{"wallMs long timer", sandbox.Request{Code: "await new Promise(r => setTimeout(r, 60000))", Limits: sandbox.Limits{WallMs: 150}}, nil, sandbox.CodeTimeout, "wallMs"},
		{"maxCodeBytes", sandbox.Request{Code: bigCode}, nil, sandbox.CodeValidation, "maxCodeBytes"},
		{"maxResultBytes", sandbox.Request{Code: "return 'x'.repeat(2000)", Limits: sandbox.Limits{MaxResultBytes: 1000}}, nil, sandbox.CodeLimitExceeded, "maxResultBytes"},
		{"maxDataRequests", sandbox.Request{Code: "for (let i = 0; i < 4; i++) await dataProxy.request('m', i)", Limits: sandbox.Limits{MaxDataRequests: 3}}, echo, sandbox.CodeLimitExceeded, "maxDataRequests"},
		{"maxDataRequests caught is still fatal", sandbox.Request{Code: "for (let i = 0; i < 4; i++) { try { await dataProxy.request('m', i) } catch (e) {} } return 'escaped'", Limits: sandbox.Limits{MaxDataRequests: 3}}, echo, sandbox.CodeLimitExceeded, "maxDataRequests"},
		{"maxDataBytes sent", sandbox.Request{Code: "await dataProxy.request('m', 'x'.repeat(5000))", Limits: sandbox.Limits{MaxDataBytes: 4096}}, echo, sandbox.CodeLimitExceeded, "maxDataBytes"},
		{"maxDataBytes received", sandbox.Request{Code: "await dataProxy.request('big')", Limits: sandbox.Limits{MaxDataBytes: 4096}}, func(context.Context, string, json.RawMessage) (any, error) {
			return strings.Repeat("y", 5000), nil
		}, sandbox.CodeLimitExceeded, "maxDataBytes"},
		{"maxStatusEvents", sandbox.Request{Code: "for (let i = 0; i < 6; i++) reportStatus({i})", Limits: sandbox.Limits{MaxStatusEvents: 5}}, nil, sandbox.CodeLimitExceeded, "maxStatusEvents"},
		{"stack depth", sandbox.Request{Code: "function f(n) { return f(n + 1) + 1 } return f(0)"}, nil, sandbox.CodeRuntime, "stackDepth"},
		{"deep data params", sandbox.Request{Code: "let a = []; for (let i = 0; i < 100000; i++) a = [a]; await dataProxy.request('m', a)"}, echo, sandbox.CodeRuntime, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, engine(t), tc.req, tc.data)
			se := asError(t, err)
			if se.Code != tc.code || se.Limit != tc.limit {
				t.Fatalf("got %s (limit %q): %s; want %s (limit %q)", se.Code, se.Limit, se.Message, tc.code, tc.limit)
			}
		})
	}
}

func asError(t *testing.T, err error) *sandbox.Error {
	t.Helper()
	se, ok := err.(*sandbox.Error)
	if !ok {
		t.Fatalf("want *sandbox.Error, got %T %v", err, err)
	}
	return se
}

func TestStackDepthIsRangeError(t *testing.T) {
	_, _, err := run(t, engine(t), sandbox.Request{Code: "function f() { return f() }\nreturn f()"}, nil)
	se := asError(t, err)
	if se.Message != "RangeError: Maximum call stack size exceeded" {
		t.Errorf("message %q", se.Message)
	}
	if n := strings.Count(se.Stack, "\n"); n > 40 {
		t.Errorf("stack has %d lines; want it cut", n)
	}
}

func TestConsoleLimitsTruncate(t *testing.T) {
	evs, res, err := run(t, engine(t), sandbox.Request{
		Code:   "for (let i = 0; i < 20; i++) console.log('line', i); return 'done'",
		Limits: sandbox.Limits{MaxConsoleEvents: 5},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range evs {
		if e.Console != nil {
			lines = append(lines, e.Console.Level+" "+e.Console.Text)
		}
	}
	if len(lines) != 6 || lines[0] != "log line 0" || !strings.HasPrefix(lines[5], "warn [stepbox] console limit reached") {
		t.Fatalf("console lines %q", lines)
	}
	if res.Stats.ConsoleEvents != 5 || res.Stats.ConsoleDropped != 15 {
		t.Fatalf("stats %+v", res.Stats)
	}

	evs, _, err = run(t, engine(t), sandbox.Request{
		Code:   "console.log('é'.repeat(30)); console.log('more'); return 1",
		Limits: sandbox.Limits{MaxConsoleBytes: 21},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := evs[0].Console.Text; got != strings.Repeat("é", 10) {
		t.Fatalf("cut line %q", got)
	}
}

func TestConsoleFormatting(t *testing.T) {
	evs, _, err := run(t, engine(t), sandbox.Request{Code: `
console.log("s", 1, true, null, undefined, 2n, [1, [2, [3]]], {a: {b: 1}});
console.info(new Error("boom"));
const c = {}; c.c = c; console.warn(c);
console.error(function named() {}, Symbol("sy"));
console.debug(new Map([[1, 2]]), new Set([1]));
console.log(new Proxy({}, {ownKeys() { throw new Error("trap") }}));
`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`log s 1 true null undefined 2n [ 1, [ 2, [ 3 ] ] ] { a: { b: 1 } }`,
		"info Error: boom\n    at anonymous (step.js:3:",
		`warn { c: [Circular] }`,
		`error [Function: named] Symbol(sy)`,
		`debug Map(1) [ [ 1, 2 ] ] Set(1) [ 1 ]`,
		`log [unformattable value]`,
	}
	for i, w := range want {
		if i >= len(evs) || evs[i].Console == nil {
			t.Fatalf("event %d missing; have %v", i, kinds(evs))
		}
		got := evs[i].Console.Level + " " + evs[i].Console.Text
		if !strings.HasPrefix(got, w) {
			t.Errorf("line %d: got %q, want prefix %q", i, got, w)
		}
	}
}
