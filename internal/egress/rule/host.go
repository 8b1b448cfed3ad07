package rule

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// DefaultPort is the port of a URL of scheme that names none: 443 for
// https, 80 for http, 0 for any other scheme.
func DefaultPort(scheme string) int {
	switch scheme {
	case "http":
		return 80
	case "https":
		return 443
	}
	return 0
}

// ParsePort reads a port written in decimal digits, 0 to 65535. The empty
// string reads as 0.
func ParsePort(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return 0, false
		}
	}
	return n, true
}

// HostPattern validates a host pattern, of a Policy's Hosts or of a
// binding's origin, and returns its canonical form (lower case, no trailing
// dot, IPs in netip form): "*", "*.example.com", "api.example.com", or an
// IP address with or without brackets.
func HostPattern(h string) (string, error) {
	if h == "*" {
		return h, nil
	}
	if h == "" {
		return "", errors.New("empty host pattern")
	}
	if strings.Contains(h, "://") {
		return "", fmt.Errorf("%q is not a host pattern: remove the scheme (see schemes)", h)
	}
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("%q: IPv6 zones are not allowed", h)
		}
		return a.String(), nil
	}
	lower := strings.ToLower(h)
	wild := strings.HasPrefix(lower, "*.")
	d := strings.TrimPrefix(lower, "*.")
	d = strings.TrimSuffix(d, ".")
	if strings.Contains(d, ":") {
		return "", fmt.Errorf("%q is not a host pattern: remove the port (see ports)", h)
	}
	if d == "" || len(d) > 253 {
		return "", fmt.Errorf("%q is not a host pattern", h)
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("%q is not a host pattern: empty or over-long label", h)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				if c == '*' {
					return "", fmt.Errorf("%q is not a host pattern: \"*\" may only be the whole pattern or a leading \"*.\"", h)
				}
				return "", fmt.Errorf("%q is not a host pattern: invalid character %q (internationalised names must be in xn-- form)", h, c)
			}
		}
	}
	if EndsInNumber(d) {
		return "", fmt.Errorf("%q is not a host pattern: it ends in a number, so a URL parser reads it as an IPv4 address; write IPv4 addresses in dotted-decimal form", h)
	}
	if wild {
		return "*." + d, nil
	}
	return d, nil
}

// EndsInNumber is the WHATWG "ends in a number checker": a host for which
// it is true is an IPv4 address (ParseIPv4) or no host at all.
func EndsInNumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// ParseIPv4 is the WHATWG IPv4 parser: it reads every spelling a URL
// parser accepts (2130706433, 0177.0.0.1, 0x7f.1, 127.1, a trailing dot).
func ParseIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Number is the WHATWG IPv4 number parser: 0x/0X hex, leading-zero
// octal, else decimal. Values above 2^32 fail (the IPv4 parser would reject
// them anyway), which keeps the arithmetic in uint64.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = n*base + d
		if n > 1<<32 {
			return 0, false
		}
	}
	return n, true
}
