package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

const tsStep = `enum Color { Red, Green }
namespace Geo { export const origin = { x: 0, y: 0 } as const }
interface User { name: string }
const user = await dataProxy.request("user", {}) as User;
function shout<T extends string>(s: T): string { return s.toUpperCase() }
const cfg = { color: Color.Green } satisfies { color: Color };
return { color: cfg.color, name: shout(user.name), origin: Geo.origin };
`

func TestTypeScriptRuns(t *testing.T) {
	answer := func(context.Context, string, json.RawMessage) (any, error) {
		return map[string]string{"name": "ada"}, nil
	}
	want := `{"color":1,"name":"ADA","origin":{"x":0,"y":0}}`
	// From source, compiled on the fly.
	res, err := engine(t).Run(context.Background(), sandbox.Request{Language: sandbox.TypeScript, Code: tsStep}, answer)
	if err != nil || string(res.Value) != want {
		t.Fatalf("source: %s %v", res.Value, err)
	}
	// From what was stored when the step was saved.
	c, err := sandbox.CompileTypeScript(tsStep)
	if err != nil {
		t.Fatal(err)
	}
	res, err = engine(t).Run(context.Background(), sandbox.Request{Language: sandbox.TypeScript, Compiled: &c}, answer)
	if err != nil || string(res.Value) != want {
		t.Fatalf("compiled: %s %v", res.Value, err)
	}
}

func TestTypeScriptErrorsReportTypeScriptLines(t *testing.T) {
	code := "type T = { a: number };\n\n\nconst x: T = { a: 1 };\nfunction f(n: number): never {\n  throw new RangeError(`bad ${n}`);\n}\nconsole.log(new Error('logged'));\nf(x.a);\n"
	evs, _, err := run(t, engine(t), sandbox.Request{Language: sandbox.TypeScript, Code: code}, nil)
	se := asError(t, err)
	if se.Code != sandbox.CodeRuntime || se.Message != "RangeError: bad 1" {
		t.Fatalf("%+v", se)
	}
	if se.Position == nil || se.Position.Line != 6 {
		t.Fatalf("position %+v, want line 6 of the TypeScript", se.Position)
	}
	if !strings.Contains(se.Stack, "step.ts:6:") || !strings.Contains(se.Stack, "step.ts:9:") || strings.Contains(se.Stack, "step.js") {
		t.Fatalf("stack %q", se.Stack)
	}
	if c := evs[0].Console; c == nil || !strings.Contains(c.Text, "step.ts:8:") {
		t.Fatalf("logged stack not mapped: %+v", evs[0])
	}
}

func TestTypeScriptCompileErrors(t *testing.T) {
	_, err := sandbox.CompileTypeScript("const a: number = 1;\nconst b = (;\nlet c = ];\n")
	var se *sandbox.Error
	if !errors.As(err, &se) || se.Code != sandbox.CodeValidation {
		t.Fatalf("%v", err)
	}
	if len(se.Diagnostics) < 1 || se.Diagnostics[0].Line != 2 || se.Position.Line != 2 {
		t.Fatalf("diagnostics %+v", se.Diagnostics)
	}
	// The position once, in Position: the message starts with the first
	// problem itself, and names the later ones' positions.
	if first := strings.SplitN(se.Message, "\n", 2)[0]; first != se.Diagnostics[0].Message {
		t.Errorf("message %q: its first line should be the first problem, %q", se.Message, se.Diagnostics[0].Message)
	}
}

// A TypeScript step that does not compile is the step's fault, as a
// JavaScript syntax error is: Submit accepts the run, which ends with one
// terminal VALIDATION error, its position once in Position, not in the
// message. A request that is wrong besides is still refused.
func TestTypeScriptCompileErrorEndsTheRun(t *testing.T) {
	var usage []sandbox.Usage
	var mu sync.Mutex
	e := newEngine(t, sandbox.Config{Meter: sandbox.MeterFunc(func(u sandbox.Usage) {
		mu.Lock()
		defer mu.Unlock()
		usage = append(usage, u)
	})})
	evs, _, err := run(t, e, sandbox.Request{Language: sandbox.TypeScript, Code: "const a: number = 1;\nconst b = (;\nlet c = ];\n"}, nil)
	se := asError(t, err)
	if len(evs) != 1 || se.Code != sandbox.CodeValidation || se.Position == nil || se.Position.Line != 2 || len(se.Diagnostics) == 0 {
		t.Fatalf("events %d, error %+v", len(evs), se)
	}
	if first := strings.SplitN(se.Message, "\n", 2)[0]; first != se.Diagnostics[0].Message || strings.Contains(first, "2:") {
		t.Errorf("message %q: its first line should be the first problem, without its position", se.Message)
	}
	// The JavaScript syntax error has the same shape.
	_, _, err = run(t, e, sandbox.Request{Code: "const a = 1;\nreturn a +;"}, nil)
	js := asError(t, err)
	if js.Code != se.Code || js.Position == nil || js.Position.Line != 2 || strings.Contains(js.Message, "2:") {
		t.Fatalf("JavaScript syntax error %+v", js)
	}
	// Still refused: the rest of the request is checked.
	_, err = e.Submit(context.Background(), sandbox.Request{Language: sandbox.TypeScript, Code: "const = 1", Input: json.RawMessage("{")})
	if !errors.Is(err, sandbox.ErrValidation) || !strings.Contains(err.Error(), "input is not valid JSON") {
		t.Fatalf("Submit: %v", err)
	}
	// Both runs are metered as runs that ended VALIDATION (Close waits for
	// the meter), the refusal too.
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(usage) != 3 || usage[0].Outcome != "VALIDATION" || usage[1].Outcome != "VALIDATION" || usage[0].Language != sandbox.TypeScript {
		t.Errorf("usage %+v", usage)
	}
	mu.Unlock()
}

func TestTypeScriptTopLevelAwaitAndUsing(t *testing.T) {
	res, err := engine(t).Run(context.Background(), sandbox.Request{Language: sandbox.TypeScript, Code: `
const log: string[] = [];
{
  using r = { [Symbol.dispose]() { log.push("disposed") } };
  log.push("used");
}
const v = await new Promise<number>(r => setTimeout(() => r(7), 1));
return [...log, v];`}, nil)
	if err != nil || string(res.Value) != `["used","disposed",7]` {
		t.Fatalf("%s %v", res.Value, err)
	}
}
