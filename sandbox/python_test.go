package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
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

// A finite decimal.Decimal is the JSON number of its exact digits and a
// date its ISO text, in the result, status payloads and request params;
// a string that only looks like the encoder's own marking stays a string.
func TestPythonDecimalAndDateResults(t *testing.T) {
	var params json.RawMessage
	evs, res, err := run(t, engine(t), sandbox.Request{
		Language: sandbox.Python,
		Code: `import datetime, decimal
report_status({"d": decimal.Decimal("0.10")})
await data_proxy.request("m", [decimal.Decimal("-1E+30")])
return {"d": decimal.Decimal("12.50"), "day": datetime.date(2026, 7, 1), "s": "\x00:1", "big": 2 ** 70}`,
	}, func(_ context.Context, _ string, p json.RawMessage) (any, error) {
		params = p
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"d":12.50,"day":"2026-07-01","s":"\u0000:1","big":1180591620717411303424}`; string(res.Value) != want {
		t.Errorf("result %s, want %s", res.Value, want)
	}
	if string(evs[0].Status) != `{"d":0.10}` || string(params) != `[-1E+30]` {
		t.Errorf("status %s, params %s", evs[0].Status, params)
	}
	se := expectError(t, sandbox.Request{Language: sandbox.Python, Code: "import decimal\nreturn decimal.Decimal('NaN')"}, sandbox.CodeRuntime, "")
	if !strings.Contains(se.Message, "not JSON-serializable") {
		t.Errorf("NaN: %q", se.Message)
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

// By default a step imports what is installed for the interpreter: here
// Debian's python3-pandas, which scripts/test installs, without preload,
// within the default plan's memory.
func TestPythonInstalledPackages(t *testing.T) {
	_, res, err := run(t, engine(t), sandbox.Request{Language: sandbox.Python, Code: `import pandas as pd
df = pd.DataFrame({"k": [i % 3 for i in range(10000)], "v": range(10000)})
return {str(k): int(v) for k, v in df.groupby("k")["v"].sum().items()}`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `{"0":16668333,"1":16661667,"2":16665000}` {
		t.Fatalf("result %s", res.Value)
	}
}

func TestPythonConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  sandbox.PythonConfig
		want string
	}{
		{sandbox.PythonConfig{Packages: "all"}, `python: packages: "all" is not "auto", "none" or "dirs"`},
		{sandbox.PythonConfig{Packages: "none", SitePackages: []string{"/opt/site"}}, "python: packages: \"none\" (the standard library only), but sitePackages are set"},
		{sandbox.PythonConfig{Packages: "dirs"}, `python: packages: "dirs", but no sitePackages are set`},
		{sandbox.PythonConfig{SitePackages: []string{"site"}}, `python: sitePackages[0]: "site" is not an absolute path`},
		{sandbox.PythonConfig{Preload: []string{"numpy", "os; import x"}}, `python: preload[1]: "os; import x" is not a module name`},
	} {
		_, err := sandbox.New(sandbox.Config{Python: c.cfg})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	for _, c := range []struct {
		in, packages string
		dirs         []string
	}{
		{"auto", "auto", nil},
		{"none", "none", nil},
		{"/opt/a, /opt/b/", "dirs", []string{"/opt/a", "/opt/b"}},
		{"auto,/opt/a", "auto", []string{"/opt/a"}},
	} {
		var pc sandbox.PythonConfig
		if err := pc.SetPackages(c.in); err != nil || pc.Packages != c.packages || !slices.Equal(pc.SitePackages, c.dirs) {
			t.Errorf("SetPackages(%q): %q %q %v", c.in, pc.Packages, pc.SitePackages, err)
		}
		if err := pc.Validate(); err != nil {
			t.Errorf("SetPackages(%q): %v", c.in, err)
		}
	}
	for _, in := range []string{"", "site", "/opt/a,,/opt/b", "none,/opt/a", "/opt/a,auto"} {
		var pc sandbox.PythonConfig
		if err := pc.SetPackages(in); err == nil {
			t.Errorf("SetPackages(%q) = %q %q, want an error", in, pc.Packages, pc.SitePackages)
		}
	}
}
