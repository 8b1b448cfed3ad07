package wire_test

import (
	"encoding/json"
	"math"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server/internal/wire"

	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
)

func TestRequestRoundTrip(t *testing.T) {
	req := sandbox.Request{
		Language: sandbox.TypeScript,
		Code:     "return 1",
		Compiled: &sandbox.Compiled{JS: "return 1", Map: "{}"},
		Input:    json.RawMessage(`{"big": 12345678901234567890, "f": 0.1}`),
		Plan:     "pro",
		Limits: sandbox.Limits{MemoryMB: 1, CPUMs: 2, WallMs: 3, MaxCodeBytes: 4, MaxResultBytes: 5, MaxDataRequests: 6,
			MaxDataBytes: 7, MaxStatusEvents: 8, MaxConsoleEvents: 9, MaxConsoleBytes: 10, MaxFetchRequests: 11, MaxFetchBytes: 12},
		Tenant:   "acme",
		Modules:  []string{"duckdb"},
		Metadata: map[string]string{"k": "v"},
		Egress: &sandbox.EgressPolicy{Schemes: []string{"https"}, Hosts: []string{"a.example"}, Ports: []int{443}, Methods: []string{"GET"},
			MaxRequests: 1, MaxRequestBodyBytes: 2, MaxResponseBytes: 3, TimeoutMs: 4, MaxRedirects: -1,
			UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
		Secrets: []sandbox.Secret{
			{Origin: "http://a.example:8080", Header: "Authorization", Value: "x", UnsafeAllowHTTP: true},
			{Host: "b.example", Header: "X-Key", Value: "y"},
		},
	}
	data := map[string]json.RawMessage{"m": json.RawMessage(`[1,2]`)}
	p, err := wire.RequestToProto(req, data)
	if err != nil {
		t.Fatal(err)
	}
	got, gotData, err := wire.RequestFromProto(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, req) || !reflect.DeepEqual(gotData, data) {
		t.Fatalf("got %+v %v\nwant %+v %v", got, gotData, req, data)
	}
	// Every Limits field crosses: a new one must be added to the schema.
	if n := reflect.TypeFor[sandbox.Limits]().NumField(); n != 12 {
		t.Fatalf("sandbox.Limits has %d fields; the wire has 12", n)
	}
	if n := reflect.TypeFor[sandbox.Secret]().NumField(); n != 5 {
		t.Fatalf("sandbox.Secret has %d fields; the wire has 5", n)
	}
	if n := reflect.TypeFor[sandbox.Stats]().NumField(); n != 12 {
		t.Fatalf("sandbox.Stats has %d fields; the wire has 12", n)
	}
}

func TestRequestFromProtoNamesBadFields(t *testing.T) {
	_, _, err := wire.RequestFromProto(&pb.RunRequest{
		Egress:    &pb.EgressPolicy{UnsafeAllowAddresses: []string{"nope"}},
		DataJson:  map[string]string{"m": "{"},
		InputJson: "[1,",
	})
	for _, want := range []string{"egress.unsafeAllowAddresses[0]", `dataJson["m"] is not valid JSON text`, "inputJson is not valid JSON text", "(at byte 3)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q", err, want)
		}
	}
	// A value and its twin: one, not both.
	_, _, err = wire.RequestFromProto(&pb.RunRequest{
		Input: structpb.NewNumberValue(1), InputJson: "1",
		Data: map[string]*structpb.Value{"m": structpb.NewNullValue()}, DataJson: map[string]string{"m": "null"},
	})
	for _, want := range []string{"input and inputJson are both set", "data and dataJson are both set"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want %q", err, want)
		}
	}
	// Values become JSON text for the engine.
	req, data, err := wire.RequestFromProto(&pb.RunRequest{
		Input: mustValue(t, `{"b": [1, 2.5, "<&>"], "a": null}`),
		Data:  map[string]*structpb.Value{"m": mustValue(t, `true`)},
	})
	if err != nil || string(req.Input) != `{"a":null,"b":[1,2.5,"<&>"]}` || string(data["m"]) != "true" {
		t.Fatalf("%s %s %v", req.Input, data["m"], err)
	}
	if _, err := wire.LimitsToProto(sandbox.Limits{WallMs: 1 << 40}); err == nil || !strings.Contains(err.Error(), "limits.wallMs") {
		t.Fatal(err)
	}
}

func TestEventRoundTrip(t *testing.T) {
	st := sandbox.Stats{WallMs: 1.5, CPUMs: 2, CodeMs: 3, QueueMs: 4, HeapMB: 5, DataRequests: 6, DataBytes: 7, FetchRequests: 8,
		FetchBytes: 9, ConsoleEvents: 10, ConsoleDropped: 11, StatusEvents: 12}
	for _, ev := range []sandbox.Event{
		{Kind: sandbox.EventStatus, Status: json.RawMessage(`{"a":1}`)},
		{Kind: sandbox.EventConsole, Console: &sandbox.ConsoleLine{Level: "warn", Text: "x"}},
		{Kind: sandbox.EventDataRequest, DataRequest: &sandbox.DataRequest{ID: 3, Method: "m", Params: json.RawMessage(`null`)}},
		{Kind: sandbox.EventFetch, Fetch: json.RawMessage(`{"decision":"deny"}`)},
		{Kind: sandbox.EventResult, Result: &sandbox.Result{Value: json.RawMessage(`[1]`), Stats: st}},
		{Kind: sandbox.EventError, Error: &sandbox.Error{Code: sandbox.CodeValidation, Limit: "maxCodeBytes", Message: "m", Stack: "s",
			Position: &sandbox.Position{Line: 1, Column: 2}, Diagnostics: []sandbox.Diagnostic{{Line: 3, Column: 4, Message: "d"}}, Stats: st}},
	} {
		got, ok := wire.EventFromProto(wire.EventToProto(ev))
		if !ok || !reflect.DeepEqual(got, ev) {
			t.Errorf("%s: got %+v, want %+v", ev.Kind, got, ev)
		}
	}
}

func mustValue(t *testing.T, text string) *structpb.Value {
	t.Helper()
	v, _, err := wire.ToValue([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The rule of the .proto's "Precision": a number is exact when its nearest
// double, written back in shortest form, is the same number.
func TestToValueExactness(t *testing.T) {
	for _, c := range []struct {
		text  string
		exact bool
	}{
		{`42`, true}, {`-0`, true}, {`0.1`, true}, {`1.50`, true}, {`15e-1`, true}, {`1e300`, true}, {`1E+2`, true},
		{`9007199254740992`, true}, {`-9007199254740992`, true}, {`123456789012345680000`, true},
		{`9007199254740993`, false}, {`12345678901234567890`, false}, {`0.1000000000000000055`, false},
		{`1e400`, false}, {`1e-400`, false}, {`{"a": [1, {"b": 12345678901234567890123}]}`, false},
		{`{"a": [1, {"b": 2}], "s": "12345678901234567890123"}`, true},
	} {
		_, exact, err := wire.ToValue([]byte(c.text))
		if err != nil || exact != c.exact {
			t.Errorf("ToValue(%s): exact %v, %v; want %v", c.text, exact, err, c.exact)
		}
	}
	// Beyond the double's range: a string holding the number's text.
	v, _, _ := wire.ToValue([]byte(`[1e400]`))
	if s := v.GetListValue().GetValues()[0].GetStringValue(); s != "1e400" {
		t.Errorf("1e400 became %v", v)
	}
	for _, bad := range []string{``, `{`, `1 2`, `[1,]`, `nul`} {
		if _, _, err := wire.ToValue([]byte(bad)); err == nil {
			t.Errorf("ToValue(%q): no error", bad)
		}
	}
	// Writing back: sorted keys, JavaScript's numbers, NaN as null.
	v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{
		structpb.NewNumberValue(1e21), structpb.NewNumberValue(1e20), structpb.NewNumberValue(math.NaN()),
		structpb.NewNumberValue(math.Inf(-1)), structpb.NewNumberValue(-0.5), nil, structpb.NewStringValue("é\n\u2028"),
	}})
	if got := string(wire.FromValue(v)); got != `[1e+21,100000000000000000000,null,null,-0.5,null,"é\n\u2028"]` {
		t.Errorf("FromValue: %s", got)
	}
}

// Answers carry a Value always and the twin exactly when the Value is not
// exact; reading prefers the twin, so nothing is lost either way.
func TestAnswersKeepBigNumbers(t *testing.T) {
	big := json.RawMessage(`{"n": 12345678901234567890, "f": 0.1}`)
	r := wire.ResultToProto(sandbox.Result{Value: big})
	if r.GetValueJson() != string(big) || r.GetValue().GetStructValue().GetFields()["f"].GetNumberValue() != 0.1 {
		t.Fatalf("%v", r)
	}
	if got := wire.ResultFromProto(r).Value; string(got) != string(big) {
		t.Fatalf("read back %s", got)
	}
	small := wire.ResultToProto(sandbox.Result{Value: json.RawMessage(`{"n": 1, "f": 0.1}`)})
	if small.GetValueJson() != "" || string(wire.ResultFromProto(small).Value) != `{"f":0.1,"n":1}` {
		t.Fatalf("%v", small)
	}
	ev := wire.EventToProto(sandbox.Event{Kind: sandbox.EventStatus, Status: big})
	if ev.GetStatusJson() != string(big) || ev.GetStatus().GetStructValue() == nil {
		t.Fatalf("%v", ev)
	}
	ev = wire.EventToProto(sandbox.Event{Kind: sandbox.EventDataRequest, DataRequest: &sandbox.DataRequest{ID: 1, Method: "m", Params: big}})
	if got, _ := wire.EventFromProto(ev); ev.GetDataRequest().GetParamsJson() != string(big) || string(got.DataRequest.Params) != string(big) {
		t.Fatalf("%v", ev)
	}
	// A DataResponse: value, valueJson or error; valueJson with another
	// is refused, naming the fields.
	for _, c := range []struct {
		d    *pb.DataResponse
		want string
		err  string
	}{
		{&pb.DataResponse{}, "null", ""},
		{&pb.DataResponse{ValueJson: "12345678901234567890"}, "12345678901234567890", ""},
		{&pb.DataResponse{Answer: &pb.DataResponse_Value{Value: structpb.NewBoolValue(true)}}, "true", ""},
		{&pb.DataResponse{ValueJson: "1", Answer: &pb.DataResponse_Value{Value: structpb.NewBoolValue(true)}}, "", "dataResponse.value and dataResponse.valueJson are both set"},
		{&pb.DataResponse{ValueJson: "1", Answer: &pb.DataResponse_Error{Error: "x"}}, "", "valueJson and error are both set"},
		{&pb.DataResponse{ValueJson: "{"}, "", "dataResponse.valueJson is not valid JSON text"},
	} {
		a, err := wire.DataAnswerFromProto(c.d)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: %v, want %q", c.d, err, c.err)
			}
			continue
		}
		if err != nil || string(a.Value) != c.want {
			t.Errorf("%v: %s %v, want %s", c.d, a.Value, err, c.want)
		}
	}
}
