// Stepbox guest bootstrap, a part: crypto.subtle (digest SHA-1/256/384/512;
// HMAC importKey, generateKey, exportKey, sign, verify; AES-GCM importKey,
// generateKey, exportKey, encrypt, decrypt), CryptoKey and SubtleCrypto,
// loaded when a step first reads crypto.subtle or one of those globals.
// Every random byte and every cryptographic operation is the host's, from
// Go's standard library (web.go): nothing here computes a digest or a
// cipher. Library code the step uses (doc.go, "The web platform's
// globals").
"use strict";
(function __sbx_subtlePart(bridge) {
  const { host, ReflectApply, ObjectFreeze, StringCtor, TypeErrorCtor, __sbx_resolved, __sbx_rejected } = bridge;
  // bytes.js's helpers.
  function bufferSource(v, what) { return bridge.part("bytes").__sbx_bufferSource(v, what); }
  function binary(b) { return bridge.part("bytes").__sbx_binary(b); }
  function fromBinary(s) { return bridge.part("bytes").__sbx_fromBinary(s); }
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

  // ---- keys -------------------------------------------------------------------

  const NEW_KEY = ObjectFreeze({ __proto__: null });
  let keyData;
  class CryptoKey {
    #type; #extractable; #algorithm; #usages; #data;
    constructor(token, algorithm, extractable, usages, data) {
      if (token !== NEW_KEY) throw new TypeErrorCtor("Illegal constructor");
      this.#type = "secret"; this.#algorithm = ObjectFreeze(algorithm); this.#extractable = extractable;
      this.#usages = ObjectFreeze(usages); this.#data = data;
    }
    get type() { return this.#type; }
    get extractable() { return this.#extractable; }
    get algorithm() { return this.#algorithm; }
    get usages() { return this.#usages; }
    static {
      keyData = function __sbx_keyData(k) { return k !== null && typeof k === "object" && #data in k ? k.#data : undefined; };
    }
  }
  Object.defineProperty(CryptoKey.prototype, Symbol.toStringTag, { value: "CryptoKey", configurable: true });

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
  function hashOf(h) {
    const n = algorithmName(h);
    if (!(n in HASH_BLOCK)) throw dom("HMAC: the hash must be SHA-1, SHA-256, SHA-384 or SHA-512", "NotSupportedError");
    return n;
  }
  const USAGES = { __proto__: null, HMAC: ["sign", "verify"], "AES-GCM": ["encrypt", "decrypt", "wrapKey", "unwrapKey"] };
  function usagesOf(name, usages) {
    const out = [];
    for (const u of usages) {
      const s = StringCtor(u);
      if (USAGES[name].indexOf(s) < 0) throw dom("Unsupported key usage for a " + name + " key: " + s, "SyntaxError");
      if (out.indexOf(s) < 0) out.push(s);
    }
    return out;
  }
  function makeKey(alg, bytes, extractable, usages) {
    const name = algorithmName(alg);
    if (name === "HMAC") {
      const hash = hashOf(alg.hash);
      let length = bytes.length * 8;
      if (alg.length !== undefined) {
        length = +alg.length;
        if (!(length > bytes.length * 8 - 8 && length <= bytes.length * 8)) throw dom("HMAC: the length does not match the key", "DataError");
      }
      if (bytes.length === 0) throw dom("HMAC: the key must not be empty", "DataError");
      const u = usagesOf(name, usages);
      return new CryptoKey(NEW_KEY, { name: "HMAC", hash: { name: hash }, length }, !!extractable, u, bytes);
    }
    if (name === "AES-GCM") {
      if (bytes.length !== 16 && bytes.length !== 24 && bytes.length !== 32) throw dom("AES-GCM: the key must be 128, 192 or 256 bits", "DataError");
      const u = usagesOf(name, usages);
      return new CryptoKey(NEW_KEY, { name: "AES-GCM", length: bytes.length * 8 }, !!extractable, u, bytes);
    }
    throw dom(name + " is not an algorithm for keys", "NotSupportedError");
  }
  function keyFor(key, name, usage) {
    const data = keyData(key);
    if (data === undefined) throw new TypeErrorCtor("the key must be a CryptoKey");
    if (key.algorithm.name !== name) throw dom("the key is for " + key.algorithm.name + ", not " + name, "InvalidAccessError");
    if (key.usages.indexOf(usage) < 0) throw dom("the key's usages do not include " + usage, "InvalidAccessError");
    return data;
  }

  // async runs fn for a promise, as the subtle methods answer.
  function async(fn) {
    try { return __sbx_resolved(fn()); } catch (e) { return __sbx_rejected(e); }
  }
  function copy(v, what) { return bufferSource(v, what).slice(); }

  function aesGCM(encrypt, algorithm, key, data) {
    const what = encrypt ? "encrypt" : "decrypt";
    if (algorithmName(algorithm) !== "AES-GCM") throw dom(what + ": only AES-GCM is supported", "NotSupportedError");
    const k = keyFor(key, "AES-GCM", what);
    const iv = bufferSource(algorithm.iv, what + ": the iv");
    const ad = algorithm.additionalData === undefined ? new Uint8Array(0) : bufferSource(algorithm.additionalData, what + ": the additionalData");
    const tagLength = algorithm.tagLength === undefined ? 128 : +algorithm.tagLength;
    if ([32, 64, 96, 104, 112, 120, 128].indexOf(tagLength) < 0) throw dom(what + ": the tagLength is not valid", "OperationError");
    const input = bufferSource(data, what + ": the data");
    if (!encrypt && input.length < tagLength / 8) throw dom("The provided data is too small.", "OperationError");
    return hostBytes(["web", "aesgcm", encrypt, binary(k), binary(iv), binary(input), binary(ad), tagLength / 8]);
  }

  const NEW_API = ObjectFreeze({ __proto__: null });
  class SubtleCrypto {
    constructor(token) { if (token !== NEW_API) throw new TypeErrorCtor("Illegal constructor"); }
    digest(algorithm, data) {
      return async(() => {
        const name = algorithmName(algorithm);
        if (!(name in HASH_BLOCK)) throw dom("digest: " + name + " is not a hash", "NotSupportedError");
        return hostBytes(["web", "digest", name, binary(bufferSource(data, "digest: the data"))]);
      });
    }
    importKey(format, keyData, algorithm, extractable, usages) {
      return async(() => {
        if (format !== "raw") throw dom("importKey: only the raw format is supported", "NotSupportedError");
        return makeKey(algorithm, copy(keyData, "importKey: the key data"), extractable, usages);
      });
    }
    exportKey(format, key) {
      return async(() => {
        const data = keyData(key);
        if (data === undefined) throw new TypeErrorCtor("exportKey: the key must be a CryptoKey");
        if (format !== "raw") throw dom("exportKey: only the raw format is supported", "NotSupportedError");
        if (!key.extractable) throw dom("exportKey: the key is not extractable", "InvalidAccessError");
        return data.slice().buffer;
      });
    }
    generateKey(algorithm, extractable, usages) {
      return async(() => {
        const name = algorithmName(algorithm);
        let n;
        if (name === "HMAC") n = algorithm.length !== undefined ? Math.ceil(+algorithm.length / 8) : HASH_BLOCK[hashOf(algorithm.hash)] / 8;
        else if (name === "AES-GCM") n = (+algorithm.length) / 8;
        else throw dom("generateKey: " + name + " is not supported", "NotSupportedError");
        if (!(n > 0 && n <= 1024)) throw dom("generateKey: the length is not valid", "OperationError");
        return makeKey(algorithm, fromBinary(host("web", "random", n)), extractable, usages);
      });
    }
    sign(algorithm, key, data) {
      return async(() => {
        if (algorithmName(algorithm) !== "HMAC") throw dom("sign: only HMAC is supported", "NotSupportedError");
        const k = keyFor(key, "HMAC", "sign");
        return hostBytes(["web", "hmac", key.algorithm.hash.name, binary(k), binary(bufferSource(data, "sign: the data"))]);
      });
    }
    verify(algorithm, key, signature, data) {
      return async(() => {
        if (algorithmName(algorithm) !== "HMAC") throw dom("verify: only HMAC is supported", "NotSupportedError");
        const k = keyFor(key, "HMAC", "verify");
        return hostCall(["web", "hmac", key.algorithm.hash.name, binary(k), binary(bufferSource(data, "verify: the data")),
          binary(bufferSource(signature, "verify: the signature"))]);
      });
    }
    encrypt(algorithm, key, data) { return async(() => aesGCM(true, algorithm, key, data)); }
    decrypt(algorithm, key, data) { return async(() => aesGCM(false, algorithm, key, data)); }
  }
  Object.defineProperty(SubtleCrypto.prototype, Symbol.toStringTag, { value: "SubtleCrypto", configurable: true });
  const subtle = new SubtleCrypto(NEW_API);

  return ObjectFreeze({ __proto__: null, subtle, CryptoKey, SubtleCrypto });
})
