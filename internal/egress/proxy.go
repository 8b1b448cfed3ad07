package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// DefaultUserAgent is sent when the guest sets no User-Agent.
const DefaultUserAgent = "stepbox-fetch/1"

// Resolver looks up the addresses of a host name. *net.Resolver implements
// it (net.DefaultResolver is the default); tests inject a fake one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Proxy. It is data plus extension points; New copies it.
type Config struct {
	// Policy is the engine-wide policy; RunConfig.Policy can only narrow it.
	// The zero Policy denies everything.
	Policy Policy

	// Secrets are credentials added to matching requests (see Binding).
	Secrets []Binding

	// Resolver resolves host names; nil means net.DefaultResolver. It is
	// called once per request hop and its answer is the only one used.
	Resolver Resolver

	// DialContext opens connections; nil means a net.Dialer with a 10s
	// connect timeout. It is only ever called with a literal, already
	// checked "ip:port" address; it must not resolve names or reroute.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)

	// TLSConfig is cloned for HTTPS; nil means the system roots. ServerName
	// is always set per request to the URL's host, so certificates are
	// verified against the name the guest asked for. Tests put their CA in
	// RootCAs here. Never set InsecureSkipVerify outside tests.
	TLSConfig *tls.Config

	// Auditor receives one Record per fetch attempt; nil discards them.
	Auditor Auditor

	// UserAgent is sent when the guest sets none; "" means DefaultUserAgent.
	UserAgent string
}

// Proxy is the host's FetchProxy: it decides, performs, limits and audits
// the HTTP requests steps make. It holds no per-run state; each run gets a
// Run from NewRun.
//
//	p, err := egress.New(egress.Config{Policy: pol, Auditor: egress.NewJSONLines(w)})
//	run, err := p.NewRun(egress.RunConfig{RunInfo: info, Limits: lim})
//	defer run.Close()
//	resp, err := run.Fetch(ctx, egress.Request{URL: "https://api.example.com/v1"})
//
// Notes: a Proxy is safe for concurrent use and needs no Close: it owns no
// goroutines or connections (each Run owns its own connection pool).
type Proxy struct {
	policy    Policy
	secrets   []binding
	resolver  Resolver
	dial      func(ctx context.Context, network, address string) (net.Conn, error)
	tlsConfig *tls.Config
	auditor   Auditor
	userAgent string
}

// New validates cfg and returns a Proxy; the error joins every problem.
func New(cfg Config) (*Proxy, error) {
	var errs []error
	if err := cfg.Policy.Validate(); err != nil {
		errs = append(errs, err)
	}
	secrets, err := compileBindings("secrets", cfg.Secrets)
	if err != nil {
		errs = append(errs, err)
	}
	if cfg.TLSConfig != nil && cfg.TLSConfig.InsecureSkipVerify {
		errs = append(errs, errors.New("egress: TLSConfig.InsecureSkipVerify is not supported: put the CA in RootCAs"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	p := &Proxy{
		policy:    clonePolicy(cfg.Policy),
		secrets:   secrets,
		resolver:  cfg.Resolver,
		dial:      cfg.DialContext,
		auditor:   cfg.Auditor,
		userAgent: cfg.UserAgent,
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if p.dial == nil {
		p.dial = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	if cfg.TLSConfig != nil {
		p.tlsConfig = cfg.TLSConfig.Clone()
	} else {
		p.tlsConfig = &tls.Config{}
	}
	// The transport sets ServerName per connection from the URL's host, but
	// only when it is empty: a fixed one would verify every host's
	// certificate against the wrong name.
	p.tlsConfig.ServerName = ""
	if p.tlsConfig.MinVersion < tls.VersionTLS12 {
		p.tlsConfig.MinVersion = tls.VersionTLS12
	}
	if p.userAgent == "" {
		p.userAgent = DefaultUserAgent
	}
	return p, nil
}

// Policy returns a copy of the engine-wide policy.
func (p *Proxy) Policy() Policy { return clonePolicy(p.policy) }

func clonePolicy(p Policy) Policy {
	p.Schemes = append([]string(nil), p.Schemes...)
	p.Hosts = append([]string(nil), p.Hosts...)
	p.Ports = append([]int(nil), p.Ports...)
	p.Methods = append([]string(nil), p.Methods...)
	p.UnsafeAllowAddresses = append([]netip.Prefix(nil), p.UnsafeAllowAddresses...)
	return p
}

// RunInfo identifies a run in audit records.
type RunInfo struct {
	RunID  string `json:"runId"`
	Tenant string `json:"tenant,omitempty"`
	Plan   string `json:"plan,omitempty"`
}

// Limits are the run contract's fetch limits (DESIGN §4), in its units.
// A run that crosses one ends with LIMIT_EXCEEDED and the limit's name.
type Limits struct {
	// MaxRequests caps fetch calls in the run, denied ones included. Zero
	// means Policy.MaxRequests; a larger value is clamped to it.
	MaxRequests int `json:"maxFetchRequests,omitempty"`
	// MaxBytes caps response body bytes read in the run, all fetches
	// together. Zero means DefaultMaxFetchBytes.
	MaxBytes int64 `json:"maxFetchBytes,omitempty"`
}

// Stats count a run's fetch use, for the run's terminal Stats.
type Stats struct {
	Requests int   `json:"fetchRequests"` // Fetch calls admitted (denied ones included)
	Bytes    int64 `json:"fetchBytes"`    // response body bytes read
	BytesOut int64 `json:"fetchBytesOut"` // request body bytes sent
}

// RunConfig configures one run's use of the proxy.
type RunConfig struct {
	RunInfo
	Limits Limits

	// Policy, if not nil, narrows the proxy's policy for this run (plan,
	// tenant or request restrictions, already combined with Narrow). It
	// can never widen it.
	Policy *Policy

	// Secrets are per-run credentials, such as a platform-provided token for
	// this request; they take precedence over Config.Secrets for the same
	// header name.
	Secrets []Binding

	// Auditor, if not nil, also receives this run's records (after the
	// proxy's Auditor), e.g. to emit the run's `fetch` events.
	Auditor Auditor
}

// Run is one run's handle on the proxy: its effective policy, its limits,
// its credentials and its connection pool.
//
// Notes: Fetch may be called concurrently (a step's Promise.all). Close
// cancels fetches in flight, waits for them and closes the run's
// connections; it is idempotent. Connections are pooled per Run, never
// across runs: a pooled connection is to an address checked under this
// run's policy, and another run's policy (its UnsafeAllowAddresses) may
// differ.
type Run struct {
	proxy     *Proxy
	info      RunInfo
	rules     *rules
	maxReqs   int
	maxBytes  int64
	secrets   []binding // the run's, then the proxy's
	redact    *redactor // every one of secrets
	auditor   Auditor
	transport *http.Transport
	ctx       context.Context // done when the run is closed
	cancel    context.CancelCauseFunc
	inflight  sync.WaitGroup

	mu     sync.Mutex
	closed bool  // guarded by mu
	stats  Stats // guarded by mu
}

// NewRun starts a run's use of the proxy. The error joins every problem in
// cfg (its Policy and Secrets).
func (p *Proxy) NewRun(cfg RunConfig) (*Run, error) {
	var errs []error
	pol := p.policy
	if cfg.Policy != nil {
		if err := cfg.Policy.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("egress: run policy: %w", err))
		}
		pol = pol.Narrow(*cfg.Policy)
	}
	secrets, err := compileBindings("run secrets", cfg.Secrets)
	if err != nil {
		errs = append(errs, err)
	}
	if cfg.Limits.MaxRequests < 0 || cfg.Limits.MaxBytes < 0 {
		errs = append(errs, errors.New("egress: limits: negative value"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	r := &Run{
		proxy:    p,
		info:     cfg.RunInfo,
		rules:    compile(pol),
		maxBytes: orDefault(cfg.Limits.MaxBytes, DefaultMaxFetchBytes),
		secrets:  append(secrets, p.secrets...),
		auditor:  cfg.Auditor,
	}
	r.redact = newRedactor(r.secrets)
	r.maxReqs = r.rules.maxRequests
	if n := cfg.Limits.MaxRequests; n > 0 && n < r.maxReqs {
		r.maxReqs = n
	}
	r.ctx, r.cancel = context.WithCancelCause(context.Background())
	r.transport = &http.Transport{
		Proxy:                  nil, // never honour HTTP_PROXY and friends
		DialContext:            r.dialPinned,
		TLSClientConfig:        p.tlsConfig.Clone(),
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: 256 << 10,
		IdleConnTimeout:        30 * time.Second,
		MaxIdleConnsPerHost:    4,
	}
	return r, nil
}

// Stats returns the run's use so far.
func (r *Run) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Close cancels fetches in flight (they fail with KindCanceled wrapping
// ErrClosed), waits for them to return and closes the run's connections.
// Later Fetch calls fail the same way. Close is idempotent and returns nil.
func (r *Run) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel(ErrClosed)
	r.inflight.Wait()
	// With no request in flight and none to come, this closes every
	// connection, and makes the transport close any a late dial delivers.
	r.transport.CloseIdleConnections()
	return nil
}

// admit counts a fetch attempt. It fails when the run is closed or the
// request limit is reached; otherwise the caller must call r.inflight.Done.
func (r *Run) admit() *Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return &Error{Kind: KindCanceled, Reason: "fetch after the run ended", err: ErrClosed}
	}
	if r.stats.Requests >= r.maxReqs {
		return limitf(LimitRequests, "request limit reached (%s=%d)", LimitRequests, r.maxReqs)
	}
	r.stats.Requests++
	r.inflight.Add(1) // Done in Fetch
	return nil
}

// consume charges n response bytes to the run.
func (r *Run) consume(n int) *Error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Bytes += int64(n)
	if r.stats.Bytes > r.maxBytes {
		return limitf(LimitBytes, "response exceeds %s (%d bytes per run)", LimitBytes, r.maxBytes)
	}
	return nil
}

// remainingBytes is what the run may still read.
func (r *Run) remainingBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(0, r.maxBytes-r.stats.Bytes)
}

func (r *Run) sent(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.BytesOut += int64(n)
}

func (r *Run) audit(rec Record) {
	if a := r.proxy.auditor; a != nil {
		a.Audit(rec)
	}
	if r.auditor != nil {
		r.auditor.Audit(rec)
	}
}
