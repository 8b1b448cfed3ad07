package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// EncodingBase64 is the value of Request.BodyEncoding and
// Response.BodyEncoding for a body carried as standard base64.
const EncodingBase64 = "base64"

// Redirect modes, as in fetch's RequestInit.redirect.
const (
	RedirectFollow = "follow" // follow up to Policy.MaxRedirects, each hop re-checked (default)
	RedirectManual = "manual" // return the 3xx response itself, Location header included
	RedirectError  = "error"  // fail with KindNetwork on a redirect
)

// Request is what the guest's fetch(url, init) asked for. It is the JSON
// the worker relays to the host.
type Request struct {
	// URL is absolute, http or https; parsed as a browser would (see doc.go).
	URL string `json:"url"`
	// Method defaults to GET.
	Method string `json:"method,omitempty"`
	// Headers are (name, value) pairs in order; repeated names are sent as
	// repeated fields. Forbidden headers (Host, Content-Length, Connection,
	// Accept-Encoding, Proxy-*, …) are dropped silently, as by a browser.
	Headers [][2]string `json:"headers,omitempty"`
	// Body is the request body: text, or base64 if BodyEncoding says so.
	// A text body without a Content-Type header gets
	// "text/plain;charset=UTF-8", as in fetch.
	Body string `json:"body,omitempty"`
	// BodyEncoding is "" (Body is the UTF-8 text to send) or EncodingBase64.
	BodyEncoding string `json:"bodyEncoding,omitempty"`
	// TimeoutMs lowers Policy.TimeoutMs for this request; 0 keeps it.
	TimeoutMs int `json:"timeoutMs,omitempty"`
	// Redirect is RedirectFollow (""), RedirectManual or RedirectError.
	Redirect string `json:"redirect,omitempty"`
}

// Response is what the guest's fetch resolves to.
//
// Body is text when the body is valid UTF-8 (BodyEncoding ""); otherwise
// it is standard base64 with BodyEncoding EncodingBase64, so that binary
// content survives JSON intact. The guest's text() decodes such a body as
// UTF-8 with replacement characters, as a browser would; arrayBuffer()
// returns the bytes.
type Response struct {
	Status     int    `json:"status"`
	StatusText string `json:"statusText"`
	// Headers are (lower-case name, value) pairs, one per value, sorted by
	// name. Hop-by-hop headers are removed; a header whose value holds a
	// secret of the run (in any case) reads "[REDACTED]", and one whose
	// name holds one is ("[redacted]", "[REDACTED]"). StatusText, Body and
	// URL are scrubbed the same way (see Binding).
	Headers      [][2]string `json:"headers"`
	Body         string      `json:"body"`
	BodyEncoding string      `json:"bodyEncoding,omitempty"`
	// URL is the final URL (after redirects), without fragment.
	URL        string `json:"url"`
	Redirected bool   `json:"redirected"`
}

// errFetchTimeout is the context cause when the per-request timeout fires.
var errFetchTimeout = errors.New("egress: fetch timeout")

// Fetch performs req for the run: it checks the request against the run's
// policy and limits, resolves and checks the host's addresses, connects to
// a checked address only, follows redirects re-checking each hop, adds the
// run's credentials, reads the response within the caps, and writes one
// audit record.
//
//	resp, err := run.Fetch(ctx, egress.Request{URL: "https://api.example.com/items?page=2"})
//
// Every error is an *Error; see Kind for what the engine does with each.
// Cancelling ctx abandons the request (KindCanceled).
func (r *Run) Fetch(ctx context.Context, req Request) (*Response, error) {
	start := time.Now()
	rec := Record{
		Time:   start,
		RunID:  r.info.RunID,
		Tenant: r.info.Tenant,
		Plan:   r.info.Plan,
		Method: sanitizeMethod(req.Method),
		URL:    sanitizeRawURL(req.URL),
	}
	resp, e := r.fetch(ctx, req, &rec)
	rec.Duration = time.Since(start)
	rec.Decision = DecisionAllow
	// What upstream said can reach a reason (a redirect's Location, a
	// transport error quoting the response) and the audit's URLs.
	rec.URL, rec.FinalURL = r.redact.scrubString(rec.URL), r.redact.scrubString(rec.FinalURL)
	if e != nil {
		if s := r.redact.scrubString(e.Reason); s != e.Reason {
			e = &Error{Kind: e.Kind, Limit: e.Limit, Reason: s, err: e.err}
		}
		rec.Kind, rec.Limit, rec.Reason = e.Kind, e.Limit, e.Reason
		if e.Kind != KindNetwork && e.Kind != KindTimeout {
			rec.Decision = DecisionDeny
		}
	}
	r.audit(rec)
	if e != nil {
		return nil, e
	}
	return resp, nil
}

func sanitizeMethod(m string) string {
	if m == "" {
		return "GET"
	}
	if c, err := canonicalMethod(m); err == nil {
		return c
	}
	return strconv.Quote(m[:min(len(m), 32)])
}

// fetch is Fetch without the audit bookkeeping. It fills rec as it goes.
func (r *Run) fetch(ctx context.Context, req Request, rec *Record) (*Response, *Error) {
	// Rows 1-2 of the decision table (doc.go): open run, request budget.
	if e := r.admit(); e != nil {
		return nil, e
	}
	defer r.inflight.Done()

	// Rows 3-4: the request itself.
	method := req.Method
	if method == "" {
		method = "GET"
	}
	method, err := canonicalMethod(method)
	if err != nil {
		return nil, err.(*Error)
	}
	t, e := parseTarget(req.URL)
	if e != nil {
		return nil, e
	}
	rec.URL = redactURL(t.url)
	switch req.Redirect {
	case "", RedirectFollow, RedirectManual, RedirectError:
	default:
		return nil, invalidf("redirect must be %q, %q or %q, not %q", RedirectFollow, RedirectManual, RedirectError, req.Redirect)
	}
	if req.TimeoutMs < 0 {
		return nil, invalidf("timeoutMs must not be negative")
	}

	// Rows 5-8: scheme, host, port, method.
	if e := r.checkTarget(t, method); e != nil {
		return nil, e
	}

	// Row 9: headers and body.
	header, e := guestHeaders(req.Headers, r.proxy.userAgent)
	if e != nil {
		return nil, e
	}
	body, e := requestBody(req)
	if e != nil {
		return nil, e
	}
	if body != nil && (method == "GET" || method == "HEAD") {
		return nil, invalidf("Request with %s method cannot have body", method)
	}
	if int64(len(body)) > r.rules.maxRequestBody {
		return nil, deniedf("request body is %d bytes, more than maxRequestBodyBytes (%d)", len(body), r.rules.maxRequestBody)
	}
	if body != nil && req.BodyEncoding == "" && header.Get("Content-Type") == "" {
		header.Set("Content-Type", "text/plain;charset=UTF-8")
	}

	// The deadline covers every hop and the body; Close cancels it all.
	timeout := r.rules.timeout
	if d := time.Duration(req.TimeoutMs) * time.Millisecond; d > 0 && d < timeout {
		timeout = d
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(r.ctx, func() { cancel(ErrClosed) })
	defer stop()
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, timeout, errFetchTimeout)
	defer cancelTimeout()
	deadline, _ := ctx.Deadline()

	// Credentials: bound to the origin the guest asked for, never to where
	// a redirect leads; the guest's own headers of those names go.
	first := t.origin()
	creds := selectBindings(t, r.secrets)
	for _, b := range creds {
		header.Del(b.header)
	}

	for hop := 0; ; hop++ {
		// Row 10: resolve once, check every answer, pin what was checked.
		addrs, e := r.resolve(ctx, t)
		if len(addrs) > 0 {
			rec.IP = addrs[0]
		}
		if e != nil {
			if c := r.ended(ctx, t, timeout); c != nil {
				return nil, c
			}
			return nil, onRedirect(e, hop, t)
		}

		// Row 11: send over a connection to a checked address.
		h := header.Clone()
		if t.origin() == first {
			for _, b := range creds {
				h.Set(b.header, b.value)
			}
		}
		var connected atomic.Pointer[netip.Addr]
		hctx := context.WithValue(ctx, pinKey{}, &pin{
			hostport: t.hostport(), addrs: addrs, port: uint16(t.port), deadline: deadline,
		})
		hctx = httptrace.WithClientTrace(hctx, &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) {
				if ap, err := netip.ParseAddrPort(info.Conn.RemoteAddr().String()); err == nil {
					a := ap.Addr().Unmap()
					connected.Store(&a)
				}
			},
		})
		var bodyReader io.Reader
		if body != nil {
			bodyReader = bytes.NewReader(body)
		}
		hreq, err := http.NewRequestWithContext(hctx, method, t.url.String(), bodyReader)
		if err != nil {
			return nil, invalidf("Invalid request: %v", err)
		}
		hreq.Header = h
		resp, err := r.transport.RoundTrip(hreq)
		if a := connected.Load(); a != nil {
			rec.IP = *a
		}
		if err != nil {
			return nil, r.failure(ctx, err, t, timeout)
		}
		rec.BytesOut += int64(len(body))
		r.sent(len(body))
		rec.Status = resp.StatusCode

		// Row 12: redirects, followed by hand; each hop re-runs rows 4-10.
		loc := resp.Header.Get("Location")
		if !isRedirect(resp.StatusCode) || loc == "" || req.Redirect == RedirectManual {
			return r.readResponse(ctx, resp, t, hop > 0, timeout, rec)
		}
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10) // lets the connection be reused
		resp.Body.Close()
		if req.Redirect == RedirectError {
			return nil, networkf(nil, "unexpected redirect (status %d) with redirect mode %q", resp.StatusCode, RedirectError)
		}
		if r.rules.maxRedirects == 0 {
			return nil, deniedf("redirects are not followed (maxRedirects=-1); use redirect: %q to see the %d response",
				RedirectManual, resp.StatusCode)
		}
		if hop >= r.rules.maxRedirects {
			return nil, deniedf("too many redirects (maxRedirects=%d)", r.rules.maxRedirects)
		}
		next, e := resolveLocation(t, loc)
		if e != nil {
			rec.FinalURL = sanitizeRawURL(loc)
			if e.Kind == KindDenied {
				return nil, onRedirect(e, hop+1, nil)
			}
			return nil, networkf(e, "redirect to an invalid URL: %s", quoteURL(loc))
		}
		rec.FinalURL = redactURL(next.url)
		rec.Redirects++
		if s := resp.StatusCode; (s == 301 || s == 302) && method == "POST" || s == 303 && method != "GET" && method != "HEAD" {
			method, body = "GET", nil
			for _, name := range contentHeaders {
				header.Del(name)
			}
		}
		if next.origin() != t.origin() {
			for _, name := range crossOriginHeaders {
				header.Del(name)
			}
		}
		t = next
		if e := r.checkTarget(t, method); e != nil {
			return nil, onRedirect(e, hop+1, t)
		}
	}
}

// checkTarget applies the policy's scheme, host, port and method rules.
func (r *Run) checkTarget(t *target, method string) *Error {
	switch {
	case !slices.Contains(r.rules.schemes, t.scheme):
		return deniedf("scheme %q is not allowed (allowed: %s)", t.scheme, strings.Join(r.rules.schemes, ", "))
	case !r.rules.allowsHost(t):
		return deniedf("host %q is not allowed", t.host)
	case !r.rules.allowsPort(t):
		return deniedf("port %d is not allowed for %s", t.port, t.scheme)
	case !slices.Contains(r.rules.methods, method):
		return deniedf("method %q is not allowed", method)
	}
	return nil
}

// onRedirect says in a denial's reason that it was a redirect hop that
// was denied (hop > 0), and to where.
func onRedirect(e *Error, hop int, t *target) *Error {
	if hop == 0 || e.Kind != KindDenied {
		return e
	}
	where := ""
	if t != nil {
		where = " to " + redactURL(t.url)
	}
	return &Error{Kind: e.Kind, Reason: deniedPrefix + "redirect" + where + ": " +
		strings.TrimPrefix(e.Reason, deniedPrefix), err: e.err}
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

func requestBody(req Request) ([]byte, *Error) {
	switch req.BodyEncoding {
	case "":
		if req.Body == "" {
			return nil, nil
		}
		return []byte(req.Body), nil
	case EncodingBase64:
		if req.Body == "" {
			return nil, nil
		}
		b, err := base64.StdEncoding.DecodeString(req.Body)
		if err != nil {
			return nil, invalidf("body is not valid base64: %v", err)
		}
		return b, nil
	}
	return nil, invalidf("bodyEncoding must be \"\" or %q, not %q", EncodingBase64, req.BodyEncoding)
}

// readResponse reads the body within the per-response and per-run caps and
// builds the guest's Response.
func (r *Run) readResponse(ctx context.Context, resp *http.Response, t *target, redirected bool,
	timeout time.Duration, rec *Record) (*Response, *Error) {
	defer resp.Body.Close()
	limit := r.rules.maxResponse
	// A declared length over a cap fails before reading anything. (A HEAD
	// response declares the length of a body it does not have.)
	if resp.Request == nil || resp.Request.Method != "HEAD" {
		if resp.ContentLength > limit {
			return nil, deniedf("response is %d bytes, more than maxResponseBytes (%d bytes per response)", resp.ContentLength, limit)
		}
		if resp.ContentLength > r.remainingBytes() {
			return nil, limitf(LimitBytes, "response exceeds %s (%d bytes per run)", LimitBytes, r.maxBytes)
		}
	}
	var body []byte
	chunk := make([]byte, 32<<10)
	for {
		// Read at most one byte past the cap: enough to know it is crossed.
		n, err := resp.Body.Read(chunk[:min(int64(len(chunk)), limit-int64(len(body))+1)])
		if n > 0 {
			rec.BytesIn += int64(n)
			if e := r.consume(n); e != nil {
				return nil, e
			}
			if int64(len(body)+n) > limit {
				return nil, deniedf("response exceeds maxResponseBytes (%d bytes per response)", limit)
			}
			body = append(body, chunk[:n]...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, r.failure(ctx, err, t, timeout)
		}
	}

	// Everything upstream wrote that the guest gets is scrubbed of the
	// run's secrets (see redactor).
	headers := responseHeaders(resp.Header)
	r.redact.scrubHeaders(headers)
	body = r.redact.scrub(body)
	out := &Response{
		Status:     resp.StatusCode,
		StatusText: r.redact.scrubString(strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))),
		Headers:    headers,
		URL:        r.redact.scrubString(t.url.String()),
		Redirected: redirected,
	}
	if out.Headers == nil {
		out.Headers = [][2]string{}
	}
	if utf8.Valid(body) {
		out.Body = string(body)
	} else {
		out.Body, out.BodyEncoding = base64.StdEncoding.EncodeToString(body), EncodingBase64
	}
	return out, nil
}

// ended returns the error for a fetch whose context has ended (timeout,
// Run.Close, the caller's cancellation), or nil if it has not.
func (r *Run) ended(ctx context.Context, t *target, timeout time.Duration) *Error {
	if ctx.Err() == nil {
		return nil
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errFetchTimeout):
		return &Error{Kind: KindTimeout, err: context.DeadlineExceeded,
			Reason: fmt.Sprintf("request to %s timed out after %dms (timeoutMs)", t.host, timeout.Milliseconds())}
	case errors.Is(cause, ErrClosed):
		return &Error{Kind: KindCanceled, Reason: "fetch canceled: the run ended", err: ErrClosed}
	default:
		return &Error{Kind: KindCanceled, Reason: "fetch canceled", err: cause}
	}
}

// failure classifies an error from the transport or the body.
func (r *Run) failure(ctx context.Context, err error, t *target, timeout time.Duration) *Error {
	if e := r.ended(ctx, t, timeout); e != nil {
		return e
	}
	var (
		verr *tls.CertificateVerificationError
		herr x509.HostnameError
		uerr x509.UnknownAuthorityError
		rerr tls.RecordHeaderError
		aerr tls.AlertError
		oerr *net.OpError
	)
	switch {
	case errors.As(err, &verr), errors.As(err, &herr), errors.As(err, &uerr),
		errors.As(err, &rerr), errors.As(err, &aerr):
		return networkf(err, "TLS handshake with %s failed: %v", t.host, err)
	case errors.As(err, &oerr) && oerr.Op == "dial":
		return networkf(err, "could not connect to %s: %v", t.hostport(), oerr.Err)
	}
	return networkf(err, "request to %s failed: %v", t.host, err)
}
