package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
)

// postExact posts body as curl would and decodes the answer keeping every
// number's text (json.Number), so that a test sees the digits on the wire.
func postExact(t *testing.T, ts *testServer, body string, header ...string) (int, map[string]any, string) {
	t.Helper()
	status, _, raw := ts.send(t, runPath, "application/json", body, header...)
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("the answer is not JSON: %v\n%s", err, raw)
	}
	return status, m, string(raw)
}

// JSON values are JSON on the wire: the curl, data answers as
// values, status, params and fetch audit records as objects.
func TestJSONValuesOverHTTPJSON(t *testing.T) {
	ts := start(t, server.Config{Plans: slowLimits, Egress: &sandbox.Egress{Policy: sandbox.EgressPolicy{
		Schemes: []string{"https"}, Hosts: []string{"allowed.example"},
	}}})
	status, resp, raw := postExact(t, ts, `{"language":"javascript","code":"return input.a + 1","input":{"a":41}}`)
	if status != 200 || dig(resp, "result", "value") != json.Number("42") || dig(resp, "result", "valueJson") != nil {
		t.Fatalf("%d %s", status, raw)
	}
	if !strings.Contains(raw, `"value":42`) {
		t.Errorf("the value is not the JSON number 42: %s", raw)
	}

	status, resp, raw = postExact(t, ts, `{
		"code": "reportStatus({stage: 'go', n: [1, 2]}); let f; try { await fetch('https://denied.example/x') } catch (e) { f = e.name } const u = await dataProxy.request('user', {id: input.id, tags: ['a']}); return {u, f, t: await dataProxy.request('t')}",
		"input": {"id": 7},
		"data": {"user": {"name": "Ada", "age": 36.5, "ok": true, "none": null}, "t": "text"}
	}`)
	if status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	if got := jsonOf(dig(resp, "result", "value")); got != `{"f":"TypeError","t":"text","u":{"age":36.5,"name":"Ada","none":null,"ok":true}}` {
		t.Errorf("value %s\n%s", got, raw)
	}
	if got := jsonOf(dig(resp, "events", 0, "status")); got != `{"n":[1,2],"stage":"go"}` {
		t.Errorf("status %s", got)
	}
	fetch, _ := dig(resp, "events", 1, "fetch").(map[string]any)
	if fetch["decision"] != "deny" || fetch["url"] != "https://denied.example/x" {
		t.Errorf("fetch audit record %v\n%s", fetch, raw)
	}
	if got := jsonOf(dig(resp, "events", 2, "dataRequest", "params")); got != `{"id":7,"tags":["a"]}` || dig(resp, "events", 2, "dataRequest", "paramsJson") != nil {
		t.Errorf("params %s\n%s", got, raw)
	}
}

// Integers beyond 2^53 cross exactly through the *_json twins, both ways,
// with a Python step: over HTTP+JSON, the Go client (Connect and gRPC), and
// Execute's dataResponse.valueJson over Connect+JSON and gRPC.
func TestBigIntegersThroughTheTwins(t *testing.T) {
	ts := start(t, server.Config{Plans: slowLimits})
	const code = `report_status({"big": input["n"] + 1})
got = await data_proxy.request("big", {"n": input["n"] * 2})
return {"n": input["n"] * 10, "got": got, "small": 1}`
	const n = `{"n": 12345678901234567890}`
	want := `{"n":123456789012345678900,"got":[98765432109876543210987,0.1],"small":1}`

	status, resp, raw := postExact(t, ts, `{"language": "python", "code": `+jsonString(code)+`, "inputJson": `+jsonString(n)+`,
		"dataJson": {"big": "[98765432109876543210987, 0.1]"}}`)
	if status == 501 && !testenv.RequireJail() {
		t.Skipf("Python is not available on this machine: %s", raw)
	}
	if status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	if got := dig(resp, "result", "valueJson"); got != want {
		t.Errorf("valueJson %v, want %s\n%s", got, want, raw)
	}
	// The Value is set too, with doubles.
	if v := dig(resp, "result", "value", "n"); v != json.Number("123456789012345680000") || dig(resp, "result", "value", "small") != json.Number("1") {
		t.Errorf("value.n %v\n%s", v, raw)
	}
	if got := dig(resp, "events", 0, "statusJson"); got != `{"big":12345678901234567891}` {
		t.Errorf("statusJson %v\n%s", got, raw)
	}
	if got := dig(resp, "events", 1, "dataRequest", "paramsJson"); got != `{"n":24691357802469135780}` {
		t.Errorf("paramsJson %v\n%s", got, raw)
	}

	// The Go client sends inputJson and dataJson and reads the twins.
	for _, grpc := range []bool{false, true} {
		res, err := ts.client(client.Options{GRPC: grpc}).RunWithData(context.Background(),
			sandbox.Request{Language: sandbox.Python, Code: code, Input: json.RawMessage(n)},
			map[string]any{"big": json.RawMessage(`[98765432109876543210987, 0.1]`)})
		if err != nil || string(res.Value) != want {
			t.Errorf("client grpc=%v: %s %v", grpc, res.Value, err)
		}
		if len(res.Events) < 2 || string(res.Events[0].Status) != `{"big":12345678901234567891}` || string(res.Events[1].DataRequest.Params) != `{"n":24691357802469135780}` {
			t.Errorf("client grpc=%v: events %+v", grpc, res.Events)
		}
	}

	// Execute, answered on the stream: valueJson exactly, value as a Value.
	for _, c := range []struct {
		name string
		opts []connect.ClientOption
	}{{"connect+json", []connect.ClientOption{connect.WithProtoJSON()}}, {"grpc", []connect.ClientOption{connect.WithGRPC()}}} {
		t.Run(c.name, func(t *testing.T) {
			code := `a = await data_proxy.request("exact")
b = await data_proxy.request("value")
return [a, b]`
			msgs := execute(t, ts, &pb.RunRequest{Language: "python", Code: code}, c.opts, func(dr *pb.DataRequest) *pb.DataResponse {
				if dr.GetMethod() == "exact" {
					return &pb.DataResponse{Id: dr.GetId(), ValueJson: "98765432109876543210987"}
				}
				v, _ := structpb.NewValue(map[string]any{"k": []any{1.5, "x"}})
				return &pb.DataResponse{Id: dr.GetId(), Answer: &pb.DataResponse_Value{Value: v}}
			})
			r := msgs[len(msgs)-1].GetEvent().GetResult()
			if r.GetValueJson() != `[98765432109876543210987,{"k":[1.5,"x"]}]` {
				t.Fatalf("result %v", r)
			}
		})
	}
}

// execute runs req over Execute with the generated client, answering each
// data request with answer, and returns every message of the stream.
func execute(t *testing.T, ts *testServer, req *pb.RunRequest, opts []connect.ClientOption, answer func(*pb.DataRequest) *pb.DataResponse) []*pb.ExecuteResponse {
	t.Helper()
	stream := ts.rpc(opts...).Execute(context.Background())
	defer stream.CloseResponse()
	if err := stream.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Start{Start: req}}); err != nil {
		t.Fatal(err)
	}
	var msgs []*pb.ExecuteResponse
	for {
		m, err := stream.Receive()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("after %d messages: %v", len(msgs), err)
		}
		msgs = append(msgs, m)
		if dr := m.GetEvent().GetDataRequest(); dr != nil {
			if err := stream.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_DataResponse{DataResponse: answer(dr)}}); err != nil {
				t.Fatal(err)
			}
		}
		if m.GetEvent().GetResult() != nil || m.GetEvent().GetError() != nil {
			_ = stream.CloseRequest()
		}
	}
	if len(msgs) < 2 || msgs[0].GetEvent() != nil {
		t.Fatalf("messages %v", msgs)
	}
	return msgs
}

// Both halves of a pair: the start is refused naming them, and a
// dataResponse that sets both rejects the step's request saying so.
func TestBothOfAPairRefused(t *testing.T) {
	ts := start(t, server.Config{Plans: slowLimits})
	for _, opts := range [][]connect.ClientOption{{connect.WithProtoJSON()}, {connect.WithGRPC()}} {
		stream := ts.rpc(opts...).Execute(context.Background())
		_ = stream.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Start{Start: &pb.RunRequest{
			Code: "return 1", Input: structpb.NewNumberValue(1), InputJson: "1",
		}}})
		_, err := stream.Receive()
		_ = stream.CloseRequest()
		_ = stream.CloseResponse()
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "input and inputJson are both set") {
			t.Errorf("start with both: %v", err)
		}
	}
	msgs := execute(t, ts, &pb.RunRequest{Code: "try { await dataProxy.request('m') } catch (e) { return e.message }"}, nil,
		func(dr *pb.DataRequest) *pb.DataResponse {
			return &pb.DataResponse{Id: dr.GetId(), ValueJson: "1", Answer: &pb.DataResponse_Value{Value: structpb.NewNumberValue(1)}}
		})
	if v := msgs[len(msgs)-1].GetEvent().GetResult().GetValue().GetStringValue(); !strings.Contains(v, "dataResponse.value and dataResponse.valueJson are both set") {
		t.Errorf("the step saw %q", v)
	}
}

// A refused request over HTTP+JSON carries the contract's Error as plain
// JSON in "error": a plain net/http client against a real server gets it
// once, without Connect's base64 detail, which a Connect client (its
// Connect-Protocol-Version header) still gets and reads.
func TestReadableErrorDetails(t *testing.T) {
	ts := start(t, authConfig())
	for _, c := range []struct {
		name, body, key string
		status          int
		rpcCode         string
		error           map[string]any
	}{
		{"invalid argument", `{"code": "return 1", "language": "cobol"}`, acmeKey, 400, "invalid_argument",
			map[string]any{"code": "VALIDATION", "message": `unknown language "cobol"`}},
		{"limit above the plan", `{"code": "return 1", "limits": {"maxCodeBytes": 2000000000}}`, acmeKey, 400, "invalid_argument",
			map[string]any{"code": "VALIDATION", "message": "limits.maxCodeBytes=2000000000"}},
		{"not a RunRequest", `{"cod": "return 1"}`, acmeKey, 400, "invalid_argument",
			map[string]any{"code": "VALIDATION"}},
		{"permission denied", `{"code": "return 1", "plan": "pro"}`, acmeKey, 403, "permission_denied",
			map[string]any{"code": "VALIDATION", "message": `may not use plan "pro"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, resp, raw := ts.post(t, runPath, c.body, "Authorization", "Bearer "+c.key)
			if status != c.status || dig(resp, "code") != c.rpcCode {
				t.Fatalf("%d %s", status, raw)
			}
			e, _ := dig(resp, "error").(map[string]any)
			for k, want := range c.error {
				if got, _ := e[k].(string); !strings.Contains(got, want.(string)) {
					t.Errorf("error.%s = %q, want %q in %s", k, got, want, raw)
				}
			}
			if msg, _ := e["message"].(string); msg == "" || !strings.Contains(raw, `"message":`) {
				t.Errorf("no message: %s", raw)
			}
			// A plain client gets the Error once: no base64 detail.
			if dig(resp, "details") != nil {
				t.Errorf("a plain client got Connect's details: %s", raw)
			}
			// A Connect client (Connect-Protocol-Version) keeps the detail.
			_, resp, raw = ts.post(t, runPath, c.body, "Authorization", "Bearer "+c.key, "Connect-Protocol-Version", "1")
			if e, _ := dig(resp, "error").(map[string]any); e == nil {
				t.Errorf("a Connect client got no error member: %s", raw)
			}
			if c.name != "not a RunRequest" && dig(resp, "details", 0, "type") != "stepbox.v1.Error" {
				t.Errorf("a Connect client lost Connect's detail: %s", raw)
			}
		})
	}
	// Unauthenticated has no contract Error: Connect's body as it is.
	status, resp, raw := ts.post(t, runPath, `{"code": "return 1"}`)
	if status != 401 || dig(resp, "code") != "unauthenticated" || dig(resp, "error") != nil {
		t.Errorf("%d %s", status, raw)
	}
	// A Connect client still reads the detail: the Go client's error is the
	// contract's.
	_, err := ts.client(client.Options{APIKey: acmeKey}).Run(context.Background(), sandbox.Request{Code: "return 1", Language: "cobol"}, nil)
	var se *sandbox.Error
	if !errors.As(err, &se) || se.Code != sandbox.CodeValidation || !strings.Contains(se.Message, "cobol") {
		t.Errorf("client: %#v", err)
	}
	// Successful answers pass untouched.
	if status, resp, raw := ts.post(t, runPath, `{"code": "return 1"}`, "Authorization", "Bearer "+acmeKey); status != 200 || dig(resp, "error") != nil {
		t.Errorf("%d %s", status, raw)
	}
}

// A TypeScript compile error and a JavaScript syntax error are the same
// shape on every protocol: an accepted run (HTTP 200, Execute's accepted
// message) ending in error.code VALIDATION, the message once, the position
// once.
func TestStepFaultsHaveOneShape(t *testing.T) {
	ts := start(t, server.Config{Plans: slowLimits})
	steps := []struct {
		lang, code string
		line       int32
	}{
		{"javascript", "const ok = 1;\nconst x = ;", 2},
		{"typescript", "const ok: number = 1;\nconst x: = 2;", 2},
	}
	check := func(t *testing.T, how string, e *pb.Error, line int32) {
		t.Helper()
		p := e.GetPosition()
		if e.GetCode() != "VALIDATION" || p == nil || p.GetLine() != line || p.GetColumn() == 0 || e.GetMessage() == "" {
			t.Fatalf("%s: %v", how, e)
		}
		pos := []string{"2:", "line 2", "(line"}
		for _, s := range pos {
			if strings.Contains(e.GetMessage(), s) {
				t.Errorf("%s: the message %q repeats the position", how, e.GetMessage())
			}
		}
	}
	for _, s := range steps {
		t.Run(s.lang, func(t *testing.T) {
			// HTTP+JSON, as curl.
			status, resp, raw := ts.post(t, runPath, `{"language": "`+s.lang+`", "code": `+jsonString(s.code)+`}`)
			if status != 200 || dig(resp, "result") != nil {
				t.Fatalf("HTTP+JSON: %d %s", status, raw)
			}
			var e pb.Error
			b, _ := json.Marshal(dig(resp, "error"))
			if err := protojson.Unmarshal(b, &e); err != nil {
				t.Fatalf("HTTP+JSON: %v %s", err, raw)
			}
			check(t, "HTTP+JSON", &e, s.line)
			want := &e
			// Connect and gRPC, unary and streaming: the same error.
			for _, opts := range [][]connect.ClientOption{nil, {connect.WithGRPC()}} {
				resp, err := ts.rpc(opts...).Run(context.Background(), connect.NewRequest(&pb.RunRequest{Language: s.lang, Code: s.code}))
				if err != nil {
					t.Fatalf("Run %v: %v", opts, err)
				}
				got := resp.Msg.GetError()
				check(t, "Run", got, s.line)
				if !sameError(got, want) {
					t.Errorf("Run: %v, want %v", got, want)
				}
				msgs := execute(t, ts, &pb.RunRequest{Language: s.lang, Code: s.code}, opts, nil)
				if len(msgs) != 2 {
					t.Fatalf("Execute: %v", msgs)
				}
				got = msgs[1].GetEvent().GetError()
				check(t, "Execute", got, s.line)
				if !sameError(got, want) {
					t.Errorf("Execute: %v, want %v", got, want)
				}
			}
		})
	}
}

// sameError compares errors but for their stats.
func sameError(x, y *pb.Error) bool {
	return x.GetCode() == y.GetCode() && x.GetMessage() == y.GetMessage() && x.GetStack() == y.GetStack() &&
		reflect.DeepEqual([]int32{x.GetPosition().GetLine(), x.GetPosition().GetColumn()}, []int32{y.GetPosition().GetLine(), y.GetPosition().GetColumn()}) &&
		len(x.GetDiagnostics()) == len(y.GetDiagnostics())
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestTimeZoneOverTheWire: a request's timeZone and locale, and the
// server's defaults and a plan's from its YAML configuration, reach the
// step.
func TestTimeZoneOverTheWire(t *testing.T) {
	cfg, err := server.ParseConfig([]byte(`
plans:
  default: {wallMs: 60000, cpuMs: 60000}
  tokyo: {wallMs: 60000, cpuMs: 60000}
defaults: {timeZone: Europe/Paris, locale: fr-FR}
planDefaults:
  tokyo: {timeZone: Asia/Tokyo}
`))
	if err != nil {
		t.Fatal(err)
	}
	ts := start(t, cfg)
	const code = `return [new Date(Date.UTC(2026, 6, 1, 12)).getHours(), Intl.DateTimeFormat().resolvedOptions().timeZone, new Intl.PluralRules().resolvedOptions().locale]`
	for _, c := range []struct{ extra, want string }{
		{``, `[14,"Europe/Paris","fr-FR"]`},
		{`,"plan":"tokyo"`, `[21,"Asia/Tokyo","fr-FR"]`},
		{`,"timeZone":"America/New_York","locale":"de"`, `[8,"America/New_York","de"]`},
	} {
		body, _ := json.Marshal(code)
		status, resp, raw := postExact(t, ts, `{"code":`+string(body)+c.extra+`}`)
		if status != 200 || jsonOf(dig(resp, "result", "value")) != c.want {
			t.Errorf("%s: %d %s, want %s", c.extra, status, raw, c.want)
		}
	}
	status, resp, raw := postExact(t, ts, `{"code":"return 1","timeZone":"Moon/Tranquility"}`)
	if status != 400 || dig(resp, "error", "code") != "VALIDATION" || !strings.Contains(raw, `timeZone: \"Moon/Tranquility\" is not an IANA time zone name`) {
		t.Errorf("unknown zone: %d %s", status, raw)
	}
	bad, err := server.ParseConfig([]byte("defaults: {timeZone: Europe/Pariss}\nplanDefaults: {gold: {locale: x-}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Validate(); err == nil ||
		!strings.Contains(err.Error(), `defaults.timeZone: "Europe/Pariss" is not an IANA time zone name`) ||
		!strings.Contains(err.Error(), `planDefaults.gold: "gold" is not in plans`) || !strings.Contains(err.Error(), `planDefaults.gold.locale:`) {
		t.Errorf("bad defaults: %v", err)
	}
}

// TestCurlWithoutContentType: the literal curl -d, which sends
// application/x-www-form-urlencoded, and a POST without a Content-Type run
// as JSON, with the same strict decoding; a browser's such POST (Origin)
// and a type the server does not read are a 415 whose JSON body says what
// to send, not Connect's empty one.
func TestCurlWithoutContentType(t *testing.T) {
	ts := start(t, server.Config{})
	post := func(path, contentType, body string, header ...string) (int, string, string) {
		t.Helper()
		status, ct, raw := ts.send(t, path, contentType, body, header...)
		return status, ct, string(raw)
	}
	const curl = `{"language":"javascript","code":"return input.a + 1","input":{"a":41}}`
	for _, ct := range []string{"application/x-www-form-urlencoded", ""} {
		status, _, raw := post(runPath, ct, curl)
		if status != 200 || !strings.Contains(raw, `"value":42`) {
			t.Errorf("Content-Type %q: %d %s", ct, status, raw)
		}
	}
	status, _, raw := post("/stepbox.v1.StepboxService/Health", "application/x-www-form-urlencoded", `{}`)
	if status != 200 || !strings.Contains(raw, `"status":"SERVING"`) {
		t.Errorf("Health: %d %s", status, raw)
	}
	// Decoded as application/json is: a misspelt field is an error, in the
	// same shape.
	_, _, want := post(runPath, "application/json", `{"code":"return 1","limits":{"wallMS":5}}`)
	if status, _, raw := post(runPath, "application/x-www-form-urlencoded", `{"code":"return 1","limits":{"wallMS":5}}`); status != 400 || raw != want {
		t.Errorf("a bad body: %d %s\nwant 400 %s", status, raw, want)
	}

	refused := func(name, contentType, what string, header ...string) {
		t.Helper()
		status, rct, raw := post(runPath, contentType, curl, header...)
		msg := "the request has " + what + `, which the server does not read here: send Content-Type: application/json with a JSON body (or application/proto, or a gRPC or gRPC-Web type)`
		want := `{"code":"invalid_argument","error":{"code":"VALIDATION","message":"` + msg + `"},"message":"` + msg + `"}` + "\n"
		if status != http.StatusUnsupportedMediaType || rct != "application/json" || raw != want {
			t.Errorf("%s: %d %s %s\nwant 415 %s", name, status, rct, raw, want)
		}
	}
	refused("a browser's form", "application/x-www-form-urlencoded", `Content-Type \"application/x-www-form-urlencoded\"`, "Origin", "https://evil.example")
	refused("a browser's untyped body", "", "no Content-Type", "Sec-Fetch-Site", "cross-site")
	refused("text", "text/plain", `Content-Type \"text/plain\"`)
}

// TestDecodeErrorPlain: a body that does not decode is refused in the
// codec's words and protobuf's position, without the libraries' prefixes
// ("unmarshal message: ", "proto: "), in Connect's message and in error.
func TestDecodeErrorPlain(t *testing.T) {
	ts := start(t, server.Config{})
	status, _, raw := postExact(t, ts, `{"code":"return 1","limits":{"wallMs":"fast"}}`)
	msg := `the body is not a valid RunRequest: (line 1:39): invalid value for int32 field wallMs: \"fast\"`
	want := `{"code":"invalid_argument","error":{"code":"VALIDATION","message":"` + msg + `"},"message":"` + msg + `"}` + "\n"
	if status != 400 || raw != want {
		t.Fatalf("%d %s\nwant 400 %s", status, raw, want)
	}
}
