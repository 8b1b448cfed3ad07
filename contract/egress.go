package contract

import (
	"net/netip"

	"github.com/stepbox/stepbox/internal/egress/rule"
)

// EgressPolicy decides which requests a step may make. It has the fields of
// the FetchProxy's policy: see the README's egress section for each. A
// Request's policy narrows the engine's (sandbox.Egress.Policy).
type EgressPolicy struct {
	// Schemes the step may use: "https", "http". Empty means ["https"].
	Schemes []string `json:"schemes,omitempty"`
	// Hosts the step may reach: "api.example.com" exactly, "*.example.com"
	// any subdomain (not the apex), an IP literal, or "*". Empty: none.
	Hosts []string `json:"hosts,omitempty"`
	// Ports allowed for every scheme. Empty means the scheme's default.
	Ports []int `json:"ports,omitempty"`
	// Methods allowed. Empty means GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS.
	Methods []string `json:"methods,omitempty"`
	// MaxRequests caps fetches per run (also capped by maxFetchRequests).
	MaxRequests int `json:"maxRequests,omitempty"`
	// MaxRequestBodyBytes caps one request body.
	MaxRequestBodyBytes int64 `json:"maxRequestBodyBytes,omitempty"`
	// MaxResponseBytes caps one response body (the run's total is
	// maxFetchBytes).
	MaxResponseBytes int64 `json:"maxResponseBytes,omitempty"`
	// TimeoutMs caps one fetch end to end; a step may lower it.
	TimeoutMs int `json:"timeoutMs,omitempty"`
	// MaxRedirects caps redirects followed per fetch; -1 follows none.
	MaxRedirects int `json:"maxRedirects,omitempty"`
	// UnsafeAllowAddresses exempts these address ranges from the SSRF
	// rules (e.g. an internal API's subnet). Every entry is a hole in the
	// defence.
	UnsafeAllowAddresses []netip.Prefix `json:"unsafeAllowAddresses,omitempty"`
}

// Secret is a credential the step never sees: the FetchProxy sets header
// Header to Value on the step's fetches to Origin, after the policy has
// allowed them, replacing any header of that name the step set.
//
//	contract.Secret{Origin: "https://api.example.com", Header: "Authorization", Value: "Bearer " + token}
//
// Origin is "scheme://host[:port]": the secret goes to that scheme, host
// and port only, never to another port of the host, the host over another
// scheme, or a redirect to another origin. It is the way to bind a secret
// since origins came in; the host-only form (Host) means https on port 443.
//
// Notes: Validate reports what is wrong with a Secret; the engine refuses
// an invalid one (sandbox.New for sandbox.Egress.Secrets, and a run's
// submission for Request.Secrets, with VALIDATION). Value is never printed: MarshalJSON writes "[REDACTED]".
type Secret struct {
	// Origin is "https://host" or "https://host:port", the host exact or a
	// subdomain pattern ("https://*.example.com"), never "*". "http://…"
	// needs UnsafeAllowHTTP. Without a port, the scheme's default.
	Origin string `json:"origin,omitempty"`
	// Host is a host (pattern) without scheme or port, meaning Origin
	// "https://" + Host: https on port 443 only.
	//
	// Deprecated: use Origin. Before origins, Host matched every allowed
	// scheme and port of the host; set Origin or Host, not both.
	Host string `json:"host,omitempty"`
	// Header is the request header the secret is sent as, e.g.
	// "Authorization" (not one the proxy manages: Host, Content-Length,
	// Connection, Proxy-*…).
	Header string `json:"header"`
	// Value is the header's value, at least 8 bytes.
	Value string `json:"value"`
	// UnsafeAllowHTTP lets Origin be an http origin: the secret then
	// travels in clear text. It is an error with an https origin.
	UnsafeAllowHTTP bool `json:"unsafeAllowHTTP,omitempty"`
}

// Validate reports every problem of s, joined with errors.Join, each
// naming its field ("origin: …"). The rules are the FetchProxy's, from a
// package of the standard library only, so that a client validating a
// Secret does not link the proxy.
func (s Secret) Validate() error { return rule.Binding(s).Validate() }

// MarshalJSON never writes the value.
func (s Secret) MarshalJSON() ([]byte, error) { return rule.Binding(s).MarshalJSON() }
