// Stepbox guest bootstrap, a part: structuredClone, on its own so that a
// step that only deep-copies a value loads nothing else (bootstrap.js,
// __sbx_lazy); its DataCloneError is dom.js's DOMException, which the
// first one loads. Library code the step uses (doc.go, "The web platform's
// globals").
"use strict";
(function __sbx_clonePart(bridge) {
  const { ReflectApply, ObjectFreeze, ObjectGetPrototypeOf, StringCtor, ArrayIsArray, ArrayBufferIsView, ArrayBufferByteLength, TypedArrayBuffer,
    TypedArrayByteOffset, DataViewBuffer, DataViewByteOffset, DataViewByteLength, TypeErrorCtor, loadedPart, __sbx_is } = bridge;
  const ObjectPrototype = Object.prototype, ObjectPrototypeToString = Object.prototype.toString;
  const ArrayBufferSlice = ArrayBuffer.prototype.slice;
  const SymbolToStringTag = Symbol.toStringTag;

  function __sbx_tag(o) { return ReflectApply(ObjectPrototypeToString, o, []); }

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

  // __sbx_clone is the structured clone of v. Which built-in an object is
  // (its internal slots) is proven by a getter or method of that built-in
  // taking it; one that does not throws, and an exception costs as much
  // as cloning a dozen values, so the checks are ordered by what is cheap
  // to know first: an array or a view (no exception), then the object's
  // tag, which names the one check to try. Object.prototype.toString's tag
  // is the engine's own (from the slots) unless a Symbol.toStringTag
  // string replaces it, as the prototypes of Map, Set, ArrayBuffer and
  // BigInt do: with the engine's tag, the checks of the slots it rules
  // out are skipped; with a string tag, the check it names goes first.
  function __sbx_clone(v, memory) {
    const t = typeof v;
    if (t === "symbol") throw __sbx_cloneError(StringCtor(v));
    if (t === "function") throw __sbx_cloneError(StringCtor(v));
    if (v === null || t !== "object") return v;
    const seen = ReflectApply(MapGetFn, memory, [v]);
    if (seen !== undefined) return seen;
    const remember = (c) => { ReflectApply(MapSetFn, memory, [v, c]); return c; };
    if (ArrayIsArray(v)) {
      const out = remember(new Array(v.length));
      const keys = Object.keys(v);
      for (let i = 0; i < keys.length; i++) out[keys[i]] = __sbx_clone(v[keys[i]], memory);
      return out;
    }
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
    const tagged = v[SymbolToStringTag];
    let tag, c = NONE;
    if (typeof tagged === "string") {
      c = __sbx_cloneSlot(v, memory, remember, tagged);
      if (c === NONE) c = __sbx_cloneSlots(v, memory, remember, ALL_SLOTS);
    } else {
      tag = __sbx_tag(v);
      if (tag === "[object Object]") {
        // An object of Object.prototype or of none (an object literal's,
        // JSON.parse's) is taken for a plain one without the four checks
        // that would throw: a Map, Set, ArrayBuffer or BigInt has that
        // built-in's prototype, whose tag is a string, unless the step
        // gave it another (README, "web platform"): it then clones as a
        // plain object.
        const p = ObjectGetPrototypeOf(v);
        if (p !== ObjectPrototype && p !== null) c = __sbx_cloneSlots(v, memory, remember, UNTAGGED_SLOTS);
      }
      else if (tag !== "[object Error]" && tag !== "[object Arguments]") {
        c = __sbx_cloneSlot(v, memory, remember, tag.slice(8, -1));
        if (c === NONE) c = __sbx_cloneSlots(v, memory, remember, ALL_SLOTS);
      }
    }
    if (c !== NONE) return c;
    const dom = loadedPart("dom"); // a DOMException exists only once dom.js is loaded
    if (dom !== undefined && v instanceof dom.DOMException) {
      return remember(new dom.DOMException(v.message, v.name));
    }
    if (tag === undefined) tag = __sbx_tag(v);
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
    if (tag !== "[object Object]" || v instanceof Promise || v instanceof WeakMap || v instanceof WeakSet || v instanceof WeakRef) {
      throw __sbx_cloneError(tag === "[object Object]" ? "#<" + (v.constructor && v.constructor.name || "Object") + ">" : tag);
    }
    const out = remember({});
    const keys = Object.keys(v);
    for (let i = 0; i < keys.length; i++) out[keys[i]] = __sbx_clone(v[keys[i]], memory);
    return out;
  }

  // __sbx_cloneSlot clones v if it has the internal slots of the built-in
  // named (Boolean, Number, String, BigInt, Date, RegExp, ArrayBuffer, Map
  // or Set), and returns NONE if it has not; __sbx_cloneSlots tries each in
  // a list. UNTAGGED_SLOTS are those Object.prototype.toString's own tag
  // does not show (it is "Object" for them).
  const NONE = {};
  function __sbx_cloneSlot(v, memory, remember, name) {
    switch (name) {
      case "Boolean": return __sbx_is(BooleanValueOf, v) ? remember(Object(ReflectApply(BooleanValueOf, v, []))) : NONE;
      case "Number": return __sbx_is(NumberValueOf, v) ? remember(Object(ReflectApply(NumberValueOf, v, []))) : NONE;
      case "String": return __sbx_is(StringValueOf, v) ? remember(Object(ReflectApply(StringValueOf, v, []))) : NONE;
      case "Date": return __sbx_is(DateGetTime, v) ? remember(new Date(ReflectApply(DateGetTime, v, []))) : NONE;
      case "RegExp":
        return __sbx_is(RegExpSource, v) && __sbx_tag(v) === "[object RegExp]" ?
          remember(new RegExp(ReflectApply(RegExpSource, v, []), ReflectApply(RegExpFlags, v, []))) : NONE;
      case "BigInt": return BigIntValueOf !== undefined && __sbx_is(BigIntValueOf, v) ? remember(Object(ReflectApply(BigIntValueOf, v, []))) : NONE;
      case "ArrayBuffer": return __sbx_is(ArrayBufferByteLength, v) ? remember(ReflectApply(ArrayBufferSlice, v, [0])) : NONE;
      case "Map": {
        if (!__sbx_is(MapSizeGetter, v)) return NONE;
        const out = remember(new Map());
        const entries = [];
        ReflectApply(MapForEachFn, v, [(value, key) => { entries.push([key, value]); }]);
        for (let i = 0; i < entries.length; i++) {
          ReflectApply(MapSetFn, out, [__sbx_clone(entries[i][0], memory), __sbx_clone(entries[i][1], memory)]);
        }
        return out;
      }
      case "Set": {
        if (!__sbx_is(SetSizeGetter, v)) return NONE;
        const out = remember(new Set());
        const values = [];
        ReflectApply(SetForEachFn, v, [(value) => { values.push(value); }]);
        for (let i = 0; i < values.length; i++) ReflectApply(SetAddFn, out, [__sbx_clone(values[i], memory)]);
        return out;
      }
    }
    return NONE;
  }
  const ALL_SLOTS = ["Boolean", "Number", "String", "BigInt", "Date", "RegExp", "ArrayBuffer", "Map", "Set"];
  const UNTAGGED_SLOTS = ["BigInt", "ArrayBuffer", "Map", "Set"];
  function __sbx_cloneSlots(v, memory, remember, names) {
    for (let i = 0; i < names.length; i++) {
      const c = __sbx_cloneSlot(v, memory, remember, names[i]);
      if (c !== NONE) return c;
    }
    return NONE;
  }

  return ObjectFreeze({ __proto__: null, structuredClone });
})
