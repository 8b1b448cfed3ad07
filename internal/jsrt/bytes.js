// Stepbox guest bootstrap, a part: the byte helpers the web parts share
// (a BufferSource's bytes; bytes as the binary strings the host takes and
// gives), loaded when a part first needs them: TextDecoder, crypto.subtle,
// a Blob of an ArrayBuffer or a view. Library code the step uses (doc.go,
// "The web platform's globals").
"use strict";
(function __sbx_bytesPart(bridge) {
  const { ReflectApply, ObjectFreeze, StringFromCharCode, StringCharCodeAt, Uint8ArrayCtor, ArrayBufferIsView,
    ArrayBufferByteLength, TypedArrayBuffer, TypedArrayByteOffset, TypedArrayByteLength, DataViewBuffer,
    DataViewByteOffset, DataViewByteLength, TypeErrorCtor } = bridge;

  function __sbx_is(getter, v) {
    try { ReflectApply(getter, v, []); return true; } catch (_) { return false; }
  }

  // A typed array's name, undefined for what is not one (a DataView).
  const TypedArrayName = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get;

  // __sbx_view returns the bytes of a BufferSource (an ArrayBuffer, a typed
  // array or a DataView) as a Uint8Array over them, or undefined. A view is
  // told without an exception (a costly one), an ArrayBuffer by its slot.
  function __sbx_view(v) {
    if (v === null || typeof v !== "object") return undefined;
    if (!ArrayBufferIsView(v)) return __sbx_is(ArrayBufferByteLength, v) ? new Uint8ArrayCtor(v) : undefined;
    if (ReflectApply(TypedArrayName, v, []) !== undefined) {
      return new Uint8ArrayCtor(ReflectApply(TypedArrayBuffer, v, []), ReflectApply(TypedArrayByteOffset, v, []), ReflectApply(TypedArrayByteLength, v, []));
    }
    return new Uint8ArrayCtor(ReflectApply(DataViewBuffer, v, []), ReflectApply(DataViewByteOffset, v, []), ReflectApply(DataViewByteLength, v, []));
  }
  function __sbx_bufferSource(v, what) {
    const b = __sbx_view(v);
    if (b === undefined) throw new TypeErrorCtor(what + " must be an ArrayBuffer, a typed array or a DataView");
    return b;
  }
  // __sbx_binary is bytes as a binary string (a character per byte), the
  // form bytes cross the bridge in; __sbx_fromBinary is its inverse.
  function __sbx_binary(b) {
    let out = "";
    const n = b.length;
    for (let i = 0; i < n; i += 4096) {
      out += ReflectApply(StringFromCharCode, undefined, b.subarray(i, i + 4096 < n ? i + 4096 : n));
    }
    return out;
  }
  function __sbx_fromBinary(s) {
    const out = new Uint8ArrayCtor(s.length);
    for (let i = 0; i < s.length; i++) out[i] = ReflectApply(StringCharCodeAt, s, [i]);
    return out;
  }

  return ObjectFreeze({ __proto__: null, __sbx_view, __sbx_bufferSource, __sbx_binary, __sbx_fromBinary });
})
