package egress

import (
	"net/http"
	"slices"
	"strings"

	"github.com/stepbox/stepbox/internal/egress/rule"
)

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
	if !rule.ValidHeaderName(m) {
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
		if !rule.ValidHeaderName(name) {
			return nil, invalidf("%q is not a valid header name", name)
		}
		if !rule.ValidHeaderValue(value) {
			return nil, invalidf("header %q has an invalid value (control characters)", name)
		}
		if rule.ForbiddenRequestHeader(strings.ToLower(name)) {
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
