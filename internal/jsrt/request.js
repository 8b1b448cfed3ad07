// Stepbox guest bootstrap, a part: Request, loaded when a step first reads
// it. Bridge code, as fetch.js is: it follows bootstrap.js's rules (its
// header) and uses only the built-ins the boot captured, which bridge and
// inner hand it. Its headers are headers.js's, its URL parser
// urlcore.js's; a body that is not a string, and reading one, use
// fetch.js's helpers, and a signal is abort.js's, made when first read if
// init gives none.
"use strict";
(function __sbx_requestPart(bridge, inner) {
  const {
    ReflectApply, ObjectFreeze, StringCtor, TypeErrorCtor, Uint8ArrayCtor, TypedArrayBuffer, __sbx_resolved,
    __sbx_rejected, loadedPart,
  } = bridge;
  const {
    StringToLowerCase, JSONparse,
  } = inner;
  const { Headers } = bridge.part("headers");
  const NO_INIT = ObjectFreeze({ __proto__: null });

  function __sbx_lower(s) { return ReflectApply(StringToLowerCase, StringCtor(s), []); }
  function __sbx_fetchPart() { return bridge.part("fetch"); }

  const METHODS = { __proto__: null, delete: "DELETE", get: "GET", head: "HEAD", options: "OPTIONS", post: "POST", put: "PUT", patch: "PATCH" };
  let requestOf;
  class Request {
    #url; #method; #headers; #body = null; #bodyType = ""; #signal; #redirect; #used = false;
    constructor(input, init = undefined) {
      if (init === undefined || init === null) init = NO_INIT;
      const from = input !== null && typeof input === "object" && #url in input ? input : undefined;
      if (from !== undefined) {
        this.#url = from.#url; this.#method = from.#method; this.#body = from.#body; this.#bodyType = from.#bodyType;
        this.#redirect = from.#redirect; this.#signal = from.#signal;
        this.#headers = new Headers(from.#headers);
      } else {
        const url = bridge.part("urlcore");
        const u = url.parseURL(StringCtor(input));
        if (u === null) throw new TypeErrorCtor("Request: invalid URL: " + StringCtor(input));
        if (u.username !== "" || u.password !== "") throw new TypeErrorCtor("Request: the URL must not carry credentials: " + url.serialize(u, false));
        this.#url = url.serialize(u, false); this.#method = "GET"; this.#redirect = "follow";
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
        const abort = loadedPart("abort"); // an AbortSignal exists only once abort.js is loaded
        if (abort === undefined || abort.__sbx_signalInfo(init.signal) === undefined) throw new TypeErrorCtor("Request: signal must be an AbortSignal");
        this.#signal = init.signal;
      }
      if (init.body !== undefined && init.body !== null) {
        if (this.#method === "GET" || this.#method === "HEAD") throw new TypeErrorCtor("Request with GET/HEAD method cannot have body.");
        const b = typeof init.body === "string" ? [init.body] : __sbx_fetchPart().__sbx_body(init.body);
        if (b === undefined) throw new TypeErrorCtor("Request: body must be " + __sbx_fetchPart().__sbx_bodyKinds);
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
    get signal() {
      // A signal no one can abort, until the step asks for it.
      if (this.#signal === undefined) this.#signal = new (bridge.part("abort").AbortController)().signal;
      return this.#signal;
    }
    get redirect() { return this.#redirect; }
    get bodyUsed() { return this.#used; }
    #bytes() {
      if (this.#used) throw new TypeErrorCtor("Body is unusable: body has already been read");
      this.#used = true;
      const b = this.#body;
      return b === null ? new Uint8ArrayCtor(0) : typeof b === "string" ? bridge.part("text").__sbx_utf8(b) : b.slice();
    }
    text() { try { return __sbx_resolved(__sbx_fetchPart().__sbx_utf8decode(this.#bytes())); } catch (e) { return __sbx_rejected(e); } }
    json() { try { return __sbx_resolved(JSONparse(__sbx_fetchPart().__sbx_utf8decode(this.#bytes()))); } catch (e) { return __sbx_rejected(e); } }
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
  return ObjectFreeze({
    __proto__: null,
    Request,
    // for fetch.js, not a global
    __sbx_requestOf: requestOf,
  });
})
