package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
	"github.com/stepbox/stepbox/proto/stepbox/v1/stepboxv1connect"
)

func TestRunHTTPJSON(t *testing.T) {
	ts := start(t, server.Config{})
	status, resp, raw := ts.post(t, runPath, `{
		"code": "reportStatus({stage: 1}); const u = await dataProxy.request('user', {id: input.id}); let e; try { await dataProxy.request('nope') } catch (x) { e = x.message } console.log('got', u.name); return {name: u.name, e}",
		"input": {"id": 7},
		"data": {"user": {"name": "Ada"}}
	}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, raw)
	}
	if got := jsonOf(dig(resp, "result", "value")); got != `{"e":"no answer for data request \"nope\": the request's data has none for this method","name":"Ada"}` {
		t.Fatalf("value %v\n%s", got, raw)
	}
	var kinds []string
	for _, e := range dig(resp, "events").([]any) {
		for k := range e.(map[string]any) {
			kinds = append(kinds, k)
		}
	}
	if strings.Join(kinds, ",") != "status,dataRequest,dataRequest,console" {
		t.Fatalf("events %v\n%s", kinds, raw)
	}
	if jsonOf(dig(resp, "events", 1, "dataRequest", "params")) != `{"id":7}` || jsonOf(dig(resp, "events", 0, "status")) != `{"stage":1}` || dig(resp, "events", 3, "console", "text") != "got Ada" {
		t.Fatalf("events: %s", raw)
	}
	if id, _ := dig(resp, "runId").(string); !strings.HasPrefix(id, "run_") {
		t.Fatalf("runId %q", id)
	}
	if dig(resp, "result", "stats", "dataRequests") != 2.0 {
		t.Fatalf("stats: %s", raw)
	}
	// The run's log lines carry its id.
	id := dig(resp, "runId").(string)
	eventually(t, 2*time.Second, func() string {
		logs := ts.logs.String()
		if !strings.Contains(logs, `"msg":"run","run":"`+id+`"`) || !strings.Contains(logs, `"msg":"rpc","procedure":"Run","code":"ok"`) {
			return "no run/rpc log lines:\n" + logs
		}
		return ""
	})
}

func TestRunGRPC(t *testing.T) {
	ts := start(t, server.Config{})
	resp, err := ts.rpc(connect.WithGRPC()).Run(context.Background(), connect.NewRequest(&pb.RunRequest{
		Code:  "return (await dataProxy.request('add', [input, 2])) * 10",
		Input: structpb.NewNumberValue(40),
		Data:  map[string]*structpb.Value{"add": structpb.NewNumberValue(42)},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if v := resp.Msg.GetResult().GetValue(); v.GetNumberValue() != 420 || resp.Msg.GetResult().GetValueJson() != "" {
		t.Fatalf("value %q (%v)", v, resp.Msg)
	}
	if resp.Header().Get(server.RunIDHeader) != resp.Msg.GetRunId() {
		t.Fatalf("header %q, runId %q", resp.Header().Get(server.RunIDHeader), resp.Msg.GetRunId())
	}

	// gRPC-Web, as a browser speaks it: the same handler.
	resp, err = ts.rpc(connect.WithGRPCWeb()).Run(context.Background(), connect.NewRequest(&pb.RunRequest{Code: "return 'web'"}))
	if err != nil || resp.Msg.GetResult().GetValue().GetStringValue() != "web" {
		t.Fatalf("gRPC-Web: %v %v", resp, err)
	}

	// The Go client over gRPC, with a failing step: the run's error, with
	// its position, not an RPC error.
	c := ts.client(client.Options{GRPC: true})
	_, err = c.Run(context.Background(), sandbox.Request{Code: "const x = 1;\nthrow new TypeError('boom')"}, nil)
	var se *sandbox.Error
	if !errors.As(err, &se) || se.Code != sandbox.CodeRuntime || se.Message != "TypeError: boom" || se.Position == nil || se.Position.Line != 2 {
		t.Fatalf("got %#v", err)
	}
}

func TestRunRefusals(t *testing.T) {
	plan := slowLimits["default"]
	plan.MaxCodeBytes = 100
	ts := start(t, server.Config{Plans: map[string]sandbox.Limits{"default": plan}, MaxRequestBytes: 4096})
	for _, tc := range []struct {
		name, body string
		status     int
		code, msg  string
	}{
		{"malformed JSON", `{"code": `, 400, "invalid_argument", ""},
		{"unknown field", `{"cod": "return 1"}`, 400, "invalid_argument", "cod"},
		{"inputJson not JSON text", `{"code": "return 1", "inputJson": "{"}`, 400, "invalid_argument", "inputJson is not valid JSON text"},
		{"dataJson not JSON text", `{"code": "return 1", "dataJson": {"m": "nope"}}`, 400, "invalid_argument", `dataJson["m"] is not valid JSON text`},
		{"input and inputJson", `{"code": "return 1", "input": 1, "inputJson": "1"}`, 400, "invalid_argument", "input and inputJson are both set"},
		{"data and dataJson", `{"code": "return 1", "data": {"m": 1}, "dataJson": {"n": "1"}}`, 400, "invalid_argument", "data and dataJson are both set"},
		{"unknown plan", `{"code": "return 1", "plan": "gold"}`, 400, "invalid_argument", `unknown plan "gold"`},
		{"limit above plan", `{"code": "return 1", "limits": {"maxCodeBytes": 200}}`, 400, "invalid_argument", "limits.maxCodeBytes=200"},
		{"code too large", `{"code": "` + strings.Repeat("1", 101) + `"}`, 400, "invalid_argument", "maxCodeBytes=100"},
		{"unknown language", `{"code": "1", "language": "cobol"}`, 400, "invalid_argument", `unknown language "cobol"`},
		{"too large", `{"code": "` + strings.Repeat(" ", 5000) + `"}`, 413, "resource_exhausted", "maxRequestBytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, resp, raw := ts.post(t, runPath, tc.body)
			if status != tc.status || dig(resp, "code") != tc.code || !strings.Contains(fmt.Sprint(dig(resp, "message")), tc.msg) {
				t.Fatalf("status %d, body %s; want %d %s %q", status, raw, tc.status, tc.code, tc.msg)
			}
		})
	}
	// The server keeps serving.
	if status, resp, raw := ts.post(t, runPath, `{"code": "return 1"}`); status != 200 || jsonOf(dig(resp, "result", "value")) != "1" {
		t.Fatalf("after the refusals: %d %s", status, raw)
	}
	// Refusals carry the contract's error to the Go client.
	_, err := ts.client(client.Options{}).Run(context.Background(), sandbox.Request{Code: "return 1", Plan: "gold"}, nil)
	if !errors.Is(err, sandbox.ErrValidation) {
		t.Fatalf("unknown plan through the client: %v", err)
	}
}

func TestExecuteAnswersDataMidStream(t *testing.T) {
	ts := start(t, server.Config{Plans: slowLimits})
	for _, grpc := range []bool{false, true} {
		t.Run(fmt.Sprintf("grpc=%v", grpc), func(t *testing.T) {
			c := ts.client(client.Options{GRPC: grpc})
			st, err := c.Submit(context.Background(), sandbox.Request{Code: `
reportStatus("asking");
const a = await dataProxy.request("double", 21);
let b; try { await dataProxy.request("fail") } catch (e) { b = e.message }
console.log("answers", a, b);
return {a, b};`})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(st.ID(), "run_") {
				t.Fatalf("run id %q", st.ID())
			}
			var kinds []string
			terminals := 0
			for ev := range st.Events() {
				kinds = append(kinds, string(ev.Kind))
				if ev.Terminal() {
					terminals++
				}
				if dr := ev.DataRequest; dr != nil {
					switch dr.Method {
					case "double":
						var n int
						json.Unmarshal(dr.Params, &n)
						if err := st.Respond(dr.ID, n*2); err != nil {
							t.Error(err)
						}
					default:
						st.RespondError(dr.ID, "no such thing")
					}
				}
			}
			res, err := st.Wait()
			if err != nil || string(res.Value) != `{"a":42,"b":"no such thing"}` {
				t.Fatalf("%s %v", res.Value, err)
			}
			if got := strings.Join(kinds, ","); got != "status,data_request,data_request,console,result" || terminals != 1 {
				t.Fatalf("events %s (%d terminal)", got, terminals)
			}
		})
	}
}

// TestExecuteStreamShape checks the raw stream: an "accepted" message, the
// events, one terminal event, then the end of the stream.
func TestExecuteStreamShape(t *testing.T) {
	ts := start(t, server.Config{})
	stream := ts.rpc(connect.WithGRPC()).Execute(context.Background())
	if err := stream.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Start{Start: &pb.RunRequest{Code: "console.log('x'); return 7"}}}); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseRequest(); err != nil {
		t.Fatal(err)
	}
	var msgs []*pb.ExecuteResponse
	for {
		m, err := stream.Receive()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	stream.CloseResponse()
	if len(msgs) != 3 || msgs[0].GetEvent() != nil || msgs[0].GetRunId() == "" ||
		msgs[1].GetEvent().GetConsole().GetText() != "x" || msgs[2].GetEvent().GetResult().GetValue().GetNumberValue() != 7 ||
		msgs[2].GetRunId() != msgs[0].GetRunId() {
		t.Fatalf("messages %v", msgs)
	}

	// A stream that starts with anything but start is refused.
	stream = ts.rpc().Execute(context.Background())
	stream.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Abort{Abort: &pb.Abort{}}})
	_, err := stream.Receive()
	stream.CloseRequest()
	stream.CloseResponse()
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("abort first: %v", err)
	}
}

func TestExecuteAbort(t *testing.T) {
	ts := start(t, server.Config{Plans: slowLimits})
	st, err := ts.client(client.Options{}).Submit(context.Background(), sandbox.Request{Code: "reportStatus('looping'); while (true) {}"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ev := range st.Events() {
		n++
		if ev.Kind == sandbox.EventStatus {
			st.Abort()
		}
	}
	if _, err := st.Wait(); !errors.Is(err, sandbox.ErrAborted) || n != 2 {
		t.Fatalf("%d events, %v", n, err)
	}
}

func TestExecuteClientGoneAbortsRun(t *testing.T) {
	ts := start(t, server.Config{Plans: slowLimits})
	aborted := func(n int) func() string {
		return func() string {
			want := fmt.Sprintf(`stepbox_runs_total{language="javascript",outcome="ABORTED",tenant="none"} %d`, n)
			if _, m := ts.get(t, "/metrics"); !strings.Contains(m, want) {
				return "the run was not aborted:\n" + grep(m, "stepbox_runs")
			}
			return ""
		}
	}
	const code = "reportStatus(1); await new Promise(() => setInterval(() => {}, 1000))"

	// The caller cancels its context.
	ctx, cancel := context.WithCancel(context.Background())
	st, err := ts.client(client.Options{GRPC: true}).Submit(ctx, sandbox.Request{Code: code})
	if err != nil {
		t.Fatal(err)
	}
	<-st.Events()
	cancel()
	for range st.Events() {
	}
	eventually(t, 10*time.Second, aborted(1))

	// The client's connection drops.
	var mu sync.Mutex
	var conns []net.Conn
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		return c, err
	}}
	defer tr.CloseIdleConnections()
	stream := stepboxv1connect.NewStepboxServiceClient(&http.Client{Transport: tr}, ts.url, connect.WithGRPC()).Execute(context.Background())
	if err := stream.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Start{Start: &pb.RunRequest{Code: code}}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // accepted, then the status event: the step is running
		if _, err := stream.Receive(); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	for _, c := range conns {
		c.Close()
	}
	mu.Unlock()
	eventually(t, 10*time.Second, aborted(2))
	stream.CloseRequest()
	stream.CloseResponse()
}

func TestCompileTypeScriptAndHealth(t *testing.T) {
	ts := start(t, server.Config{})
	c := ts.client(client.Options{})
	comp, err := c.CompileTypeScript(context.Background(), "const n: number = 41;\nreturn n + 1")
	if err != nil || !strings.Contains(comp.JS, "41") || comp.Map == "" {
		t.Fatalf("%+v %v", comp, err)
	}
	res, err := c.Run(context.Background(), sandbox.Request{Language: sandbox.TypeScript, Compiled: &comp}, nil)
	if err != nil || string(res.Value) != "42" {
		t.Fatalf("%s %v", res.Value, err)
	}
	_, err = c.CompileTypeScript(context.Background(), "const n: number = ;\nlet = 2")
	var se *sandbox.Error
	if !errors.As(err, &se) || se.Code != sandbox.CodeValidation || len(se.Diagnostics) == 0 || se.Diagnostics[0].Line != 1 {
		t.Fatalf("%#v", err)
	}
	h, err := c.Health(context.Background())
	if err != nil || h.GetStatus() != "SERVING" || h.GetVersion() != "test" {
		t.Fatalf("%v %v", h, err)
	}
}

func grep(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
