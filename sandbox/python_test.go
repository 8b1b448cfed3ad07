package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

func TestPython(t *testing.T) {
	evs, res, err := run(t, engine(t), sandbox.Request{
		Language: sandbox.Python,
		Input:    json.RawMessage(`{"x": 20}`),
		Code: `import statistics
report_status({"stage": "start"})
user = await data_proxy.request("user", {"id": 1})
print("hello", user["name"])
return {"sum": input["x"] + 1, "mean": statistics.mean([1, 2, 3]), "name": user["name"]}`,
	}, func(context.Context, string, json.RawMessage) (any, error) {
		return map[string]string{"name": "Ada"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `{"sum":21,"mean":2,"name":"Ada"}` {
		t.Fatalf("result %s", res.Value)
	}
	if got := strings.Join(kinds(evs), ","); got != "status,data_request,console,result" {
		t.Fatalf("events %s", got)
	}
}

func TestPythonErrors(t *testing.T) {
	se := expectError(t, sandbox.Request{Language: sandbox.Python, Code: "x = 1\nraise ValueError('bad value')"}, sandbox.CodeRuntime, "")
	if !strings.HasPrefix(se.Message, "ValueError: bad value") || se.Position == nil || se.Position.Line != 2 {
		t.Fatalf("%+v %+v", se, se.Position)
	}
	se = expectError(t, sandbox.Request{Language: sandbox.Python, Code: "x = (\n"}, sandbox.CodeValidation, "")
	if se.Position == nil {
		t.Fatalf("syntax error without position: %+v", se)
	}
	expectError(t, sandbox.Request{Language: sandbox.Python, Code: "while True: pass", Limits: sandbox.Limits{CPUMs: 300}}, sandbox.CodeTimeout, "cpuMs")
	_, err := engine(t).Run(context.Background(), sandbox.Request{Language: sandbox.Python, Code: "return open('/etc/passwd').read()"}, nil)
	if !errors.Is(err, sandbox.ErrRuntime) {
		t.Fatalf("reading a host file: %v", err)
	}
}

func TestPythonDisabled(t *testing.T) {
	e := newEngine(t, sandbox.Config{Python: sandbox.PythonConfig{Disabled: true}})
	_, err := e.Submit(context.Background(), sandbox.Request{Language: sandbox.Python, Code: "return 1"})
	if !errors.Is(err, sandbox.ErrUnavailable) || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("%v", err)
	}
}
