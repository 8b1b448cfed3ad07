// Package egress is the host's FetchProxy (DESIGN decision 6): guest code
// has no network, and its fetch(url, init) is relayed as a Request to one
// Proxy in the host process, which decides, performs, limits and audits it.
//
// # Use
//
//	proxy, err := egress.New(egress.Config{
//		Policy:  egress.Policy{Hosts: []string{"api.example.com", "*.cdn.example.com"}},
//		Secrets: []egress.Binding{{Origin: "https://api.example.com", Header: "Authorization", Value: "Bearer " + token}},
//		Auditor: egress.NewJSONLines(auditLog),
//	})
//	run, err := proxy.NewRun(egress.RunConfig{
//		RunInfo: egress.RunInfo{RunID: id, Tenant: tenant, Plan: plan},
//		Limits:  egress.Limits{MaxRequests: 20, MaxBytes: 10 << 20},
//		Policy:  &planPolicy, // narrows, never widens
//	})
//	defer run.Close()
//	resp, err := run.Fetch(ctx, req) // req decoded from the worker's JSON
//
// # Decision table
//
// The rules apply to every Fetch in this order; the first that fails
// decides, and exactly one audit Record is written either way. A redirect
// hop repeats rows 4 to 10 for its URL. "Kind" is the Error.Kind the
// caller gets: the engine ends the run with LIMIT_EXCEEDED for KindLimit
// (limit = Error.Limit) and rejects the guest's fetch with a TypeError
// carrying Error.Reason for every other kind.
//
//	#   rule (allowed when true)                     Kind      why
//	1   the Run is not closed                        canceled  nothing outlives its run
//	2   calls so far < maxFetchRequests              limit     bounds work, lookups and audit volume;
//	    (min of Limits.MaxRequests and                         denied calls count too
//	    Policy.MaxRequests)
//	3   method is a token, not CONNECT/TRACE/TRACK;  invalid   what a browser's fetch refuses
//	    URL parses (see URLs); redirect mode valid
//	4   URL has no userinfo (user:pass@)             denied    credentials belong in Bindings; "good@evil"
//	                                                           URLs mislead readers and logs
//	5   scheme is in Policy.Schemes (default https)  denied    plain http only where listed
//	6   host matches Policy.Hosts                    denied    "a.b", "*.b" (subdomains, not the apex), "*";
//	                                                           no Hosts at all denies everything
//	7   port is in Policy.Ports (default: the        denied    no reaching other services of an allowed host
//	    scheme's, 443 or 80)
//	8   method is in Policy.Methods                  denied    default GET HEAD POST PUT PATCH DELETE OPTIONS
//	9   headers valid; body ≤ maxRequestBodyBytes    invalid,  no CR/LF injection; Host, Content-Length,
//	    (forbidden headers are dropped, not refused) denied    Connection, Proxy-*, … are the proxy's
//	10  every address is public (address table)     denied    SSRF. IP literal: that address. Name: one
//	    or in Policy.UnsafeAllowAddresses                      lookup via the Resolver, every answer checked,
//	                                                           one bad answer denies the name
//	11  the connection goes to a checked address     network   pinned dial: no second lookup, so no DNS
//	    and the server answers                                 rebinding; TLS verifies the URL's host (SNI);
//	                                                           HTTP_PROXY and friends are ignored
//	12  redirects followed < maxRedirects            denied    each hop re-runs rows 4-10; 301/302 POST and
//	                                                           303 become GET without a body; credentials
//	                                                           stay with the first origin
//	13  the whole fetch ends within timeoutMs        timeout   DNS, connect, TLS, every hop and the body
//	14  response body ≤ maxResponseBytes             denied    per response, counted after gzip decoding
//	15  run's response bytes ≤ maxFetchBytes         limit     per run, all responses together
//
// Address table (ClassifyIP; anything denied may be re-allowed only by
// Policy.UnsafeAllowAddresses):
//
//	allowed  public unicast IPv4; IPv6 in 2000::/3 not listed below
//	denied   0.0.0.0/8 (incl. 0.0.0.0), 127/8, 10/8, 172.16/12, 192.168/16, 100.64/10 (CGNAT),
//	         169.254/16 (link-local), 192.0.0/24, 192.0.2/24, 198.51.100/24, 203.0.113/24,
//	         198.18/15, 192.88.99/24, 224/4 (multicast), 240/4 (reserved), 255.255.255.255
//	denied   metadata endpoints 169.254.169.254, 169.254.170.2, 168.63.129.16 (public, Azure),
//	         100.100.100.200, fd00:ec2::254
//	denied   ::, ::1, fe80::/10, fec0::/10, fc00::/7, ff00::/8, 100::/64, 64:ff9b:1::/48,
//	         2001::/23 (except Teredo, below), 2001:db8::/32, 3fff::/20, anything outside 2000::/3
//	by v4    ::ffff:a.b.c.d (mapped), 64:ff9b::a.b.c.d (NAT64), 2002:aabb:ccdd::/48 (6to4),
//	         2001:0:…(Teredo: server and client) are judged by the IPv4 address they embed;
//	         ::a.b.c.d (IPv4-compatible, deprecated) likewise, and reserved if that is public
//
// # URLs
//
// Hosts are read the way the guest's own URL parser (WHATWG) reads them, so
// that the proxy judges the place the guest meant, not a differently parsed
// one: http://2130706433/, http://0177.0.0.1/, http://0x7f.1/,
// http://127.1/, http://127.0.0.1./ and http://%31%32%37.0.0.1/ are all
// 127.0.0.1; "\" is "/" and extra slashes after "http:" are ignored.
// Stricter than a browser: userinfo, non-ASCII (IDN) hosts and IPv6 zones
// are refused. A domain's trailing dot is dropped. The request sent
// upstream is rebuilt from the canonical parts, never from the guest's
// string.
//
// # Credentials
//
// Config.Secrets and RunConfig.Secrets bind a header value to an origin,
// scheme://host[:port] (see Binding): added after the policy check, only
// when the request's scheme, host and port are the binding's (another port
// of the host, or the host over another scheme, is another origin), over
// https only unless the binding says UnsafeAllowHTTP, never on a redirect
// to another origin, replacing any guest header of that name. The
// deprecated host-only form means https on port 443. The audit never
// holds a secret.
//
// Redaction. What comes back from upstream is scrubbed of every secret of
// the run (sent on this fetch or not) before the guest sees it; each copy
// becomes "[REDACTED]". It finds:
//
//   - the whole value, and for a value "<scheme> <credential>" ("Bearer
//     abc…", "Basic dXNl…") the credential alone too when it is at least
//     MinSecretLen bytes, since servers echo tokens without their scheme;
//   - in any ASCII case (servers and HTTP/2 change the case of what they
//     echo; header names are case-insensitive);
//   - in response header names and values (the whole header is replaced),
//     the status text, the body after gzip decoding, read whole before it
//     is scrubbed (so however the server chunked it), the final URL after
//     redirects, and the reason and audit record of a failed fetch (a
//     redirect's Location, a transport error quoting the response).
//
// It does not find a transformed copy: base64 or hex of the secret,
// percent-encoding of characters that need it (a credential with "/", "+"
// or "="), JSON \u or HTML escapes, a part of it (a prefix, or each half
// in a different response), a body in a content coding the proxy did not
// ask for (deflate, br: the guest gets the raw bytes and can decode them),
// or anything an upstream stores and returns in another form. It is a last
// line against an upstream that reflects credentials, not against one that
// wants to disclose them: bind secrets only to APIs trusted with them, and
// never to an origin where the step's own data is served back verbatim.
// secret_test.go (TestSecretRedaction) pins each of these cases.
//
// # Audit
//
// One Record per Fetch call, allowed or denied, to Config.Auditor (and
// RunConfig.Auditor). URLs in records keep scheme, host, port, path and
// query keys; query values are replaced by "REDACTED", because they often
// carry tokens. Field names are the Field constants; JSONLines writes one
// JSON object per line.
//
// # Connections
//
// Each Run has its own http.Transport and so its own connection pool,
// closed by Run.Close. A pooled connection goes to an address checked under
// that run's policy; sharing a pool across runs would let a connection
// checked under one run's UnsafeAllowAddresses serve another run. The cost
// is a TCP and TLS handshake per run and host.
//
// # Bodies
//
// Request and Response bodies are strings in JSON: UTF-8 text as is, other
// bytes as base64 with BodyEncoding "base64". The proxy asks for gzip and
// decodes it, so byte caps count decoded bytes (no decompression bombs);
// the guest's Accept-Encoding is ignored. Hop-by-hop headers are dropped
// both ways; User-Agent defaults to DefaultUserAgent.
package egress
