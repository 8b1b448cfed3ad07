// Stepbox guest bootstrap, a part: URL, loaded when a step first reads it.
// Its parser is urlcore.js's (the full one, urlparse.js, for what that one
// leaves and for the setters); URLSearchParams, and a URL's searchParams,
// are params.js's. Library code the step uses (doc.go, "The web
// platform's globals").
"use strict";
(function __sbx_urlPart(bridge) {
  const { ObjectFreeze, StringCtor, TypeErrorCtor } = bridge;
  const { parseURL, serialize, serializePath, origin } = bridge.part("urlcore");
  function full() { return bridge.part("urlparse"); }

  function invalid(input) {
    const e = new TypeErrorCtor("Invalid URL: " + input);
    e.code = "ERR_INVALID_URL";
    e.input = input;
    return e;
  }
  function parseWithBase(url, base) {
    let b;
    if (base !== undefined) {
      b = parseURL(StringCtor(base));
      if (b === null) return null;
    }
    return parseURL(StringCtor(url), b);
  }
  function params() { return bridge.part("params"); }

  class URL {
    #u; #params = null;
    constructor(url, base = undefined) {
      if (arguments.length === 0) throw new TypeErrorCtor("URL: 1 argument required, but only 0 present");
      const u = parseWithBase(url, base);
      if (u === null) throw invalid(full().toUSV(StringCtor(url)));
      this.#u = u;
    }
    static canParse(url, base = undefined) { return parseWithBase(url, base) !== null; }
    static parse(url, base = undefined) {
      const u = parseWithBase(url, base);
      if (u === null) return null;
      return new URL(serialize(u, false));
    }
    get href() { return serialize(this.#u, false); }
    set href(v) {
      v = StringCtor(v);
      const u = parseURL(v);
      if (u === null) throw invalid(full().toUSV(v));
      this.#u = u;
      if (this.#params !== null) params().__sbx_paramsUpdate(this.#params, u);
    }
    get origin() { return origin(this.#u); }
    get protocol() { return this.#u.scheme + ":"; }
    set protocol(v) { full().set(this.#u, "protocol", v); }
    get username() { return this.#u.username; }
    set username(v) { full().set(this.#u, "username", v); }
    get password() { return this.#u.password; }
    set password(v) { full().set(this.#u, "password", v); }
    get host() {
      const u = this.#u;
      if (u.host === null) return "";
      return u.port === null ? u.host : u.host + ":" + u.port;
    }
    set host(v) { full().set(this.#u, "host", v); }
    get hostname() { return this.#u.host === null ? "" : this.#u.host; }
    set hostname(v) { full().set(this.#u, "hostname", v); }
    get port() { return this.#u.port === null ? "" : StringCtor(this.#u.port); }
    set port(v) { full().set(this.#u, "port", v); }
    get pathname() { return serializePath(this.#u); }
    set pathname(v) { full().set(this.#u, "pathname", v); }
    get search() { const q = this.#u.query; return q === null || q === "" ? "" : "?" + q; }
    set search(v) {
      full().set(this.#u, "search", v);
      if (this.#params !== null) params().__sbx_paramsUpdate(this.#params, this.#u);
    }
    get searchParams() {
      if (this.#params === null) this.#params = params().__sbx_paramsOf(this.#u);
      return this.#params;
    }
    get hash() { const f = this.#u.fragment; return f === null || f === "" ? "" : "#" + f; }
    set hash(v) { full().set(this.#u, "hash", v); }
    toString() { return serialize(this.#u, false); }
    toJSON() { return serialize(this.#u, false); }
  }
  Object.defineProperty(URL.prototype, Symbol.toStringTag, { value: "URL", configurable: true });

  return ObjectFreeze({ __proto__: null, URL });
})
