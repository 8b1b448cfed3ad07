package egress

import (
	"encoding/json"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/egress/rule"
)

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		want   []string // substrings of the joined error; nil: valid
	}{
		{name: "zero", policy: Policy{}},
		{name: "typical", policy: Policy{Schemes: []string{"HTTPS", "http"}, Hosts: []string{"api.example.com", "*.example.com", "*",
			"203.0.113.7", "[2001:db8::1]", "Example.COM."}, Ports: []int{443, 8443}, Methods: []string{"get", "PATCH", "PROPFIND"},
			MaxRedirects: -1, UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}},
		{name: "everything wrong", policy: Policy{
			Schemes:              []string{"ftp", ""},
			Hosts:                []string{"", "https://a.test", "a.test:443", "a.*.test", "*a.test", "bad_char!.test", "0x7f.1", "1.2.3", "fe80::1%eth0", "a..test"},
			Ports:                []int{0, 65536, -1},
			Methods:              []string{"CONNECT", "trace", "GE T", ""},
			MaxRequests:          -1,
			MaxRequestBodyBytes:  -1,
			MaxResponseBytes:     -1,
			TimeoutMs:            -1,
			MaxRedirects:         -2,
			UnsafeAllowAddresses: []netip.Prefix{{}},
		}, want: []string{
			`schemes[0]: "ftp" is not supported`, `schemes[1]`,
			"hosts[0]: empty host pattern", "hosts[1]: \"https://a.test\" is not a host pattern: remove the scheme",
			"hosts[2]: \"a.test:443\" is not a host pattern: remove the port", "hosts[3]", "hosts[4]", "hosts[5]",
			"hosts[6]: \"0x7f.1\" is not a host pattern: it ends in a number", "hosts[7]", "hosts[8]: \"fe80::1%eth0\": IPv6 zones", "hosts[9]",
			"ports[0]", "ports[1]", "ports[2]",
			`methods[0]: method "CONNECT" is forbidden`, "methods[1]", "methods[2]", "methods[3]",
			"maxRequests: -1 is negative", "maxRequestBodyBytes", "maxResponseBytes", "timeoutMs", "maxRedirects: -2",
			"unsafeAllowAddresses[0]",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.policy.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate accepted an invalid policy")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if n := len(strings.Split(err.Error(), "\n")); n != len(tt.want) {
				t.Errorf("%d problems reported, want %d:\n%v", n, len(tt.want), err)
			}
		})
	}
}

func TestParsePolicy(t *testing.T) {
	p, err := ParsePolicy([]byte(`{"schemes":["https","http"],"hosts":["api.example.com","*.cdn.example.com"],
		"ports":[443,8443],"methods":["GET"],"maxRequests":20,"maxRequestBodyBytes":1024,"maxResponseBytes":4096,
		"timeoutMs":2500,"maxRedirects":-1,"unsafeAllowAddresses":["10.1.2.0/24","fd00::/8"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Policy{
		Schemes: []string{"https", "http"}, Hosts: []string{"api.example.com", "*.cdn.example.com"}, Ports: []int{443, 8443},
		Methods: []string{"GET"}, MaxRequests: 20, MaxRequestBodyBytes: 1024, MaxResponseBytes: 4096, TimeoutMs: 2500,
		MaxRedirects: -1, UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("10.1.2.0/24"), netip.MustParsePrefix("fd00::/8")},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("ParsePolicy = %+v\nwant %+v", p, want)
	}
	for _, bad := range []string{
		`{"host":["x"]}`,                    // misspelt field
		`{"hosts":["x"]} {}`,                // trailing data
		`{"hosts":["https://x"]}`,           // invalid
		`{"unsafeAllowAddresses":["10/8"]}`, // bad prefix
		`[]`, ``, `{"ports":["443"]}`,
	} {
		if _, err := ParsePolicy([]byte(bad)); err == nil {
			t.Errorf("ParsePolicy(%s) succeeded", bad)
		}
	}
}

func TestHostPatterns(t *testing.T) {
	tests := []struct {
		pattern, host string
		want          bool
	}{
		{"api.example.com", "api.example.com", true},
		{"API.Example.com.", "api.example.com", true},
		{"api.example.com", "x.api.example.com", false},
		{"*.example.com", "a.example.com", true},
		{"*.example.com", "a.b.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "badexample.com", false},
		{"*.example.com", "example.com.evil.test", false},
		{"*", "anything.test", true},
		{"*", "127.0.0.1", true},
		{"127.0.0.1", "127.0.0.1", true},
		{"[::1]", "::1", true},
		{"*.0.1", "127.0.0.1", false},
	}
	for _, tt := range tests {
		p, err := rule.HostPattern(tt.pattern)
		if err != nil {
			if tt.want {
				t.Errorf("rule.HostPattern(%q): %v", tt.pattern, err)
			}
			continue
		}
		tg, e := parseTarget("https://" + tt.host + "/")
		if e != nil {
			tg, e = parseTarget("https://[" + tt.host + "]/")
		}
		if e != nil {
			t.Fatalf("parse %q: %v", tt.host, e)
		}
		if got := matchHost(p, tg.host, tg.ip.IsValid()); got != tt.want {
			t.Errorf("match(%q, %q) = %v, want %v", tt.pattern, tt.host, got, tt.want)
		}
	}
}

func TestNarrow(t *testing.T) {
	engine := Policy{
		Schemes: []string{"https", "http"}, Hosts: []string{"*.example.com", "api.other.test"},
		MaxRequests: 50, TimeoutMs: 5000, MaxRedirects: 10,
		UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
	}
	tests := []struct {
		name  string
		other Policy
		want  Policy
	}{
		{name: "zero narrows to deny-all", other: Policy{},
			want: Policy{MaxRequests: 50, MaxRequestBodyBytes: DefaultMaxRequestBodyBytes, MaxResponseBytes: DefaultMaxResponseBytes,
				TimeoutMs: 5000, MaxRedirects: DefaultMaxRedirects}},
		{name: "any host keeps the engine's hosts", other: Policy{Hosts: []string{"*"}, Schemes: []string{"https", "http"}},
			want: Policy{Schemes: []string{"https", "http"}, Hosts: []string{"*.example.com", "api.other.test"},
				Methods: DefaultMethods(), MaxRequests: 50, MaxRequestBodyBytes: DefaultMaxRequestBodyBytes,
				MaxResponseBytes: DefaultMaxResponseBytes, TimeoutMs: 5000, MaxRedirects: DefaultMaxRedirects}},
		{name: "hosts intersect", other: Policy{Hosts: []string{"*.api.example.com", "example.com", "cdn.example.com", "api.other.test", "x.test"},
			Methods: []string{"GET", "PROPFIND"}, MaxRequests: 100, TimeoutMs: 100, MaxRedirects: -1},
			want: Policy{Schemes: []string{"https"}, Hosts: []string{"*.api.example.com", "api.other.test", "cdn.example.com"},
				Methods: []string{"GET"}, MaxRequests: 50, MaxRequestBodyBytes: DefaultMaxRequestBodyBytes,
				MaxResponseBytes: DefaultMaxResponseBytes, TimeoutMs: 100, MaxRedirects: -1}},
		{name: "ports list against default ports", other: Policy{Hosts: []string{"*"}, Schemes: []string{"http", "https"}, Ports: []int{443, 8443}},
			want: Policy{Schemes: []string{"https"}, Hosts: []string{"*.example.com", "api.other.test"},
				Methods: DefaultMethods(), MaxRequests: 50, MaxRequestBodyBytes: DefaultMaxRequestBodyBytes,
				MaxResponseBytes: DefaultMaxResponseBytes, TimeoutMs: 5000, MaxRedirects: DefaultMaxRedirects}},
		{name: "no scheme in common", other: Policy{Hosts: []string{"*"}, Schemes: []string{"http"}, Ports: []int{443}},
			want: Policy{MaxRequests: 50, MaxRequestBodyBytes: DefaultMaxRequestBodyBytes, MaxResponseBytes: DefaultMaxResponseBytes,
				TimeoutMs: 5000, MaxRedirects: DefaultMaxRedirects}},
		{name: "unsafe prefixes intersect", other: Policy{Hosts: []string{"*"}, UnsafeAllowAddresses: []netip.Prefix{
			netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("192.168.0.0/16")}},
			want: Policy{Schemes: []string{"https"}, Hosts: []string{"*.example.com", "api.other.test"}, Methods: DefaultMethods(),
				MaxRequests: 50, MaxRequestBodyBytes: DefaultMaxRequestBodyBytes, MaxResponseBytes: DefaultMaxResponseBytes,
				TimeoutMs: 5000, MaxRedirects: DefaultMaxRedirects,
				UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("10.0.0.0/8")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := engine.Narrow(tt.other)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Narrow =\n%+v\nwant\n%+v", got, tt.want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("Narrow result invalid: %v", err)
			}
		})
	}
}

// permits reports whether p allows method to rawURL when the host is at addr.
func permits(p Policy, rawURL, method string, addr netip.Addr) bool {
	return permitsRules(compile(p), rawURL, method, addr)
}

func permitsRules(r *rules, rawURL, method string, addr netip.Addr) bool {
	t, e := parseTarget(rawURL)
	if e != nil {
		return false
	}
	return permitsTarget(r, t, method, addr)
}

func permitsTarget(r *rules, t *target, method string, addr netip.Addr) bool {
	run := &Run{rules: r}
	if run.checkTarget(t, method) != nil {
		return false
	}
	return r.checkAddr(t.host, addr) == nil
}

// Material for random policies and requests.
var (
	sampleHosts    = []string{"*", "a.test", "b.a.test", "*.a.test", "*.b.a.test", "c.test", "*.test", "10.0.0.1", "::1"}
	sampleSchemes  = []string{"http", "https"}
	samplePorts    = []int{80, 443, 8080}
	sampleMethods  = []string{"GET", "POST", "PATCH", "DELETE"}
	samplePrefixes = []string{"10.0.0.0/8", "10.1.0.0/16", "127.0.0.1/32", "::1/128", "0.0.0.0/0", "fd00::/8"}
	sampleAddrs    = []string{"8.8.8.8", "10.1.2.3", "10.2.0.1", "127.0.0.1", "::1", "::ffff:10.1.2.3", "fd00::1", "2606:4700::1"}
	sampleURLs     = []string{"https://a.test/", "http://a.test/", "https://b.a.test:8080/", "http://x.b.a.test/", "https://c.test:443/",
		"http://10.0.0.1/", "https://[::1]:8080/", "https://a.test:80/", "http://d.test:8080/"}
)

func randomPolicy(r *rand.Rand) Policy {
	pick := func(n int) []int {
		var idx []int
		for i := range n {
			if r.IntN(2) == 0 {
				idx = append(idx, i)
			}
		}
		return idx
	}
	var p Policy
	if r.IntN(3) > 0 {
		for _, i := range pick(len(sampleSchemes)) {
			p.Schemes = append(p.Schemes, sampleSchemes[i])
		}
	}
	for _, i := range pick(len(sampleHosts)) {
		p.Hosts = append(p.Hosts, sampleHosts[i])
	}
	if r.IntN(2) == 0 {
		for _, i := range pick(len(samplePorts)) {
			p.Ports = append(p.Ports, samplePorts[i])
		}
	}
	if r.IntN(2) == 0 {
		for _, i := range pick(len(sampleMethods)) {
			p.Methods = append(p.Methods, sampleMethods[i])
		}
	}
	for _, i := range pick(len(samplePrefixes)) {
		p.UnsafeAllowAddresses = append(p.UnsafeAllowAddresses, netip.MustParsePrefix(samplePrefixes[i]))
	}
	return p
}

// TestNarrowIsIntersection: on every sample request, Narrow(a, b) allows
// exactly what both a and b allow: never more (the security property) and,
// for these shapes, never less.
func TestNarrowIsIntersection(t *testing.T) {
	var targets []*target
	for _, u := range sampleURLs {
		tg, e := parseTarget(u)
		if e != nil {
			t.Fatal(e)
		}
		targets = append(targets, tg)
	}
	var addrs []netip.Addr
	for _, s := range sampleAddrs {
		addrs = append(addrs, netip.MustParseAddr(s))
	}
	allowed := 0
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		a, b := randomPolicy(r), randomPolicy(r)
		n := a.Narrow(b)
		if err := n.Validate(); err != nil {
			t.Fatalf("Narrow(%+v, %+v) invalid: %v", a, b, err)
		}
		ra, rb, rn := compile(a), compile(b), compile(n)
		for _, tg := range targets {
			for _, m := range sampleMethods {
				for _, addr := range addrs {
					pa, pb, pn := permitsTarget(ra, tg, m, addr), permitsTarget(rb, tg, m, addr), permitsTarget(rn, tg, m, addr)
					if pn {
						allowed++
					}
					if pn != (pa && pb) {
						t.Fatalf("%s %s at %s: a=%v b=%v narrowed=%v\na=%+v\nb=%+v\nn=%+v", m, tg.url, addr, pa, pb, pn, a, b, n)
					}
				}
			}
		}
	}
	if allowed < 100 {
		t.Errorf("only %d allowed cases: the sample is too thin to test anything", allowed)
	}
}

// FuzzPolicyParse: parsing never panics; what parses is valid, survives a
// JSON round trip with the same meaning, and narrows consistently.
func FuzzPolicyParse(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"hosts":["api.example.com"]}`))
	f.Add([]byte(`{"schemes":["https","http"],"hosts":["*.example.com","*"],"ports":[443,8080],"methods":["GET","patch"],` +
		`"maxRequests":5,"maxRequestBodyBytes":10,"maxResponseBytes":100,"timeoutMs":50,"maxRedirects":-1,` +
		`"unsafeAllowAddresses":["127.0.0.1/32","::1/128"]}`))
	f.Add([]byte(`{"hosts":["0x7f.1"]}`))
	f.Add([]byte(`{"hosts":["[::ffff:127.0.0.1]"],"ports":[0]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("ParsePolicy returned an invalid policy: %v", err)
		}
		j, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		p2, err := ParsePolicy(j)
		if err != nil {
			t.Fatalf("round trip of %s: %v", j, err)
		}
		if !reflect.DeepEqual(compile(p), compile(p2)) {
			t.Fatalf("round trip changed the policy:\n%+v\n%+v", p, p2)
		}
		self := p.Narrow(p)
		if err := self.Validate(); err != nil {
			t.Fatalf("Narrow(p, p) invalid: %v", err)
		}
		if len(p.Narrow(Policy{}).Hosts) != 0 {
			t.Fatalf("Narrow(p, zero) allows hosts")
		}
		for _, u := range sampleURLs {
			for _, s := range sampleAddrs {
				addr := netip.MustParseAddr(s)
				if permits(self, u, "GET", addr) != permits(p, u, "GET", addr) {
					t.Fatalf("Narrow(p, p) differs from p on GET %s at %s", u, s)
				}
			}
		}
	})
}
