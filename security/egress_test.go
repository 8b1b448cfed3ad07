package security_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

// fetchTry is a step that fetches u and returns [isTypeError, message], or
// "fetched" if the fetch succeeded.
func fetchTry(u string) string {
	return `try { await fetch("` + u + `"); return "fetched" } catch (e) { return [e instanceof TypeError, e.message] }`
}

// refused expects the [true, "fetch failed: ..."] of fetchTry, the message
// containing reason, and one denial in the audit.
func refused(reason string) expect {
	return succeeds().and(func(t *testing.T, o *outcome) {
		t.Helper()
		v := string(o.res.Value)
		if !strings.HasPrefix(v, `[true,"fetch failed: `) || !strings.Contains(v, reason) {
			t.Errorf("got %s; want a TypeError \"fetch failed: ...%s...\"", v, reason)
		}
	}, fetchAudits(1))
}

// blocked is refused by the egress policy itself.
const blocked = "blocked by egress policy: "

// ssrf are fetches a step must not be able to make. The engine's policy
// allows every host, http and https, and the port of a loopback server
// ($PORT) — but no unsafe address ranges. Every row must be refused before
// any connection: the server counts connections, and must see none. Other
// targets are addresses the policy refuses before connecting; nothing needs
// DNS, and nothing leaves the machine.
var ssrf = []attack{
	{"loopback", fetchTry("http://127.0.0.1:$PORT/"), nil0, refused(blocked + "address 127.0.0.1 is loopback")},
	{"localhost", fetchTry("http://localhost:$PORT/"), nil0, refused(blocked)},
	{"LOCALHOST.", fetchTry("http://LOCALHOST.:$PORT/"), nil0, refused(blocked)},
	{"decimal IPv4", fetchTry("http://2130706433:$PORT/"), nil0, refused(blocked + "address 127.0.0.1 is loopback")},
	{"hex IPv4", fetchTry("http://0x7f000001:$PORT/"), nil0, refused(blocked + "address 127.0.0.1 is loopback")},
	{"octal IPv4", fetchTry("http://0177.0.0.1:$PORT/"), nil0, refused(blocked + "address 127.0.0.1 is loopback")},
	{"octal IPv4, one number", fetchTry("http://017700000001:$PORT/"), nil0, refused(blocked + "address 127.0.0.1 is loopback")},
	{"short IPv4", fetchTry("http://127.1:$PORT/"), nil0, refused(blocked + "address 127.0.0.1 is loopback")},
	{"mixed hex short IPv4", fetchTry("http://0x7f.1:$PORT/"), nil0, refused(blocked + "address 127.0.0.1 is loopback")},
	{"zero-padded IPv4", fetchTry("http://127.000.000.001:$PORT/"), nil0, refused(blocked + "address 127.0.0.1 is loopback")},
	{"percent-encoded IPv4", fetchTry("http://%31%32%37.0.0.1:$PORT/"), nil0, refused(blocked + "address 127.0.0.1 is loopback")},
	{"upper-case scheme", fetchTry("HTTP://127.0.0.1:$PORT/"), nil0, refused(blocked + "address 127.0.0.1 is loopback")},
	{"IPv6 loopback", fetchTry("http://[::1]:$PORT/"), nil0, refused(blocked + "address ::1 is loopback")},
	{"IPv4-mapped IPv6", fetchTry("http://[::ffff:127.0.0.1]:$PORT/"), nil0, refused(blocked)},
	{"IPv4-mapped IPv6, hex", fetchTry("http://[::ffff:7f00:1]:$PORT/"), nil0, refused(blocked)},
	{"IPv4-compatible IPv6", fetchTry("http://[::127.0.0.1]:$PORT/"), nil0, refused(blocked)},
	{"NAT64 of loopback", fetchTry("http://[64:ff9b::7f00:1]:$PORT/"), nil0, refused(blocked)},
	{"6to4 of loopback", fetchTry("http://[2002:7f00:1::]:$PORT/"), nil0, refused(blocked)},
	{"metadata", fetchTry("http://169.254.169.254/latest/meta-data"), nil0, refused(blocked + "address 169.254.169.254 is a cloud metadata endpoint")},
	{"metadata, IPv4-mapped", fetchTry("http://[::ffff:169.254.169.254]/latest/meta-data"), nil0, refused(blocked)},
	{"unique-local IPv6", fetchTry("http://[fd00::1]/"), nil0, refused(blocked + "address fd00::1 is unique-local")},
	{"link-local IPv6 with a zone", fetchTry("http://[fe80::1%25lo]:$PORT/"), nil0, refused("")},
	{"private 10/8", fetchTry("http://10.0.0.1/"), nil0, refused(blocked + "address 10.0.0.1 is private")},
	{"private 192.168/16", fetchTry("http://192.168.1.1/"), nil0, refused(blocked + "address 192.168.1.1 is private")},
	{"private, IPv4-mapped hex", fetchTry("http://[::ffff:a00:1]/"), nil0, refused(blocked)},
	{"carrier-grade NAT", fetchTry("http://100.64.0.1/"), nil0, refused(blocked)},
	{"unspecified", fetchTry("http://0.0.0.0:$PORT/"), nil0, refused(blocked + "address 0.0.0.0 is unspecified")},
	{"unspecified, one zero", fetchTry("http://0:$PORT/"), nil0, refused(blocked)},
	{"unspecified IPv6", fetchTry("http://[::]:$PORT/"), nil0, refused(blocked)},
	{"multicast", fetchTry("http://224.0.0.1/"), nil0, refused(blocked)},
	{"broadcast", fetchTry("http://255.255.255.255/"), nil0, refused(blocked)},
	{"credentials in the URL", fetchTry("http://user:pass@example.com/"), nil0, refused(blocked + "URL must not contain credentials")},
	{"credentials hiding the host", fetchTry("http://127.0.0.1:$PORT@127.0.0.1/"), nil0, refused(blocked)},
	{"file URL", fetchTry("file:///etc/passwd"), nil0, refused(blocked + `scheme \"file\" is not allowed`)},
	{"data URL", fetchTry("data:text/plain,hello"), nil0, refused(blocked + `scheme \"data\" is not allowed`)},
	{"gopher URL", fetchTry("gopher://127.0.0.1:$PORT/"), nil0, refused(blocked)},
	{"javascript URL", fetchTry("javascript:alert(1)"), nil0, refused(blocked)},
	{"scheme-relative URL", fetchTry("//127.0.0.1:$PORT/"), nil0, refused("Invalid URL")},
	{"a Request-like object", `try { await fetch({url: "http://127.0.0.1:$PORT/"}) } catch (e) { return [e instanceof TypeError, e.message] }`, nil0, refused(blocked)},
	{"a URL object with toString", `try { await fetch({toString: () => "http://127.0.0.1:$PORT/"}) } catch (e) { return [e instanceof TypeError, e.message] }`, nil0, refused(blocked)},
	{"a spoofed Host header", `try { await fetch("http://127.0.0.1:$PORT/", {headers: {Host: "example.com"}}) } catch (e) { return [e instanceof TypeError, e.message] }`, nil0, refused(blocked)},
	{"CONNECT method", `try { await fetch("http://127.0.0.1:$PORT/", {method: "CONNECT"}) } catch (e) { return [e instanceof TypeError, e.message] }`, nil0, refused("")},
	{"denied fetches count toward maxFetchRequests", `for (let i = 0; i < 30; i++) { try { await fetch("http://10.0.0.1/") } catch (e) {} } return "escaped"`, sandbox.Limits{MaxFetchRequests: 5}, fails(sandbox.CodeLimitExceeded, "maxFetchRequests")},
	{"fetch flood in Promise.all", `await Promise.all(Array.from({length: 1e4}, () => fetch("http://10.0.0.1/").catch(() => 0))); return "escaped"`, sandbox.Limits{MaxFetchRequests: 5}, fails(sandbox.CodeLimitExceeded, "maxFetchRequests")},
}

// loopback is a server on 127.0.0.1 that counts every connection made to
// it; the egress section allows its port, so only the address rules stand
// between a step and it.
func loopback(t *testing.T) (port int, conns *atomic.Int64) {
	conns = new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("reached"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err = strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return port, conns
}

// egressConfig allows every host on http and https, on the default ports and
// port, with no unsafe address ranges: the SSRF rules are the only defence.
func egressConfig(port int) sandbox.Config {
	return sandbox.Config{Egress: &sandbox.Egress{Policy: sandbox.EgressPolicy{
		Schemes: []string{"http", "https"},
		Hosts:   []string{"*"},
		Ports:   []int{80, 443, port},
	}}}
}
