package rule

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// MinSecretLen is the shortest Binding.Value accepted. The proxy scrubs
// secret values out of responses; a very short value would match ordinary
// text, and is no credential anyway.
const MinSecretLen = 8

// Redacted replaces secrets in responses and in printed bindings.
const Redacted = "[REDACTED]"

// Binding is a secret binding as written: egress.Binding and contract.Secret
// convert to it to be validated and marshalled, so that both accept the same
// bindings. egress.Binding's doc says what the proxy does with one.
type Binding struct {
	Origin          string `json:"origin,omitempty"`
	Host            string `json:"host,omitempty"`
	Header          string `json:"header"`
	Value           string `json:"value"`
	UnsafeAllowHTTP bool   `json:"unsafeAllowHTTP,omitempty"`
}

// Validate reports every problem in b, joined with errors.Join; each names
// its field as in JSON ("origin: …").
func (b Binding) Validate() error {
	var errs []error
	if _, err := b.Canonical(); err != nil {
		errs = append(errs, err)
	}
	switch {
	case !ValidHeaderName(b.Header):
		errs = append(errs, fmt.Errorf("header: %q is not a valid header name", b.Header))
	case ForbiddenRequestHeader(strings.ToLower(b.Header)):
		errs = append(errs, fmt.Errorf("header: %q is managed by the proxy and cannot carry a secret", b.Header))
	}
	switch {
	case len(b.Value) < MinSecretLen:
		errs = append(errs, fmt.Errorf("value: shorter than %d bytes", MinSecretLen))
	case !ValidHeaderValue(b.Value):
		errs = append(errs, errors.New("value: contains control characters"))
	}
	return errors.Join(errs...)
}

// MarshalJSON encodes the Binding with Value redacted, so that printing a
// configuration never shows a secret. (Decoding reads Value normally.)
func (b Binding) MarshalJSON() ([]byte, error) {
	type plain Binding // without this method
	p := plain(b)
	p.Value = Redacted
	return json.Marshal(p)
}

// Origin is a binding's origin in canonical form.
type Origin struct {
	Scheme  string // "https" or "http"
	Pattern string // canonical host pattern (see HostPattern)
	Port    int
}

// String is the origin as it is written: scheme://host[:port], the port
// only when it is not the scheme's default.
func (o Origin) String() string {
	h := o.Pattern
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if o.Port != DefaultPort(o.Scheme) {
		h += ":" + strconv.Itoa(o.Port)
	}
	return o.Scheme + "://" + h
}

// Canonical returns b's origin: Origin, or the deprecated Host as https on
// 443. Its error names the field at fault, as Validate's do.
func (b Binding) Canonical() (Origin, error) {
	switch {
	case b.Origin != "" && b.Host != "":
		return Origin{}, errors.New("host: set origin, or the deprecated host, not both")
	case b.Origin == "" && b.Host == "":
		return Origin{}, errors.New(`origin: required: the scheme, host and port the secret is for, e.g. "https://api.example.com" or "https://api.example.com:8443"`)
	case b.Host != "":
		return b.hostOrigin()
	}
	o, err := ParseOrigin(b.Origin)
	if err != nil {
		return o, fmt.Errorf("origin: %w", err)
	}
	switch {
	case o.Scheme == "http" && !b.UnsafeAllowHTTP:
		return o, fmt.Errorf("origin: %q is plain http: the secret would travel in clear text; use an https origin, or set unsafeAllowHTTP", b.Origin)
	case o.Scheme == "https" && b.UnsafeAllowHTTP:
		return o, fmt.Errorf("unsafeAllowHTTP: set, but origin %q is https (unsafeAllowHTTP only permits an http origin)", b.Origin)
	}
	return o, nil
}

// hostOrigin reads the deprecated Host form: a host pattern alone, which
// means https on port 443. Anything more is refused with the origin to
// write instead, rather than guessed.
func (b Binding) hostOrigin() (Origin, error) {
	h := b.Host
	if strings.Contains(h, "://") {
		return Origin{}, fmt.Errorf("host: %q has a scheme: write it as origin: %q", h, strings.TrimSuffix(h, "/"))
	}
	if a, err := netip.ParseAddr(h); err == nil && a.Is6() {
		h = "[" + h + "]" // a bare IPv6 address: its colons are no port
	}
	o, err := ParseOrigin("https://" + h)
	if err != nil {
		return o, fmt.Errorf("host: %w", err)
	}
	if o.Port != 443 {
		return o, fmt.Errorf("host: %q has a port, and host means https on port 443: write origin: %q", b.Host, o.String())
	}
	if b.UnsafeAllowHTTP {
		return o, fmt.Errorf("unsafeAllowHTTP: host %q means https; to send the secret over plain http write origin: \"http://%s\" with unsafeAllowHTTP", b.Host, b.Host)
	}
	return o, nil
}

// ParseOrigin reads "scheme://host[:port]" (a trailing "/" allowed), the
// scheme https or http, the host a HostPattern other than "*".
func ParseOrigin(s string) (Origin, error) {
	form := func(why string) error {
		return fmt.Errorf("%q is not an origin (%s): want scheme://host[:port], e.g. \"https://api.example.com:8443\"", s, why)
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return Origin{}, form("no scheme")
	}
	o := Origin{Scheme: strings.ToLower(scheme)}
	if o.Scheme != "https" && o.Scheme != "http" {
		return o, fmt.Errorf("%q: scheme %q is not supported (want https, or http with unsafeAllowHTTP)", s, scheme)
	}
	rest = strings.TrimSuffix(rest, "/")
	switch {
	case strings.ContainsAny(rest, "/?#"):
		return o, form("a secret is bound to a whole origin, not to a path")
	case strings.Contains(rest, "@"):
		return o, form("no user:password@")
	case rest == "":
		return o, form("no host")
	}
	host, portText, hasPort := rest, "", false
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return o, form("unclosed [")
		}
		a, err := netip.ParseAddr(rest[1:end])
		if err != nil || !a.Is6() {
			return o, form("only an IPv6 address goes in brackets")
		}
		host = rest[:end+1]
		if after := rest[end+1:]; after != "" {
			if after[0] != ':' {
				return o, form("junk after ]")
			}
			portText, hasPort = after[1:], true
		}
	} else if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		host, portText, hasPort = rest[:i], rest[i+1:], true
	}
	o.Port = DefaultPort(o.Scheme)
	if hasPort {
		n, ok := ParsePort(portText)
		if !ok || n == 0 || portText == "" {
			return o, fmt.Errorf("%q: %q is not a port (want 1-65535)", s, portText)
		}
		o.Port = n
	}
	if host == "*" {
		return o, fmt.Errorf("%q: a secret for every host (\"*\") would go to any server the policy allows, the step's own included; bind it to the API's origin", s)
	}
	p, err := HostPattern(host)
	if err != nil {
		return o, err
	}
	o.Pattern = p
	return o, nil
}
