// Stepbox guest bootstrap, part two: the fetch API (fetch and Response;
// Headers is headers.js's, Request request.js's, AbortSignal abort.js's),
// relayed to the host's FetchProxy. Few steps use it, so a VM reads it
// only when a step first reads one of its globals (bootstrap.js,
// __sbx_lazy), from bytecode compiled by Stepbox itself like the
// bootstrap's.
//
// It may then run after the step changed any global or prototype: it
// follows bootstrap.js's rules (its header) to the letter, and uses only
// the built-ins the boot captured, which bridge and inner hand it. They
// are the boot's own objects; nothing here keeps them or gives them away.
"use strict";
(function __sbx_fetchPart(bridge, inner) {
  const {
    host, __sbx_resolved, __sbx_rejected, ObjectGetPrototypeOf, ReflectApply, ObjectFreeze, StringCtor, StringFromCharCode,
    StringCharCodeAt, TypeErrorCtor, Uint8ArrayCtor, ArrayBufferIsView, ArrayBufferByteLength,
    TypedArrayBuffer, TypedArrayByteOffset, TypedArrayByteLength, DataViewBuffer, DataViewByteOffset,
    DataViewByteLength, loadedPart, __sbx_is,
  } = bridge;
  const {
    pending, mapSet, KIND_FETCH, JSONparse, JSONstringify, ObjectPrototype, ObjectHasOwn,
    ObjectGetOwnPropertyDescriptor, PromiseCtor, TypedArrayLength, mapDelete,
  } = inner;
  const { Headers, __sbx_headerPairs: headerPairs } = bridge.part("headers");


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

  // __sbx_requestOf is a Request's fields, or undefined for what is not a
  // Request (none exists before request.js is loaded).
  function __sbx_requestOf(v) {
    const request = loadedPart("request");
    return request === undefined ? undefined : request.__sbx_requestOf(v);
  }

  return ObjectFreeze({
    __proto__: null,
    fetch: function fetch(input, init) { return __sbx_fetch(input, init); },
    Response: Response,
    // for request.js, not globals
    __sbx_body: __sbx_body, __sbx_bodyKinds: BODY_KINDS, __sbx_utf8decode: __sbx_utf8decode,
  });
})
