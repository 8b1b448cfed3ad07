package egress

import (
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Audit record field names: the keys of Record's JSON form and of its slog
// attributes. They are API (dashboards and alerts match on them); this is
// the only place they are spelt.
const (
	FieldTime       = "time"        // RFC 3339, UTC, when the attempt started
	FieldRunID      = "run_id"      // RunInfo.RunID
	FieldTenant     = "tenant"      // RunInfo.Tenant
	FieldPlan       = "plan"        // RunInfo.Plan
	FieldMethod     = "method"      // after normalisation ("GET")
	FieldURL        = "url"         // the requested URL, query values redacted
	FieldFinalURL   = "final_url"   // the last hop's URL if a redirect was followed, query values redacted
	FieldIP         = "ip"          // the address connected to, or the address that was denied
	FieldDecision   = "decision"    // DecisionAllow or DecisionDeny
	FieldKind       = "kind"        // the Error Kind; absent on success
	FieldLimit      = "limit"       // for KindLimit: LimitRequests or LimitBytes
	FieldReason     = "reason"      // the Error Reason; absent on success
	FieldStatus     = "status"      // HTTP status of the last response; 0 if none
	FieldBytesIn    = "bytes_in"    // response body bytes read (all hops)
	FieldBytesOut   = "bytes_out"   // request body bytes sent (all hops)
	FieldDurationMs = "duration_ms" // wall time of the attempt, milliseconds
	FieldRedirects  = "redirects"   // redirects followed
)

// Decision is whether the proxy let a request go out.
type Decision string

// Decisions.
const (
	// DecisionAllow: the proxy let the request proceed. It succeeded, or
	// failed on the way (Kind network: DNS, connect, TLS, HTTP; or timeout).
	DecisionAllow Decision = "allow"
	// DecisionDeny: the proxy refused it (Kind invalid, denied, limit), or
	// it was abandoned because the run ended or the caller gave up
	// (canceled). A response over maxResponseBytes and a redirect to a
	// denied place are denials too.
	DecisionDeny Decision = "deny"
)

// Record is the audit record of one fetch attempt. Exactly one is produced
// per Run.Fetch call, allowed or denied. It never contains header values,
// bodies, query values, URL credentials or secrets.
type Record struct {
	Time      time.Time
	RunID     string
	Tenant    string
	Plan      string
	Method    string
	URL       string
	FinalURL  string
	IP        netip.Addr
	Decision  Decision
	Kind      Kind
	Limit     string
	Reason    string
	Status    int
	BytesIn   int64
	BytesOut  int64
	Duration  time.Duration
	Redirects int
}

// Attrs returns the record as slog attributes keyed by the Field constants,
// for an Auditor that logs through log/slog.
func (r Record) Attrs() []slog.Attr {
	a := []slog.Attr{
		slog.String(FieldTime, r.Time.UTC().Format(time.RFC3339Nano)),
		slog.String(FieldRunID, r.RunID),
		slog.String(FieldTenant, r.Tenant),
		slog.String(FieldPlan, r.Plan),
		slog.String(FieldMethod, r.Method),
		slog.String(FieldURL, r.URL),
	}
	if r.FinalURL != "" {
		a = append(a, slog.String(FieldFinalURL, r.FinalURL))
	}
	if r.IP.IsValid() {
		a = append(a, slog.String(FieldIP, r.IP.String()))
	}
	a = append(a, slog.String(FieldDecision, string(r.Decision)))
	if r.Kind != "" {
		a = append(a, slog.String(FieldKind, string(r.Kind)))
	}
	if r.Limit != "" {
		a = append(a, slog.String(FieldLimit, r.Limit))
	}
	if r.Reason != "" {
		a = append(a, slog.String(FieldReason, r.Reason))
	}
	return append(a,
		slog.Int(FieldStatus, r.Status),
		slog.Int64(FieldBytesIn, r.BytesIn),
		slog.Int64(FieldBytesOut, r.BytesOut),
		slog.Float64(FieldDurationMs, durationMs(r.Duration)),
		slog.Int(FieldRedirects, r.Redirects),
	)
}

// MarshalJSON encodes the record as one flat JSON object with the Field
// keys, in a fixed order.
func (r Record) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, a := range r.Attrs() {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, a.Key)
		b = append(b, ':')
		v, err := json.Marshal(a.Value.Any())
		if err != nil {
			return nil, err
		}
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

func durationMs(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// Auditor receives one Record per fetch attempt.
//
// Notes: Audit is called synchronously on the fetching goroutine, from
// every Run of a Proxy, so it must be safe for concurrent use and should be
// quick (buffer, or hand off to a goroutine you own). It cannot fail a
// fetch: an Auditor that must not lose records keeps its own error state.
type Auditor interface {
	Audit(Record)
}

// AuditorFunc adapts a function to Auditor.
type AuditorFunc func(Record)

// Audit calls f(r).
func (f AuditorFunc) Audit(r Record) { f(r) }

// JSONLines is an Auditor writing each Record as one line of JSON:
//
//	a := egress.NewJSONLines(os.Stderr)
//	proxy, err := egress.New(egress.Config{Policy: p, Auditor: a})
//
// Notes: safe for concurrent use; each record is one Write call. The first
// write error is kept (Err) and later records are dropped.
type JSONLines struct {
	mu  sync.Mutex
	w   io.Writer // guarded by mu
	err error     // guarded by mu
}

// NewJSONLines returns a JSONLines auditor writing to w.
func NewJSONLines(w io.Writer) *JSONLines { return &JSONLines{w: w} }

// Audit writes r as one JSON line.
func (j *JSONLines) Audit(r Record) {
	line, err := r.MarshalJSON()
	line = append(line, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return
	}
	if err == nil {
		_, err = j.w.Write(line)
	}
	j.err = err
}

// Err returns the first error writing a record, if any.
func (j *JSONLines) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}
