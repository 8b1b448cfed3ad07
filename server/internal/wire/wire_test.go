package wire_test

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server/internal/wire"

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
		Egress: &pb.EgressPolicy{UnsafeAllowAddresses: []string{"nope"}},
		Data:   map[string]string{"m": "{"},
	})
	if err == nil || !strings.Contains(err.Error(), "egress.unsafeAllowAddresses[0]") || !strings.Contains(err.Error(), `data["m"]`) {
		t.Fatal(err)
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
