// Stepbox guest bootstrap, a part: Blob and File, loaded when a step first
// reads one of them (or FormData, fetch or a body's blob() makes one).
// Text of ASCII characters is its own bytes; other text, and a part that
// is an ArrayBuffer or a view, need text.js's helpers, loaded then.
// Library code the step uses (doc.go, "The web platform's globals").
"use strict";
(function __sbx_blobPart(bridge) {
  const { ReflectApply, ObjectFreeze, StringCtor, StringFromCharCode, Uint8ArrayCtor, TypeErrorCtor, __sbx_resolved, SymbolIterator } = bridge;
  const SymbolToStringTag = Symbol.toStringTag;

  function __sbx_setTag(C, name) {
    Object.defineProperty(C.prototype, SymbolToStringTag, { value: name, configurable: true });
  }
  function __sbx_view(v) { return bridge.part("bytes").__sbx_view(v); }
  // __sbx_utf8 is the UTF-8 encoding of s.
  function __sbx_utf8(s) {
    const n = s.length;
    const out = new Uint8ArrayCtor(n);
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) return bridge.part("text").__sbx_utf8(s);
      out[i] = c;
    }
    return out;
  }
  // __sbx_utf8decode is the text of UTF-8 bytes.
  function __sbx_utf8decode(b) {
    const n = b.length;
    for (let i = 0; i < n; i++) {
      if (b[i] > 0x7f) return bridge.part("text").__sbx_utf8decode(b);
    }
    let out = "";
    for (let i = 0; i < n; i += 4096) {
      out += ReflectApply(StringFromCharCode, undefined, b.subarray(i, i + 4096 < n ? i + 4096 : n));
    }
    return out;
  }

  let blobBytes;
  function __sbx_blobType(t) {
    t = t === undefined ? "" : StringCtor(t);
    for (let i = 0; i < t.length; i++) {
      const c = t.charCodeAt(i);
      if (c < 0x20 || c > 0x7e) return "";
    }
    return t.toLowerCase();
  }
  class Blob {
    #bytes; #type;
    constructor(parts = undefined, options = undefined) {
      const chunks = [];
      let n = 0;
      if (parts !== undefined) {
        if (parts === null || typeof parts !== "object" || typeof parts[SymbolIterator] !== "function") {
          throw new TypeErrorCtor("Blob: the parts must be an iterable (an array)");
        }
        const nativeEndings = options && options.endings === "native";
        for (const p of parts) {
          let b;
          if (p instanceof Blob) b = p.#bytes;
          else if (p === null || typeof p !== "object" || (b = __sbx_view(p)) === undefined) {
            let s = StringCtor(p);
            if (nativeEndings) s = s.replace(/\r\n|\r/g, "\n");
            b = __sbx_utf8(s);
          }
          chunks.push(b);
          n += b.length;
        }
      }
      const bytes = new Uint8ArrayCtor(n);
      for (let i = 0, k = 0; i < chunks.length; k += chunks[i].length, i++) bytes.set(chunks[i], k);
      this.#bytes = bytes;
      this.#type = __sbx_blobType(options && options.type);
    }
    get size() { return this.#bytes.length; }
    get type() { return this.#type; }
    slice(start = 0, end = undefined, contentType = "") {
      const size = this.#bytes.length;
      const clamp = (x) => { x = Math.trunc(+x) || 0; return x < 0 ? Math.max(size + x, 0) : Math.min(x, size); };
      const from = clamp(start), to = end === undefined ? size : clamp(end);
      const b = new Blob();
      b.#bytes = this.#bytes.slice(from, to > from ? to : from);
      b.#type = __sbx_blobType(contentType);
      return b;
    }
    text() { return __sbx_resolved(__sbx_utf8decode(this.#bytes)); }
    arrayBuffer() { return __sbx_resolved(this.#bytes.slice().buffer); }
    bytes() { return __sbx_resolved(this.#bytes.slice()); }
    static {
      blobBytes = function __sbx_blobBytes(b) { return b !== null && typeof b === "object" && #bytes in b ? b.#bytes : undefined; };
    }
  }
  __sbx_setTag(Blob, "Blob");

  class File extends Blob {
    #name; #lastModified;
    constructor(parts, name, options = undefined) {
      if (arguments.length < 2) throw new TypeErrorCtor("File: 2 arguments required (the parts and the name)");
      super(parts, options);
      this.#name = StringCtor(name);
      this.#lastModified = options && options.lastModified !== undefined ? +options.lastModified : Date.now();
    }
    get name() { return this.#name; }
    get lastModified() { return this.#lastModified; }
  }
  __sbx_setTag(File, "File");

  return ObjectFreeze({
    __proto__: null,
    Blob, File,
    // for fetch, not a global
    __sbx_blobBytes: blobBytes,
  });
})
