// Stepbox guest bootstrap, a part: structuredClone, on its own so that a
// step that only deep-copies a value loads nothing else (bootstrap.js,
// __sbx_lazy); its DataCloneError is dom.js's DOMException, which the
// first one loads. Library code the step uses (doc.go, "The web platform's
// globals").
"use strict";
(function __sbx_clonePart(bridge) {
  const { ReflectApply, ObjectFreeze, StringCtor, ArrayBufferIsView, ArrayBufferByteLength, TypedArrayBuffer,
    TypedArrayByteOffset, DataViewBuffer, DataViewByteOffset, DataViewByteLength, TypeErrorCtor, loadedPart } = bridge;
  const ObjectPrototypeToString = Object.prototype.toString;
  const ArrayBufferSlice = ArrayBuffer.prototype.slice;
  const SymbolToStringTag = Symbol.toStringTag;

  function __sbx_tag(o) { return ReflectApply(ObjectPrototypeToString, o, []); }
  function __sbx_is(getter, v) {
    try { ReflectApply(getter, v, []); return true; } catch (_) { return false; }
  }

  const DateGetTime = Date.prototype.getTime;
  const RegExpSource = Object.getOwnPropertyDescriptor(RegExp.prototype, "source").get;
  const RegExpFlags = Object.getOwnPropertyDescriptor(RegExp.prototype, "flags").get;
  const MapSizeGetter = Object.getOwnPropertyDescriptor(Map.prototype, "size").get;
  const SetSizeGetter = Object.getOwnPropertyDescriptor(Set.prototype, "size").get;
  const MapForEachFn = Map.prototype.forEach;
  const SetForEachFn = Set.prototype.forEach;
  const MapSetFn = Map.prototype.set;
  const MapGetFn = Map.prototype.get;
  const SetAddFn = Set.prototype.add;
  const BooleanValueOf = Boolean.prototype.valueOf;
  const NumberValueOf = Number.prototype.valueOf;
  const StringValueOf = String.prototype.valueOf;
  const BigIntValueOf = typeof BigInt === "function" ? BigInt.prototype.valueOf : undefined;
  const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);
  const TypedArrayName = Object.getOwnPropertyDescriptor(TypedArrayProto, SymbolToStringTag).get;
  const TypedArrayLengthGetter = Object.getOwnPropertyDescriptor(TypedArrayProto, "length").get;
  const VIEWS = {
    __proto__: null, Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array,
    Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array,
  };
  const ERRORS = {
    __proto__: null, Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError,
  };

  // A DataCloneError is dom.js's DOMException: loaded with the first one.
  function __sbx_dom(message, name) { return bridge.part("dom").__sbx_dom(message, name); }
  function __sbx_cloneError(what) {
    return __sbx_dom(what + " could not be cloned.", "DataCloneError");
  }

  function structuredClone(value, options = undefined) {
    if (arguments.length === 0) throw new TypeErrorCtor("structuredClone: 1 argument required, but only 0 present");
    if (options !== undefined && options !== null && options.transfer !== undefined && options.transfer.length > 0) {
      throw __sbx_dom("structuredClone: transferring is not supported", "DataCloneError");
    }
    const memory = new Map();
    return __sbx_clone(value, memory);
  }

  function __sbx_clone(v, memory) {
    const t = typeof v;
    if (t === "symbol") throw __sbx_cloneError(StringCtor(v));
    if (t === "function") throw __sbx_cloneError(StringCtor(v));
    if (v === null || t !== "object") return v;
    const seen = ReflectApply(MapGetFn, memory, [v]);
    if (seen !== undefined) return seen;
    const remember = (c) => { ReflectApply(MapSetFn, memory, [v, c]); return c; };
    if (__sbx_is(BooleanValueOf, v)) return remember(Object(ReflectApply(BooleanValueOf, v, [])));
    if (__sbx_is(NumberValueOf, v)) return remember(Object(ReflectApply(NumberValueOf, v, [])));
    if (__sbx_is(StringValueOf, v)) return remember(Object(ReflectApply(StringValueOf, v, [])));
    if (BigIntValueOf !== undefined && __sbx_is(BigIntValueOf, v)) return remember(Object(ReflectApply(BigIntValueOf, v, [])));
    if (__sbx_is(DateGetTime, v)) return remember(new Date(ReflectApply(DateGetTime, v, [])));
    if (__sbx_is(RegExpSource, v) && __sbx_tag(v) === "[object RegExp]") {
      return remember(new RegExp(ReflectApply(RegExpSource, v, []), ReflectApply(RegExpFlags, v, [])));
    }
    if (__sbx_is(ArrayBufferByteLength, v)) return remember(ReflectApply(ArrayBufferSlice, v, [0]));
    if (ArrayBufferIsView(v)) {
      let name;
      try { name = ReflectApply(TypedArrayName, v, []); } catch (_) { name = undefined; }
      if (name !== undefined) {
        const buffer = __sbx_clone(ReflectApply(TypedArrayBuffer, v, []), memory);
        return remember(new VIEWS[name](buffer, ReflectApply(TypedArrayByteOffset, v, []), ReflectApply(TypedArrayLengthGetter, v, [])));
      }
      const buffer = __sbx_clone(ReflectApply(DataViewBuffer, v, []), memory);
      return remember(new DataView(buffer, ReflectApply(DataViewByteOffset, v, []), ReflectApply(DataViewByteLength, v, [])));
    }
    if (__sbx_is(MapSizeGetter, v)) {
      const out = remember(new Map());
      const entries = [];
      ReflectApply(MapForEachFn, v, [(value, key) => { entries.push([key, value]); }]);
      for (let i = 0; i < entries.length; i++) {
        ReflectApply(MapSetFn, out, [__sbx_clone(entries[i][0], memory), __sbx_clone(entries[i][1], memory)]);
      }
      return out;
    }
    if (__sbx_is(SetSizeGetter, v)) {
      const out = remember(new Set());
      const values = [];
      ReflectApply(SetForEachFn, v, [(value) => { values.push(value); }]);
      for (let i = 0; i < values.length; i++) ReflectApply(SetAddFn, out, [__sbx_clone(values[i], memory)]);
      return out;
    }
    const dom = loadedPart("dom"); // a DOMException exists only once dom.js is loaded
    if (dom !== undefined && v instanceof dom.DOMException) {
      return remember(new dom.DOMException(v.message, v.name));
    }
    const tag = __sbx_tag(v);
    if (tag === "[object Error]") {
      let name = v.name;
      if (!(typeof name === "string" && name in ERRORS)) name = "Error";
      const out = remember(new ERRORS[name]());
      const m = Object.getOwnPropertyDescriptor(v, "message");
      if (m !== undefined && "value" in m) Object.defineProperty(out, "message", { value: StringCtor(m.value), writable: true, configurable: true });
      const st = v.stack;
      if (typeof st === "string") Object.defineProperty(out, "stack", { value: st, writable: true, configurable: true });
      if (Object.hasOwn(v, "cause")) Object.defineProperty(out, "cause", { value: __sbx_clone(v.cause, memory), writable: true, configurable: true });
      return out;
    }
    if (Array.isArray(v)) {
      const out = remember(new Array(v.length));
      const keys = Object.keys(v);
      for (let i = 0; i < keys.length; i++) out[keys[i]] = __sbx_clone(v[keys[i]], memory);
      return out;
    }
    if (tag !== "[object Object]" || v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet || v instanceof WeakRef) {
      throw __sbx_cloneError(tag === "[object Object]" ? "#<" + (v.constructor && v.constructor.name || "Object") + ">" : tag);
    }
    const out = remember({});
    const keys = Object.keys(v);
    for (let i = 0; i < keys.length; i++) out[keys[i]] = __sbx_clone(v[keys[i]], memory);
    return out;
  }

  return ObjectFreeze({ __proto__: null, structuredClone });
})
