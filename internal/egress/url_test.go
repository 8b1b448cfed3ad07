package egress

import (
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		host string // canonical host; "" when an error is expected
		port int
		url  string // the URL sent
		kind Kind   // for errors
	}{
		{name: "plain", raw: "https://api.example.com/v1?x=1", host: "api.example.com", port: 443, url: "https://api.example.com/v1?x=1"},
		{name: "case and trailing dot", raw: "HTTPS://API.Example.COM./", host: "api.example.com", port: 443, url: "https://api.example.com/"},
		{name: "no path", raw: "http://example.com", host: "example.com", port: 80, url: "http://example.com/"},
		{name: "explicit default port", raw: "https://example.com:443/", host: "example.com", port: 443, url: "https://example.com/"},
		{name: "empty port", raw: "https://example.com:/", host: "example.com", port: 443, url: "https://example.com/"},
		{name: "leading zero port", raw: "http://example.com:0080/", host: "example.com", port: 80, url: "http://example.com/"},
		{name: "other port", raw: "http://example.com:8080/a", host: "example.com", port: 8080, url: "http://example.com:8080/a"},
		{name: "fragment dropped", raw: "http://example.com/a#b", host: "example.com", port: 80, url: "http://example.com/a"},
		{name: "spaces encoded", raw: "http://example.com/a b?c d", host: "example.com", port: 80, url: "http://example.com/a%20b?c%20d"},
		{name: "stray percent", raw: "http://example.com/100%?p=%zz", host: "example.com", port: 80, url: "http://example.com/100%25?p=%25zz"},
		{name: "surrounding space", raw: "  http://example.com/ \n", host: "example.com", port: 80, url: "http://example.com/"},
		{name: "missing slashes", raw: "http:example.com/x", host: "example.com", port: 80, url: "http://example.com/x"},
		{name: "extra slashes", raw: "http:////example.com/x", host: "example.com", port: 80, url: "http://example.com/x"},
		{name: "backslashes", raw: `http:\\example.com\x\y?q=\`, host: "example.com", port: 80, url: `http://example.com/x/y?q=\`},
		{name: "decimal", raw: "http://2130706433/", host: "127.0.0.1", port: 80, url: "http://127.0.0.1/"},
		{name: "octal", raw: "http://0177.0.0.01/", host: "127.0.0.1", port: 80},
		{name: "hex", raw: "http://0x7f.1/", host: "127.0.0.1", port: 80},
		{name: "hex upper", raw: "http://0X7F.0X1/", host: "127.0.0.1", port: 80},
		{name: "short", raw: "http://10.1/", host: "10.0.0.1", port: 80},
		{name: "three parts", raw: "http://10.1.2/", host: "10.1.0.2", port: 80},
		{name: "ipv4 trailing dot", raw: "http://1.2.3.4./", host: "1.2.3.4", port: 80},
		{name: "hex alone", raw: "http://0x/", host: "0.0.0.0", port: 80},
		{name: "percent-encoded host", raw: "http://%65xample.com/", host: "example.com", port: 80},
		{name: "percent-encoded ip", raw: "http://0x7f%2e1/", host: "127.0.0.1", port: 80},
		{name: "ipv6", raw: "http://[2001:DB8::1]:8080/", host: "2001:db8::1", port: 8080, url: "http://[2001:db8::1]:8080/"},
		{name: "ipv6 mapped", raw: "http://[::ffff:127.0.0.1]/", host: "::ffff:127.0.0.1", port: 80},
		{name: "domain with digits", raw: "http://1.2.3.example/", host: "1.2.3.example", port: 80},
		{name: "number-like label not last", raw: "http://0x7f.example/", host: "0x7f.example", port: 80},

		{name: "credentials", raw: "http://user:pass@example.com/", kind: KindDenied},
		{name: "credentials via backslash trick", raw: `http://evil.com\@example.com/`, host: "evil.com", port: 80},
		{name: "empty userinfo", raw: "http://@example.com/", kind: KindDenied},
		{name: "other scheme", raw: "ftp://example.com/", kind: KindDenied},
		{name: "javascript", raw: "javascript:alert(1)", kind: KindDenied},
		{name: "relative", raw: "/path", kind: KindInvalid},
		{name: "empty", raw: "", kind: KindInvalid},
		{name: "empty host", raw: "http:///", kind: KindInvalid},
		{name: "ipv4 out of range", raw: "http://256.0.0.1/", kind: KindInvalid},
		{name: "ipv4 last part too big", raw: "http://1.2.65536/", kind: KindInvalid},
		{name: "ipv4 too many parts", raw: "http://1.2.3.4.5/", kind: KindInvalid},
		{name: "ipv4 bad octal", raw: "http://09.0.0.1/", kind: KindInvalid},
		{name: "ipv4 overflow", raw: "http://99999999999999999999/", kind: KindInvalid},
		{name: "ipv4 empty part", raw: "http://1..2.3/", kind: KindInvalid},
		{name: "ipv6 zone", raw: "http://[fe80::1%25eth0]/", kind: KindInvalid},
		{name: "ipv6 unclosed", raw: "http://[::1/", kind: KindInvalid},
		{name: "ipv6 v4 in brackets", raw: "http://[127.0.0.1]/", kind: KindInvalid},
		{name: "unbracketed ipv6", raw: "http://::1/", kind: KindInvalid},
		{name: "port too large", raw: "http://example.com:65536/", kind: KindInvalid},
		{name: "port not numeric", raw: "http://example.com:8o/", kind: KindInvalid},
		{name: "port zero", raw: "http://example.com:0/", kind: KindDenied},
		{name: "idn", raw: "http://exämple.com/", kind: KindInvalid},
		{name: "forbidden host char", raw: "http://exa<mple.com/", kind: KindInvalid},
		{name: "bad host escape", raw: "http://exa%zzmple.com/", kind: KindInvalid},
		{name: "encoded slash in host", raw: "http://evil.com%2fexample.com/", kind: KindInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, e := parseTarget(tt.raw)
			if tt.kind != "" {
				if e == nil || e.Kind != tt.kind {
					t.Fatalf("parseTarget(%q) = %+v, %v; want kind %s", tt.raw, got, e, tt.kind)
				}
				return
			}
			if e != nil {
				t.Fatalf("parseTarget(%q): %v", tt.raw, e)
			}
			if got.host != tt.host || got.port != tt.port {
				t.Errorf("parseTarget(%q) = host %q port %d; want %q %d", tt.raw, got.host, got.port, tt.host, tt.port)
			}
			if tt.url != "" && got.url.String() != tt.url {
				t.Errorf("parseTarget(%q) URL = %q, want %q", tt.raw, got.url, tt.url)
			}
			if got.url.Hostname() != got.host {
				t.Errorf("URL host %q differs from the judged host %q", got.url.Hostname(), got.host)
			}
		})
	}
}

func TestResolveLocation(t *testing.T) {
	base, e := parseTarget("https://api.example.com:8443/a/b?q=1")
	if e != nil {
		t.Fatal(e)
	}
	tests := []struct{ loc, want string }{
		{"/c", "https://api.example.com:8443/c"},
		{"c", "https://api.example.com:8443/a/c"},
		{"?z=2", "https://api.example.com:8443/a/b?z=2"},
		{"//other.example.com/x", "https://other.example.com/x"},
		{`/\other.example.com/x`, "https://other.example.com/x"},
		{`\\other.example.com`, "https://other.example.com/"},
		{"http://0x7f.1/", "http://127.0.0.1/"},
		{"HTTP://Example.COM", "http://example.com/"},
		{"/a b", "https://api.example.com:8443/a%20b"},
	}
	for _, tt := range tests {
		got, e := resolveLocation(base, tt.loc)
		if e != nil {
			t.Errorf("resolveLocation(%q): %v", tt.loc, e)
			continue
		}
		if got.url.String() != tt.want {
			t.Errorf("resolveLocation(%q) = %q, want %q", tt.loc, got.url, tt.want)
		}
	}
	if _, e := resolveLocation(base, "http://u:p@x.example.com/"); e == nil || e.Kind != KindDenied {
		t.Errorf("a redirect with credentials was not denied: %v", e)
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"https://x.test/p", "https://x.test/p"},
		{"https://x.test/p?token=abc&page=2", "https://x.test/p?token=REDACTED&page=REDACTED"},
		{"https://x.test/p?secretvalue", "https://x.test/p?REDACTED"},
		{"https://x.test/p?a=&b", "https://x.test/p?a=REDACTED&REDACTED"},
	}
	for _, tt := range tests {
		tg, e := parseTarget(tt.raw)
		if e != nil {
			t.Fatal(e)
		}
		if got := redactURL(tg.url); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
	for raw, want := range map[string]string{
		"http://user:pw@x.test/p?k=v": "http://REDACTED@x.test/p",
		"not a url?x=1":               "not a url",
	} {
		if got := sanitizeRawURL(raw); got != want {
			t.Errorf("sanitizeRawURL(%q) = %q, want %q", raw, got, want)
		}
	}
}
