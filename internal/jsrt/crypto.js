// Stepbox guest bootstrap, a part: crypto (getRandomValues, randomUUID) and
// Crypto, loaded when a step first reads one of them. crypto.subtle, its
// keys and its classes are subtle.js's, loaded when a step first reads
// that. Every random byte is the host's, from Go's crypto/rand (web.go).
// Library code the step uses (doc.go, "The web platform's globals").
"use strict";
(function __sbx_cryptoPart(bridge) {
  const { host, ReflectApply, ObjectFreeze, StringCharCodeAt, Uint8ArrayCtor, TypedArrayName, TypedArrayBuffer, TypedArrayByteOffset,
    TypedArrayByteLength, TypeErrorCtor } = bridge;
  // A DOMException is dom.js's, loaded when the first one is thrown.
  function dom(message, name) { return bridge.part("dom").__sbx_dom(message, name); }

  const INTEGER_ARRAYS = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
    "Int32Array", "Uint32Array", "BigInt64Array", "BigUint64Array"];

  function getRandomValues(array) {
    let name;
    try { name = ReflectApply(TypedArrayName, array, []); } catch (_) { name = undefined; }
    if (name === undefined || INTEGER_ARRAYS.indexOf(name) < 0) {
      throw dom("The data argument must be an integer-type TypedArray", "TypeMismatchError");
    }
    const bytes = new Uint8ArrayCtor(ReflectApply(TypedArrayBuffer, array, []), ReflectApply(TypedArrayByteOffset, array, []),
      ReflectApply(TypedArrayByteLength, array, []));
    if (bytes.length > 65536) throw dom("The ArrayBufferView's byte length (" + bytes.length + ") exceeds the number of bytes of entropy available via this API (65536)", "QuotaExceededError");
    const r = host("web", "random", bytes.length); // a character per byte
    for (let i = 0; i < bytes.length; i++) bytes[i] = ReflectApply(StringCharCodeAt, r, [i]);
    return array;
  }
  const HEX = "0123456789abcdef";
  function randomUUID() {
    const r = host("web", "random", 16); // 16 bytes, one per character
    let s = "";
    for (let i = 0; i < 16; i++) {
      let b = ReflectApply(StringCharCodeAt, r, [i]);
      if (i === 6) b = (b & 0x0f) | 0x40;
      else if (i === 8) b = (b & 0x3f) | 0x80;
      if (i === 4 || i === 6 || i === 8 || i === 10) s += "-";
      s += HEX[b >> 4] + HEX[b & 15];
    }
    return s;
  }

  const NEW_API = ObjectFreeze({ __proto__: null });
  class Crypto {
    constructor(token) { if (token !== NEW_API) throw new TypeErrorCtor("Illegal constructor"); }
    get subtle() { return bridge.part("subtle").subtle; }
    getRandomValues(array) { return getRandomValues(array); }
    randomUUID() { return randomUUID(); }
  }
  Object.defineProperty(Crypto.prototype, Symbol.toStringTag, { value: "Crypto", configurable: true });
  const crypto = new Crypto(NEW_API);

  return ObjectFreeze({ __proto__: null, crypto, Crypto });
})
