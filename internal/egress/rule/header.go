package rule

import "strings"

// ValidHeaderName reports whether s is an RFC 9110 token: a header name,
// or an HTTP method.
func ValidHeaderName(s string) bool {
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

// ValidHeaderValue reports whether s may be sent as a field value: no
// control characters other than horizontal tab (so no CR/LF injection).
func ValidHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// ForbiddenRequestHeader reports headers the guest may not set (lower-case
// name): the proxy drops them silently, as a browser's fetch does, and
// they cannot carry a secret either. The proxy owns
// framing (Content-Length, Transfer-Encoding), the connection (Connection,
// Keep-Alive, TE, Trailer, Upgrade, Expect, Proxy-*), the target (Host:
// overriding it would let a request for an allowed host reach another
// virtual host at the same address), and content coding (Accept-Encoding:
// the proxy asks for gzip and decodes, so the byte caps apply to decoded
// bodies).
func ForbiddenRequestHeader(lname string) bool {
	switch lname {
	case "host", "content-length", "transfer-encoding", "connection", "keep-alive",
		"te", "trailer", "upgrade", "expect", "accept-encoding":
		return true
	}
	return strings.HasPrefix(lname, "proxy-")
}
