package egress

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/stepbox/stepbox/internal/egress/rule"
)

// target is a request URL reduced to what the policy judges and what the
// proxy sends. Every field is canonical: two spellings that reach the same
// place (http://0x7f.1/ and http://127.0.0.1/) give equal targets.
type target struct {
	scheme string     // "http" or "https"
	host   string     // lower-case domain without trailing dot, or an IP address (IPv6 without brackets)
	ip     netip.Addr // valid when host is an IP literal
	port   int        // explicit or the scheme's default
	url    *url.URL   // the URL sent upstream, built from the fields above; no userinfo, no fragment
}

// origin is scheme, host and port: the unit credentials are bound to.
type origin struct {
	scheme, host string
	port         int
}

func (t *target) origin() origin { return origin{t.scheme, t.host, t.port} }

// hostport is the "host:port" string http.Transport passes to DialContext.
func (t *target) hostport() string { return net.JoinHostPort(t.host, strconv.Itoa(t.port)) }

// parseTarget parses raw the way a WHATWG URL parser (a browser's, or
// Node's) would for the parts that decide where a request goes, so that the
// proxy judges the place the guest's own URL parser would have reached:
//
//   - leading and trailing C0 controls and spaces are trimmed, tabs and
//     newlines removed anywhere;
//   - for http and https, "\" counts as "/" before the query, and any number
//     of slashes may follow "scheme:";
//   - the host is percent-decoded and lower-cased; a host that ends in a
//     number is an IPv4 address in any spelling the WHATWG IPv4 parser
//     accepts (2130706433, 0177.0.0.1, 0x7f.1, 127.1, a trailing dot), and
//     one that does not parse as such is invalid;
//   - a single trailing dot of a domain is dropped (DNS treats both alike).
//
// It departs from a browser in being stricter: userinfo is refused rather
// than stripped, non-ASCII (IDN) hosts are refused rather than
// punycode-encoded, and IPv6 zones are refused. Errors are *Error of
// KindInvalid or KindDenied.
func parseTarget(raw string) (*target, *Error) {
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	s = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)

	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !validScheme(s[:colon]) {
		return nil, invalidf("Invalid URL: %s", quoteURL(raw))
	}
	scheme := strings.ToLower(s[:colon])
	if scheme != "http" && scheme != "https" {
		return nil, deniedf("scheme %q is not allowed", scheme)
	}
	rest := s[colon+1:]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i] // the fragment is never sent
	}
	pathEnd := strings.IndexByte(rest, '?')
	if pathEnd < 0 {
		pathEnd = len(rest)
	}
	rest = strings.ReplaceAll(rest[:pathEnd], `\`, "/") + rest[pathEnd:]
	rest = strings.TrimLeft(rest, "/")

	authEnd := strings.IndexAny(rest, "/?")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	authority, tail := rest[:authEnd], rest[authEnd:]
	if strings.Contains(authority, "@") {
		return nil, deniedf("URL must not contain credentials (user:password@); use headers, or ask the operator for a secret binding")
	}

	hostText, portText := authority, ""
	if strings.HasPrefix(authority, "[") {
		end := strings.IndexByte(authority, ']')
		if end < 0 {
			return nil, invalidf("Invalid URL: %s", quoteURL(raw))
		}
		hostText, portText = authority[:end+1], authority[end+1:]
		if portText != "" {
			if portText[0] != ':' {
				return nil, invalidf("Invalid URL: %s", quoteURL(raw))
			}
			portText = portText[1:]
		}
	} else if i := strings.LastIndexByte(authority, ':'); i >= 0 {
		hostText, portText = authority[:i], authority[i+1:]
	}

	host, ip, ok := parseHost(hostText)
	if !ok {
		return nil, invalidf("Invalid URL: %s", quoteURL(raw))
	}
	port := rule.DefaultPort(scheme)
	if portText != "" {
		n, ok := rule.ParsePort(portText)
		if !ok {
			return nil, invalidf("Invalid URL: %s (bad port)", quoteURL(raw))
		}
		port = n
	}
	if port == 0 {
		return nil, deniedf("port 0 is not allowed")
	}

	t := &target{scheme: scheme, host: host, ip: ip, port: port}
	u, err := url.Parse(scheme + "://" + t.urlHost() + encodeTail(tail))
	if err != nil || u.User != nil || u.Hostname() != host || u.Fragment != "" {
		return nil, invalidf("Invalid URL: %s", quoteURL(raw))
	}
	if u.Path == "" {
		u.Path = "/"
	}
	t.url = u
	return t, nil
}

// urlHost is the host[:port] for a URL: brackets around IPv6, no default port.
func (t *target) urlHost() string {
	h := t.host
	if t.ip.Is6() {
		h = "[" + h + "]"
	}
	if t.port != rule.DefaultPort(t.scheme) {
		h += ":" + strconv.Itoa(t.port)
	}
	return h
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// parseHost implements the WHATWG host parser for special schemes, minus
// IDNA: it returns the canonical host string and, for IP literals, the
// address.
func parseHost(s string) (string, netip.Addr, bool) {
	if strings.HasPrefix(s, "[") {
		if !strings.HasSuffix(s, "]") {
			return "", netip.Addr{}, false
		}
		inner := s[1 : len(s)-1]
		if strings.ContainsAny(inner, "%") { // zones are not part of URLs
			return "", netip.Addr{}, false
		}
		a, err := netip.ParseAddr(inner)
		if err != nil || !a.Is6() {
			return "", netip.Addr{}, false
		}
		return a.String(), a, true
	}
	if s == "" {
		return "", netip.Addr{}, false
	}
	d, ok := percentDecode(s)
	if !ok {
		return "", netip.Addr{}, false
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c >= 0x80 || forbiddenDomainByte(c) {
			return "", netip.Addr{}, false
		}
	}
	d = strings.ToLower(d)
	if rule.EndsInNumber(d) {
		a, ok := rule.ParseIPv4(d)
		if !ok {
			return "", netip.Addr{}, false
		}
		return a.String(), a, true
	}
	d = strings.TrimSuffix(d, ".")
	if d == "" || strings.HasSuffix(d, ".") || len(d) > 253 {
		return "", netip.Addr{}, false
	}
	return d, netip.Addr{}, true
}

// forbiddenDomainByte reports WHATWG forbidden domain code points (ASCII part).
func forbiddenDomainByte(c byte) bool {
	if c <= 0x20 || c == 0x7f {
		return true
	}
	return strings.IndexByte("#%/:<>?@[\\]^|", c) >= 0
}

func percentDecode(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
				i += 2
				continue
			}
			return "", false // "%" left undecoded is a forbidden domain code point anyway
		}
		b.WriteByte(s[i])
	}
	return b.String(), true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// encodeTail percent-encodes path and query the way a WHATWG serializer
// does (controls, space, non-ASCII, and the special-query set), and turns a
// "%" that does not start an escape into "%25", so that url.Parse accepts
// what a browser would send.
func encodeTail(tail string) string {
	var b strings.Builder
	inQuery := false
	for i := 0; i < len(tail); i++ {
		c := tail[i]
		switch {
		case c == '?' && !inQuery:
			inQuery = true
			b.WriteByte(c)
		case c == '%':
			if i+2 < len(tail) && isHex(tail[i+1]) && isHex(tail[i+2]) {
				b.WriteByte(c)
			} else {
				b.WriteString("%25")
			}
		case c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '`' ||
			c == '{' || c == '}' || (inQuery && c == '\''):
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[c>>4])
			b.WriteByte("0123456789ABCDEF"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// resolveLocation resolves a redirect's Location against the URL that
// produced it and parses the result like any other request URL.
func resolveLocation(base *target, loc string) (*target, *Error) {
	loc = strings.TrimFunc(loc, func(r rune) bool { return r <= ' ' })
	if i := strings.IndexByte(loc, ':'); i > 0 && validScheme(loc[:i]) {
		return parseTarget(loc) // absolute
	}
	// Relative: treat "\" as "/" before the query, as a browser does for
	// http(s) bases, so "/\evil.example" is the scheme-relative
	// "//evil.example" it is in a browser.
	end := strings.IndexAny(loc, "?#")
	if end < 0 {
		end = len(loc)
	}
	loc = strings.ReplaceAll(loc[:end], `\`, "/") + loc[end:]
	if strings.HasPrefix(loc, "//") {
		return parseTarget(base.scheme + ":" + loc)
	}
	ref, err := url.Parse(encodeTail(loc))
	if err != nil {
		return nil, invalidf("redirect to an invalid URL: %s", quoteURL(loc))
	}
	return parseTarget(base.url.ResolveReference(ref).String())
}

// redactURL is how URLs appear in audit records: scheme, host, port and
// path are kept; each query value is replaced by "REDACTED" (keys are kept,
// since they help debugging and rarely carry secrets; values often do:
// ?api_key=…, ?token=…, signed URLs); the fragment is never sent.
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.Fragment, c.RawFragment = "", ""
	if c.RawQuery != "" {
		params := strings.Split(c.RawQuery, "&")
		for i, p := range params {
			if k, _, ok := strings.Cut(p, "="); ok {
				params[i] = k + "=REDACTED"
			} else if p != "" {
				params[i] = "REDACTED"
			}
		}
		c.RawQuery = strings.Join(params, "&")
	}
	return c.String()
}

// sanitizeRawURL is how a URL that failed to parse appears in audit records:
// cut at the query, userinfo removed, at most 256 bytes.
func sanitizeRawURL(raw string) string {
	s := raw
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "//"); i >= 0 {
		auth := s[i+2:]
		end := strings.IndexAny(auth, "/\\")
		if end < 0 {
			end = len(auth)
		}
		if at := strings.LastIndexByte(auth[:end], '@'); at >= 0 {
			s = s[:i+2] + "REDACTED@" + auth[at+1:]
		}
	}
	if len(s) > 256 {
		s = s[:256]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// quoteURL quotes a URL for a guest-facing message, shortened and without
// userinfo.
func quoteURL(raw string) string { return strconv.Quote(sanitizeRawURL(raw)) }
