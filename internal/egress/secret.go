package egress

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/textproto"
	"strings"
)

// MinSecretLen is the shortest Binding.Value accepted. The proxy scrubs
// secret values out of responses; a very short value would match ordinary
// text, and is no credential anyway.
const MinSecretLen = 8

// redacted replaces secrets in responses and in printed Bindings.
const redacted = "[REDACTED]"

// Binding is a credential the step never sees: the proxy sets header Header
// to Value on requests to hosts matching Host, after the policy has allowed
// the request.
//
//	egress.Binding{Host: "api.example.com", Header: "Authorization", Value: "Bearer " + token}
//
// Rules, in the order they apply:
//   - Host is a pattern as in Policy.Hosts. A Binding never allows a host;
//     the Policy must allow it too.
//   - The guest's own header of the same name is removed, so the guest can
//     neither override nor duplicate the credential.
//   - The header is sent only to the origin (scheme, host, port) the guest
//     asked for: a redirect to any other origin, even one matching Host,
//     goes without it. Authorization and Cookie headers the guest set
//     itself are also dropped on a cross-origin redirect, as a browser does.
//   - Response headers whose value contains Value are replaced by
//     "[REDACTED]", and occurrences of Value in the response body are
//     replaced too (best effort: an upstream that reflects a transformed
//     credential, say base64 of it, is not caught).
//   - Value never appears in audit records, error reasons, or the String,
//     GoString, LogValue or JSON forms of a Binding.
//
// Per-run bindings (RunConfig.Secrets) come before the proxy's
// (Config.Secrets): for one header name, the first matching binding wins.
type Binding struct {
	Host   string `json:"host" yaml:"host"`
	Header string `json:"header" yaml:"header"`
	Value  string `json:"value" yaml:"value"` // marshalled as "[REDACTED]"
}

// Validate reports every problem in b, joined with errors.Join.
func (b Binding) Validate() error {
	var errs []error
	if _, err := canonicalHostPattern(b.Host); err != nil {
		errs = append(errs, fmt.Errorf("host: %w", err))
	}
	switch {
	case !validHeaderName(b.Header):
		errs = append(errs, fmt.Errorf("header: %q is not a valid header name", b.Header))
	case forbiddenRequestHeader(strings.ToLower(b.Header)):
		errs = append(errs, fmt.Errorf("header: %q is managed by the proxy and cannot carry a secret", b.Header))
	}
	switch {
	case len(b.Value) < MinSecretLen:
		errs = append(errs, fmt.Errorf("value: shorter than %d bytes", MinSecretLen))
	case !validHeaderValue(b.Value):
		errs = append(errs, errors.New("value: contains control characters"))
	}
	return errors.Join(errs...)
}

// String returns the Binding with Value redacted.
func (b Binding) String() string {
	return fmt.Sprintf("Binding{Host: %q, Header: %q, Value: %s}", b.Host, b.Header, redacted)
}

// GoString returns the Binding with Value redacted, for %#v.
func (b Binding) GoString() string { return "egress." + b.String() }

// LogValue returns the Binding with Value redacted, for log/slog.
func (b Binding) LogValue() slog.Value {
	return slog.GroupValue(slog.String("host", b.Host), slog.String("header", b.Header),
		slog.String("value", redacted))
}

// MarshalJSON encodes the Binding with Value redacted, so that printing a
// configuration never shows a secret. (Decoding reads Value normally.)
func (b Binding) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"host":%q,"header":%q,"value":%q}`, b.Host, b.Header, redacted), nil
}

// binding is a validated Binding in canonical form.
type binding struct {
	pattern string
	header  string // canonical MIME header key
	value   string
}

// compileBindings validates bs; field names in errors start with prefix.
func compileBindings(prefix string, bs []Binding) ([]binding, error) {
	var out []binding
	var errs []error
	for i, b := range bs {
		if err := b.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("egress: %s[%d]: %w", prefix, i, err))
			continue
		}
		p, _ := canonicalHostPattern(b.Host)
		out = append(out, binding{pattern: p, header: textproto.CanonicalMIMEHeaderKey(b.Header), value: b.Value})
	}
	return out, errors.Join(errs...)
}

// selectBindings returns the bindings that apply to t: the first matching
// binding per header name, from lists in priority order.
func selectBindings(t *target, lists ...[]binding) []binding {
	var out []binding
	for _, l := range lists {
	next:
		for _, b := range l {
			if !matchHost(b.pattern, t.host, t.ip.IsValid()) {
				continue
			}
			for _, o := range out {
				if o.header == b.header {
					continue next
				}
			}
			out = append(out, b)
		}
	}
	return out
}

// scrubHeaders replaces every header value containing one of secrets.
func scrubHeaders(h [][2]string, secrets []string) {
	for i := range h {
		for _, s := range secrets {
			if strings.Contains(h[i][1], s) {
				h[i][1] = redacted
				break
			}
		}
	}
}

// scrubBody replaces every occurrence of one of secrets in body.
func scrubBody(body []byte, secrets []string) []byte {
	for _, s := range secrets {
		if bytes.Contains(body, []byte(s)) {
			body = bytes.ReplaceAll(body, []byte(s), []byte(redacted))
		}
	}
	return body
}
