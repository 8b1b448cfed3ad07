// Stepbox guest bootstrap, a part: the bytes of a BufferSource (an
// ArrayBuffer, a typed array, a DataView), which the web parts share,
// loaded when a part first needs them for what is not a Uint8Array: in
// TextDecoder, crypto.subtle or a Blob. Library code the step uses (doc.go,
// "The web platform's globals").
"use strict";
(function __sbx_bytesPart(bridge) {
  const { ReflectApply, ObjectFreeze, Uint8ArrayCtor, ArrayBufferIsView,
    ArrayBufferByteLength, TypedArrayName, TypedArrayBuffer, TypedArrayByteOffset, TypedArrayByteLength, DataViewBuffer,
    DataViewByteOffset, DataViewByteLength, TypeErrorCtor, __sbx_is } = bridge;

  // __sbx_view returns the bytes of a BufferSource (an ArrayBuffer, a typed
  // array or a DataView) as a Uint8Array over them, or undefined. A view is
  // told without an exception (a costly one; TypedArrayName is undefined
  // for a DataView), an ArrayBuffer by its slot.
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
  return ObjectFreeze({ __proto__: null, __sbx_view, __sbx_bufferSource });
})
