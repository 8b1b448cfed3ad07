// The web globals' differential table: run() gives, for each case, what the
// globals did, as JSON. gen.sh runs it under Node to make golden.json;
// TestWebGolden runs it as a step and compares. Only what the standards
// fix is shown (no messages, which differ between implementations).
async function run() {
  const out = {};
  const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
  const bytes = (s) => new TextEncoder().encode(s);
  const err = (e) => "throws " + (e instanceof DOMException ? "DOMException " + e.name + " " + e.code : e && e.name);
  const attempt = (f) => { try { return f(); } catch (e) { return err(e); } };
  const attemptAsync = async (f) => { try { return await f(); } catch (e) { return err(e); } };
  const units = (s) => Array.from(s, (c) => c.codePointAt(0).toString(16)).join(" ");

  // ---- URL --------------------------------------------------------------
  const urls = [
    ["https://example.com"], ["HTTPS://EXAMPLE.COM:443/a/../b/./c?x#y"], ["http://user:pa ss@host:8080/p?q=1#f"],
    ["  http://a.b/\t\nc  "], ["http://[::1]:80/"], ["http://[2001:db8:0:0:1:0:0:1]/"], ["http://[0:0:0:0:0:ffff:192.168.0.1]/"],
    ["http://[::ffff:1.2.3.4]"], ["http://[1:2:3:4:5:6:7:8:9]"], ["http://[::1"], ["http://0x7f.1/"], ["http://127.0.0.1.:1/"],
    ["http://0300.0250.0.1/"], ["http://4294967295/"], ["http://4294967296/"], ["http://1.2.3.256/"], ["http://999999999999/"],
    ["http://foo.0x/"], ["http://a%20b/"], ["http://%41.com/"], ["http://ex%ample.com/"], ["http://münchen.de/straße?ä=ö#ü"],
    ["http://xn--mnchen-3ya.de/"], ["http://EXAMPLE.com./"], ["http://a..b/"], ["http://xn--/"], ["http://☃.net/"],
    ["http://ab\u00ADc.com/"], ["http://faß.de/"], ["http://例え.テスト/"], ["http://a<b/"], ["http://a^b/"],
    ["http:\\\\host\\path\\x"], ["http:/host/p"], ["http:host/p"], ["https:///x.com"], ["http://@host/"], ["http://a@b@c/"],
    ["http://:@host/"], ["http://host:/"], ["http://host:65536/"], ["http://host:0080/"], ["ws://h:80/"], ["wss://h:443/"],
    ["ftp://h:21/"], ["file:///C:/x/../../y"], ["file://localhost/etc/passwd"], ["file://host/share"], ["file:c:\\foo\\bar"],
    ["file:/C|/x"], ["file:..", "file:///C:/a/b"], ["mailto:Joe@Example.COM"], ["javascript:alert(1) "], ["data:text/plain,a b#c d"],
    ["urn:isbn:0451450523"], ["blob:https://a.com/uuid"], ["blob:ftp://a.com/uuid"], ["git+ssh://git@github.com/a/b.git"],
    ["non-spec:/.//p"], ["non-spec://h/%2e/x"], ["sc://ñ/x"], ["sc://a b/"], ["sc://[::1]/"], ["sc:/a/../../b"],
    ["http://h/%2e%2E/x"], ["http://h/a/%2e./b"], ["http://h/a b/`{}\"<>^|"], ["http://h/?a b'\"<>`#c d`\"<>"],
    ["sc://h/?'"], ["http://h/\u{1F600}?\u{1F600}#\u{1F600}"], ["http://h/\uD800"], ["../c?d", "http://a/b/x/y"],
    ["//other/p", "https://base/x"], ["?q", "http://a/b?c#d"], ["#f", "http://a/b?c#d"], ["", "http://a/b?c#d"],
    ["/p", "mailto:x"], ["#f", "mailto:x"], ["x", "not a url"], ["http:"], ["http://"], ["://x"], ["a"], [""],
    ["http://h:8080", "ws://other"], ["  \u0000http://h/\u0001 "], ["HTTP://H/%7e?%7e#%7e"], ["http://1.1.1.1.1/"],
    ["http://[::127.0.0.1]/"], ["http://[1::]/"], ["http://[1:0::0:1]/"], ["http://[0:0:1:0:0:0:0:0]/"], ["http://h/p?%zz#%"],
    // url.js's own parser takes these, or leaves them to the full one (urlparse.js) at its bounds
    ["http://Example.COM/A/B?Q=1#F"], ["HTTP://example.com:80/"], ["https://example.com:0443/x"], ["https://example.com:443"],
    ["http://example.com:65535/"], ["http://example.com:65536/"], ["http://example.com:/x"], ["http://example.com:8080"],
    ["http://example.com:8x/"], ["http://a_b-c.example/"], ["http://a.xn--/"], ["http://xn--.a/"], ["http://XN--.a/"], ["http://example.com./"], ["http://example..com/"], ["http://.example.com/"],
    ["http://-x-.com/"], ["http://1example.com/"], ["http://example.123/"], ["http://example.0x1f/"], ["http://example.1a/"],
    ["http://xn--nxasmq6b.com/"], ["http://XN--NXASMQ6B.com/"], ["http://user@example.com/"],
    ["http://example.com/a/./b"], ["http://example.com/a/%2E%2e/b"], ["http://example.com/a.b/.c/..d/c./e.."],
    ["http://example.com/%20%zz/x"], ["http://example.com/a|b^c~d!$&'()*+,;=:@"], ["http://example.com/?q=a|b^c`d{}~"],
    ["http://example.com/#a|b?c#d'{}"], ["http://example.com?x"], ["http://example.com#x"], ["ws://example.com/chat"],
    ["wss://example.com:443/"], ["ftp://example.com:21/file"], ["http://example.com//a//b/"], ["http:///example.com/"],
    ["https://example.com/\u00e9"], ["  https://example.com/  "], ["http://exa mple.com/"], ["http://example.com/a b"],
    ["/a/b?c#d", "https://example.com/x/y"], ["a/b", "https://example.com/x/y"], ["a/b", "https://example.com/"],
    ["?q=1", "https://example.com/x/y?z#w"], ["#h", "https://example.com/x?z#w"], ["", "https://example.com/x?z#w"],
    ["./a", "https://example.com/x/y"], ["../a", "https://example.com/x/y"], ["/", "http://example.com:8080/x"],
    ["b", "http://u:p@example.com/a/"], ["x:y", "http://example.com/"], ["https://other.com/p", "http://example.com/"],
    ["//other.com/p", "http://example.com/"], ["a", "file:///x/y"], ["http:x", "http://example.com/a/"],
    ["a?b#c", "wss://example.com/d/e?f#g"], ["a", "HTTP://EXAMPLE.COM"], ["/a", "https://example.com/\u00e9"],
  ];
  out.url = urls.map(([i, b]) => {
    try {
      const u = b === undefined ? new URL(i) : new URL(i, b);
      return [u.href, u.origin, u.protocol, u.username, u.password, u.host, u.hostname, u.port, u.pathname, u.search, u.hash];
    } catch (e) { return err(e); }
  });
  out.urlCanParse = [URL.canParse("http://x"), URL.canParse("x"), URL.canParse("x", "http://a/")];
  {
    const u = new URL("http://a.com/p?x=1#h");
    const steps = [];
    const show = () => steps.push(u.href);
    u.protocol = "https"; show(); u.protocol = "mailto"; show(); u.username = "us er"; show(); u.password = "p@ss"; show();
    u.host = "b.org:81"; show(); u.hostname = "c.net"; show(); u.port = "443"; show(); u.port = "x"; show(); u.port = ""; show();
    u.pathname = "/a b/../c"; show(); u.search = "q=ü&r"; show(); u.hash = "frag ment"; show(); u.search = ""; show();
    u.hash = ""; show(); u.searchParams.append("k", "v w"); show(); u.href = "ftp://z/"; show();
    u.hostname = "[::2]"; show(); u.host = ""; show(); u.protocol = "FILE"; show();
    steps.push(attempt(() => { u.href = "nope"; }));
    out.urlSetters = steps;
  }
  {
    const p = new URLSearchParams("?a=1&b=2+3&a=%zz&c&=x&d=%F0%9F%98%80&&e=%C3");
    const l = [p.toString(), p.get("a"), p.getAll("a"), p.has("c"), p.get("nope"), p.size, [...p]];
    p.set("a", "x y"); p.append("z", "~!'()*"); p.delete("b"); l.push(p.toString());
    p.sort(); l.push(p.toString());
    l.push(new URLSearchParams({ x: "1", "y z": "é" }).toString(), new URLSearchParams([["a", "b"], ["a", "c"]]).toString());
    l.push(attempt(() => new URLSearchParams([["a"]])));
    l.push(new URLSearchParams("a=1&a=2&b=3").has("a", "2"));
    out.searchParams = l;
  }
  {
    const p = new URLSearchParams("%EF%BB%BFa=1&b=%FF&c=100%&d=%e9&e=%C3%A9+x&f=%2B+%20&g=a%26b%3Dc&%zz%=1&h=%F0%9F%98%80&i=%ED%A0%80&j=%C0%80&k=\u00e9&l=%E2%82");
    const s = new URLSearchParams({ a: "\u00e9 \u20ac\u{1F600}*-._~!'()/?#&=+%", b: "\uD800x" });
    out.searchParamsCodec = [[...p].map(([k, v]) => [units(k), units(v)]), s.toString(), new URL("http://x/?%EF%BB%BF=%C3%A9+1&x=%FF").searchParams.toString()];
  }

  // ---- TextEncoder, TextDecoder -----------------------------------------
  const seqs = [
    [0x61, 0x80, 0x62], [0xc0, 0x80], [0xc2], [0xe0, 0x80, 0x80], [0xe0, 0xa0], [0xed, 0xa0, 0x80], [0xf0, 0x80, 0x80, 0x80],
    [0xf0, 0x90, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80], [0xff, 0xfe], [0xef, 0xbb, 0xbf, 0x61], [0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf],
    [0xe2, 0x82, 0xac, 0xe2, 0x82], [0xf0, 0x9f, 0x98, 0x80], [0xf0, 0x9f, 0x98], [0xc3, 0x28], [0xe1, 0x80, 0xe2, 0xf0, 0x91, 0x92, 0xf1, 0xbf, 0x41],
    [], [0x00, 0x7f, 0xc2, 0x80, 0xdf, 0xbf, 0xe0, 0xa0, 0x80, 0xef, 0xbf, 0xbf, 0xf4, 0x8f, 0xbf, 0xbf],
  ];
  out.decode = seqs.map((s) => [
    units(new TextDecoder().decode(new Uint8Array(s))),
    units(new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array(s))),
    attempt(() => units(new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(s)))),
  ]);
  {
    const d = new TextDecoder();
    const chunks = [[0xef, 0xbb], [0xbf, 0xf0, 0x9f], [0x98], [0x80, 0xe2], [0x82, 0xac, 0xc3]];
    out.decodeStream = chunks.map((c) => units(d.decode(new Uint8Array(c), { stream: true }))).concat([units(d.decode())]);
    const f = new TextDecoder("utf-8", { fatal: true });
    out.decodeStreamFatal = [units(f.decode(new Uint8Array([0xe2, 0x82]), { stream: true })), attempt(() => f.decode()), units(f.decode(new Uint8Array([0x61])))];
  }
  out.decodeLabels = ["utf8", " UTF-8\n", "unicode-1-1-utf-8", "UTF8"].map((l) => attempt(() => new TextDecoder(l).encoding));
  out.decodeViews = [
    new TextDecoder().decode(new DataView(new Uint8Array([0x41, 0x42, 0x43]).buffer, 1)),
    new TextDecoder().decode(new Uint16Array([0x4241])), new TextDecoder().decode(new Uint8Array([0x68, 0x69]).buffer),
    attempt(() => new TextDecoder().decode("str")),
  ];
  out.encode = ["", "aé€😀", "\uD800x", "x\uDC00", "\uDBFF\uDFFF"].map((s) => Array.from(new TextEncoder().encode(s)));
  {
    const buf = new Uint8Array(5);
    out.encodeInto = [new TextEncoder().encodeInto("a€😀", buf), Array.from(buf), new TextEncoder().encoding];
  }

  // ---- base64 -------------------------------------------------------------
  out.btoa = ["", "f", "fo", "foo", "foob", "\u00ff\u00fe", "\u0100", 12, null, undefined].map((s) => attempt(() => btoa(s)));
  out.atob = ["", "Zg", "Zg=", "Zg==", "Zg===", "Zm9v", " Zm 9v\n", "Zm9vYg", "Z", "Zm9vY", "Zh==", "Zm=9", "Zm9v!", "//+/", "-_", "\u00ff", "AAA=", "====", null]
    .map((s) => attempt(() => units(atob(s))));

  // ---- structuredClone -----------------------------------------------------
  const describe = (v, seen = new Map()) => {
    if (v === null || typeof v !== "object") return typeof v === "bigint" ? v + "n" : v === undefined ? "undefined" : Number.isNaN(v) ? "NaN" : Object.is(v, -0) ? "-0" : v;
    if (seen.has(v)) return "<cycle " + seen.get(v) + ">";
    seen.set(v, seen.size);
    const tag = Object.prototype.toString.call(v);
    if (v instanceof Map) return [tag, [...v].map(([k, x]) => [describe(k, seen), describe(x, seen)])];
    if (v instanceof Set) return [tag, [...v].map((x) => describe(x, seen))];
    if (v instanceof Date) return [tag, v.getTime()];
    if (v instanceof RegExp) return [tag, v.source, v.flags, v.lastIndex];
    if (v instanceof ArrayBuffer) return [tag, hex(v)];
    if (ArrayBuffer.isView(v)) return [tag, v.byteOffset, v.byteLength, hex(v.buffer)];
    if (v instanceof Error) return [tag, v.name, v.message, Object.getPrototypeOf(v).constructor.name, "cause" in v ? describe(v.cause, seen) : "no cause"];
    return [tag, Array.isArray(v) ? v.length : "object", Object.keys(v).map((k) => [k, describe(v[k], seen)])];
  };
  const cyc = { name: "root" }; cyc.self = cyc; cyc.list = [cyc, { up: cyc }];
  const m = new Map([[1, "one"], [{ k: 1 }, new Set([1, "a"])]]); m.set("me", m);
  const buf = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]).buffer;
  const views = [new Uint8Array(buf, 2, 3), new Int16Array(buf, 2, 2), new Float64Array(buf), new DataView(buf, 1, 4), new BigInt64Array(buf)];
  const e = new RangeError("bad", { cause: 3 });
  class K { constructor() { this.x = 1; } get y() { return 2; } }
  const clones = [
    1, -0, NaN, "s", 10n, true, null, undefined, [1, , 3], { a: { b: [1, 2] } }, new Date(86400000), /a+b/gi, Object.assign(/x/y, { lastIndex: 3 }),
    buf, views, cyc, m, e, new TypeError("t"), Object.assign(new Error("e"), { name: "CustomError" }), new K(),
    Object(1), Object("s"), Object(false), [new Date(NaN)], { [Symbol("s")]: 1, v: 2 },
  ];
  out.clone = clones.map((v) => attempt(() => describe(structuredClone(v))));
  out.cloneShared = (() => {
    const c = structuredClone(views);
    return [c[0].buffer === c[1].buffer, c[0].buffer === c[4].buffer, c[0].buffer === buf];
  })();
  out.cloneCycle = (() => { const c = structuredClone(cyc); return [c !== cyc, c.self === c, c.list[0] === c, c.list[1].up === c]; })();
  out.cloneFails = [() => {}, function f() {}, Symbol("x"), { f() {} }, [Symbol.iterator], new WeakMap(), Promise.resolve(1)]
    .map((v) => attempt(() => structuredClone(v)));
  out.cloneArgs = attempt(() => structuredClone());

  // ---- crypto ----------------------------------------------------------------
  const inputs = ["", "abc", "The quick brown fox jumps over the lazy dog", "é".repeat(100)];
  out.digest = [];
  for (const alg of ["SHA-1", "SHA-256", "sha-384", { name: "SHA-512" }]) {
    for (const s of inputs) out.digest.push(hex(await crypto.subtle.digest(alg, bytes(s))));
  }
  out.digestFails = [await attemptAsync(() => crypto.subtle.digest("MD5", bytes("x"))), await attemptAsync(() => crypto.subtle.digest("SHA-256", "x"))];
  out.hmac = [];
  for (const hash of ["SHA-1", "SHA-256", "SHA-384", "SHA-512"]) {
    for (const [k, d] of [["key", "The quick brown fox jumps over the lazy dog"], ["", "x"], ["k".repeat(200), "data"]]) {
      const r = await attemptAsync(async () => {
        const key = await crypto.subtle.importKey("raw", bytes(k), { name: "HMAC", hash }, false, ["sign", "verify"]);
        const sig = await crypto.subtle.sign("HMAC", key, bytes(d));
        const ok = await crypto.subtle.verify("HMAC", key, sig, bytes(d));
        const bad = await crypto.subtle.verify({ name: "HMAC" }, key, new Uint8Array(sig.byteLength), bytes(d));
        return [hex(sig), ok, bad, key.algorithm.name, key.algorithm.hash.name, key.algorithm.length, key.type, key.extractable, key.usages];
      });
      out.hmac.push(r);
    }
  }
  {
    const key = await crypto.subtle.importKey("raw", new Uint8Array(16).map((_, i) => i), { name: "AES-GCM" }, true, ["encrypt", "decrypt"]);
    const iv = new Uint8Array(12).map((_, i) => 100 + i);
    const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, bytes("attack at dawn"));
    const ct2 = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: bytes("hdr"), tagLength: 96 }, key, bytes("attack at dawn"));
    const pt = await crypto.subtle.decrypt({ name: "AES-GCM", iv }, key, ct);
    const pt2 = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: bytes("hdr"), tagLength: 96 }, key, ct2);
    const tampered = new Uint8Array(ct); tampered[0] ^= 1;
    const k256 = await crypto.subtle.importKey("raw", new Uint8Array(32).fill(7), "AES-GCM", false, ["encrypt"]);
    const ct3 = await crypto.subtle.encrypt({ name: "AES-GCM", iv: new Uint8Array(16) }, k256, new Uint8Array(0));
    out.aesgcm = [
      hex(ct), hex(ct2), new TextDecoder().decode(pt), new TextDecoder().decode(pt2), hex(ct3), key.algorithm,
      hex(await crypto.subtle.exportKey("raw", key)),
      await attemptAsync(() => crypto.subtle.decrypt({ name: "AES-GCM", iv }, key, tampered)),
      await attemptAsync(() => crypto.subtle.decrypt({ name: "AES-GCM", iv: new Uint8Array(12) }, key, ct)),
      await attemptAsync(() => crypto.subtle.importKey("raw", new Uint8Array(15), "AES-GCM", false, ["encrypt"])),
      await attemptAsync(() => crypto.subtle.decrypt({ name: "AES-GCM", iv }, k256, ct3)),
    ];
  }
  {
    const a = new Uint32Array(4);
    const same = crypto.getRandomValues(a) === a;
    const uuid = crypto.randomUUID();
    out.random = [same, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(uuid), uuid !== crypto.randomUUID(),
      attempt(() => crypto.getRandomValues(new Float32Array(2))), attempt(() => crypto.getRandomValues(new Uint8Array(65537))),
      crypto.getRandomValues(new Uint8Array(65536)).length];
  }

  // ---- DOMException, Event, EventTarget, AbortController --------------------
  {
    const d = new DOMException("m", "NotFoundError");
    out.domException = [d.name, d.message, d.code, d instanceof Error, Object.prototype.toString.call(d), String(d),
      new DOMException().name, new DOMException("x", "Custom").code, DOMException.ABORT_ERR, DOMException.DATA_CLONE_ERR];
  }
  {
    const log = [];
    const t = new EventTarget();
    const h = (e) => log.push("h " + e.type + " " + (e.target === t) + " " + (e.currentTarget === t));
    t.addEventListener("x", h); t.addEventListener("x", h);
    t.addEventListener("x", () => log.push("once"), { once: true });
    t.addEventListener("x", { handleEvent(e) { log.push("obj"); } });
    t.addEventListener("y", (e) => { e.preventDefault(); e.stopImmediatePropagation(); log.push("y1"); });
    t.addEventListener("y", () => log.push("y2"));
    log.push(t.dispatchEvent(new Event("x")), t.dispatchEvent(new Event("x")));
    log.push(t.dispatchEvent(new Event("y", { cancelable: true })), t.dispatchEvent(new Event("y")));
    t.removeEventListener("x", h);
    t.dispatchEvent(new Event("x"));
    const e = new Event("z", { bubbles: true });
    log.push(e.type, e.bubbles, e.cancelable, e.defaultPrevented, e.eventPhase, e.target, e.isTrusted, typeof e.timeStamp);
    out.events = log;
  }
  {
    const log = [];
    const c = new AbortController();
    c.signal.addEventListener("abort", (e) => log.push("abort " + e.type + " " + c.signal.aborted));
    c.signal.onabort = () => log.push("onabort");
    log.push(c.signal.aborted, c.signal.reason);
    c.abort(); c.abort("again");
    log.push(c.signal.aborted, err(c.signal.reason), attempt(() => c.signal.throwIfAborted()));
    const c2 = new AbortController(); c2.abort("why"); log.push(c2.signal.reason);
    log.push(AbortSignal.abort().aborted, err(AbortSignal.abort().reason), AbortSignal.abort(5).reason);
    const c3 = new AbortController(); const any = AbortSignal.any([c3.signal, new AbortController().signal]);
    log.push(any.aborted); c3.abort("r3"); log.push(any.aborted, any.reason);
    log.push(attempt(() => new AbortSignal()));
    const t = AbortSignal.timeout(1);
    await new Promise((r) => t.addEventListener("abort", r));
    log.push(t.aborted, err(t.reason));
    const t2 = new EventTarget(); const c4 = new AbortController();
    t2.addEventListener("p", () => log.push("p"), { signal: c4.signal }); t2.dispatchEvent(new Event("p")); c4.abort(); t2.dispatchEvent(new Event("p"));
    out.abort = log;
  }

  // ---- Blob, File, FormData, Request, performance ---------------------------
  {
    const b = new Blob(["ab", new Uint8Array([0x63, 0xe2]), new Blob(["\x82\xac"].map((s) => new Uint8Array([...s].map((c) => c.charCodeAt(0)))))], { type: "Text/Plain" });
    out.blob = [b.size, b.type, await b.text(), hex(await b.arrayBuffer()), await b.slice(1, 3).text(), b.slice(-2).size, b.slice(2, 1).size,
      b.slice(0, 1, "X/Y").type, new Blob([], { type: "a\u00e9" }).type, new Blob().size, Object.prototype.toString.call(b),
      await new Blob(["a\r\nb"], { endings: "native" }).text(), attempt(() => new Blob("ab"))];
    const f = new File(["x"], "n.txt", { type: "text/plain", lastModified: 5 });
    out.file = [f.name, f.size, f.type, f.lastModified, f instanceof Blob];
    const fd = new FormData();
    fd.append("a", "1"); fd.append("a", 2); fd.append("f", new Blob(["zz"]), "z.bin"); fd.set("b", "x"); fd.set("a", "3");
    out.formData = [[...fd.keys()], fd.get("a"), fd.getAll("a"), fd.has("f"), fd.get("f").name, fd.get("f") instanceof File, fd.get("nope"),
      (fd.delete("b"), [...fd.keys()])];
  }
  {
    const r = new Request("https://api.test/x?y#z", { method: "post", headers: { "X-A": "1" }, body: "hi" });
    const r2 = new Request(new Request("https://api.test/x", { method: "POST", body: "b" }), { method: "PATCH" });
    out.request = [r.url, r.method, r.headers.get("x-a"), r.headers.get("content-type"), r.redirect, r.bodyUsed, await r.text(), r.bodyUsed,
      r2.method, await r2.text(), new Request("http://h/", { method: "delete" }).method,
      new Request("http://h/", { method: "POST", body: new URLSearchParams("a=1") }).headers.get("content-type"),
      attempt(() => new Request("/relative")), attempt(() => new Request("http://h/", { body: "x" })),
      attempt(() => new Request("http://h/", { method: "TRACE" })), attempt(() => new Request("http://u:p@h/")),
      r.signal instanceof AbortSignal, await attemptAsync(() => r.text())];
  }
  {
    const a = performance.now(), b = performance.now();
    out.performance = [typeof a, a >= 0, b >= a, typeof performance.timeOrigin, Math.abs(performance.timeOrigin + a - Date.now()) < 1000];
  }
  return out;
}
