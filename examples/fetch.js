// A step that calls a web API through the egress policy of fetch.egress.json,
// which allows http to 127.0.0.1:8000 and nothing else. Serve this directory
// (python3 -m http.server -b 127.0.0.1 -d examples 8000), then
// stepbox run examples/fetch.js --egress examples/fetch.egress.json --input '{"api": "http://127.0.0.1:8000", "eur": 250}'
// prints {"usd":270,"gbp":212.5,"blocked":"fetch failed: blocked by egress policy: host \"api.example.com\" is not allowed"}
const res = await fetch(`${input.api}/rates.json`, { headers: { Accept: "application/json" } });
if (!res.ok) throw new Error(`rates: HTTP ${res.status} ${res.statusText}`);
const { rates } = await res.json();

// Anything the policy does not allow is refused before it leaves the host.
let blocked = null;
try {
  await fetch("http://api.example.com/rates.json");
} catch (e) {
  blocked = e.message;
}
return { usd: input.eur * rates.USD, gbp: input.eur * rates.GBP, blocked };
