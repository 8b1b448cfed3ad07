// Stepbox guest bootstrap, a part: crypto.subtle's keys (CryptoKey; HMAC
// importKey, generateKey, exportKey, sign, verify; AES-GCM importKey,
// generateKey, exportKey, encrypt, decrypt), loaded when a step first
// calls one of those methods or reads CryptoKey. subtle.js's methods give
// their calls to these functions, which throw what the methods' promises
// reject with. Every random byte and every cryptographic operation is the
// host's (web.go). Library code the step uses (doc.go, "The web
// platform's globals").
"use strict";
(function __sbx_keysPart(bridge) {
  const { host, ObjectFreeze, StringCtor, TypeErrorCtor, Uint8ArrayCtor } = bridge;
  const { __sbx_helpers: h } = bridge.part("subtle");
  const { algorithmName, hostCall, hostBytes, bufferSource, binary, fromBinary, dom, HASH_BLOCK } = h;
  function copy(v, what) { return new Uint8ArrayCtor(bufferSource(v, what)); }

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

  const KEYS = {
    __proto__: null,
    importKey(format, keyData, algorithm, extractable, usages) {
      if (format !== "raw") throw dom("importKey: only the raw format is supported", "NotSupportedError");
      return makeKey(algorithm, copy(keyData, "importKey: the key data"), extractable, usages);
    },
    exportKey(format, key) {
      const data = keyData(key);
      if (data === undefined) throw new TypeErrorCtor("exportKey: the key must be a CryptoKey");
      if (format !== "raw") throw dom("exportKey: only the raw format is supported", "NotSupportedError");
      if (!key.extractable) throw dom("exportKey: the key is not extractable", "InvalidAccessError");
      return data.slice().buffer;
    },
    generateKey(algorithm, extractable, usages) {
      const name = algorithmName(algorithm);
      let n;
      if (name === "HMAC") n = algorithm.length !== undefined ? Math.ceil(+algorithm.length / 8) : HASH_BLOCK[hashOf(algorithm.hash)] / 8;
      else if (name === "AES-GCM") n = (+algorithm.length) / 8;
      else throw dom("generateKey: " + name + " is not supported", "NotSupportedError");
      if (!(n > 0 && n <= 1024)) throw dom("generateKey: the length is not valid", "OperationError");
      return makeKey(algorithm, fromBinary(host("web", "random", n)), extractable, usages);
    },
    sign(algorithm, key, data) {
      if (algorithmName(algorithm) !== "HMAC") throw dom("sign: only HMAC is supported", "NotSupportedError");
      const k = keyFor(key, "HMAC", "sign");
      return hostBytes(["web", "hmac", key.algorithm.hash.name, binary(k), binary(bufferSource(data, "sign: the data"))]);
    },
    verify(algorithm, key, signature, data) {
      if (algorithmName(algorithm) !== "HMAC") throw dom("verify: only HMAC is supported", "NotSupportedError");
      const k = keyFor(key, "HMAC", "verify");
      return hostCall(["web", "hmac", key.algorithm.hash.name, binary(k), binary(bufferSource(data, "verify: the data")),
        binary(bufferSource(signature, "verify: the signature"))]);
    },
    encrypt(algorithm, key, data) { return aesGCM(true, algorithm, key, data); },
    decrypt(algorithm, key, data) { return aesGCM(false, algorithm, key, data); },
  };

  return ObjectFreeze({
    __proto__: null,
    CryptoKey,
    // for subtle.js, not a global
    __sbx_keys: KEYS,
  });
})
