package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"
)

// The same step in each language: it reports its status, asks the host
// for a value, logs and returns.
var languageSteps = []struct {
	lang sandbox.Language
	code string
}{
	{sandbox.JavaScript, `reportStatus({stage: "ask"});
const n = await dataProxy.request("double", input.n);
console.log("got", n);
return {lang: "js", n};`},
	{sandbox.TypeScript, `interface Answer { lang: string; n: number }
reportStatus({stage: "ask"});
const n: number = await dataProxy.request("double", input.n);
console.log("got", n);
const out: Answer = {lang: "ts", n};
return out;`},
	{sandbox.Python, `report_status({"stage": "ask"})
n = await data_proxy.request("double", input["n"])
print("got", n)
return {"lang": "py", "n": n}`},
}

// TestLanguagesOverTheWire runs JavaScript, TypeScript and Python steps
// through unary Run (HTTP+JSON, with the answer in the request's data map)
// and through the Execute stream (gRPC and Connect, answered mid-stream).
func TestLanguagesOverTheWire(t *testing.T) {
	ts := start(t, server.Config{PoolSize: 2})
	for _, step := range languageSteps {
		short := map[sandbox.Language]string{sandbox.JavaScript: "js", sandbox.TypeScript: "ts", sandbox.Python: "py"}[step.lang]
		t.Run(string(step.lang)+"/Run", func(t *testing.T) {
			body, _ := json.Marshal(map[string]any{
				"language": step.lang, "code": step.code, "input": map[string]any{"n": 21},
				"data": map[string]any{"double": 42},
			})
			status, resp, raw := ts.post(t, runPath, string(body))
			if status != 200 {
				t.Fatalf("%d %s", status, raw)
			}
			if got := jsonOf(dig(resp, "result", "value")); got != fmt.Sprintf(`{"lang":%q,"n":42}`, short) {
				t.Fatalf("value %v\n%s", got, raw)
			}
			if jsonOf(dig(resp, "events", 0, "status")) != `{"stage":"ask"}` || jsonOf(dig(resp, "events", 1, "dataRequest", "params")) != "21" ||
				dig(resp, "events", 2, "console", "text") != "got 42" {
				t.Fatalf("events: %s", raw)
			}
		})
		for _, grpc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/Execute/grpc=%v", step.lang, grpc), func(t *testing.T) {
				st, err := ts.client(client.Options{GRPC: grpc}).Submit(context.Background(),
					sandbox.Request{Language: step.lang, Code: step.code, Input: json.RawMessage(`{"n": 21}`)})
				if err != nil {
					t.Fatal(err)
				}
				var kinds []string
				for ev := range st.Events() {
					kinds = append(kinds, string(ev.Kind))
					if dr := ev.DataRequest; dr != nil {
						var n int
						json.Unmarshal(dr.Params, &n)
						st.Respond(dr.ID, n*2)
					}
				}
				res, err := st.Wait()
				if err != nil || string(res.Value) != fmt.Sprintf(`{"lang":%q,"n":42}`, short) {
					t.Fatalf("%s %v", res.Value, err)
				}
				if got := strings.Join(kinds, ","); got != "status,data_request,console,result" {
					t.Fatalf("events %s", got)
				}
			})
		}
	}

	// Errors keep the user's language and lines.
	for _, c := range []struct {
		lang sandbox.Language
		code string
		want sandbox.Code
		line int
	}{
		{sandbox.TypeScript, "const a: number = 1;\nconst b: = 2;", sandbox.CodeValidation, 2},
		{sandbox.TypeScript, "type T = {x: number};\nconst t: T = {x: 1};\nthrow new Error('ts' + t.x);", sandbox.CodeRuntime, 3},
		{sandbox.Python, "x = 1\ndef f(:\n  pass", sandbox.CodeValidation, 2},
		{sandbox.Python, "x = 1\nraise ValueError('py')", sandbox.CodeRuntime, 2},
	} {
		_, err := ts.client(client.Options{GRPC: true}).Run(context.Background(), sandbox.Request{Language: c.lang, Code: c.code}, nil)
		var se *sandbox.Error
		if !errors.As(err, &se) || se.Code != c.want || se.Position == nil || se.Position.Line != c.line {
			t.Errorf("%s %q: %#v", c.lang, c.code, err)
		}
	}
}
