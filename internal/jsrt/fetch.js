// Stepbox guest bootstrap, part two: the fetch API (fetch, Headers,
// Response, Request; AbortSignal is abort.js's), relayed to the host's FetchProxy. It is most of
// the guest API's code and few steps use it, so a VM reads it only when a
// step first reads one of its globals (bootstrap.js, __sbx_fetchAPI), from
// bytecode compiled by Stepbox itself like the bootstrap's.
//
// It may then run after the step changed any global or prototype: it
// follows bootstrap.js's rules (its header) to the letter, and uses only
// the built-ins the boot captured, which bridge hands it. bridge is the
// boot's own object; nothing here keeps it or gives it away.
"use strict";
(function __sbx_fetchPart(bridge) {
  const {
    host, pending, mapSet, KIND_FETCH, __sbx_list, __sbx_resolved,
    __sbx_rejected, ReflectApply, JSONparse, JSONstringify, ObjectPrototype,
    ObjectEntries, ObjectFreeze, ObjectHasOwn, ObjectGetOwnPropertyDescriptor,
    ObjectGetPrototypeOf, ObjectSetPrototypeOf, ArrayIsArray, StringCtor,
    StringFromCharCode, StringCharCodeAt, StringToLowerCase, PromiseCtor,
    TypeErrorCtor, MapSize, MapForEach, Uint8ArrayCtor, ArrayBufferIsView,
    ArrayBufferByteLength, SymbolIterator, TypedArrayLength, TypedArrayBuffer,
    TypedArrayByteOffset, TypedArrayByteLength, DataViewBuffer,
    DataViewByteOffset, DataViewByteLength, mapDelete, loadedPart,
  } = bridge;


  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  // __sbx_b64value is the 6 bits of a base64 character code, -1 for none
  // (computed: a table made at boot would cost every VM its first typed
  // array).
  function __sbx_b64value(c) {
    if (c >= 65 && c <= 90) return c - 65;
    if (c >= 97 && c <= 122) return c - 71;
    if (c >= 48 && c <= 57) return c + 4;
    return c === 43 ? 62 : c === 47 ? 63 : -1;
  }

  function __sbx_lower(s) { return ReflectApply(StringToLowerCase, StringCtor(s), []); }

  function __sbx_b64encode(bytes) {
    const len = ReflectApply(TypedArrayLength, bytes, []);
    let out = "";
    for (let i = 0; i < len; i += 3) {
      const n = (bytes[i] << 16) | ((bytes[i + 1] || 0) << 8) | (bytes[i + 2] || 0);
      out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63] +
        (i + 1 < len ? B64[(n >> 6) & 63] : "=") + (i + 2 < len ? B64[n & 63] : "=");
    }
    return out;
  }
  // __sbx_b64decode skips what is not base64 (padding, line breaks).
  function __sbx_b64decode(s) {
    let valid = 0;
    for (let i = 0; i < s.length; i++) {
      if (__sbx_b64value(ReflectApply(StringCharCodeAt, s, [i])) >= 0) valid++;
    }
    const out = new Uint8ArrayCtor((valid * 6) >> 3);
    let buf = 0, bits = 0, k = 0;
    for (let i = 0; i < s.length; i++) {
      const v = __sbx_b64value(ReflectApply(StringCharCodeAt, s, [i]));
      if (v < 0) continue;
      buf = ((buf << 6) | v) & 0xffffff; bits += 6;
      if (bits >= 8) { bits -= 8; out[k++] = (buf >> bits) & 255; }
    }
    return out;
  }
  function __sbx_utf8encode(str) {
    let n = 0;
    for (let i = 0; i < str.length; i++) {
      const c = ReflectApply(StringCharCodeAt, str, [i]);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c < 0xdc00 && i + 1 < str.length && (ReflectApply(StringCharCodeAt, str, [i + 1]) & 0xfc00) === 0xdc00) { n += 4; i++; }
      else n += 3;
    }
    const out = new Uint8ArrayCtor(n);
    let k = 0;
    for (let i = 0; i < str.length; i++) {
      let c = ReflectApply(StringCharCodeAt, str, [i]);
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < str.length) {
        const d = ReflectApply(StringCharCodeAt, str, [i + 1]);
        if (d >= 0xdc00 && d < 0xe000) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); i++; }
      }
      if (c < 0x80) out[k++] = c;
      else if (c < 0x800) { out[k++] = 0xc0 | (c >> 6); out[k++] = 0x80 | (c & 63); }
      else if (c < 0x10000) { out[k++] = 0xe0 | (c >> 12); out[k++] = 0x80 | ((c >> 6) & 63); out[k++] = 0x80 | (c & 63); }
      else { out[k++] = 0xf0 | (c >> 18); out[k++] = 0x80 | ((c >> 12) & 63); out[k++] = 0x80 | ((c >> 6) & 63); out[k++] = 0x80 | (c & 63); }
    }
    return out;
  }
  function __sbx_utf8decode(b) {
    const len = ReflectApply(TypedArrayLength, b, []);
    let out = "";
    for (let i = 0; i < len;) {
      const c = b[i];
      let cp = 0xfffd, n = 1;
      if (c < 0x80) { cp = c; }
      else if (c >= 0xc2 && c < 0xe0 && (b[i + 1] & 0xc0) === 0x80) { cp = ((c & 31) << 6) | (b[i + 1] & 63); n = 2; }
      else if (c >= 0xe0 && c < 0xf0 && (b[i + 1] & 0xc0) === 0x80 && (b[i + 2] & 0xc0) === 0x80) { cp = ((c & 15) << 12) | ((b[i + 1] & 63) << 6) | (b[i + 2] & 63); n = 3; }
      else if (c >= 0xf0 && c < 0xf5 && (b[i + 1] & 0xc0) === 0x80 && (b[i + 2] & 0xc0) === 0x80 && (b[i + 3] & 0xc0) === 0x80) { cp = ((c & 7) << 18) | ((b[i + 1] & 63) << 12) | ((b[i + 2] & 63) << 6) | (b[i + 3] & 63); n = 4; }
      if (cp >= 0x10000) { cp -= 0x10000; out += StringFromCharCode(0xd800 + (cp >> 10), 0xdc00 + (cp & 1023)); }
      else out += StringFromCharCode(cp);
      i += n;
    }
    return out;
  }

  // __sbx_is tells an ArrayBuffer (ArrayBufferByteLength) or a Map
  // (MapSize) by its internal slot: whether the getter takes v.
  function __sbx_is(getter, v) {
    try {
      ReflectApply(getter, v, []);
      return true;
    } catch (_) {
      return false;
    }
  }
  // __sbx_viewBytes returns the bytes a typed array or DataView views.
  function __sbx_viewBytes(v) {
    let buffer, offset, length;
    try {
      buffer = ReflectApply(TypedArrayBuffer, v, []);
      offset = ReflectApply(TypedArrayByteOffset, v, []);
      length = ReflectApply(TypedArrayByteLength, v, []);
    } catch (_) {
      buffer = ReflectApply(DataViewBuffer, v, []);
      offset = ReflectApply(DataViewByteOffset, v, []);
      length = ReflectApply(DataViewByteLength, v, []);
    }
    return new Uint8ArrayCtor(buffer, offset, length);
  }

  let headerPairs; // (Headers) -> its pairs, for a fetch request's JSON

  class Headers {
    #list = __sbx_list(); // [lower-case name, value] pairs
    constructor(init) {
      if (init === undefined || init === null) return;
      if (typeof init !== "object" && typeof init !== "function") {
        throw new TypeErrorCtor("Headers: init must be an object, an array of [name, value] pairs or a Headers");
      }
      if (#list in init) {
        const l = init.#list;
        for (let i = 0; i < l.length; i++) this.#append(l[i][0], l[i][1]);
        return;
      }
      if (ArrayIsArray(init)) {
        for (let i = 0; i < init.length; i++) {
          const pair = init[i];
          this.#append(pair[0], pair[1]);
        }
        return;
      }
      if (__sbx_is(MapSize, init)) {
        const self = this;
        ReflectApply(MapForEach, init, [function __sbx_header(value, name) { self.#append(name, value); }]);
        return;
      }
      const iterate = init[SymbolIterator];
      if (typeof iterate === "function") {
        // Another iterable of the step's: its own iterator.
        const it = ReflectApply(iterate, init, []);
        for (let r = it.next(); !r.done; r = it.next()) this.#append(r.value[0], r.value[1]);
        return;
      }
      const entries = ObjectEntries(init);
      for (let i = 0; i < entries.length; i++) this.#append(entries[i][0], entries[i][1]);
    }
    #append(name, value) {
      const l = this.#list;
      l[l.length] = [__sbx_lower(name), StringCtor(value)];
    }
    #remove(n) {
      const l = this.#list;
      const keep = __sbx_list();
      for (let i = 0; i < l.length; i++) if (l[i][0] !== n) keep[keep.length] = l[i];
      this.#list = keep;
    }
    #get(n) {
      const l = this.#list;
      let v = null;
      for (let i = 0; i < l.length; i++) if (l[i][0] === n) v = v === null ? l[i][1] : v + ", " + l[i][1];
      return v;
    }
    // #entries are the headers as fetch shows them: one per name, sorted,
    // repeated values joined.
    #entries() {
      const l = this.#list;
      const names = __sbx_list();
      for (let i = 0; i < l.length; i++) {
        const n = l[i][0];
        let j = 0;
        while (j < names.length && names[j] !== n) j++;
        if (j === names.length) names[j] = n;
      }
      for (let i = 1; i < names.length; i++) {
        const n = names[i];
        let j = i - 1;
        for (; j >= 0 && names[j] > n; j--) names[j + 1] = names[j];
        names[j + 1] = n;
      }
      const out = __sbx_list();
      for (let i = 0; i < names.length; i++) out[i] = [names[i], this.#get(names[i])];
      return out;
    }
    static {
      headerPairs = function __sbx_headerPairs(h) {
        const l = h.#list;
        const out = __sbx_list();
        for (let i = 0; i < l.length; i++) out[i] = ObjectSetPrototypeOf([l[i][0], l[i][1]], null);
        return out;
      };
    }
    append(name, value) { this.#append(name, value); }
    set(name, value) {
      const n = __sbx_lower(name);
      this.#remove(n);
      const l = this.#list;
      l[l.length] = [n, StringCtor(value)];
    }
    delete(name) { this.#remove(__sbx_lower(name)); }
    get(name) { return this.#get(__sbx_lower(name)); }
    has(name) { return this.#get(__sbx_lower(name)) !== null; }
    forEach(fn, thisArg) {
      const e = this.#entries();
      for (let i = 0; i < e.length; i++) ReflectApply(fn, thisArg, [e[i][1], e[i][0], this]);
    }
    entries() { return __sbx_iterate(this.#entries(), 0); }
    keys() { return __sbx_iterate(this.#entries(), 1); }
    values() { return __sbx_iterate(this.#entries(), 2); }
    [SymbolIterator]() { return __sbx_iterate(this.#entries(), 0); }
  }

  // __sbx_iterate walks a snapshot of #entries: pairs (kind 0), names (1)
  // or values (2). Its body runs in the step's calls of next, and reads
  // nothing.
  function* __sbx_iterate(list, kind) {
    for (let i = 0; i < list.length; i++) yield kind === 0 ? list[i] : list[i][kind - 1];
  }


  class Response {
    // Fields, not assignments: defining them never meets a setter the step
    // put on Object.prototype.
    status; statusText; ok; headers; url; redirected; type;
    #body; #encoding; #used = false;
    constructor(r) {
      this.status = r.status;
      this.statusText = r.statusText;
      this.ok = r.status >= 200 && r.status < 300;
      this.headers = new Headers(r.headers);
      this.url = r.url;
      this.redirected = !!r.redirected;
      this.type = "basic";
      this.#body = r.body;
      this.#encoding = r.bodyEncoding || "";
    }
    get bodyUsed() { return this.#used; }
    #take() {
      if (this.#used) throw new TypeErrorCtor("Body is unusable: body has already been read");
      this.#used = true;
    }
    #text() {
      this.#take();
      return this.#encoding === "base64" ? __sbx_utf8decode(__sbx_b64decode(this.#body)) : this.#body;
    }
    text() {
      try { return __sbx_resolved(this.#text()); } catch (e) { return __sbx_rejected(e); }
    }
    json() {
      try { return __sbx_resolved(JSONparse(this.#text())); } catch (e) { return __sbx_rejected(e); }
    }
    arrayBuffer() {
      try {
        this.#take();
        const b = this.#encoding === "base64" ? __sbx_b64decode(this.#body) : __sbx_utf8encode(this.#body);
        return __sbx_resolved(ReflectApply(TypedArrayBuffer, b, []));
      } catch (e) {
        return __sbx_rejected(e);
      }
    }
  }

  const NO_INIT = ObjectFreeze({ __proto__: null });

  // __sbx_formText returns the text of a URLSearchParams-like body: its
  // own toString (found on it or a prototype of its, not Object.prototype's),
  // or undefined if it has none.
  function __sbx_formText(body) {
    for (let p = body; p !== null && p !== ObjectPrototype; p = ObjectGetPrototypeOf(p)) {
      const d = ObjectGetOwnPropertyDescriptor(p, "toString");
      if (d === undefined) continue;
      const fn = ObjectHasOwn(d, "value") ? d.value : d.get === undefined ? undefined : ReflectApply(d.get, body, []);
      if (typeof fn !== "function") return undefined;
      const s = ReflectApply(fn, body, []);
      return typeof s === "string" ? s : StringCtor(s);
    }
    return undefined;
  }

  // __sbx_body returns a body as [text] or [bytes, its Blob's type], or
  // undefined if it is none of the kinds fetch sends: a string, an
  // ArrayBuffer, a typed array or DataView, a Blob (blob.js's), a
  // URLSearchParams-like form (its own toString).
  function __sbx_body(body) {
    let text;
    if (typeof body === "string") return [body];
    if (__sbx_is(ArrayBufferByteLength, body)) return [new Uint8ArrayCtor(body)];
    if (ArrayBufferIsView(body)) return [__sbx_viewBytes(body)];
    const blobs = loadedPart("blob"); // a Blob exists only once blob.js is loaded
    const blob = blobs === undefined ? undefined : blobs.__sbx_blobBytes(body);
    if (blob !== undefined) return [blob, body.type];
    if (typeof body === "object" && (text = __sbx_formText(body)) !== undefined) return [text];
    return undefined;
  }
  const BODY_KINDS = "a string, an ArrayBuffer, a typed array, a Blob or a URLSearchParams (use JSON.stringify for JSON)";

  // __sbx_signal is what fetch knows of init.signal: undefined, or
  // abort.js's view of an AbortSignal ({ aborted, reason, timeoutMs }).
  function __sbx_signal(signal) {
    if (signal === undefined || signal === null) return undefined;
    const abort = loadedPart("abort"); // an AbortSignal exists only once abort.js is loaded
    const info = abort === undefined ? undefined : abort.__sbx_signalInfo(signal);
    if (info === undefined) throw new TypeErrorCtor("fetch: signal must be an AbortSignal");
    return info;
  }

  function __sbx_fetchRequest(input, init, info) {
    if (init === undefined || init === null) init = NO_INIT;
    const r = __sbx_requestOf(input); // a Request's own, or undefined
    const url = r !== undefined ? r.url : typeof input === "string" ? input : input && typeof input.url === "string" ? input.url : StringCtor(input);
    const method = init.method !== undefined ? StringCtor(init.method) : r !== undefined ? r.method : "GET";
    const req = { __proto__: null, url: url, method: method };
    if (init.headers !== undefined && init.headers !== null) {
      req.headers = headerPairs(new Headers(init.headers));
    } else if (r !== undefined) {
      req.headers = headerPairs(r.headers);
    }
    let body = init.body === undefined && r !== undefined ? r.body : init.body;
    if (body !== undefined && body !== null) {
      const b = __sbx_body(body);
      if (b === undefined) throw new TypeErrorCtor("fetch: body must be " + BODY_KINDS);
      if (typeof b[0] === "string") req.body = b[0];
      else { req.body = __sbx_b64encode(b[0]); req.bodyEncoding = "base64"; }
    }
    if (init.timeoutMs !== undefined) req.timeoutMs = +init.timeoutMs | 0;
    if (info !== undefined && info.timeoutMs !== undefined) req.timeoutMs = info.timeoutMs | 0;
    const redirect = init.redirect !== undefined ? init.redirect : r !== undefined && r.redirect !== "follow" ? r.redirect : undefined;
    if (redirect !== undefined) req.redirect = StringCtor(redirect);
    return JSONstringify(req);
  }

  function __sbx_fetch(input, init) {
    let text, signal, info;
    try {
      const r = __sbx_requestOf(input);
      signal = init !== undefined && init !== null && init.signal !== undefined ? init.signal : r !== undefined ? r.signal : undefined;
      info = __sbx_signal(signal);
      if (info !== undefined && info.aborted) return __sbx_rejected(info.reason);
      text = __sbx_fetchRequest(input, init, info);
    } catch (e) {
      return __sbx_rejected(e);
    }
    const id = host("fetch", text);
    return new PromiseCtor(function __sbx_pendingFetch(resolve, reject) {
      mapSet(pending, id, [resolve, reject, KIND_FETCH]);
      if (info !== undefined) {
        // Aborted before the reply: the promise rejects with the reason,
        // and the reply, when it comes, finds nothing pending.
        loadedPart("abort").__sbx_onAbort(signal, function __sbx_fetchAborted(reason) {
          mapDelete(pending, id);
          reject(reason);
        });
      }
    });
  }

  // ---- Request --------------------------------------------------------------

  const METHODS = { __proto__: null, delete: "DELETE", get: "GET", head: "HEAD", options: "OPTIONS", post: "POST", put: "PUT", patch: "PATCH" };
  let requestOf;
  class Request {
    #url; #method; #headers; #body = null; #bodyType = ""; #signal; #redirect; #used = false;
    constructor(input, init = undefined) {
      if (init === undefined || init === null) init = NO_INIT;
      const abort = bridge.part("abort");
      const from = input !== null && typeof input === "object" && #url in input ? input : undefined;
      if (from !== undefined) {
        this.#url = from.#url; this.#method = from.#method; this.#body = from.#body; this.#bodyType = from.#bodyType;
        this.#redirect = from.#redirect; this.#signal = from.#signal;
        this.#headers = new Headers(from.#headers);
      } else {
        const URLCtor = bridge.part("url").URL;
        let u;
        try { u = new URLCtor(StringCtor(input)); } catch (_) { throw new TypeErrorCtor("Request: invalid URL: " + StringCtor(input)); }
        if (u.username !== "" || u.password !== "") throw new TypeErrorCtor("Request: the URL must not carry credentials: " + u.href);
        this.#url = u.href; this.#method = "GET"; this.#redirect = "follow";
        this.#signal = new abort.AbortController().signal;
        this.#headers = new Headers();
      }
      if (init.method !== undefined) {
        const m = StringCtor(init.method);
        if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(m)) throw new TypeErrorCtor("Request: '" + m + "' is not a valid HTTP method");
        const l = __sbx_lower(m);
        if (l === "connect" || l === "trace" || l === "track") throw new TypeErrorCtor("Request: '" + m + "' HTTP method is unsupported");
        this.#method = l in METHODS && l !== "patch" ? METHODS[l] : m;
      }
      if (init.headers !== undefined && init.headers !== null) this.#headers = new Headers(init.headers);
      if (init.redirect !== undefined) {
        const r = StringCtor(init.redirect);
        if (r !== "follow" && r !== "manual" && r !== "error") throw new TypeErrorCtor("Request: redirect must be follow, manual or error");
        this.#redirect = r;
      }
      if (init.signal !== undefined && init.signal !== null) {
        if (abort.__sbx_signalInfo(init.signal) === undefined) throw new TypeErrorCtor("Request: signal must be an AbortSignal");
        this.#signal = init.signal;
      }
      if (init.body !== undefined && init.body !== null) {
        if (this.#method === "GET" || this.#method === "HEAD") throw new TypeErrorCtor("Request with GET/HEAD method cannot have body.");
        const b = __sbx_body(init.body);
        if (b === undefined) throw new TypeErrorCtor("Request: body must be " + BODY_KINDS);
        this.#body = typeof b[0] === "string" ? b[0] : b[0].slice();
        let type = b.length > 1 ? b[1] : typeof init.body === "string" ? "text/plain;charset=UTF-8" : "";
        if (typeof b[0] === "string" && typeof init.body !== "string") type = "application/x-www-form-urlencoded;charset=UTF-8";
        if (type !== "" && !this.#headers.has("content-type")) this.#headers.set("content-type", type);
      } else if (from !== undefined && init.body === null) {
        this.#body = null;
      }
    }
    get url() { return this.#url; }
    get method() { return this.#method; }
    get headers() { return this.#headers; }
    get signal() { return this.#signal; }
    get redirect() { return this.#redirect; }
    get bodyUsed() { return this.#used; }
    #bytes() {
      if (this.#used) throw new TypeErrorCtor("Body is unusable: body has already been read");
      this.#used = true;
      const b = this.#body;
      return b === null ? new Uint8ArrayCtor(0) : typeof b === "string" ? bridge.part("text").__sbx_utf8(b) : b.slice();
    }
    text() { try { return __sbx_resolved(__sbx_utf8decode(this.#bytes())); } catch (e) { return __sbx_rejected(e); } }
    json() { try { return __sbx_resolved(JSONparse(__sbx_utf8decode(this.#bytes()))); } catch (e) { return __sbx_rejected(e); } }
    arrayBuffer() { try { return __sbx_resolved(ReflectApply(TypedArrayBuffer, this.#bytes(), [])); } catch (e) { return __sbx_rejected(e); } }
    blob() {
      try {
        const b = this.#bytes();
        return __sbx_resolved(new (bridge.part("blob").Blob)([b], { type: this.#headers.get("content-type") || "" }));
      } catch (e) { return __sbx_rejected(e); }
    }
    clone() {
      if (this.#used) throw new TypeErrorCtor("Request.clone: the body has already been read");
      return new Request(this);
    }
    static {
      requestOf = function __sbx_requestOf(v) {
        if (v === null || typeof v !== "object" || !(#url in v)) return undefined;
        return { __proto__: null, url: v.#url, method: v.#method, headers: v.#headers, body: v.#body, signal: v.#signal, redirect: v.#redirect };
      };
    }
  }
  function __sbx_requestOf(v) { return requestOf(v); }

  return ObjectFreeze({
    __proto__: null,
    fetch: function fetch(input, init) { return __sbx_fetch(input, init); },
    Headers: Headers,
    Response: Response,
    Request: Request,
  });
})
