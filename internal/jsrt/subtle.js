// Stepbox guest bootstrap, a part: crypto.subtle and SubtleCrypto, loaded
// when a step first reads one of them: digest (SHA-1/256/384/512) here,
// the methods of keys (HMAC, AES-GCM) in keys.js, loaded with the first
// call of one.
// Every random byte and every cryptographic operation is the host's, from
// Go's standard library (web.go): nothing here computes a digest or a
// cipher. Library code the step uses (doc.go, "The web platform's
// globals").
"use strict";
(function __sbx_subtlePart(bridge) {
  const { host, ReflectApply, ObjectFreeze, ObjectGetPrototypeOf, StringCtor, StringFromCharCode, StringCharCodeAt, TypeErrorCtor,
    Uint8ArrayCtor, TypedArrayName, __sbx_resolved, __sbx_rejected } = bridge;
  // bufferSource is the bytes of a BufferSource: a plain Uint8Array itself,
  // or those bytes.js finds.
  function bufferSource(v, what) {
    if (ReflectApply(TypedArrayName, v, []) === "Uint8Array" && ObjectGetPrototypeOf(v) === Uint8ArrayCtor.prototype) return v;
    return bridge.part("bytes").__sbx_bufferSource(v, what);
  }
  // binary is bytes as a binary string (a character per byte), the
  // form bytes cross the bridge in; fromBinary is its inverse.
  function binary(b) {
    let out = "";
    const n = b.length;
    for (let i = 0; i < n; i += 4096) {
      out += ReflectApply(StringFromCharCode, undefined, b.subarray(i, i + 4096 < n ? i + 4096 : n));
    }
    return out;
  }
  function fromBinary(s) {
    const out = new Uint8ArrayCtor(s.length);
    for (let i = 0; i < s.length; i++) out[i] = ReflectApply(StringCharCodeAt, s, [i]);
    return out;
  }
  // A DOMException is dom.js's, loaded when the first one is thrown.
  function dom(message, name) { return bridge.part("dom").__sbx_dom(message, name); }

  const HASHES = { __proto__: null, "sha-1": "SHA-1", "sha-256": "SHA-256", "sha-384": "SHA-384", "sha-512": "SHA-512" };
  const HASH_BLOCK = { __proto__: null, "SHA-1": 512, "SHA-256": 512, "SHA-384": 1024, "SHA-512": 1024 };

  // hostBytes runs a host operation that answers bytes: an ArrayBuffer of
  // them. A host error becomes the DOMException it names (OperationError)
  // or a TypeError.
  function hostCall(args) {
    try {
      return ReflectApply(host, undefined, args);
    } catch (e) {
      const m = StringCtor(e && e.message);
      if (m.startsWith("OperationError: ")) throw dom(m.slice(16), "OperationError");
      throw dom(m, "OperationError");
    }
  }
  function hostBytes(args) { return fromBinary(hostCall(args)).buffer; }

  // normalize returns { name, ...the members asked for } of an algorithm
  // identifier (a name or an object with one), names in their standard case.
  function algorithmName(alg) {
    const name = typeof alg === "string" ? alg : alg !== null && typeof alg === "object" ? alg.name : undefined;
    if (typeof name !== "string") throw new TypeErrorCtor("the algorithm must be a name or an object with a name");
    const l = name.toLowerCase();
    if (l in HASHES) return HASHES[l];
    if (l === "hmac") return "HMAC";
    if (l === "aes-gcm") return "AES-GCM";
    throw dom("Unrecognized algorithm name: " + name, "NotSupportedError");
  }
  // async runs fn for a promise, as the subtle methods answer.
  function async(fn) {
    try { return __sbx_resolved(fn()); } catch (e) { return __sbx_rejected(e); }
  }

  const NEW_API = ObjectFreeze({ __proto__: null });
  function keys() { return bridge.part("keys").__sbx_keys; }
  class SubtleCrypto {
    constructor(token) { if (token !== NEW_API) throw new TypeErrorCtor("Illegal constructor"); }
    digest(algorithm, data) {
      return async(() => {
        const name = algorithmName(algorithm);
        if (!(name in HASH_BLOCK)) throw dom("digest: " + name + " is not a hash", "NotSupportedError");
        return hostBytes(["web", "digest", name, binary(bufferSource(data, "digest: the data"))]);
      });
    }
    importKey(format, keyData, algorithm, extractable, usages) { return async(() => keys().importKey(format, keyData, algorithm, extractable, usages)); }
    exportKey(format, key) { return async(() => keys().exportKey(format, key)); }
    generateKey(algorithm, extractable, usages) { return async(() => keys().generateKey(algorithm, extractable, usages)); }
    sign(algorithm, key, data) { return async(() => keys().sign(algorithm, key, data)); }
    verify(algorithm, key, signature, data) { return async(() => keys().verify(algorithm, key, signature, data)); }
    encrypt(algorithm, key, data) { return async(() => keys().encrypt(algorithm, key, data)); }
    decrypt(algorithm, key, data) { return async(() => keys().decrypt(algorithm, key, data)); }
  }
  Object.defineProperty(SubtleCrypto.prototype, Symbol.toStringTag, { value: "SubtleCrypto", configurable: true });
  const subtle = new SubtleCrypto(NEW_API);

  return ObjectFreeze({
    __proto__: null,
    subtle, SubtleCrypto,
    // for keys.js, not globals
    __sbx_helpers: ObjectFreeze({ __proto__: null, algorithmName, hostCall, hostBytes, bufferSource, binary, fromBinary, dom, HASH_BLOCK }),
  });
})
