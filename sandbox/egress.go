package sandbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/stepbox/stepbox/internal/egress"
	"github.com/stepbox/stepbox/internal/ipc"
)

// Egress configures the guest's fetch. A step has no network of its own:
// every fetch is relayed to one FetchProxy in the host, which checks it
// against the policy, resolves the host and checks every address (private,
// loopback, link-local, metadata... are refused), connects only to the
// checked address, re-checks each redirect, adds credentials the step never
// sees, caps bytes and time, and writes one audit record per attempt.
type Egress struct {
	// Policy is the engine-wide policy. The zero policy denies everything.
	Policy EgressPolicy `json:"policy"`
	// Plans narrow Policy for the runs of a plan (never widen it).
	Plans map[string]EgressPolicy `json:"plans,omitempty"`
	// Secrets bind credentials to origins: a fetch to a secret's origin
	// (scheme, host and port) gets its header, added after the policy
	// check, over https only unless the secret says UnsafeAllowHTTP. The
	// step cannot read them: not in input, not in responses (echoes are
	// redacted, see the README's Egress section for what that catches),
	// not on redirects to another origin, not in the audit.
	Secrets []Secret `json:"secrets,omitempty"`
	// RootCAs, if set, are the certificate authorities trusted for https
	// fetches instead of the system's, e.g. for internal APIs with a
	// private CA. Nil: the system's roots.
	RootCAs *x509.CertPool `json:"-"`
	// AuditLog, if set, receives one JSON line per fetch attempt of every
	// run. Each run's caller also gets an EventFetch per attempt.
	AuditLog io.Writer `json:"-"`
	// AuditLogger, if set, receives one "fetch" record per attempt as
	// structured attributes.
	AuditLogger *slog.Logger `json:"-"`
}

// validateSecrets reports every problem of a request's secrets, each with
// its index.
func validateSecrets(ss []Secret) error {
	var errs []error
	for i, s := range ss {
		if err := s.Validate(); err != nil {
			for _, e := range egress.Unjoin(err) {
				errs = append(errs, fmt.Errorf("secrets[%d]: %w", i, e))
			}
		}
	}
	return errors.Join(errs...)
}

func bindings(ss []Secret) []egress.Binding {
	out := make([]egress.Binding, len(ss))
	for i, s := range ss {
		out[i] = egress.Binding(s)
	}
	return out
}

func newProxy(cfg *Egress) (*egress.Proxy, error) {
	if cfg == nil {
		return nil, nil
	}
	c := egress.Config{Policy: egress.Policy(cfg.Policy), Secrets: bindings(cfg.Secrets)}
	if cfg.RootCAs != nil {
		c.TLSConfig = &tls.Config{RootCAs: cfg.RootCAs}
	}
	var sinks []egress.Auditor
	if cfg.AuditLog != nil {
		sinks = append(sinks, egress.NewJSONLines(cfg.AuditLog))
	}
	if l := cfg.AuditLogger; l != nil {
		sinks = append(sinks, egress.AuditorFunc(func(r egress.Record) {
			l.LogAttrs(context.Background(), slog.LevelInfo, "fetch", r.Attrs()...)
		}))
	}
	if len(sinks) > 0 {
		c.Auditor = egress.AuditorFunc(func(r egress.Record) {
			for _, a := range sinks {
				a.Audit(r)
			}
		})
	}
	for name, p := range cfg.Plans {
		if err := egress.Policy(p).Validate(); err != nil {
			return nil, fmt.Errorf("egress.plans.%s: %w", name, err)
		}
	}
	return egress.New(c)
}

// fetcher performs one session's fetches. It is created lazily, at the
// first fetch of a run.
type fetcher struct {
	mu     sync.Mutex
	run    *egress.Run    // guarded by mu
	err    error          // guarded by mu
	closed bool           // guarded by mu: the run ended; no new fetches
	wg     sync.WaitGroup // one per fetch in flight
}

// fetch performs a guest fetch and answers it on the run's reply channel.
// It runs on its own goroutine; the run goes on meanwhile.
func (s *Session) fetch(fr *ipc.FetchRequest) {
	defer s.fetches.wg.Done()
	rep := ipc.Reply{ID: fr.ID}
	run, err := s.egressRun()
	if err == nil {
		var req egress.Request
		if err = json.Unmarshal(fr.Request, &req); err == nil {
			var resp *egress.Response
			if resp, err = run.Fetch(s.ctx, req); err == nil {
				rep.Value, err = json.Marshal(resp)
			}
		}
	}
	if err != nil {
		rep.Error = err.Error()
		var fe *egress.Error
		if errors.As(err, &fe) && fe.Kind == egress.KindLimit {
			rep.Limit = fe.Limit
		}
	}
	select {
	case s.replies <- rep:
	case <-s.finished:
	}
}

func (s *Session) egressRun() (*egress.Run, error) {
	f := &s.fetches
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.run != nil || f.err != nil {
		return f.run, f.err
	}
	if f.closed {
		return nil, errors.New("the run has ended")
	}
	func() {
		p := s.e.proxy
		if p == nil {
			f.err = errors.New("fetch is not enabled on this engine: give it an egress policy (stepbox run --egress FILE; the server config's egress key; Config.Egress)")
			return
		}
		rc := egress.RunConfig{
			RunInfo: egress.RunInfo{RunID: s.id, Tenant: s.req.Tenant, Plan: s.plan},
			Limits:  egress.Limits{MaxRequests: s.job.Limits.MaxFetchRequests, MaxBytes: int64(s.job.Limits.MaxFetchBytes)},
			Secrets: bindings(s.req.Secrets),
			Auditor: egress.AuditorFunc(s.audit),
		}
		pol := p.Policy()
		narrowed := false
		if pp, ok := s.e.cfg.Egress.Plans[s.plan]; ok {
			pol, narrowed = pol.Narrow(egress.Policy(pp)), true
		}
		if rp := s.req.Egress; rp != nil {
			pol, narrowed = pol.Narrow(egress.Policy(*rp)), true
		}
		if narrowed {
			rc.Policy = &pol
		}
		f.run, f.err = p.NewRun(rc)
	}()
	return f.run, f.err
}

// audit delivers a fetch attempt's record to the caller as EventFetch.
func (s *Session) audit(r egress.Record) {
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	// Blocked on a caller that does not read, it stalls the run like any
	// other event.
	_ = s.deliver(s.finished, Event{Kind: EventFetch, Fetch: b})
}

// closeFetches ends the run's fetches in flight and waits for them; it
// returns what the FetchProxy counted.
func (s *Session) closeFetches() (requests, bytes int, ok bool) {
	f := &s.fetches
	f.mu.Lock()
	f.closed = true
	run := f.run
	f.mu.Unlock()
	if run == nil {
		f.wg.Wait()
		return 0, 0, false
	}
	_ = run.Close() // cancels the fetches in flight
	f.wg.Wait()
	st := run.Stats()
	return st.Requests, int(st.Bytes), true
}
