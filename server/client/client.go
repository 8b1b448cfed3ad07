// Package client is the Go client of a Stepbox server. It reads like the
// local engine of package sandbox, with the same types (package contract,
// which sandbox re-exports), and links nothing of the engine: a program
// that only calls a server builds with CGO_ENABLED=0.
//
//	c := client.New("http://127.0.0.1:8080", client.Options{APIKey: key})
//
// Run runs a step to its end, like sandbox.Engine.Run, answering its data
// requests with a contract.DataHandler. With a handler the run goes over
// the Execute stream and each data request is answered by calling the
// handler, its error rejecting the step's await; with a nil handler it is
// one unary Run call in which data requests reject:
//
//	res, err := c.Run(ctx, contract.Request{Code: code}, handler)
//
// RunWithData sends answers known in advance, by method name, with the
// request in one unary call: no stream stays open while the step runs.
//
//	res, err := c.RunWithData(ctx, contract.Request{Code: code}, map[string]any{"order": order})
//
// Submit starts a run and returns a Session to follow its events, like
// sandbox.Engine.Submit:
//
//	sess, err := c.Submit(ctx, contract.Request{Code: code})
//	for ev := range sess.Events() {
//		if dr := ev.DataRequest; dr != nil {
//			sess.Respond(dr.ID, answer(dr.Method, dr.Params))
//		}
//	}
//	res, err := sess.Wait()
//
// Errors: a run that failed returns its *contract.Error (the same type as
// *sandbox.Error), as with a local engine; so does a request the server
// refused with the contract's code (VALIDATION, or UNAVAILABLE: queue
// full, over the tenant's quota, shutting down). Other failures (no or a
// bad API key, the network) return the *connect.Error; connect.CodeOf
// tells them apart.
package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"

	"connectrpc.com/connect"

	"github.com/stepbox/stepbox/contract"
	"github.com/stepbox/stepbox/server/internal/wire"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
	"github.com/stepbox/stepbox/proto/stepbox/v1/stepboxv1connect"
)

// Options configure a Client. The zero value speaks the Connect protocol
// over cleartext HTTP/2 (h2c) to an http:// URL, or HTTPS to an https://
// one, without an API key.
type Options struct {
	// APIKey is sent as "Authorization: Bearer APIKey" on every call.
	APIKey string
	// GRPC selects the gRPC protocol instead of Connect.
	GRPC bool
	// HTTPClient, if set, carries the calls; it must speak HTTP/2 for
	// Run with a handler and Submit. Nil: a client that speaks h2c to http:// URLs.
	HTTPClient connect.HTTPClient
}

// Client calls a Stepbox server. It is safe for concurrent use.
type Client struct {
	rpc stepboxv1connect.StepboxServiceClient
}

// New returns a client of the server at baseURL ("http://host:8080").
func New(baseURL string, opts Options) *Client {
	hc := opts.HTTPClient
	if hc == nil {
		var p http.Protocols
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		hc = &http.Client{Transport: &http.Transport{
			Protocols:       &p,
			DialContext:     (&net.Dialer{}).DialContext,
			TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12},
		}}
	}
	var copts []connect.ClientOption
	if opts.GRPC {
		copts = append(copts, connect.WithGRPC())
	}
	if opts.APIKey != "" {
		copts = append(copts, connect.WithInterceptors(bearer(opts.APIKey)))
	}
	return &Client{rpc: stepboxv1connect.NewStepboxServiceClient(hc, baseURL, copts...)}
}

// Result is a finished run, as Run returns it.
type Result struct {
	contract.Result
	// RunID identifies the run in the server's logs.
	RunID string
	// Events are the run's non-terminal events, in order.
	Events []contract.Event
}

// Run runs req on the server and waits for its end, answering the step's
// data requests with handler as sandbox.Engine.Run does: each on its own
// goroutine, its result sent to the step as JSON (a json.RawMessage as
// is), its error (or a result that is not JSON) rejecting the step's
// await. With a handler the run goes over the Execute stream; a nil
// handler makes it one unary Run call, in which every data request
// rejects. On a failed run, the error is its *contract.Error and the
// Result still holds the run id and events.
func (c *Client) Run(ctx context.Context, req contract.Request, handler contract.DataHandler) (Result, error) {
	if handler == nil {
		return c.RunWithData(ctx, req, nil)
	}
	s, err := c.Submit(ctx, req)
	if err != nil {
		return Result{}, err
	}
	out := Result{RunID: s.ID()}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for ev := range s.Events() {
		if ev.Terminal() {
			continue
		}
		out.Events = append(out.Events, ev)
		dr := ev.DataRequest
		if dr == nil {
			continue
		}
		wg.Add(1) // Done when the handler returns.
		go func() {
			defer wg.Done()
			v, err := handler(hctx, dr.Method, dr.Params)
			if err != nil {
				_ = s.RespondError(dr.ID, err.Error())
				return
			}
			if err := s.Respond(dr.ID, v); err != nil {
				// Not JSON: the step's await rejects rather than waits.
				_ = s.RespondError(dr.ID, err.Error())
			}
		}()
	}
	cancel()
	wg.Wait()
	out.Result, err = s.Wait()
	return out, err
}

// RunWithData runs req on the server in one unary call, with the answers
// to its data requests known in advance: data maps a method name to its
// answer (marshalled to JSON; a json.RawMessage is sent as is), and a
// request for a method not in data rejects in the step. On a failed run,
// the error is its *contract.Error and the Result still holds the run id
// and events.
func (c *Client) RunWithData(ctx context.Context, req contract.Request, data map[string]any) (Result, error) {
	answers := map[string]json.RawMessage{}
	for m, v := range data {
		b, err := marshal(v)
		if err != nil {
			return Result{}, fmt.Errorf("stepbox client: data[%q]: %w", m, err)
		}
		answers[m] = b
	}
	pr, err := wire.RequestToProto(req, answers)
	if err != nil {
		return Result{}, fmt.Errorf("stepbox client: %w", err)
	}
	resp, err := c.rpc.Run(ctx, connect.NewRequest(pr))
	if err != nil {
		return Result{}, rpcError(err)
	}
	out := Result{RunID: resp.Msg.GetRunId()}
	for _, e := range resp.Msg.GetEvents() {
		if ev, ok := wire.EventFromProto(e); ok {
			out.Events = append(out.Events, ev)
		}
	}
	switch o := resp.Msg.GetOutcome().(type) {
	case *pb.RunResponse_Result:
		out.Result = wire.ResultFromProto(o.Result)
		return out, nil
	case *pb.RunResponse_Error:
		return out, wire.ErrorFromProto(o.Error)
	}
	return out, errors.New("stepbox client: the server's answer has neither result nor error")
}

// Submit starts req on the server over the Execute stream and returns a
// Session to follow it, once the server has accepted the run, like
// sandbox.Engine.Submit. A refusal returns an error and no Session. ctx
// governs the whole run: when it ends, the run is aborted.
func (c *Client) Submit(ctx context.Context, req contract.Request) (*Session, error) {
	pr, err := wire.RequestToProto(req, nil)
	if err != nil {
		return nil, fmt.Errorf("stepbox client: %w", err)
	}
	caller := ctx
	ctx, cancel := context.WithCancel(ctx)
	bidi := c.rpc.Execute(ctx)
	fail := func(err error) (*Session, error) {
		_ = bidi.CloseRequest()
		_ = bidi.CloseResponse()
		cancel()
		if err == nil {
			err = errors.New("stepbox client: the server ended the stream before accepting the run")
		}
		return nil, rpcError(err)
	}
	if err := bidi.Send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Start{Start: pr}}); err != nil {
		if errors.Is(err, io.EOF) { // the server answered already: its reason comes with Receive
			if _, rerr := bidi.Receive(); rerr != nil {
				err = rerr
			}
		}
		return fail(err)
	}
	first, err := bidi.Receive()
	if err != nil {
		return fail(err)
	}
	s := &Session{
		id:     first.GetRunId(),
		bidi:   bidi,
		caller: caller,
		cancel: cancel,
		events: make(chan contract.Event, 64),
		done:   make(chan struct{}),
	}
	// Cancelling a request whose body is still open does not reset an
	// HTTP/2 stream in net/http: end the body too, so that the server sees
	// the cancellation and aborts the run.
	stop := context.AfterFunc(ctx, func() {
		s.sendMu.Lock()
		_ = bidi.CloseRequest()
		s.sendMu.Unlock()
	})
	go func() {
		s.receive()
		stop()
	}()
	return s, nil
}

// Session is the client's handle on a run started with Submit, with the
// methods of a sandbox.Session: read Events to the end, answer data
// requests with Respond or RespondError, end early with Abort.
type Session struct {
	id     string
	bidi   *connect.BidiStreamForClient[pb.ExecuteRequest, pb.ExecuteResponse]
	caller context.Context // Submit's; when it ends, the server aborts the run
	cancel context.CancelFunc
	events chan contract.Event

	sendMu sync.Mutex // serialises Send; the receive goroutine only receives

	done   chan struct{} // closed when result and err are set
	result contract.Result
	err    error
}

// ID returns the run's id.
func (s *Session) ID() string { return s.id }

// Events returns the run's events in order; the channel is closed after
// the terminal event, or when the stream breaks (Wait says why).
func (s *Session) Events() <-chan contract.Event { return s.events }

// Respond answers the data request id with value, marshalled to JSON (a
// json.RawMessage is sent as is).
func (s *Session) Respond(id int64, value any) error {
	b, err := marshal(value)
	if err != nil {
		return fmt.Errorf("stepbox client: respond to data request %d: %w", id, err)
	}
	return s.send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_DataResponse{DataResponse: wire.DataResponseToProto(id, b)}})
}

// RespondError rejects the data request id: the step's await throws an
// Error with message msg.
func (s *Session) RespondError(id int64, msg string) error {
	return s.send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_DataResponse{DataResponse: &pb.DataResponse{
		Id: id, Answer: &pb.DataResponse_Error{Error: msg},
	}}})
}

// Abort asks the server to end the run with ABORTED, unless it already
// ended. It returns at once; the terminal event follows. If the request
// cannot be sent, the stream is cancelled, which aborts the run as well.
func (s *Session) Abort() {
	if err := s.send(&pb.ExecuteRequest{Message: &pb.ExecuteRequest_Abort{Abort: &pb.Abort{}}}); err != nil {
		s.cancel()
	}
}

// Wait blocks until the run ends and returns its result or its error. It
// does not read events: keep reading Events, or the stream stalls.
func (s *Session) Wait() (contract.Result, error) {
	<-s.done
	return s.result, s.err
}

func (s *Session) send(m *pb.ExecuteRequest) error {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	select {
	case <-s.done:
		return fmt.Errorf("stepbox client: run %s has ended", s.id)
	default:
	}
	if err := s.bidi.Send(m); err != nil {
		return rpcError(err)
	}
	return nil
}

func (s *Session) receive() {
	defer s.cancel()
	defer close(s.events)
	for {
		m, err := s.bidi.Receive()
		if err != nil {
			s.err = rpcError(err)
			if cause := context.Cause(s.caller); cause != nil {
				s.err = aborted(cause)
			}
			close(s.done)
			return
		}
		ev, ok := wire.EventFromProto(m.GetEvent())
		if !ok {
			continue
		}
		if ev.Terminal() {
			if ev.Result != nil {
				s.result = *ev.Result
			} else {
				s.err = ev.Error
			}
			close(s.done)
			s.sendMu.Lock()
			_ = s.bidi.CloseRequest()
			s.sendMu.Unlock()
			_ = s.bidi.CloseResponse()
			s.events <- ev
			return
		}
		s.events <- ev
	}
}

// CompileTypeScript compiles a TypeScript step on the server. A step that
// does not compile returns a VALIDATION *contract.Error with every
// diagnostic.
func (c *Client) CompileTypeScript(ctx context.Context, source string) (contract.Compiled, error) {
	resp, err := c.rpc.CompileTypeScript(ctx, connect.NewRequest(&pb.CompileTypeScriptRequest{Source: source}))
	if err != nil {
		return contract.Compiled{}, rpcError(err)
	}
	if e := resp.Msg.GetError(); e != nil {
		return contract.Compiled{}, wire.ErrorFromProto(e)
	}
	return contract.Compiled{JS: resp.Msg.GetJs(), Map: resp.Msg.GetMap()}, nil
}

// Health returns the server's health report.
func (c *Client) Health(ctx context.Context) (*pb.HealthResponse, error) {
	resp, err := c.rpc.Health(ctx, connect.NewRequest(&pb.HealthRequest{}))
	if err != nil {
		return nil, rpcError(err)
	}
	return resp.Msg, nil
}

// aborted is the error of a run whose caller's context ended, as a local
// engine reports it: ABORTED, wrapping the context's cause, so that
// errors.Is(err, context.Canceled) (or DeadlineExceeded) holds. The
// server's terminal event does not reach a stream cancelled this way.
func aborted(cause error) *contract.Error {
	msg := "the run was aborted"
	if !errors.Is(cause, context.Canceled) {
		msg += ": " + cause.Error()
	}
	return contract.NewError(contract.CodeAborted, msg, cause)
}

// rpcError returns the contract's *contract.Error attached to an RPC error
// by the server, or the error itself.
func rpcError(err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return err
	}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if e, ok := v.(*pb.Error); ok {
				return wire.ErrorFromProto(e)
			}
		}
	}
	return ce
}

func marshal(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if !json.Valid(raw) {
			return nil, errors.New("not valid JSON")
		}
		return raw, nil
	}
	return json.Marshal(v)
}

// bearer adds the API key to every call.
type bearer string

func (b bearer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set("Authorization", "Bearer "+string(b))
		return next(ctx, req)
	}
}

func (b bearer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set("Authorization", "Bearer "+string(b))
		return conn
	}
}

func (b bearer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
