// A trivial run that first uses the other web globals: base64, the text
// codecs, URL, structuredClone and crypto, once each.
const b = btoa("user:secret");
const bytes = new TextEncoder().encode("héllo");
const u = new URL("https://example.com/a/b?x=1#f").searchParams.get("x");
const c = structuredClone({ a: [1, 2], m: new Map([[1, 2]]) });
const id = crypto.randomUUID();
return [b, new TextDecoder().decode(bytes), u, c.m.get(1), id.length].join(" ");
