package egress

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/textproto"
	"slices"
	"strings"

	"github.com/stepbox/stepbox/internal/egress/rule"
)

// MinSecretLen is the shortest Binding.Value accepted. The proxy scrubs
// secret values out of responses; a very short value would match ordinary
// text, and is no credential anyway.
const MinSecretLen = rule.MinSecretLen

// redacted replaces secrets in responses and in printed Bindings.
const redacted = rule.Redacted

// Binding is a credential the step never sees: the proxy sets header Header
// to Value on requests to the origin Origin, after the policy has allowed
// the request.
//
//	egress.Binding{Origin: "https://api.example.com", Header: "Authorization", Value: "Bearer " + token}
//
// Rules, in the order they apply:
//   - Origin is a scheme, a host and a port, "https://api.example.com" or
//     "https://api.example.com:8443" (no path; the scheme's default port
//     when none is written). The secret goes to that origin only: not to
//     another port of the host, not to the host over another scheme. The
//     host may be a pattern as in Policy.Hosts ("https://*.example.com",
//     any subdomain on 443), but not "*". A Binding never allows a
//     request; the Policy must allow it too.
//   - Only over https, unless UnsafeAllowHTTP is set and Origin is an
//     http origin: over http the secret travels in clear text, readable
//     and replayable by anyone on the path.
//   - The guest's own header of the same name (in any case) is removed, so
//     the guest can neither override nor duplicate the credential.
//   - The header is sent only to the origin the guest asked for: a redirect
//     to any other origin, even one another binding matches, and the same
//     host on another port or scheme too, goes without it. Authorization
//     and Cookie headers the guest set itself are also dropped on a
//     cross-origin redirect, as a browser does.
//   - What comes back is scrubbed of every secret of the run, whether or
//     not it was sent on this fetch, in any ASCII case; the package doc
//     ("Redaction") lists what is caught and what is not (encoded or
//     partial copies).
//   - Value never appears in audit records, error reasons, or the String,
//     GoString, LogValue or JSON forms of a Binding.
//
// Per-run bindings (RunConfig.Secrets) come before the proxy's
// (Config.Secrets): for one header name, the first matching binding wins.
type Binding struct {
	// Origin is "scheme://host[:port]": https (or http with
	// UnsafeAllowHTTP), a host or host pattern, an optional port (default:
	// 443 for https, 80 for http). Case and a trailing "/" do not matter.
	Origin string `json:"origin,omitempty" yaml:"origin,omitempty"`
	// Host is the form before origins, still accepted: a host (pattern)
	// without scheme or port, meaning Origin "https://" + Host, so https
	// on port 443 only. Set Origin or Host, not both.
	//
	// Deprecated: use Origin. Before origins, Host matched every allowed
	// scheme and port of the host.
	Host   string `json:"host,omitempty" yaml:"host,omitempty"`
	Header string `json:"header" yaml:"header"`
	Value  string `json:"value" yaml:"value"` // marshalled as "[REDACTED]"
	// UnsafeAllowHTTP lets Origin be an http origin, so that the secret
	// travels in clear text. It permits nothing else: it is an error with
	// an https origin or with Host.
	UnsafeAllowHTTP bool `json:"unsafeAllowHTTP,omitempty" yaml:"unsafeAllowHTTP,omitempty"`
}

// Validate reports every problem in b, joined with errors.Join; each names
// its field as in JSON ("origin: …"). The rules are package rule's, which
// contract.Secret shares.
func (b Binding) Validate() error { return rule.Binding(b).Validate() }

// Unjoin returns the errors that errors.Join joined into err, or err
// alone, so that a caller can put its field prefix on each line of
// Validate's report.
func Unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// origin returns b's origin in canonical form: Origin, or the deprecated
// Host as https on 443.
func (b Binding) origin() (rule.Origin, error) { return rule.Binding(b).Canonical() }

// String returns the Binding with Value redacted.
func (b Binding) String() string {
	var s strings.Builder
	s.WriteString("Binding{")
	if b.Origin != "" || b.Host == "" {
		fmt.Fprintf(&s, "Origin: %q, ", b.Origin)
	}
	if b.Host != "" {
		fmt.Fprintf(&s, "Host: %q, ", b.Host)
	}
	fmt.Fprintf(&s, "Header: %q, Value: %s", b.Header, redacted)
	if b.UnsafeAllowHTTP {
		s.WriteString(", UnsafeAllowHTTP: true")
	}
	s.WriteString("}")
	return s.String()
}

// GoString returns the Binding with Value redacted, for %#v.
func (b Binding) GoString() string { return "egress." + b.String() }

// LogValue returns the Binding with Value redacted, for log/slog.
func (b Binding) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("origin", b.Origin)}
	if b.Host != "" {
		attrs = append(attrs, slog.String("host", b.Host))
	}
	attrs = append(attrs, slog.String("header", b.Header), slog.String("value", redacted))
	if b.UnsafeAllowHTTP {
		attrs = append(attrs, slog.Bool("unsafeAllowHTTP", true))
	}
	return slog.GroupValue(attrs...)
}

// MarshalJSON encodes the Binding with Value redacted, so that printing a
// configuration never shows a secret. (Decoding reads Value normally.)
func (b Binding) MarshalJSON() ([]byte, error) { return rule.Binding(b).MarshalJSON() }

// binding is a validated Binding in canonical form.
type binding struct {
	origin rule.Origin
	header string // canonical MIME header key
	value  string
}

// matches reports whether b applies to a request for t: its scheme, its
// port, and a host its pattern matches. A binding to http exists only with
// UnsafeAllowHTTP (Validate).
func (b binding) matches(t *target) bool {
	return t.scheme == b.origin.Scheme && t.port == b.origin.Port && matchHost(b.origin.Pattern, t.host, t.ip.IsValid())
}

// compileBindings validates bs; field names in errors start with prefix.
func compileBindings(prefix string, bs []Binding) ([]binding, error) {
	var out []binding
	var errs []error
	for i, b := range bs {
		if err := b.Validate(); err != nil {
			for _, e := range Unjoin(err) {
				errs = append(errs, fmt.Errorf("egress: %s[%d]: %w", prefix, i, e))
			}
			continue
		}
		o, _ := b.origin()
		out = append(out, binding{origin: o, header: textproto.CanonicalMIMEHeaderKey(b.Header), value: b.Value})
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
			if !b.matches(t) {
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

// redactor finds a run's secrets in what comes back from upstream, before
// the guest sees it, and replaces them with "[REDACTED]": each whole value
// and the credential part of "<scheme> <credential>", in any ASCII case.
// The package doc ("Redaction") says where the proxy applies it and what
// it does not catch.
//
// A redactor is immutable and safe for concurrent use.
type redactor struct {
	needles []string // ASCII lower-case; longest first, no duplicates
}

// newRedactor returns the redactor for the secrets of lists.
func newRedactor(lists ...[]binding) *redactor {
	r := &redactor{}
	add := func(s string) {
		if s = asciiLower(s); len(s) >= MinSecretLen && !slices.Contains(r.needles, s) {
			r.needles = append(r.needles, s)
		}
	}
	for _, l := range lists {
		for _, b := range l {
			add(b.value)
			if scheme, cred, ok := strings.Cut(b.value, " "); ok && rule.ValidHeaderName(scheme) {
				add(strings.Trim(cred, " \t"))
			}
		}
	}
	slices.SortStableFunc(r.needles, func(a, b string) int { return len(b) - len(a) })
	return r
}

// asciiLower lower-cases ASCII letters only, so that lengths and the
// positions of every byte stay as they were.
func asciiLower(s string) string { return string(asciiLowerBytes([]byte(s))) }

func asciiLowerBytes(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// spans returns the merged [start, end) ranges of b that hold a needle.
func (r *redactor) spans(b []byte) [][2]int {
	if len(r.needles) == 0 || len(b) < MinSecretLen {
		return nil
	}
	lower := asciiLowerBytes(b)
	var spans [][2]int
	for _, n := range r.needles {
		for off := 0; ; {
			i := bytes.Index(lower[off:], []byte(n))
			if i < 0 {
				break
			}
			spans = append(spans, [2]int{off + i, off + i + len(n)})
			off += i + len(n)
		}
	}
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	merged := spans[:1]
	for _, s := range spans[1:] {
		if last := &merged[len(merged)-1]; s[0] <= last[1] {
			last[1] = max(last[1], s[1])
		} else {
			merged = append(merged, s)
		}
	}
	return merged
}

// scrub returns b with every secret replaced by "[REDACTED]"; b itself if
// it holds none.
func (r *redactor) scrub(b []byte) []byte {
	spans := r.spans(b)
	if spans == nil {
		return b
	}
	out := make([]byte, 0, len(b))
	prev := 0
	for _, s := range spans {
		out = append(out, b[prev:s[0]]...)
		out = append(out, redacted...)
		prev = s[1]
	}
	return append(out, b[prev:]...)
}

// scrubString is scrub for a string.
func (r *redactor) scrubString(s string) string {
	if r.spans([]byte(s)) == nil {
		return s
	}
	return string(r.scrub([]byte(s)))
}

// holds reports whether s contains a secret.
func (r *redactor) holds(s string) bool { return r.spans([]byte(s)) != nil }

// scrubHeaders replaces every header value that holds a secret by
// "[REDACTED]", and the name too if the name holds one, keeping h sorted
// by name.
func (r *redactor) scrubHeaders(h [][2]string) {
	renamed := false
	for i := range h {
		if r.holds(h[i][0]) {
			h[i] = [2]string{strings.ToLower(redacted), redacted}
			renamed = true
		} else if r.holds(h[i][1]) {
			h[i][1] = redacted
		}
	}
	if renamed {
		slices.SortStableFunc(h, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	}
}
