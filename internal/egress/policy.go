package egress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/stepbox/stepbox/internal/egress/rule"
)

// Defaults for the Policy fields whose zero value means "the default", and
// for Limits.
const (
	DefaultScheme              = "https"
	DefaultMaxRequests         = 100
	DefaultMaxRequestBodyBytes = 1 << 20 // 1 MiB
	DefaultMaxResponseBytes    = 5 << 20 // 5 MiB, per response
	DefaultTimeoutMs           = 10_000
	DefaultMaxRedirects        = 5
	DefaultMaxFetchBytes       = 32 << 20 // 32 MiB, per run (Limits.MaxBytes)
)

// DefaultMethods returns the methods a Policy with no Methods allows.
func DefaultMethods() []string {
	return []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
}

// Policy says which requests the proxy may make on a step's behalf. It is
// plain data: load it from JSON or YAML (ParsePolicy), print it, compare it,
// send it.
//
// The zero Policy denies every request (no Hosts); every other zero field
// means the documented default, so that
//
//	egress.Policy{Hosts: []string{"api.example.com"}}
//
// allows exactly GET/HEAD/POST/PUT/PATCH/DELETE/OPTIONS to
// https://api.example.com:443 at public addresses, within the default caps.
//
// Engine, plan, tenant and request policies combine with Narrow, which
// intersects and never widens. The decision table in doc.go says in which
// order the rules apply.
type Policy struct {
	// Schemes the guest may use: "https", "http". Empty means ["https"].
	Schemes []string `json:"schemes,omitempty" yaml:"schemes,omitempty"`

	// Hosts the guest may reach, as patterns:
	//   "api.example.com"  that host exactly (case-insensitive, trailing dot ignored);
	//   "*.example.com"    any subdomain at any depth (a.example.com, a.b.example.com),
	//                      but NOT the apex example.com: list it too if wanted;
	//   "203.0.113.7", "2001:db8::1"  an IP literal in the URL, in canonical
	//                      form (a URL's 0xcb.0.113.7 matches "203.0.113.7");
	//   "*"                any host; the address rules below still apply.
	// A pattern has no scheme and no port. Empty means no host: deny all.
	Hosts []string `json:"hosts,omitempty" yaml:"hosts,omitempty"`

	// Ports the guest may use, for every allowed scheme. Empty means the
	// scheme's default port only (443 for https, 80 for http).
	Ports []int `json:"ports,omitempty" yaml:"ports,omitempty"`

	// Methods the guest may use. GET, HEAD, POST, PUT, DELETE and OPTIONS
	// are matched case-insensitively (fetch normalises them); any other
	// method exactly. CONNECT, TRACE and TRACK are never allowed. Empty
	// means DefaultMethods().
	Methods []string `json:"methods,omitempty" yaml:"methods,omitempty"`

	// MaxRequests caps fetch calls per run, counting denied ones. Zero means
	// DefaultMaxRequests; Limits.MaxRequests may lower it per run.
	MaxRequests int `json:"maxRequests,omitempty" yaml:"maxRequests,omitempty"`

	// MaxRequestBodyBytes caps one request body, in bytes after base64
	// decoding. Zero means DefaultMaxRequestBodyBytes.
	MaxRequestBodyBytes int64 `json:"maxRequestBodyBytes,omitempty" yaml:"maxRequestBodyBytes,omitempty"`

	// MaxResponseBytes caps one response body, in bytes after content
	// decoding. Zero means DefaultMaxResponseBytes. Crossing it fails that
	// fetch (KindDenied); the run-wide total is Limits.MaxBytes.
	MaxResponseBytes int64 `json:"maxResponseBytes,omitempty" yaml:"maxResponseBytes,omitempty"`

	// TimeoutMs caps one fetch end to end (DNS, connect, TLS, every
	// redirect, reading the body), in milliseconds. Zero means
	// DefaultTimeoutMs; a Request's TimeoutMs may lower it.
	TimeoutMs int `json:"timeoutMs,omitempty" yaml:"timeoutMs,omitempty"`

	// MaxRedirects caps redirects followed per fetch. Zero means
	// DefaultMaxRedirects; -1 means follow none (a redirect then fails the
	// fetch unless the request asked for redirect "manual").
	MaxRedirects int `json:"maxRedirects,omitempty" yaml:"maxRedirects,omitempty"`

	// UnsafeAllowAddresses exempts these prefixes from the address rules
	// (loopback, private, link-local, metadata, …), e.g. "10.1.2.0/24" for
	// an internal API. Hosts still apply. Every entry is a hole in the SSRF
	// defence: keep it empty in production unless you mean it. An
	// IPv4-mapped IPv6 address (::ffff:a.b.c.d) counts as its IPv4 address;
	// other embedding forms (NAT64, 6to4) do not.
	UnsafeAllowAddresses []netip.Prefix `json:"unsafeAllowAddresses,omitempty" yaml:"unsafeAllowAddresses,omitempty"`
}

// ParsePolicy decodes a Policy from JSON and validates it. Unknown fields
// and trailing data are errors, so a misspelt field cannot silently widen
// or narrow a policy.
func ParsePolicy(data []byte) (Policy, error) {
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("egress: parse policy: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Policy{}, errors.New("egress: parse policy: trailing data after the policy object")
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// Validate reports every problem in p, joined with errors.Join; each names
// its field as in JSON ("hosts[2]: …"). The zero Policy is valid.
func (p Policy) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("egress: policy: "+format, args...))
	}
	for i, s := range p.Schemes {
		if ls := strings.ToLower(s); ls != "http" && ls != "https" {
			bad("schemes[%d]: %q is not supported (want \"https\" or \"http\")", i, s)
		}
	}
	for i, h := range p.Hosts {
		if _, err := rule.HostPattern(h); err != nil {
			bad("hosts[%d]: %w", i, err)
		}
	}
	for i, n := range p.Ports {
		if n < 1 || n > 65535 {
			bad("ports[%d]: %d is not a port (want 1-65535)", i, n)
		}
	}
	for i, m := range p.Methods {
		if _, err := canonicalMethod(m); err != nil {
			bad("methods[%d]: %w", i, err)
		}
	}
	if p.MaxRequests < 0 {
		bad("maxRequests: %d is negative", p.MaxRequests)
	}
	if p.MaxRequestBodyBytes < 0 {
		bad("maxRequestBodyBytes: %d is negative", p.MaxRequestBodyBytes)
	}
	if p.MaxResponseBytes < 0 {
		bad("maxResponseBytes: %d is negative", p.MaxResponseBytes)
	}
	if p.TimeoutMs < 0 {
		bad("timeoutMs: %d is negative", p.TimeoutMs)
	}
	if p.MaxRedirects < -1 {
		bad("maxRedirects: %d is invalid (want -1 for none, 0 for the default, or a count)", p.MaxRedirects)
	}
	for i, pfx := range p.UnsafeAllowAddresses {
		if !pfx.IsValid() {
			bad("unsafeAllowAddresses[%d]: not a valid prefix", i)
		}
	}
	return errors.Join(errs...)
}

// Narrow returns the policy that allows exactly what both p and other allow:
// schemes, hosts, ports, methods and unsafe prefixes are intersected, caps
// take the smaller value. It never allows anything p does not. Use it to
// apply plan, tenant and request restrictions to the engine's policy:
//
//	eff := engine.Narrow(plan).Narrow(tenant)
//
// A policy with no Hosts (such as the zero Policy) narrows everything to
// deny-all; to restrict only, say, methods, give Hosts: ["*"]. When an
// intersection is empty the result has no Hosts and so denies everything.
// Invalid entries (see Validate) are dropped, which can only narrow. The
// result states every field explicitly.
func (p Policy) Narrow(other Policy) Policy {
	a, b := compile(p), compile(other)
	out := Policy{
		MaxRequests:         min(a.maxRequests, b.maxRequests),
		MaxRequestBodyBytes: min(a.maxRequestBody, b.maxRequestBody),
		MaxResponseBytes:    min(a.maxResponse, b.maxResponse),
		TimeoutMs:           int(min(a.timeout, b.timeout) / time.Millisecond),
		MaxRedirects:        min(a.maxRedirects, b.maxRedirects),
	}
	if out.MaxRedirects == 0 {
		out.MaxRedirects = -1
	}

	schemes := intersect(a.schemes, b.schemes)
	switch {
	case a.ports == nil && b.ports == nil:
	case a.ports != nil && b.ports != nil:
		out.Ports = intersect(a.ports, b.ports)
		if len(out.Ports) == 0 {
			return out // deny all
		}
	default:
		// One side allows only default ports, the other a list: keep the
		// schemes whose default port is on the list, with default ports.
		list := a.ports
		if list == nil {
			list = b.ports
		}
		schemes = slices.DeleteFunc(schemes, func(s string) bool {
			return !slices.Contains(list, rule.DefaultPort(s))
		})
	}
	methods := intersect(a.methods, b.methods)
	var hosts []string
	for _, x := range a.hosts {
		for _, y := range b.hosts {
			if h, ok := intersectHostPatterns(x, y); ok && !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	if len(schemes) == 0 || len(methods) == 0 || len(hosts) == 0 {
		out.Ports = nil
		return out // deny all
	}
	slices.Sort(hosts)
	out.Schemes, out.Methods, out.Hosts = schemes, methods, hosts
	for _, x := range a.unsafe {
		for _, y := range b.unsafe {
			var z netip.Prefix
			switch {
			case x.Bits() <= y.Bits() && x.Contains(y.Addr()):
				z = y
			case y.Bits() < x.Bits() && y.Contains(x.Addr()):
				z = x
			default:
				continue
			}
			if !slices.Contains(out.UnsafeAllowAddresses, z) {
				out.UnsafeAllowAddresses = append(out.UnsafeAllowAddresses, z)
			}
		}
	}
	return out
}

// intersect returns the elements of a that are in b, in a's order.
func intersect[T comparable](a, b []T) []T {
	out := []T{}
	for _, x := range a {
		if slices.Contains(b, x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// rules is a Policy with defaults applied and entries canonicalised: what
// the proxy consults per request. Invalid entries are dropped (fail closed).
type rules struct {
	schemes        []string // lower-case
	hosts          []string // canonical patterns
	ports          []int    // nil: the scheme's default port only
	methods        []string // canonical
	maxRequests    int
	maxRequestBody int64
	maxResponse    int64
	timeout        time.Duration
	maxRedirects   int // 0: follow none
	unsafe         []netip.Prefix
}

func compile(p Policy) *rules {
	r := &rules{
		maxRequests:    orDefault(p.MaxRequests, DefaultMaxRequests),
		maxRequestBody: orDefault(p.MaxRequestBodyBytes, DefaultMaxRequestBodyBytes),
		maxResponse:    orDefault(p.MaxResponseBytes, DefaultMaxResponseBytes),
		timeout:        time.Duration(orDefault(p.TimeoutMs, DefaultTimeoutMs)) * time.Millisecond,
		maxRedirects:   orDefault(p.MaxRedirects, DefaultMaxRedirects),
	}
	if r.maxRedirects < 0 {
		r.maxRedirects = 0
	}
	for _, s := range p.Schemes {
		if s = strings.ToLower(s); (s == "http" || s == "https") && !slices.Contains(r.schemes, s) {
			r.schemes = append(r.schemes, s)
		}
	}
	if len(p.Schemes) == 0 {
		r.schemes = []string{DefaultScheme}
	}
	for _, h := range p.Hosts {
		if c, err := rule.HostPattern(h); err == nil && !slices.Contains(r.hosts, c) {
			r.hosts = append(r.hosts, c)
		}
	}
	if len(p.Ports) > 0 {
		r.ports = []int{}
		for _, n := range p.Ports {
			if n >= 1 && n <= 65535 && !slices.Contains(r.ports, n) {
				r.ports = append(r.ports, n)
			}
		}
	}
	methods := p.Methods
	if len(methods) == 0 {
		methods = DefaultMethods()
	}
	for _, m := range methods {
		if c, err := canonicalMethod(m); err == nil && !slices.Contains(r.methods, c) {
			r.methods = append(r.methods, c)
		}
	}
	for _, pfx := range p.UnsafeAllowAddresses {
		if pfx.IsValid() {
			r.unsafe = append(r.unsafe, pfx)
		}
	}
	return r
}

func orDefault[T int | int64](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

func (r *rules) allowsHost(t *target) bool {
	for _, p := range r.hosts {
		if matchHost(p, t.host, t.ip.IsValid()) {
			return true
		}
	}
	return false
}

func (r *rules) allowsPort(t *target) bool {
	if r.ports == nil {
		return t.port == rule.DefaultPort(t.scheme)
	}
	return slices.Contains(r.ports, t.port)
}

// unsafeAllowed reports whether a is exempted by UnsafeAllowAddresses.
func (r *rules) unsafeAllowed(a netip.Addr) bool {
	a = a.WithZone("")
	for _, p := range r.unsafe {
		if p.Contains(a) || (a.Is4In6() && p.Contains(a.Unmap())) {
			return true
		}
	}
	return false
}

// checkAddr returns a denial if a may not be dialled. host is the name the
// guest wrote ("" for an IP literal), for the message.
func (r *rules) checkAddr(host string, a netip.Addr) *Error {
	class, via := classify(a)
	if class == ClassPublic || r.unsafeAllowed(a) {
		return nil
	}
	what := "address " + a.String()
	if host != "" {
		what = fmt.Sprintf("host %q resolves to %s, which", host, a)
	}
	if via.IsValid() {
		return deniedf("%s is %s (it embeds %s)", what, class.describe(), via)
	}
	return deniedf("%s is %s", what, class.describe())
}

// matchHost reports whether the canonical host matches the canonical pattern.
func matchHost(pattern, host string, isIP bool) bool {
	switch {
	case pattern == "*":
		return true
	case strings.HasPrefix(pattern, "*."):
		suffix := pattern[1:] // ".example.com"
		return !isIP && len(host) > len(suffix) && strings.HasSuffix(host, suffix)
	default:
		return pattern == host
	}
}

// intersectHostPatterns returns the pattern matching exactly the hosts both
// x and y match, if one pattern can say it (always, for these shapes).
func intersectHostPatterns(x, y string) (string, bool) {
	switch {
	case x == "*":
		return y, true
	case y == "*":
		return x, true
	}
	xw, yw := strings.HasPrefix(x, "*."), strings.HasPrefix(y, "*.")
	switch {
	case !xw && !yw:
		return x, x == y
	case xw && !yw:
		return y, matchHost(x, y, isIPPattern(y))
	case !xw && yw:
		return x, matchHost(y, x, isIPPattern(x))
	}
	xs, ys := x[1:], y[1:] // ".a.example.com", ".example.com"
	switch {
	case strings.HasSuffix(xs, ys):
		return x, true
	case strings.HasSuffix(ys, xs):
		return y, true
	}
	return "", false
}

func isIPPattern(p string) bool {
	_, err := netip.ParseAddr(p)
	return err == nil
}
