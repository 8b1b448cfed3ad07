package sandbox_test

import "testing"

// TestWebGlobals runs the web globals through the real worker pool: the
// workers get the web parts in the host's bootstrap bundle, and the
// host functions behind crypto (Go's standard library) and IDNA answer in
// the jailed worker.
func TestWebGlobals(t *testing.T) {
	expectResult(t, `
const mac = await crypto.subtle.sign("HMAC",
  await crypto.subtle.importKey("raw", new TextEncoder().encode("key"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
  new TextEncoder().encode("The quick brown fox jumps over the lazy dog"));
const hex = Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, "0")).join("");
const u = new URL("https://user@münchen.de:443/a/../b?x=1#f");
const c = structuredClone(new Map([[1, new Set([new Date(0)])]]));
return [btoa("user:pass"), hex, u.href, u.origin, [...c.get(1)][0].toISOString(), crypto.randomUUID().length,
  new TextDecoder().decode(new Uint8Array([0xf0, 0x9f, 0x98])), typeof performance.now()]`,
		`["dXNlcjpwYXNz","f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8",`+
			`"https://user@xn--mnchen-3ya.de/b?x=1#f","https://xn--mnchen-3ya.de","1970-01-01T00:00:00.000Z",36,`+"\"\ufffd\""+`,"number"]`)
}
