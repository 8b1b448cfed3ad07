package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	"github.com/stepbox/stepbox/internal/egress"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server/internal/wire"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
	"github.com/stepbox/stepbox/proto/stepbox/v1/stepboxv1connect"
)

// RunIDHeader is the response header that carries the run id of Run and
// Execute.
const RunIDHeader = "Stepbox-Run-Id"

// service implements the StepboxService RPCs.
type service struct{ s *Server }

var _ stepboxv1connect.StepboxServiceHandler = (*service)(nil)

// refusal is an RPC error for a request that was not run, with the
// contract's Error attached as a detail so that clients read its code.
func refusal(code connect.Code, sandboxCode, msg string) *connect.Error {
	return refusalFor(code, &pb.Error{Code: sandboxCode, Message: msg})
}

func refusalFor(code connect.Code, e *pb.Error) *connect.Error {
	err := connect.NewError(code, errors.New(e.GetMessage()))
	if d, derr := connect.NewErrorDetail(e); derr == nil {
		err.AddDetail(d)
	}
	return err
}

// submitError maps an error of Engine.Submit (a request the engine did not
// accept) to the RPC's error.
func submitError(err error) error {
	var se *sandbox.Error
	if !errors.As(err, &se) {
		return connect.NewError(connect.CodeInternal, err)
	}
	code := connect.CodeInternal
	switch {
	case se.Code == sandbox.CodeValidation:
		code = connect.CodeInvalidArgument
	case se.Code == sandbox.CodeUnavailable && errors.Is(err, errors.ErrUnsupported):
		code = connect.CodeUnimplemented
	case se.Code == sandbox.CodeUnavailable:
		code = connect.CodeUnavailable
	}
	return refusalFor(code, wire.ErrorToProto(se))
}

// run is one accepted run of an RPC.
type run struct {
	s      *Server
	call   *call
	sess   *sandbox.Session
	req    sandbox.Request
	log    *slog.Logger
	cancel context.CancelCauseFunc
	stop   func() bool // stops the shutdown abort hook

	ended atomic.Bool // the handler has seen the terminal event

	mu          sync.Mutex
	protoErrors int    // guarded by mu: messages of the client that could not be applied
	protoFirst  string // guarded by mu: the first one's error
	protoLast   string // guarded by mu: the last one's error
	protoLogged bool   // guarded by mu: the errors were logged
	protoEnd    error  // guarded by mu: set when the stream is ended for them
}

// MaxProtocolErrors is how many messages of one Execute stream the server
// may fail to apply — a dataResponse for no request that is waiting (a
// wrong id, an answer given twice), a second start, an empty message —
// before it ends the stream: the run is aborted (its terminal ABORTED event
// says why) and the RPC fails with INVALID_ARGUMENT, "too many protocol
// errors on this stream: ...". The errors are logged once per stream, with
// their count, never once per message. A late answer to a run that has
// just ended is not an error of the client's and is not counted.
const MaxProtocolErrors = 16

// protocolError counts one message of the client that could not be
// applied, and reports whether the stream must end for it: then the run
// is aborted, the errors are logged, and Execute fails.
func (r *run) protocolError(err error) bool {
	if r.ended.Load() {
		return false
	}
	r.mu.Lock()
	r.protoErrors++
	if r.protoErrors == 1 {
		r.protoFirst = err.Error()
	}
	r.protoLast = err.Error()
	if r.protoErrors < MaxProtocolErrors {
		r.mu.Unlock()
		return false
	}
	end := fmt.Errorf("too many protocol errors on this stream: %d messages could not be applied (the last: %s); at most %d are allowed",
		r.protoErrors, r.protoLast, MaxProtocolErrors)
	r.protoEnd = end
	r.mu.Unlock()
	r.logProtocolErrors()
	r.cancel(end)
	return true
}

// logProtocolErrors writes the stream's one line about its protocol
// errors, if it had any and it was not written yet.
func (r *run) logProtocolErrors() {
	r.mu.Lock()
	n, first, last, end, logged := r.protoErrors, r.protoFirst, r.protoLast, r.protoEnd, r.protoLogged
	r.protoLogged = true
	r.mu.Unlock()
	if n == 0 || logged {
		return
	}
	level, msg := slog.LevelInfo, "protocol errors"
	if end != nil {
		level, msg = slog.LevelWarn, "protocol errors: stream ended"
	}
	r.log.LogAttrs(context.Background(), level, msg, slog.Int(fieldCount, n), slog.String(fieldFirst, first), slog.String(fieldLast, last))
}

// protocolEnd returns the error that ended the stream for its protocol
// errors, or nil.
func (r *run) protocolEnd() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.protoEnd
}

// start checks and submits a run for the call in ctx. On success the
// caller must read the session's events to the end and then call finish.
func (s *Server) start(ctx context.Context, pr *pb.RunRequest) (*run, map[string]json.RawMessage, error) {
	c := callFrom(ctx)
	req, data, err := wire.RequestFromProto(pr)
	if err != nil {
		return nil, nil, refusal(connect.CodeInvalidArgument, string(sandbox.CodeValidation), err.Error())
	}
	if t := c.tenant; t != nil {
		req.Tenant = t.Name
		if req.Plan, err = t.allowPlan(req.Plan, s.cfg.DefaultPlan); err != nil {
			return nil, nil, err
		}
		if t.Egress != nil {
			p := *t.Egress
			if req.Egress != nil {
				p = sandbox.EgressPolicy(egress.Policy(p).Narrow(egress.Policy(*req.Egress)))
			}
			req.Egress = &p
		}
	}

	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		return nil, nil, refusal(connect.CodeUnavailable, string(sandbox.CodeUnavailable), "the server is shutting down: retry on another replica")
	}
	s.runs.Add(1) // Done in finish, or below if the run is not accepted.
	s.mu.Unlock()
	if err := c.tenant.acquire(); err != nil {
		s.runs.Done()
		return nil, nil, err
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.abortCtx, func() { cancel(context.Cause(s.abortCtx)) })
	sess, err := s.engine.Submit(runCtx, req)
	if err != nil {
		stop()
		cancel(nil)
		c.tenant.release()
		s.runs.Done()
		return nil, nil, submitError(err)
	}
	s.inFlight.Add(1)
	s.metrics.inFlight.Inc()
	c.setRun(sess.ID())
	lang := req.Language
	if lang == "" {
		lang = sandbox.JavaScript
	}
	r := &run{
		s: s, call: c, sess: sess, req: req, cancel: cancel, stop: stop,
		log: s.log.With(slog.String(fieldRun, sess.ID()), slog.String(fieldTenant, req.Tenant),
			slog.String(fieldPlan, req.Plan), slog.String(fieldLanguage, string(lang))),
	}
	r.log.Debug("run accepted")
	return r, data, nil
}

// observe counts what the metering record does not: fetch decisions.
func (r *run) observe(ev sandbox.Event) {
	if ev.Kind == sandbox.EventFetch {
		r.s.metrics.fetch(ev.Fetch)
	}
}

// finish releases the run's quota and writes its one canonical log line.
func (r *run) finish(term sandbox.Event) {
	r.stop()
	r.cancel(nil)
	r.call.tenant.release()
	r.s.inFlight.Add(-1)
	r.s.metrics.inFlight.Dec()

	outcome, st := "ok", sandbox.Stats{}
	attrs := []slog.Attr{}
	switch {
	case term.Result != nil:
		st = term.Result.Stats
	case term.Error != nil:
		outcome, st = string(term.Error.Code), term.Error.Stats
		if term.Error.Limit != "" {
			attrs = append(attrs, slog.String(fieldLimit, term.Error.Limit))
		}
		attrs = append(attrs, slog.String(fieldError, term.Error.Message))
	}
	attrs = append(attrs,
		slog.String(fieldOutcome, outcome),
		slog.Float64(fieldWallMs, st.WallMs),
		slog.Float64(fieldQueueMs, st.QueueMs),
		slog.Float64(fieldCPUMs, st.CPUMs),
		slog.Int("data_requests", st.DataRequests),
		slog.Int("fetch_requests", st.FetchRequests),
		slog.Int("console_events", st.ConsoleEvents),
	)
	attrs = append(attrs, metadataAttrs(r.req.Metadata)...)
	r.log.LogAttrs(context.Background(), slog.LevelInfo, "run", attrs...)
	r.s.runs.Done()
}

// Run runs a step to its end, answering data requests from the request's
// data map.
func (v *service) Run(ctx context.Context, req *connect.Request[pb.RunRequest]) (*connect.Response[pb.RunResponse], error) {
	r, data, err := v.s.start(ctx, req.Msg)
	if err != nil {
		return nil, err
	}
	out := &pb.RunResponse{RunId: r.sess.ID()}
	var term sandbox.Event
	var answers sync.WaitGroup
	for ev := range r.sess.Events() {
		r.observe(ev)
		if ev.Terminal() {
			term = ev
			continue
		}
		out.Events = append(out.Events, wire.EventToProto(ev))
		if dr := ev.DataRequest; dr != nil {
			// Answer off the event loop: a step with many requests in
			// flight must not stall its own event stream.
			answers.Add(1) // Done when answered.
			go func() {
				defer answers.Done()
				r.answer(data, dr)
			}()
		}
	}
	answers.Wait()
	r.finish(term)
	switch {
	case term.Result != nil:
		out.Outcome = &pb.RunResponse_Result{Result: wire.ResultToProto(*term.Result)}
	case term.Error != nil:
		out.Outcome = &pb.RunResponse_Error{Error: wire.ErrorToProto(term.Error)}
	}
	resp := connect.NewResponse(out)
	resp.Header().Set(RunIDHeader, out.RunId)
	return resp, nil
}

// answer answers a data request of a unary Run from its data map.
func (r *run) answer(data map[string]json.RawMessage, dr *sandbox.DataRequest) {
	var err error
	if v, ok := data[dr.Method]; ok {
		err = r.sess.Respond(dr.ID, v)
	} else if len(data) == 0 {
		err = r.sess.RespondError(dr.ID, fmt.Sprintf("no answer for data request %q: this Run request has no data (send data, or use Execute to answer on the stream)", dr.Method))
	} else {
		err = r.sess.RespondError(dr.ID, fmt.Sprintf("no answer for data request %q: the request's data has none for this method", dr.Method))
	}
	if err != nil {
		r.log.Debug("data answer not delivered", slog.String(fieldError, err.Error()))
	}
}

// Execute runs a step interactively over a bidirectional stream.
func (v *service) Execute(ctx context.Context, stream *connect.BidiStream[pb.ExecuteRequest, pb.ExecuteResponse]) error {
	first, err := stream.Receive()
	if errors.Is(err, io.EOF) {
		return refusal(connect.CodeInvalidArgument, string(sandbox.CodeValidation), "the stream ended before its start message")
	}
	if err != nil {
		return err
	}
	start := first.GetStart()
	switch {
	case start == nil:
		return refusal(connect.CodeInvalidArgument, string(sandbox.CodeValidation), "the first message of Execute must be start")
	case len(start.GetData()) > 0 || len(start.GetDataJson()) > 0:
		return refusal(connect.CodeInvalidArgument, string(sandbox.CodeValidation), "start.data and start.dataJson are for Run: answer data requests on the stream with dataResponse")
	}
	r, _, err := v.s.start(ctx, start)
	if err != nil {
		return err
	}
	id := r.sess.ID()
	stream.ResponseHeader().Set(RunIDHeader, id)
	out := &sender{stream: stream, run: r, after: v.s.cfg.stallTimeout()}
	out.rc, _ = ctx.Value(responseKey{}).(*http.ResponseController)
	sendErr := out.send(&pb.ExecuteResponse{RunId: id}) // accepted
	if sendErr != nil {
		r.sess.Abort()
	}
	v.s.bg.Add(1) // Done when the reader returns: at the client's EOF, or when the stream is torn down after this handler returns.
	go func() {
		defer v.s.bg.Done()
		r.readClient(stream)
	}()
	var term sandbox.Event
	for ev := range r.sess.Events() {
		r.observe(ev)
		if ev.Terminal() {
			term = ev
			r.ended.Store(true)
		}
		if sendErr != nil {
			continue // drain: the run ends aborted
		}
		if sendErr = out.send(&pb.ExecuteResponse{RunId: id, Event: wire.EventToProto(ev)}); sendErr != nil {
			if out.stalled {
				r.log.Info("client stopped reading: the stream was reset and the run aborted", slog.String("stallTimeout", out.after.String()))
			} else {
				r.log.Info("client gone: aborting the run", slog.String(fieldError, sendErr.Error()))
			}
			r.sess.Abort()
		}
	}
	r.finish(term)
	if end := r.protocolEnd(); end != nil {
		return connect.NewError(connect.CodeInvalidArgument, end)
	}
	return sendErr
}

// responseKey is the context key of an Execute stream's
// *http.ResponseController.
type responseKey struct{}

// clientStallError is the cause of a run whose Execute client stopped
// taking messages.
type clientStallError struct{ after time.Duration }

func (e *clientStallError) Error() string {
	return fmt.Sprintf("the client did not read its events for %v (stallTimeout)", e.after)
}

func (e *clientStallError) Is(target error) bool { return target == sandbox.ErrStalled }

// sender sends an Execute stream's messages under the stall limit. HTTP/2
// flow control blocks a Send once the client has stopped taking messages
// and its window is full; a Send blocked for the stall limit ends the run
// (ABORTED, "the client did not read its events") and resets the stream,
// so that neither the run's slot nor this handler waits for the client.
// Without a stall limit, or where the ResponseWriter cannot take a
// deadline, a Send waits as long as the client; the engine's own stall
// limit still ends the run once its event buffer is full.
type sender struct {
	stream  *connect.BidiStream[pb.ExecuteRequest, pb.ExecuteResponse]
	run     *run
	rc      *http.ResponseController // nil: none
	after   time.Duration            // zero: no stall limit
	stalled bool                     // a Send was cut off at the stall limit
}

func (o *sender) send(m *pb.ExecuteResponse) error {
	if o.after <= 0 || o.rc == nil {
		return o.stream.Send(m)
	}
	fired := make(chan struct{})
	t := time.AfterFunc(o.after, func() {
		defer close(fired)
		o.stalled = true // read after fired is closed
		o.run.cancel(&clientStallError{after: o.after})
		// A deadline in the past resets the stream at once: the blocked
		// Send returns.
		_ = o.rc.SetWriteDeadline(time.Unix(1, 0))
	})
	err := o.stream.Send(m)
	if !t.Stop() {
		<-fired
	}
	return err
}

// readClient applies the client's data responses and abort to the run
// until the client closes its side, the stream ends, or the client has
// sent MaxProtocolErrors messages that could not be applied.
func (r *run) readClient(stream *connect.BidiStream[pb.ExecuteRequest, pb.ExecuteResponse]) {
	defer r.logProtocolErrors()
	for {
		m, err := stream.Receive()
		if errors.Is(err, io.EOF) {
			return // the client sent all it will; the run goes on
		}
		if err != nil {
			r.sess.Abort() // a broken stream; a no-op once the run has ended
			return
		}
		var perr error
		switch x := m.GetMessage().(type) {
		case *pb.ExecuteRequest_DataResponse:
			d := x.DataResponse
			a, err := wire.DataAnswerFromProto(d)
			switch {
			case err != nil:
				// The host's mistake: the step's await rejects, saying so.
				perr = r.sess.RespondError(d.GetId(), "the host's answer was refused: "+err.Error())
			case a.Rejected:
				perr = r.sess.RespondError(d.GetId(), a.Error)
			default:
				perr = r.sess.Respond(d.GetId(), a.Value)
			}
		case *pb.ExecuteRequest_Abort:
			r.log.Debug("aborted by the client")
			r.sess.Abort()
		case *pb.ExecuteRequest_Start:
			perr = errors.New("a second start message (ignored)")
		default:
			perr = errors.New("a message with nothing in it")
		}
		if perr != nil && r.protocolError(perr) {
			return
		}
	}
}

// CompileTypeScript compiles a TypeScript step.
func (v *service) CompileTypeScript(_ context.Context, req *connect.Request[pb.CompileTypeScriptRequest]) (*connect.Response[pb.CompileTypeScriptResponse], error) {
	c, err := sandbox.CompileTypeScript(req.Msg.GetSource())
	out := &pb.CompileTypeScriptResponse{}
	var se *sandbox.Error
	switch {
	case err == nil:
		out.Js, out.Map = c.JS, c.Map
	case errors.As(err, &se):
		out.Error = wire.ErrorToProto(se)
	default:
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	return connect.NewResponse(out), nil
}

// Health reports whether the server takes runs, its load and its workers.
func (v *service) Health(context.Context, *connect.Request[pb.HealthRequest]) (*connect.Response[pb.HealthResponse], error) {
	s := v.s
	ok, why := s.ready()
	h := s.engine.Health()
	out := &pb.HealthResponse{
		Status:         "SERVING",
		Version:        s.cfg.Version,
		Running:        int32(h.Running),
		Queued:         int32(h.Queued),
		QueueSize:      int32(h.QueueSize),
		InFlight:       int32(s.inFlight.Load()),
		PoolSize:       int32(h.PoolSize),
		WorkersUp:      int32(h.Workers.Up),
		WorkersBusy:    int32(h.Workers.Busy),
		WorkerRestarts: int64(h.Workers.Restarts),
	}
	if !ok {
		out.Status, out.Reason = "NOT_SERVING", why
	}
	return connect.NewResponse(out), nil
}
