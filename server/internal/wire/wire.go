// Package wire converts between the run contract's types (package contract) and the wire
// schema of proto/stepbox/v1, in both directions: the server reads requests
// and writes events with it, the Go client does the opposite. JSON values
// travel as google.protobuf.Value with a *_json twin of exact JSON text
// (see "Precision" in the .proto, and jsonvalue.go).
package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"

	"github.com/stepbox/stepbox/contract"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
)

// RequestFromProto converts a RunRequest into a contract.Request and the
// data answers of a unary Run. Errors name the field at fault; the engine
// checks everything else (plans, limits, input JSON) when the run is
// submitted.
func RequestFromProto(r *pb.RunRequest) (contract.Request, map[string]json.RawMessage, error) {
	var errs []error
	req := contract.Request{
		Language: contract.Language(r.GetLanguage()),
		Code:     r.GetCode(),
		Plan:     r.GetPlan(),
		Tenant:   r.GetTenant(),
		Modules:  r.GetModules(),
		Metadata: r.GetMetadata(),
		Limits:   LimitsFromProto(r.GetLimits()),
		TimeZone: r.GetTimeZone(),
		Locale:   r.GetLocale(),
	}
	if c := r.GetCompiled(); c != nil {
		req.Compiled = &contract.Compiled{JS: c.GetJs(), Map: c.GetMap()}
	}
	in, err := request("input", r.GetInput(), "inputJson", r.GetInputJson())
	if err != nil {
		errs = append(errs, err)
	}
	req.Input = in
	if e := r.GetEgress(); e != nil {
		p, err := EgressFromProto(e)
		if err != nil {
			errs = append(errs, err)
		}
		req.Egress = &p
	}
	for _, s := range r.GetSecrets() {
		req.Secrets = append(req.Secrets, contract.Secret{
			Origin: s.GetOrigin(),
			//lint:ignore SA1019 the deprecated host form still crosses the wire
			Host:   s.GetHost(),
			Header: s.GetHeader(), Value: s.GetValue(), UnsafeAllowHTTP: s.GetUnsafeAllowHttp(),
		})
	}
	var data map[string]json.RawMessage
	d, dj := r.GetData(), r.GetDataJson()
	switch {
	case len(d) > 0 && len(dj) > 0:
		errs = append(errs, errors.New("data and dataJson are both set: send the answers once (data as JSON values, or dataJson as exact JSON text)"))
	case len(d) > 0:
		data = make(map[string]json.RawMessage, len(d))
		for method, v := range d {
			data[method] = FromValue(v)
		}
	case len(dj) > 0:
		data = make(map[string]json.RawMessage, len(dj))
		for method, v := range dj {
			if err := validJSON([]byte(v)); err != nil {
				errs = append(errs, fmt.Errorf("dataJson[%q] is %w", method, err))
				continue
			}
			data[method] = json.RawMessage(v)
		}
	}
	return req, data, errors.Join(errs...)
}

// RequestToProto converts a contract.Request into a RunRequest with the data
// answers of a unary Run (nil for Execute). The input and the answers go as
// exact JSON text (input_json, data_json), byte for byte.
func RequestToProto(req contract.Request, data map[string]json.RawMessage) (*pb.RunRequest, error) {
	lim, err := LimitsToProto(req.Limits)
	if err != nil {
		return nil, err
	}
	r := &pb.RunRequest{
		Language:  string(req.Language),
		Code:      req.Code,
		InputJson: string(req.Input),
		Plan:      req.Plan,
		Limits:    lim,
		Tenant:    req.Tenant,
		Modules:   req.Modules,
		Metadata:  req.Metadata,
		TimeZone:  req.TimeZone,
		Locale:    req.Locale,
	}
	if c := req.Compiled; c != nil {
		r.Compiled = &pb.Compiled{Js: c.JS, Map: c.Map}
	}
	if e := req.Egress; e != nil {
		if r.Egress, err = EgressToProto(*e); err != nil {
			return nil, err
		}
	}
	for _, s := range req.Secrets {
		r.Secrets = append(r.Secrets, &pb.Secret{
			Origin: s.Origin,
			//lint:ignore SA1019 the deprecated host form still crosses the wire
			Host:   s.Host,
			Header: s.Header, Value: s.Value, UnsafeAllowHttp: s.UnsafeAllowHTTP,
		})
	}
	if len(data) > 0 {
		r.DataJson = make(map[string]string, len(data))
		for m, v := range data {
			r.DataJson[m] = string(v)
		}
	}
	return r, nil
}

// LimitsFromProto converts limits; nil means none.
func LimitsFromProto(l *pb.Limits) contract.Limits {
	if l == nil {
		return contract.Limits{}
	}
	return contract.Limits{
		MemoryMB:         int(l.GetMemoryMb()),
		CPUMs:            int(l.GetCpuMs()),
		WallMs:           int(l.GetWallMs()),
		MaxCodeBytes:     int(l.GetMaxCodeBytes()),
		MaxResultBytes:   int(l.GetMaxResultBytes()),
		MaxDataRequests:  int(l.GetMaxDataRequests()),
		MaxDataBytes:     int(l.GetMaxDataBytes()),
		MaxStatusEvents:  int(l.GetMaxStatusEvents()),
		MaxConsoleEvents: int(l.GetMaxConsoleEvents()),
		MaxConsoleBytes:  int(l.GetMaxConsoleBytes()),
		MaxFetchRequests: int(l.GetMaxFetchRequests()),
		MaxFetchBytes:    int(l.GetMaxFetchBytes()),
	}
}

// LimitsToProto converts limits; the zero Limits become nil. A value that
// does not fit the wire's int32 is an error naming it.
func LimitsToProto(l contract.Limits) (*pb.Limits, error) {
	if l == (contract.Limits{}) {
		return nil, nil
	}
	var errs []error
	c := func(name string, v int) int32 {
		if v > math.MaxInt32 || v < math.MinInt32 {
			errs = append(errs, fmt.Errorf("limits.%s=%d does not fit in 32 bits", name, v))
			return 0
		}
		return int32(v)
	}
	p := &pb.Limits{
		MemoryMb:         c("memoryMb", l.MemoryMB),
		CpuMs:            c("cpuMs", l.CPUMs),
		WallMs:           c("wallMs", l.WallMs),
		MaxCodeBytes:     c("maxCodeBytes", l.MaxCodeBytes),
		MaxResultBytes:   c("maxResultBytes", l.MaxResultBytes),
		MaxDataRequests:  c("maxDataRequests", l.MaxDataRequests),
		MaxDataBytes:     c("maxDataBytes", l.MaxDataBytes),
		MaxStatusEvents:  c("maxStatusEvents", l.MaxStatusEvents),
		MaxConsoleEvents: c("maxConsoleEvents", l.MaxConsoleEvents),
		MaxConsoleBytes:  c("maxConsoleBytes", l.MaxConsoleBytes),
		MaxFetchRequests: c("maxFetchRequests", l.MaxFetchRequests),
		MaxFetchBytes:    c("maxFetchBytes", l.MaxFetchBytes),
	}
	return p, errors.Join(errs...)
}

// EgressFromProto converts an egress policy; a bad address prefix is an
// error naming it.
func EgressFromProto(e *pb.EgressPolicy) (contract.EgressPolicy, error) {
	p := contract.EgressPolicy{
		Schemes:             e.GetSchemes(),
		Hosts:               e.GetHosts(),
		Methods:             e.GetMethods(),
		MaxRequests:         int(e.GetMaxRequests()),
		MaxRequestBodyBytes: e.GetMaxRequestBodyBytes(),
		MaxResponseBytes:    e.GetMaxResponseBytes(),
		TimeoutMs:           int(e.GetTimeoutMs()),
		MaxRedirects:        int(e.GetMaxRedirects()),
	}
	for _, port := range e.GetPorts() {
		p.Ports = append(p.Ports, int(port))
	}
	var errs []error
	for i, s := range e.GetUnsafeAllowAddresses() {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("egress.unsafeAllowAddresses[%d]: %q is not a CIDR prefix", i, s))
			continue
		}
		p.UnsafeAllowAddresses = append(p.UnsafeAllowAddresses, pfx)
	}
	return p, errors.Join(errs...)
}

// EgressToProto converts an egress policy.
func EgressToProto(p contract.EgressPolicy) (*pb.EgressPolicy, error) {
	if p.MaxRequests > math.MaxInt32 || p.TimeoutMs > math.MaxInt32 || p.MaxRedirects > math.MaxInt32 {
		return nil, errors.New("egress: a value does not fit in 32 bits")
	}
	e := &pb.EgressPolicy{
		Schemes:             p.Schemes,
		Hosts:               p.Hosts,
		Methods:             p.Methods,
		MaxRequests:         int32(p.MaxRequests),
		MaxRequestBodyBytes: p.MaxRequestBodyBytes,
		MaxResponseBytes:    p.MaxResponseBytes,
		TimeoutMs:           int32(p.TimeoutMs),
		MaxRedirects:        int32(p.MaxRedirects),
	}
	for _, port := range p.Ports {
		if port < 0 || port > 65535 {
			return nil, fmt.Errorf("egress.ports: %d is not a port", port)
		}
		e.Ports = append(e.Ports, int32(port))
	}
	for _, a := range p.UnsafeAllowAddresses {
		e.UnsafeAllowAddresses = append(e.UnsafeAllowAddresses, a.String())
	}
	return e, nil
}

// EventToProto converts an event.
func EventToProto(ev contract.Event) *pb.Event {
	out := &pb.Event{}
	switch {
	case ev.Result != nil:
		out.Kind = &pb.Event_Result{Result: ResultToProto(*ev.Result)}
	case ev.Error != nil:
		out.Kind = &pb.Event_Error{Error: ErrorToProto(ev.Error)}
	case ev.Console != nil:
		out.Kind = &pb.Event_Console{Console: &pb.ConsoleLine{Level: ev.Console.Level, Text: ev.Console.Text}}
	case ev.DataRequest != nil:
		params, paramsJSON := answer(ev.DataRequest.Params)
		out.Kind = &pb.Event_DataRequest{DataRequest: &pb.DataRequest{
			Id: ev.DataRequest.ID, Method: ev.DataRequest.Method, Params: params, ParamsJson: paramsJSON,
		}}
	case ev.Kind == contract.EventFetch:
		fetch, _ := answer(ev.Fetch) // the host's record: every number fits a double
		out.Kind = &pb.Event_Fetch{Fetch: fetch}
	case ev.Kind == contract.EventStatus:
		status, statusJSON := answer(ev.Status)
		out.Kind = &pb.Event_Status{Status: status}
		out.StatusJson = statusJSON
	}
	return out
}

// EventFromProto converts an event; ok is false for an event of no known
// kind (one a newer server sends).
func EventFromProto(e *pb.Event) (ev contract.Event, ok bool) {
	switch k := e.GetKind().(type) {
	case *pb.Event_Status:
		return contract.Event{Kind: contract.EventStatus, Status: fromAnswer(k.Status, e.GetStatusJson())}, true
	case *pb.Event_Console:
		return contract.Event{Kind: contract.EventConsole, Console: &contract.ConsoleLine{Level: k.Console.GetLevel(), Text: k.Console.GetText()}}, true
	case *pb.Event_DataRequest:
		return contract.Event{Kind: contract.EventDataRequest, DataRequest: &contract.DataRequest{
			ID: k.DataRequest.GetId(), Method: k.DataRequest.GetMethod(), Params: fromAnswer(k.DataRequest.GetParams(), k.DataRequest.GetParamsJson()),
		}}, true
	case *pb.Event_Fetch:
		return contract.Event{Kind: contract.EventFetch, Fetch: FromValue(k.Fetch)}, true
	case *pb.Event_Result:
		r := ResultFromProto(k.Result)
		return contract.Event{Kind: contract.EventResult, Result: &r}, true
	case *pb.Event_Error:
		return contract.Event{Kind: contract.EventError, Error: ErrorFromProto(k.Error)}, true
	}
	return contract.Event{}, false
}

// ResultToProto converts a result.
func ResultToProto(r contract.Result) *pb.Result {
	v, text := answer(r.Value)
	return &pb.Result{Value: v, ValueJson: text, Stats: StatsToProto(r.Stats)}
}

// ResultFromProto converts a result.
func ResultFromProto(r *pb.Result) contract.Result {
	return contract.Result{Value: fromAnswer(r.GetValue(), r.GetValueJson()), Stats: StatsFromProto(r.GetStats())}
}

// ErrorToProto converts a run's error. Only the fields of the contract
// cross: the cause chain stays on the server.
func ErrorToProto(e *contract.Error) *pb.Error {
	out := &pb.Error{
		Code:    string(e.Code),
		Limit:   e.Limit,
		Message: e.Message,
		Stack:   e.Stack,
		Stats:   StatsToProto(e.Stats),
	}
	if p := e.Position; p != nil {
		out.Position = &pb.Position{Line: int32(p.Line), Column: int32(p.Column)}
	}
	for _, d := range e.Diagnostics {
		out.Diagnostics = append(out.Diagnostics, &pb.Diagnostic{Line: int32(d.Line), Column: int32(d.Column), Message: d.Message})
	}
	return out
}

// ErrorFromProto converts a run's error.
func ErrorFromProto(e *pb.Error) *contract.Error {
	out := &contract.Error{
		Code:    contract.Code(e.GetCode()),
		Limit:   e.GetLimit(),
		Message: e.GetMessage(),
		Stack:   e.GetStack(),
		Stats:   StatsFromProto(e.GetStats()),
	}
	if p := e.GetPosition(); p != nil {
		out.Position = &contract.Position{Line: int(p.GetLine()), Column: int(p.GetColumn())}
	}
	for _, d := range e.GetDiagnostics() {
		out.Diagnostics = append(out.Diagnostics, contract.Diagnostic{Line: int(d.GetLine()), Column: int(d.GetColumn()), Message: d.GetMessage()})
	}
	return out
}

// StatsToProto converts stats.
func StatsToProto(s contract.Stats) *pb.Stats {
	return &pb.Stats{
		WallMs:         s.WallMs,
		CpuMs:          s.CPUMs,
		CodeMs:         s.CodeMs,
		QueueMs:        s.QueueMs,
		HeapMb:         s.HeapMB,
		DataRequests:   clamp32(s.DataRequests),
		DataBytes:      clamp32(s.DataBytes),
		FetchRequests:  clamp32(s.FetchRequests),
		FetchBytes:     clamp32(s.FetchBytes),
		ConsoleEvents:  clamp32(s.ConsoleEvents),
		ConsoleDropped: clamp32(s.ConsoleDropped),
		StatusEvents:   clamp32(s.StatusEvents),
	}
}

// StatsFromProto converts stats; nil means zero stats.
func StatsFromProto(s *pb.Stats) contract.Stats {
	return contract.Stats{
		WallMs:         s.GetWallMs(),
		CPUMs:          s.GetCpuMs(),
		CodeMs:         s.GetCodeMs(),
		QueueMs:        s.GetQueueMs(),
		HeapMB:         s.GetHeapMb(),
		DataRequests:   int(s.GetDataRequests()),
		DataBytes:      int(s.GetDataBytes()),
		FetchRequests:  int(s.GetFetchRequests()),
		FetchBytes:     int(s.GetFetchBytes()),
		ConsoleEvents:  int(s.GetConsoleEvents()),
		ConsoleDropped: int(s.GetConsoleDropped()),
		StatusEvents:   int(s.GetStatusEvents()),
	}
}

// clamp32 keeps a counter within int32; the engine's caps keep real
// counters far below.
func clamp32(n int) int32 {
	return int32(max(min(n, math.MaxInt32), math.MinInt32))
}
