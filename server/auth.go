package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/stepbox/stepbox/proto/stepbox/v1/stepboxv1connect"
)

// apiKey is one accepted key: the SHA-256 of the token, and its tenant.
type apiKey struct {
	hash   [32]byte
	tenant *tenant
}

// tenant is a configured Tenant with its quota's state.
type tenant struct {
	Tenant

	mu     sync.Mutex
	active int // guarded by mu: runs in flight
}

func newKeys(ts []Tenant) []apiKey {
	var keys []apiKey
	for _, t := range ts {
		tn := &tenant{Tenant: t}
		for _, k := range t.Keys {
			h, err := parseKeyHash(k)
			if err != nil {
				continue // Validate has refused the config already
			}
			keys = append(keys, apiKey{hash: h, tenant: tn})
		}
	}
	return keys
}

// authenticate returns the tenant whose key the request's bearer token is,
// nil when the server does not authenticate, or an UNAUTHENTICATED error.
// The token is hashed and compared with every key in constant time, so
// neither the comparison nor the position of a match is visible in timing.
func (s *Server) authenticate(h http.Header) (*tenant, error) {
	if s.cfg.Auth == AuthNone {
		return nil, nil
	}
	scheme, token, _ := strings.Cut(h.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, unauthenticated("missing API key: send the header \"Authorization: Bearer KEY\"")
	}
	sum := sha256.Sum256([]byte(token))
	var found *tenant
	for i := range s.keys {
		if subtle.ConstantTimeCompare(sum[:], s.keys[i].hash[:]) == 1 {
			found = s.keys[i].tenant
		}
	}
	if found == nil {
		return nil, unauthenticated("invalid API key")
	}
	return found, nil
}

func unauthenticated(msg string) error {
	err := connect.NewError(connect.CodeUnauthenticated, fmt.Errorf("%s", msg))
	err.Meta().Set("WWW-Authenticate", `Bearer realm="stepbox"`)
	return err
}

// acquire takes one of the tenant's concurrency slots, or refuses with
// RESOURCE_EXHAUSTED (HTTP 429; the detail's code is UNAVAILABLE).
func (t *tenant) acquire() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.MaxConcurrent > 0 && t.active >= t.MaxConcurrent {
		return refusal(connect.CodeResourceExhausted, "UNAVAILABLE",
			fmt.Sprintf("tenant %q already has %d runs in flight, its maxConcurrent: retry when one has ended", t.Name, t.active))
	}
	t.active++
	return nil
}

func (t *tenant) release() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.active--
	t.mu.Unlock()
}

// allowPlan returns the plan a tenant's request runs on, or
// PERMISSION_DENIED.
func (t *tenant) allowPlan(plan, defaultPlan string) (string, error) {
	allowed := t.Plans
	if len(allowed) == 0 {
		allowed = []string{defaultPlan}
	}
	if plan == "" {
		return allowed[0], nil
	}
	if !slices.Contains(allowed, plan) {
		return "", refusal(connect.CodePermissionDenied, "VALIDATION",
			fmt.Sprintf("tenant %q may not use plan %q (its plans: %s)", t.Name, plan, strings.Join(allowed, ", ")))
	}
	return plan, nil
}

// call is what the interceptor knows of one RPC, shared with its handler
// through the context.
type call struct {
	tenant *tenant
	mu     sync.Mutex
	runID  string // guarded by mu; set once the run is accepted
}

func (c *call) setRun(id string) {
	c.mu.Lock()
	c.runID = id
	c.mu.Unlock()
}

func (c *call) run() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runID
}

func (c *call) tenantName() string {
	if c == nil || c.tenant == nil {
		return ""
	}
	return c.tenant.Name
}

type callKey struct{}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		c = &call{}
	}
	return c
}

// interceptor authenticates every RPC but Health, and writes one log line
// and one metric per RPC.
type interceptor struct{ s *Server }

var _ connect.Interceptor = (*interceptor)(nil)

func (i *interceptor) begin(ctx context.Context, procedure string, h http.Header) (context.Context, *call, error) {
	c := &call{}
	ctx = context.WithValue(ctx, callKey{}, c)
	if procedure == stepboxv1connect.StepboxServiceHealthProcedure {
		return ctx, c, nil
	}
	t, err := i.s.authenticate(h)
	c.tenant = t
	return ctx, c, err
}

func (i *interceptor) end(ctx context.Context, procedure, peer string, c *call, start time.Time, err error) {
	code := "ok"
	if err != nil {
		code = connect.CodeOf(err).String()
	}
	method := procedureLabel(procedure)
	i.s.metrics.requests.WithLabelValues(method, code).Inc()
	if procedure == stepboxv1connect.StepboxServiceHealthProcedure && err == nil {
		return // probes would drown the log
	}
	attrs := []slog.Attr{
		slog.String(fieldProcedure, method),
		slog.String(fieldCode, code),
		slog.Float64(fieldDurationMs, float64(time.Since(start).Microseconds())/1000),
		slog.String(fieldPeer, peer),
	}
	if t := c.tenantName(); t != "" {
		attrs = append(attrs, slog.String(fieldTenant, t))
	}
	if id := c.run(); id != "" {
		attrs = append(attrs, slog.String(fieldRun, id))
	}
	level := slog.LevelInfo
	if err != nil {
		attrs = append(attrs, slog.String(fieldError, connectMessage(err)))
		if code == connect.CodeInternal.String() || code == connect.CodeUnknown.String() {
			level = slog.LevelError
		}
	}
	i.s.log.LogAttrs(ctx, level, "rpc", attrs...)
}

func (i *interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		start := time.Now()
		ctx, c, err := i.begin(ctx, req.Spec().Procedure, req.Header())
		var resp connect.AnyResponse
		if err == nil {
			resp, err = next(ctx, req)
		}
		i.end(ctx, req.Spec().Procedure, req.Peer().Addr, c, start, err)
		return resp, err
	}
}

func (i *interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (i *interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		start := time.Now()
		ctx, c, err := i.begin(ctx, conn.Spec().Procedure, conn.RequestHeader())
		if err == nil {
			err = next(ctx, conn)
		}
		i.end(ctx, conn.Spec().Procedure, conn.Peer().Addr, c, start, err)
		return err
	}
}

func connectMessage(err error) string {
	if ce, ok := err.(*connect.Error); ok {
		return ce.Message()
	}
	return err.Error()
}
