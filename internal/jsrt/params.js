// Stepbox guest bootstrap, a part: URLSearchParams, loaded when a step
// first reads it or a URL's searchParams. The form encoding is the
// engine's encodeURIComponent and decodeURIComponent (captured by the
// boot) where they give what the URL standard does, which is for all
// text and for every percent-decoded form that is UTF-8; a form that is
// not goes through text.js's decoder, loaded then. Library code the step
// uses (doc.go, "The web platform's globals").
"use strict";
(function __sbx_paramsPart(bridge) {
  const { ReflectApply, ObjectFreeze, StringCtor, TypeErrorCtor, SymbolIterator, encodeURIComponent, decodeURIComponent } = bridge;

  // toUSV replaces lone surrogates by U+FFFD (what USVString arguments get).
  function toUSV(s) {
    s = StringCtor(s);
    return /[\ud800-\udfff]/.test(s) ? s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd") : s;
  }

  // formEncode is the application/x-www-form-urlencoded serialization of
  // s, a string without lone surrogates: what is not an ASCII letter,
  // digit, "*", "-", "." or "_" percent-encoded as UTF-8, a space as "+".
  const HEXU = "0123456789ABCDEF";
  function formEncode(s) {
    let out = "";
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2a || c === 0x2d || c === 0x2e || c === 0x5f) {
        out += s[i];
      } else if (c === 0x20) out += "+";
      else if (c < 0x80) out += "%" + HEXU[c >> 4] + HEXU[c & 15];
      else {
        let j = i + 1;
        while (j < s.length && s.charCodeAt(j) >= 0x80) j++;
        out += encodeURIComponent(s.slice(i, j));
        i = j - 1;
      }
    }
    return out;
  }
  // formDecode is a name or value of the application/x-www-form-urlencoded
  // parser: "+" a space, %XX decoded, the bytes decoded as UTF-8 (a byte
  // order mark kept, each invalid sequence U+FFFD).
  function formDecode(s) {
    if (s.indexOf("+") >= 0) s = s.split("+").join(" ");
    const pct = s.indexOf("%");
    if (pct < 0) return s;
    if (!/%(?![0-9A-Fa-f]{2})/.test(s)) {
      try { return decodeURIComponent(s); } catch (_) {} // not UTF-8
    }
    const b = bridge.part("text").__sbx_utf8(s);
    const out = new Uint8Array(b.length);
    let k = 0;
    for (let i = 0; i < b.length; i++) {
      const hi = hexValue(b[i + 1]), lo = hexValue(b[i + 2]);
      if (b[i] === 0x25 && hi >= 0 && lo >= 0) {
        out[k++] = hi * 16 + lo;
        i += 2;
      } else out[k++] = b[i];
    }
    return new (bridge.part("text").TextDecoder)("utf-8", { ignoreBOM: true }).decode(out.subarray(0, k));
  }
  function hexValue(c) {
    if (c >= 48 && c <= 57) return c - 48;
    if (c >= 65 && c <= 70) return c - 55;
    if (c >= 97 && c <= 102) return c - 87;
    return -1;
  }
  function parseForm(s) {
    const out = [];
    const seqs = s.split("&");
    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i];
      if (seq === "") continue;
      const eq = seq.indexOf("=");
      out.push([formDecode(eq < 0 ? seq : seq.slice(0, eq)), formDecode(eq < 0 ? "" : seq.slice(eq + 1))]);
    }
    return out;
  }
  function serializeForm(list) {
    let out = "";
    for (let i = 0; i < list.length; i++) {
      out += (i > 0 ? "&" : "") + formEncode(toUSV(list[i][0])) + "=" + formEncode(toUSV(list[i][1]));
    }
    return out;
  }

  let paramsOf, paramsUpdate;
  class URLSearchParams {
    #list = [];
    #url = null; // the URL record whose query this is, if any
    constructor(init = "") {
      if (init !== null && typeof init === "object" || typeof init === "function") {
        if (typeof init[SymbolIterator] === "function") {
          for (const pair of init) {
            const p = Array.from(pair);
            if (p.length !== 2) throw new TypeErrorCtor("URLSearchParams: each pair must have exactly two items");
            this.#list.push([toUSV(p[0]), toUSV(p[1])]);
          }
        } else {
          const keys = Reflect.ownKeys(init);
          for (let i = 0; i < keys.length; i++) {
            const d = Object.getOwnPropertyDescriptor(init, keys[i]);
            if (d !== undefined && d.enumerable && typeof keys[i] === "string") this.#list.push([toUSV(keys[i]), toUSV(init[keys[i]])]);
          }
        }
      } else {
        let s = toUSV(init);
        if (s[0] === "?") s = s.slice(1);
        this.#list = parseForm(s);
      }
    }
    #update() {
      if (this.#url === null) return;
      const s = serializeForm(this.#list);
      this.#url.query = s === "" ? null : s;
    }
    get size() { return this.#list.length; }
    append(name, value) { this.#list.push([toUSV(name), toUSV(value)]); this.#update(); }
    delete(name, value = undefined) {
      name = toUSV(name);
      const v = value === undefined ? undefined : toUSV(value);
      this.#list = this.#list.filter((e) => !(e[0] === name && (v === undefined || e[1] === v)));
      this.#update();
    }
    get(name) { name = toUSV(name); const e = this.#list.find((e) => e[0] === name); return e === undefined ? null : e[1]; }
    getAll(name) { name = toUSV(name); return this.#list.filter((e) => e[0] === name).map((e) => e[1]); }
    has(name, value = undefined) {
      name = toUSV(name);
      const v = value === undefined ? undefined : toUSV(value);
      return this.#list.some((e) => e[0] === name && (v === undefined || e[1] === v));
    }
    set(name, value) {
      name = toUSV(name); value = toUSV(value);
      const i = this.#list.findIndex((e) => e[0] === name);
      if (i < 0) this.#list.push([name, value]);
      else {
        this.#list[i] = [name, value];
        this.#list = this.#list.filter((e, j) => j <= i || e[0] !== name);
      }
      this.#update();
    }
    sort() {
      // Stable, by UTF-16 code units (the default comparison).
      const l = this.#list.map((e, i) => [e, i]);
      l.sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1]));
      this.#list = l.map((x) => x[0]);
      this.#update();
    }
    forEach(fn, thisArg = undefined) {
      if (typeof fn !== "function") throw new TypeErrorCtor("URLSearchParams.forEach: the callback must be a function");
      for (let i = 0; i < this.#list.length; i++) ReflectApply(fn, thisArg, [this.#list[i][1], this.#list[i][0], this]);
    }
    *entries() { for (let i = 0; i < this.#list.length; i++) yield [this.#list[i][0], this.#list[i][1]]; }
    *keys() { for (let i = 0; i < this.#list.length; i++) yield this.#list[i][0]; }
    *values() { for (let i = 0; i < this.#list.length; i++) yield this.#list[i][1]; }
    [SymbolIterator]() { return this.entries(); }
    toString() { return serializeForm(this.#list); }
    static {
      paramsOf = function __sbx_paramsOf(record) {
        const p = new URLSearchParams();
        p.#url = record;
        p.#list = record.query === null ? [] : parseForm(record.query);
        return p;
      };
      paramsUpdate = function __sbx_paramsUpdate(p, record) {
        p.#url = record;
        p.#list = record.query === null ? [] : parseForm(record.query);
      };
    }
  }
  Object.defineProperty(URLSearchParams.prototype, Symbol.toStringTag, { value: "URLSearchParams", configurable: true });

  return ObjectFreeze({
    __proto__: null,
    URLSearchParams,
    // for url.js, not globals
    __sbx_paramsOf: paramsOf, __sbx_paramsUpdate: paramsUpdate,
  });
})
