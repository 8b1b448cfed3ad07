package egress

import (
	"errors"
	"fmt"
)

// Kind says why a fetch failed, so that the engine can decide what the guest
// sees. Its string form travels over IPC and appears in audit records.
//
// Engine mapping:
//
//	KindLimit                         → the run ends: LIMIT_EXCEEDED, limit = Error.Limit
//	KindDenied, KindInvalid,
//	KindTimeout, KindNetwork          → the guest's fetch rejects with TypeError(Error.Reason)
//	KindCanceled                      → the run is already ending (abort, close); report that instead
type Kind string

// The kinds of fetch failure.
const (
	// KindInvalid: the request is malformed (bad URL, header, method, body
	// encoding). A browser's fetch throws TypeError for the same inputs.
	KindInvalid Kind = "invalid"
	// KindDenied: the egress policy or the SSRF rules refused the request,
	// a redirect hop, or the size of the response. Reason starts with
	// "blocked by egress policy: ".
	KindDenied Kind = "denied"
	// KindLimit: a run-wide budget is used up; Limit names it
	// (LimitRequests or LimitBytes).
	KindLimit Kind = "limit"
	// KindTimeout: the per-request timeout elapsed.
	KindTimeout Kind = "timeout"
	// KindNetwork: DNS, connect, TLS or HTTP failure, after the policy allowed
	// the request.
	KindNetwork Kind = "network"
	// KindCanceled: the caller's context ended or the Run was closed.
	KindCanceled Kind = "canceled"
)

// Names of the run limits, as in the run contract (DESIGN §4). They are the
// values of Error.Limit and of the engine's LIMIT_EXCEEDED limit field.
const (
	LimitRequests = "maxFetchRequests"
	LimitBytes    = "maxFetchBytes"
)

// deniedPrefix opens the Reason of every KindDenied error.
const deniedPrefix = "blocked by egress policy: "

// Error is the error Run.Fetch returns for every failure. Its Reason is
// written for the step's author and is safe to show to the guest: it never
// contains a secret, a credential from the URL or a resolved private address
// that the guest did not itself write.
//
//	var fe *egress.Error
//	if errors.As(err, &fe) && fe.Kind == egress.KindLimit {
//		// end the run: LIMIT_EXCEEDED, fe.Limit
//	}
//
// Only Kind, Limit and Reason cross a process boundary (they are the JSON
// form); the cause that Unwrap returns stays in the host.
type Error struct {
	Kind   Kind   `json:"kind"`
	Limit  string `json:"limit,omitempty"` // set for KindLimit
	Reason string `json:"reason"`
	err    error
}

// Error returns Reason: the message the guest sees.
func (e *Error) Error() string { return e.Reason }

// Unwrap returns the cause (a net error, context.DeadlineExceeded, ErrClosed, …).
func (e *Error) Unwrap() error { return e.err }

// Is makes errors.Is(err, ErrDenied) and friends compare kinds only.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Reason == "" && t.err == nil
}

// Sentinels for errors.Is; each matches every *Error of its Kind.
var (
	ErrInvalid  error = &Error{Kind: KindInvalid}
	ErrDenied   error = &Error{Kind: KindDenied}
	ErrLimit    error = &Error{Kind: KindLimit}
	ErrTimeout  error = &Error{Kind: KindTimeout}
	ErrNetwork  error = &Error{Kind: KindNetwork}
	ErrCanceled error = &Error{Kind: KindCanceled}
)

// ErrClosed is the cause of the KindCanceled error that Fetch returns after
// Run.Close, or when Close interrupts it.
var ErrClosed = errors.New("egress: run closed")

func invalidf(format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Reason: fmt.Sprintf(format, args...)}
}

func deniedf(format string, args ...any) *Error {
	return &Error{Kind: KindDenied, Reason: deniedPrefix + fmt.Sprintf(format, args...)}
}

func limitf(limit, format string, args ...any) *Error {
	return &Error{Kind: KindLimit, Limit: limit, Reason: fmt.Sprintf(format, args...)}
}

func networkf(cause error, format string, args ...any) *Error {
	return &Error{Kind: KindNetwork, Reason: fmt.Sprintf(format, args...), err: cause}
}
