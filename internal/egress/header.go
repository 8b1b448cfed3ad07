package egress

import (
	"net/http"
	"slices"
	"strings"
)

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s may be sent as a field value: no
// control characters other than horizontal tab (so no CR/LF injection).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// forbiddenRequestHeader reports headers the guest may not set (lower-case
// name); they are dropped silently, as a browser's fetch does. The proxy
// owns framing (Content-Length, Transfer-Encoding), the connection
// (Connection, Keep-Alive, TE, Trailer, Upgrade, Expect, Proxy-*), the
// target (Host: overriding it would let a request for an allowed host reach
// another virtual host at the same address), and content coding
// (Accept-Encoding: the proxy asks for gzip and decodes, so the byte caps
// apply to decoded bodies).
func forbiddenRequestHeader(lname string) bool {
	switch lname {
	case "host", "content-length", "transfer-encoding", "connection", "keep-alive",
		"te", "trailer", "upgrade", "expect", "accept-encoding":
		return true
	}
	return strings.HasPrefix(lname, "proxy-")
}

// hopByHop are response headers that describe one connection, not the
// response (RFC 9110 7.6.1); they are not returned to the guest.
func hopByHop(lname string) bool {
	switch lname {
	case "connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
		"proxy-connection", "te", "trailer", "transfer-encoding", "upgrade":
		return true
	}
	return false
}

// canonicalMethod validates a method and normalises it as fetch does:
// DELETE, GET, HEAD, OPTIONS, POST and PUT are upper-cased, any other
// method is kept as written. CONNECT, TRACE and TRACK are refused.
func canonicalMethod(m string) (string, error) {
	if !validHeaderName(m) {
		return "", invalidf("%q is not a valid HTTP method", m)
	}
	up := strings.ToUpper(m)
	switch up {
	case "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT":
		return up, nil
	case "CONNECT", "TRACE", "TRACK":
		return "", invalidf("method %q is forbidden", m)
	}
	return m, nil
}

// guestHeaders turns the guest's header list into the request header:
// names and values validated, values trimmed of surrounding whitespace (as
// fetch does), forbidden headers dropped, defaults added.
func guestHeaders(pairs [][2]string, userAgent string) (http.Header, *Error) {
	h := make(http.Header, len(pairs)+2)
	for _, kv := range pairs {
		name, value := kv[0], strings.Trim(kv[1], " \t")
		if !validHeaderName(name) {
			return nil, invalidf("%q is not a valid header name", name)
		}
		if !validHeaderValue(value) {
			return nil, invalidf("header %q has an invalid value (control characters)", name)
		}
		if forbiddenRequestHeader(strings.ToLower(name)) {
			continue
		}
		h.Add(name, value)
	}
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", userAgent)
	}
	if h.Get("Accept") == "" {
		h.Set("Accept", "*/*")
	}
	return h, nil
}

// responseHeaders lists the response's end-to-end headers as (lower-case
// name, value) pairs, one per value, sorted by name; values of one name
// keep their order.
func responseHeaders(h http.Header) [][2]string {
	drop := map[string]bool{}
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			drop[strings.ToLower(strings.TrimSpace(name))] = true
		}
	}
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	var out [][2]string
	for _, name := range names {
		ln := strings.ToLower(name)
		if hopByHop(ln) || drop[ln] {
			continue
		}
		for _, v := range h[name] {
			out = append(out, [2]string{ln, v})
		}
	}
	return out
}

// contentHeaders describe a request body; they go when a redirect turns the
// request into a GET without one (fetch's "request-body-header names").
var contentHeaders = [...]string{"Content-Type", "Content-Encoding", "Content-Language", "Content-Location"}

// crossOriginHeaders are the guest's credentials, dropped when a redirect
// leaves the origin (fetch drops Authorization; Go's client also Cookie).
var crossOriginHeaders = [...]string{"Authorization", "Cookie", "Cookie2"}
