// Stepbox guest bootstrap. Evaluated once per runtime, before any user code,
// from bytecode compiled by Stepbox itself. It captures the built-ins it relies
// on, removes the raw host entry points from the global object, installs the
// guest API (input, dataProxy, reportStatus, console, timers; fetch from its
// own part, fetch.js, and the web platform's globals from parts of their
// own, on first use; duckdb and glpk from modules.js) and
// evaluates to the dispatch function
// the host drives the run with. The module
// objects (duckdb, glpk) and the package table are built only for a run
// that asks for them, and become its globals.
//
// Every function here is named __sbx_*; its frames in stack traces have
// no location (the bytecode keeps no debug information), which is how
// they are dropped; user code is compiled by the AsyncFunction
// constructor and its frames are the ones named "<input>".
//
// The step owns its globals: it may replace any built-in method or getter,
// redirect Symbol.species, plant setters and toJSON on the prototypes. What
// the bridge does while a step runs must not depend on any of that, nor let
// the step see it happen. So, outside the boot itself (which runs before any
// step exists):
//
//   - every built-in is one captured here and called through the captured
//     Reflect.apply: never looked up on a prototype, never through .call;
//   - no for-of, spread or array destructuring (they use
//     Array.prototype[Symbol.iterator] and the iterators' next; the one
//     generator, behind Headers' iterators, is driven by the step's own
//     calls of next), no template literal, no instanceof
//     (Symbol.hasInstance), no `await` and no async function (await reads
//     a promise's constructor and then);
//   - no .then on a promise the step can reach and no array method that
//     makes an array (both look up constructor and Symbol.species); the
//     bridge's promises are made with the captured constructor and settled
//     with their resolve functions; the one promise it chains on, the
//     step's own, gets an own constructor of undefined first;
//   - arrays and objects the bridge fills or serializes for itself have no
//     prototype (no inherited setter or toJSON), and it formats text by
//     concatenation.
//
// What the bridge still reads of the step are the step's own values, as
// their meaning requires: JSON.stringify of a result or payload (with its
// toJSON), the properties of what console prints, the toString of a
// header value. And resolving a promise with an object looks up the
// object's then, as every promise does.
"use strict";
(function __sbx_boot(global) {
  const host = global.__sbx_host;
  delete global.__sbx_host;
  const readRows = global.__sbx_rows; // (array) -> whether the host read it for the next duckdb.load
  delete global.__sbx_rows;

  const ReflectApply = Reflect.apply;
  const ReflectConstruct = Reflect.construct;
  const JSONstringify = JSON.stringify;
  const JSONrawJSON = JSON.rawJSON;
  const JSONparse = JSON.parse;
  const ObjectPrototype = Object.prototype;
  const ObjectKeys = Object.keys;
  const ObjectEntries = Object.entries;
  const ObjectFreeze = Object.freeze;
  const ObjectHasOwn = Object.hasOwn;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ObjectSetPrototypeOf = Object.setPrototypeOf;
  const ArrayIsArray = Array.isArray;
  const StringCtor = String;
  const StringFromCharCode = String.fromCharCode;
  const StringSlice = String.prototype.slice;
  const StringIndexOf = String.prototype.indexOf;
  const StringCharCodeAt = String.prototype.charCodeAt;
  const StringToLowerCase = String.prototype.toLowerCase;
  const PromiseCtor = Promise;
  const PromiseThen = Promise.prototype.then;
  const PromiseResolve = Promise.resolve;
  const PromiseReject = Promise.reject;
  const ErrorCtor = Error;
  const ErrorPrototype = Error.prototype;
  const ErrorPrototypeToString = Error.prototype.toString;
  const TypeErrorCtor = TypeError;
  const MapCtor = Map;
  const MapPrototype = Map.prototype;
  const MapGet = Map.prototype.get;
  const MapSet = Map.prototype.set;
  const MapDelete = Map.prototype.delete;
  const MapHas = Map.prototype.has;
  const MapForEach = Map.prototype.forEach;
  const SetPrototype = Set.prototype;
  const SetForEach = Set.prototype.forEach;
  const DatePrototype = Date.prototype;
  const DateToISOString = Date.prototype.toISOString;
  const Uint8ArrayCtor = Uint8Array;
  const ArrayBufferIsView = ArrayBuffer.isView;
  const SymbolCtor = Symbol;
  const SymbolIterator = Symbol.iterator;
  const AsyncFunction = (async function () {}).constructor;
  const EncodeURIComponent = encodeURIComponent, DecodeURIComponent = decodeURIComponent; // for params.js
  function __sbx_getter(o, k) { return ObjectGetOwnPropertyDescriptor(o, k).get; }
  const MapSize = __sbx_getter(MapPrototype, "size");
  const SetSize = __sbx_getter(SetPrototype, "size");
  const ArrayBufferByteLength = __sbx_getter(ArrayBuffer.prototype, "byteLength");
  const TypedArrayPrototype = ObjectGetPrototypeOf(Uint8Array.prototype);
  const TypedArrayBuffer = __sbx_getter(TypedArrayPrototype, "buffer");
  const TypedArrayByteOffset = __sbx_getter(TypedArrayPrototype, "byteOffset");
  const TypedArrayByteLength = __sbx_getter(TypedArrayPrototype, "byteLength");
  const TypedArrayLength = __sbx_getter(TypedArrayPrototype, "length");
  const TypedArrayName = __sbx_getter(TypedArrayPrototype, SymbolCtor.toStringTag); // undefined for what is no typed array
  const DataViewBuffer = __sbx_getter(DataView.prototype, "buffer");
  const DataViewByteOffset = __sbx_getter(DataView.prototype, "byteOffset");
  const DataViewByteLength = __sbx_getter(DataView.prototype, "byteLength");

  // The bootstrap never calls a method through .call: a step may replace
  // Function.prototype.call, and would then be handed the bootstrap's maps.
  function mapGet(m, k) { return ReflectApply(MapGet, m, [k]); }
  function mapSet(m, k, v) { ReflectApply(MapSet, m, [k, v]); }
  function mapDelete(m, k) { ReflectApply(MapDelete, m, [k]); }
  function mapHas(m, k) { return ReflectApply(MapHas, m, [k]); }

  // __sbx_list returns an array of the bridge's own, with no prototype:
  // writing list[list.length] never meets a setter, JSON.stringify never a
  // toJSON, of the step's.
  function __sbx_list() { return ObjectSetPrototypeOf([], null); }

  // Promises: made by the captured constructor, never looked up. Only call
  // these with values that are not promises (PromiseResolve would read a
  // promise's constructor).
  function __sbx_resolved(v) { return ReflectApply(PromiseResolve, PromiseCtor, [v]); }
  function __sbx_rejected(e) { return ReflectApply(PromiseReject, PromiseCtor, [e]); }
  // A promise the bootstrap chains on gets an own constructor of undefined:
  // then() then makes its promise with %Promise% and reads neither the
  // prototype's constructor nor Symbol.species (SpeciesConstructor).
  const NO_SPECIES = ObjectFreeze({ __proto__: null, value: undefined });
  let resolved; // a fulfilled promise of the bootstrap's, for queueMicrotask, made on first use

  // __sbx_isError is `v instanceof Error` without Error[Symbol.hasInstance],
  // which the step may define.
  function __sbx_isError(v) {
    if (v === null || (typeof v !== "object" && typeof v !== "function")) return false;
    for (let p = ObjectGetPrototypeOf(v); p !== null; p = ObjectGetPrototypeOf(p)) {
      if (p === ErrorPrototype) return true;
    }
    return false;
  }

  // The host reads an exception that reaches it (an interrupt's, the
  // engine's out of memory) by converting it to a string and reading its
  // name, message, stack and position, through the prototype chain:
  // InternalError's own properties keep that from reaching the step's
  // replacements on Error.prototype or Object.prototype. The bootstrap
  // catches every other exception itself (see __sbx_dispatch).
  {
    const p = InternalError.prototype;
    const keep = { __proto__: null, writable: false, enumerable: false, configurable: false };
    ObjectDefineProperty(p, "name", keep);
    ObjectDefineProperty(p, "message", keep);
    const own = { __proto__: null, value: undefined, writable: false, enumerable: false, configurable: false };
    ObjectDefineProperty(p, SymbolCtor.toPrimitive, own);
    own.value = ErrorPrototypeToString;
    ObjectDefineProperty(p, "toString", own);
    own.value = undefined;
    ObjectDefineProperty(p, "stack", own);
    ObjectDefineProperty(p, "lineNumber", own);
    ObjectDefineProperty(p, "columnNumber", own);
    ObjectDefineProperty(p, "fileName", own);
  }

  // A FinalizationRegistry's cleanup runs as a job; one that throws would
  // hand its exception to the host's job loop, which reads it (toString and
  // getters) and ignores it. The cleanup is wrapped so that nothing leaves
  // it: the step gets the same (no one sees its exception).
  {
    const FinalizationRegistryCtor = global.FinalizationRegistry;
    const FinalizationRegistryPrototype = FinalizationRegistryCtor.prototype;
    const FinalizationRegistry = function FinalizationRegistry(cleanup) {
      if (new.target === undefined) throw new TypeErrorCtor("FinalizationRegistry must be called with new");
      if (typeof cleanup !== "function") throw new TypeErrorCtor("FinalizationRegistry: the cleanup must be a function");
      return ReflectConstruct(FinalizationRegistryCtor, [function __sbx_cleanup(held) {
        try { ReflectApply(cleanup, undefined, [held]); } catch (_) {}
      }], new.target);
    };
    ObjectDefineProperty(FinalizationRegistry, "prototype", { __proto__: null, value: FinalizationRegistryPrototype, writable: false });
    ObjectDefineProperty(FinalizationRegistryPrototype, "constructor", { __proto__: null, value: FinalizationRegistry, writable: true, configurable: true });
    ObjectDefineProperty(global, "FinalizationRegistry", { __proto__: null, value: FinalizationRegistry, writable: true, configurable: true });
  }

  // TypeScript's "using" declarations compile to helpers that look for
  // these well-known symbols, which QuickJS does not define.
  if (SymbolCtor.dispose === undefined) ObjectDefineProperty(SymbolCtor, "dispose", { value: SymbolCtor.for("Symbol.dispose") });
  if (SymbolCtor.asyncDispose === undefined) ObjectDefineProperty(SymbolCtor, "asyncDispose", { value: SymbolCtor.for("Symbol.asyncDispose") });

  // pending: request id -> [resolve, reject, kind, moduleError, shape]
  const pending = new MapCtor();
  const KIND_DATA = 0, KIND_FETCH = 1, KIND_MODULE = 2;
  // What a module call's promise resolves to: the reply, undefined, or a
  // Database with the reply's handle.
  // AS_ROWS is a DuckDB result: integers beyond ±(2^53-1) are BigInts.
  // AS_TABLE is a DuckDB result as a table (duckdb.table): a Table of its
  // rows, their integers as AS_ROWS's. AS_CONNECTION is duckdb.connect's:
  // a connection to the database the reply is the handle of.
  const AS_IS = 0, AS_UNDEFINED = 1, AS_DATABASE = 2, AS_ROWS = 3, AS_TABLE = 4, AS_CONNECTION = 5;
  const BigIntCtor = BigInt;
  // __sbx_bigints is JSON.parse's reviver for a DuckDB result the host
  // could not build (an integer beyond int64): an integer written without
  // fraction or exponent outside the safe range becomes a BigInt of its
  // exact text. A double is always written with a fraction or exponent.
  function __sbx_bigints(k, v, c) {
    if (typeof v === "number" && (v > 9007199254740991 || v < -9007199254740991)) {
      const src = c.source;
      if (ReflectApply(StringIndexOf, src, ["."]) < 0 && ReflectApply(StringIndexOf, src, ["e"]) < 0 && ReflectApply(StringIndexOf, src, ["E"]) < 0) return BigIntCtor(src);
    }
    return v;
  }
  const timers = new MapCtor(); // timer id -> [fn, args, intervalMs]

  const MAX_FORMAT = 64 * 1024; // characters of one formatted console argument

  function __sbx_call(fn, thisArg, args) {
    return ReflectApply(fn, thisArg, args);
  }

  function __sbx_bigintJSON(k, v) {
    return typeof v === "bigint" ? JSONrawJSON(StringCtor(v)) : v;
  }

  // __sbx_json turns a guest value into JSON text, copying it exactly once:
  // the host receives a string, never a live object, so a getter cannot
  // change a value after the host checked it.
  function __sbx_json(value, what) {
    let text;
    try {
      try {
        text = JSONstringify(value);
      } catch (e) {
        // A BigInt is written as the JSON number of its exact digits (a
        // DuckDB BIGINT beyond 2^53 comes back out as it went in); only
        // then does the replacer run, so other values pay nothing.
        if (!(e instanceof TypeErrorCtor) || e.message !== "Do not know how to serialize a BigInt") throw e;
        text = JSONstringify(value, __sbx_bigintJSON);
      }
    } catch (e) {
      let why;
      try { why = StringCtor(e && e.message); } catch (_) { why = "unknown"; }
      if (why === "out of memory") throw e;
      if (why === "stack overflow") why = "nested too deeply";
      throw new TypeErrorCtor(what + " is not JSON-serializable: " + why);
    }
    if (text === undefined) {
      // A function, a Symbol or undefined itself has no JSON form.
      throw new TypeErrorCtor(what + " is not JSON-serializable: " + typeof value);
    }
    return text;
  }

  // __sbx_format formats a console argument; seen is the chain of the
  // objects being formatted around it ({ v, up }).
  function __sbx_format(v, depth, seen) {
    const t = typeof v;
    if (t === "string") return depth === 0 ? v : JSONstringify(v);
    if (t === "number" || t === "boolean" || v === undefined || v === null) return StringCtor(v);
    if (t === "bigint") return StringCtor(v) + "n";
    if (t === "symbol") return StringCtor(v);
    if (t === "function") return "[Function: " + (v.name || "(anonymous)") + "]";
    for (let s = seen; s !== null; s = s.up) {
      if (s.v === v) return "[Circular]";
    }
    if (__sbx_isError(v)) {
      const raw = v.stack;
      const stack = typeof raw === "string" ? __sbx_userStack(raw) : "";
      return StringCtor(v.name) + ": " + StringCtor(v.message) + (stack ? "\n" + stack : "");
    }
    if (depth > 4) return ArrayIsArray(v) ? "[Array]" : "[Object]";
    const inner = { __proto__: null, v: v, up: seen };
    if (ArrayIsArray(v)) {
      let out = "";
      let size = 0;
      for (let i = 0; i < v.length; i++) {
        if (i >= 100 || size > MAX_FORMAT) { out += (i > 0 ? ", " : "") + "... " + (v.length - i) + " more items"; break; }
        const s = __sbx_format(v[i], depth + 1, inner);
        size += s.length;
        out += (i > 0 ? ", " : "") + s;
      }
      return out === "" ? "[]" : "[ " + out + " ]";
    }
    // Dates, Maps and Sets by their prototypes, not by Symbol.toStringTag.
    for (let p = ObjectGetPrototypeOf(v); p !== null && p !== ObjectPrototype; p = ObjectGetPrototypeOf(p)) {
      if (p === DatePrototype) return ReflectApply(DateToISOString, v, []);
      if (p === MapPrototype || p === SetPrototype) {
        const items = __sbx_list();
        let size;
        if (p === MapPrototype) {
          size = ReflectApply(MapSize, v, []);
          ReflectApply(MapForEach, v, [function __sbx_entry(value, key) { items[items.length] = [key, value]; }]);
        } else {
          size = ReflectApply(SetSize, v, []);
          ReflectApply(SetForEach, v, [function __sbx_entry(value) { items[items.length] = value; }]);
        }
        return (p === MapPrototype ? "Map(" : "Set(") + size + ") " + __sbx_format(items, depth + 1, inner);
      }
    }
    const keys = ObjectKeys(v);
    let out = "";
    let size = 0;
    for (let i = 0; i < keys.length; i++) {
      if (i >= 100 || size > MAX_FORMAT) { out += (i > 0 ? ", " : "") + "... " + (keys.length - i) + " more keys"; break; }
      const k = keys[i];
      const s = k + ": " + __sbx_format(v[k], depth + 1, inner);
      size += s.length;
      out += (i > 0 ? ", " : "") + s;
    }
    return out === "" ? "{}" : "{ " + out + " }";
  }

  // __sbx_userStack rewrites a stack trace as the host's RewriteStack does:
  // the bootstrap's frames dropped (those without a location, or in
  // "<eval>"), the step's named step.js with the user's line numbers (the
  // AsyncFunction header is two lines).
  function __sbx_userStack(stack) {
    let out = "";
    for (let start = 0; start <= stack.length;) {
      let end = ReflectApply(StringIndexOf, stack, ["\n", start]);
      if (end < 0) end = stack.length;
      const line = ReflectApply(StringSlice, stack, [start, end]);
      start = end + 1;
      if (line === "" || ReflectApply(StringCharCodeAt, line, [line.length - 1]) !== 41 /* ) */ ||
        ReflectApply(StringIndexOf, line, ["<eval>", 0]) >= 0) continue;
      out += (out === "" ? "" : "\n") + __sbx_relocate(line);
    }
    return out;
  }

  // __sbx_relocate replaces each "<input>:N" of line by "step.js:N-2".
  function __sbx_relocate(line) {
    let out = "";
    let from = 0;
    for (;;) {
      const at = ReflectApply(StringIndexOf, line, ["<input>:", from]);
      if (at < 0) break;
      let j = at + 8;
      let n = 0;
      for (; j < line.length; j++) {
        const c = ReflectApply(StringCharCodeAt, line, [j]);
        if (c < 48 || c > 57) break;
        n = n * 10 + (c - 48);
      }
      if (j === at + 8) { // no line number: not a location
        out += ReflectApply(StringSlice, line, [from, j]);
      } else {
        out += ReflectApply(StringSlice, line, [from, at]) + "step.js:" + (n - 2);
      }
      from = j;
    }
    return out + ReflectApply(StringSlice, line, [from, line.length]);
  }

  function __sbx_formatArgs(args) {
    let out = "";
    for (let i = 0; i < args.length; i++) {
      let s;
      try {
        s = __sbx_format(args[i], 0, null);
      } catch (e) {
        s = "[unformattable value]";
      }
      if (s.length > MAX_FORMAT) s = ReflectApply(StringSlice, s, [0, MAX_FORMAT]) + "...";
      out += (i > 0 ? " " : "") + s;
    }
    return out;
  }

  function __sbx_console(level) {
    return function __sbx_log(...args) {
      host("console", level, __sbx_formatArgs(args));
    };
  }

  const consoleObj = {
    log: __sbx_console("log"),
    info: __sbx_console("info"),
    warn: __sbx_console("warn"),
    error: __sbx_console("error"),
    debug: __sbx_console("debug"),
  };
  consoleObj.trace = consoleObj.debug;

  function __sbx_request(method, params) {
    if (typeof method !== "string") {
      return __sbx_rejected(new TypeErrorCtor("dataProxy.request: method must be a string"));
    }
    let text;
    try {
      text = params === undefined ? "null" : __sbx_json(params, "dataProxy.request params");
    } catch (e) {
      return __sbx_rejected(e);
    }
    // The Error a refused request rejects with is made when the refusal
    // arrives: capturing a stack per request would cost a tenth of the
    // round trip.
    const id = host("request", method, text);
    return new PromiseCtor(function __sbx_pending(resolve, reject) {
      mapSet(pending, id, [resolve, reject, KIND_DATA]);
    });
  }

  function __sbx_reportStatus(payload) {
    host("status", payload === undefined ? "null" : __sbx_json(payload, "reportStatus payload"));
  }

  let timerSeq = 0;
  function __sbx_setTimer(fn, ms, args, repeat) {
    if (typeof fn !== "function") throw new TypeErrorCtor("the callback must be a function");
    ms = +ms;
    if (!(ms > 0)) ms = 0;
    const id = ++timerSeq;
    host("timer", id, ms);
    mapSet(timers, id, [fn, args, repeat ? ms : -1]);
    return id;
  }
  function __sbx_clearTimer(id) {
    if (mapHas(timers, id)) {
      mapDelete(timers, id);
      host("cleartimer", id);
    }
  }

  // ---- the parts of the guest API a VM loads on first use -----------------

  // The fetch API is most of the guest API's code, and few steps use it:
  // its part (fetch.js) has bytecode of its own, which the host evaluates
  // (loadPart) the first time a step reads one of its globals. The
  // modules' objects (modules.js) are loaded for a run granted a module. Until then
  // each is an accessor on the global object: reading one loads the part
  // and makes that global a data property, as the others are; assigning
  // one (a step's own fetch) makes it a data property with the step's
  // value, and loads nothing.
  const loadPart = global.__sbx_part; // (name) -> the part's function, or undefined
  delete global.__sbx_part;
  let modulesAPI; // modules.js's objects, once loaded
  const loaded = { __proto__: null }; // part name -> its objects, once loaded

  // What the parts may use of the boot's: bridge for all of them, made for
  // the first part loaded, and inner, with what only the parts that are
  // bridge code themselves use (fetch.js, headers.js, request.js,
  // modules.js), made for the first of those. Each object costs a VM
  // about 2k instructions a member to make.
  let bridge, inner;

  // __sbx_is tells a built-in object by its internal slot: whether getter
  // (a method or getter of the built-in's, such as Map's size) takes v.
  function __sbx_is(getter, v) {
    try {
      ReflectApply(getter, v, []);
      return true;
    } catch (_) {
      return false;
    }
  }

  // __sbx_partOf evaluates the named part and returns its objects.
  function __sbx_partOf(name) {
    const make = loadPart(name);
    if (typeof make !== "function") throw new TypeErrorCtor("the " + name + " API could not be loaded");
    if (bridge === undefined) {
      bridge = ObjectFreeze({
        __proto__: null,
        host: host, part: __sbx_api, __sbx_is: __sbx_is, loadedPart: function __sbx_loadedPart(name) { return loaded[name]; },
        __sbx_list: __sbx_list, __sbx_resolved: __sbx_resolved, __sbx_rejected: __sbx_rejected, setTimer: __sbx_setTimer,
        ReflectApply: ReflectApply, ObjectFreeze: ObjectFreeze, ObjectGetPrototypeOf: ObjectGetPrototypeOf,
        ArrayIsArray: ArrayIsArray, StringCtor: StringCtor,
        StringFromCharCode: StringFromCharCode, StringCharCodeAt: StringCharCodeAt, TypeErrorCtor: TypeErrorCtor,
        ErrorCtor: ErrorCtor, SymbolIterator: SymbolIterator, Uint8ArrayCtor: Uint8ArrayCtor, TypedArrayName: TypedArrayName,
        ArrayBufferIsView: ArrayBufferIsView, ArrayBufferByteLength: ArrayBufferByteLength,
        TypedArrayBuffer: TypedArrayBuffer, TypedArrayByteOffset: TypedArrayByteOffset,
        TypedArrayByteLength: TypedArrayByteLength, DataViewBuffer: DataViewBuffer,
        DataViewByteOffset: DataViewByteOffset, DataViewByteLength: DataViewByteLength,
        encodeURIComponent: EncodeURIComponent, decodeURIComponent: DecodeURIComponent,
      });
    }
    if (name !== "fetch" && name !== "headers" && name !== "request" && name !== "modules") return make(bridge);
    if (inner === undefined) {
      inner = ObjectFreeze({
        __proto__: null,
        pending: pending, mapSet: mapSet, mapGet: mapGet, mapDelete: mapDelete, readRows: readRows, __sbx_json: __sbx_json,
        KIND_FETCH: KIND_FETCH, KIND_MODULE: KIND_MODULE, AS_IS: AS_IS, AS_UNDEFINED: AS_UNDEFINED,
        AS_DATABASE: AS_DATABASE, AS_ROWS: AS_ROWS, AS_TABLE: AS_TABLE, AS_CONNECTION: AS_CONNECTION,
        JSONparse: JSONparse, JSONstringify: JSONstringify, ObjectDefineProperty: ObjectDefineProperty,
        ObjectPrototype: ObjectPrototype, ObjectEntries: ObjectEntries, ObjectHasOwn: ObjectHasOwn,
        ObjectGetOwnPropertyDescriptor: ObjectGetOwnPropertyDescriptor, ObjectSetPrototypeOf: ObjectSetPrototypeOf, StringToLowerCase: StringToLowerCase, PromiseCtor: PromiseCtor,
        MapCtor: MapCtor, MapSize: MapSize, MapForEach: MapForEach, SymbolCtor: SymbolCtor, TypedArrayLength: TypedArrayLength,
      });
    }
    return make(bridge, inner);
  }
  // __sbx_api returns the named part's objects, loading it first if need be.
  function __sbx_api(name) {
    let api = loaded[name];
    if (api === undefined) api = loaded[name] = __sbx_partOf(name);
    return api;
  }
  function __sbx_settle(name, value) {
    ObjectDefineProperty(global, name, { __proto__: null, value: value, writable: true, configurable: true, enumerable: false });
  }
  function __sbx_lazy(name, part) {
    ObjectDefineProperty(global, name, {
      __proto__: null, configurable: true, enumerable: false,
      get: function __sbx_lazyGet() {
        const v = __sbx_api(part)[name];
        try { __sbx_settle(name, v); } catch (_) {} // a frozen global object keeps its accessor
        return v;
      },
      set: function __sbx_lazySet(v) { __sbx_settle(name, v); },
    });
  }
  // The parts' globals, each with the part that makes it. The web
  // platform's (WinterTC's minimum common API) are parts of a few
  // globals each (doc.go, "The web platform's globals"): most steps use
  // none of them, and a run pays for a part only when its step first
  // reads one of its globals (or another part needs it).
  __sbx_lazy("fetch", "fetch");
  __sbx_lazy("Headers", "headers");
  __sbx_lazy("Response", "fetch");
  __sbx_lazy("Request", "request");
  __sbx_lazy("atob", "text");
  __sbx_lazy("btoa", "text");
  __sbx_lazy("TextEncoder", "text");
  __sbx_lazy("TextDecoder", "text");
  __sbx_lazy("structuredClone", "clone");
  __sbx_lazy("DOMException", "dom");
  __sbx_lazy("Event", "events");
  __sbx_lazy("EventTarget", "events");
  __sbx_lazy("AbortController", "abort");
  __sbx_lazy("AbortSignal", "abort");
  __sbx_lazy("performance", "performance");
  __sbx_lazy("Blob", "blob");
  __sbx_lazy("File", "blob");
  __sbx_lazy("FormData", "form");
  __sbx_lazy("URL", "url");
  __sbx_lazy("URLSearchParams", "params");
  __sbx_lazy("crypto", "crypto");
  __sbx_lazy("Crypto", "crypto");
  __sbx_lazy("CryptoKey", "keys");
  __sbx_lazy("SubtleCrypto", "subtle");

  // Intl (intl.js, over Go host functions) is loaded the first time a step
  // reads the Intl global or calls one of the locale methods ECMA-402
  // redefines in terms of it. Until then Intl is an accessor like fetch's,
  // and each of those methods is a wrapper that loads the part and calls
  // the method the part installed. Loading keeps what the step made its
  // own: its Intl, or its replacement of one of the methods.
  const INTL_METHODS = [
    [DatePrototype, "toLocaleString"], [DatePrototype, "toLocaleDateString"],
    [DatePrototype, "toLocaleTimeString"], [Number.prototype, "toLocaleString"],
    [BigInt.prototype, "toLocaleString"], [String.prototype, "localeCompare"],
  ];
  const ObjectIsExtensible = Object.isExtensible;
  let intlAPI; // the loaded Intl and methods
  let intlLoading = false;
  const intlWrappers = [];
  function __sbx_intlAPI() {
    if (intlAPI !== undefined || intlLoading) return intlAPI;
    // Loading adds globals (the host's functions, then Intl): on a global
    // object that takes none it cannot succeed, and must not delete first.
    if (!ObjectIsExtensible(global)) return undefined;
    intlLoading = true;
    const before = ObjectGetOwnPropertyDescriptor(global, "Intl");
    try {
      const own = before !== undefined && before.get !== __sbx_intlGet;
      if (before !== undefined && before.configurable) delete global.Intl;
      const methods = [];
      for (let i = 0; i < INTL_METHODS.length; i++) {
        methods[i] = ObjectGetOwnPropertyDescriptor(INTL_METHODS[i][0], INTL_METHODS[i][1]);
      }
      const make = loadPart("intl"); // installs Intl and the methods
      if (typeof make !== "function") throw new TypeErrorCtor("the Intl API could not be loaded");
      try {
        make();
      } catch (_) {
        // A prototype the step froze takes no method: put back the ones
        // installed before it, and fail as a load that could not start.
        for (let i = 0; i < INTL_METHODS.length; i++) {
          try { if (methods[i] !== undefined) ObjectDefineProperty(INTL_METHODS[i][0], INTL_METHODS[i][1], methods[i]); } catch (_) {}
        }
        throw new TypeErrorCtor("the Intl API could not be loaded");
      }
      const api = { __proto__: null, Intl: global.Intl, methods: [] };
      for (let i = 0; i < INTL_METHODS.length; i++) {
        const o = INTL_METHODS[i][0], k = INTL_METHODS[i][1];
        api.methods[i] = o[k];
        if (methods[i] === undefined || methods[i].value !== intlWrappers[i]) ObjectDefineProperty(o, k, methods[i]);
      }
      if (own) ObjectDefineProperty(global, "Intl", before);
      intlAPI = api;
      return api;
    } finally {
      // A load that failed leaves Intl as it found it: the step's, or
      // the accessor, which tries again.
      if (intlAPI === undefined && before !== undefined && before.configurable) {
        try { ObjectDefineProperty(global, "Intl", before); } catch (_) {}
      }
      intlLoading = false;
    }
  }
  function __sbx_intlGet() {
    const api = __sbx_intlAPI();
    return api === undefined ? undefined : api.Intl;
  }
  ObjectDefineProperty(global, "Intl", {
    __proto__: null, configurable: true, enumerable: false,
    get: __sbx_intlGet,
    set: function __sbx_intlSet(v) { __sbx_settle("Intl", v); },
  });
  function __sbx_intlMethod(i) {
    const api = __sbx_intlAPI();
    if (api === undefined) throw new TypeErrorCtor("the Intl API could not be loaded");
    return api.methods[i];
  }
  const intlWrapperDefs = {
    toLocaleString() { return ReflectApply(__sbx_intlMethod(0), this, arguments); },
    toLocaleDateString() { return ReflectApply(__sbx_intlMethod(1), this, arguments); },
    toLocaleTimeString() { return ReflectApply(__sbx_intlMethod(2), this, arguments); },
  };
  intlWrappers[0] = intlWrapperDefs.toLocaleString;
  intlWrappers[1] = intlWrapperDefs.toLocaleDateString;
  intlWrappers[2] = intlWrapperDefs.toLocaleTimeString;
  intlWrappers[3] = { toLocaleString() { return ReflectApply(__sbx_intlMethod(3), this, arguments); } }.toLocaleString;
  intlWrappers[4] = { toLocaleString() { return ReflectApply(__sbx_intlMethod(4), this, arguments); } }.toLocaleString;
  intlWrappers[5] = { localeCompare(that) { return ReflectApply(__sbx_intlMethod(5), this, arguments); } }.localeCompare;
  for (let i = 0; i < INTL_METHODS.length; i++) {
    ObjectDefineProperty(INTL_METHODS[i][0], INTL_METHODS[i][1], { __proto__: null, value: intlWrappers[i], writable: true, configurable: true, enumerable: false });
  }

  const guest = {
    input: undefined,
    dataProxy: ObjectFreeze({ request: __sbx_request }),
    reportStatus: __sbx_reportStatus,
    console: consoleObj,
    setTimeout: function setTimeout(fn, ms, ...args) { return __sbx_setTimer(fn, ms, args, false); },
    setInterval: function setInterval(fn, ms, ...args) { return __sbx_setTimer(fn, ms, args, true); },
    clearTimeout: function clearTimeout(id) { __sbx_clearTimer(id); },
    clearInterval: function clearInterval(id) { __sbx_clearTimer(id); },
    queueMicrotask: function queueMicrotask(fn) {
      if (typeof fn !== "function") throw new TypeErrorCtor("queueMicrotask: the callback must be a function");
      if (resolved === undefined) {
        resolved = __sbx_resolved(undefined);
        ObjectDefineProperty(resolved, "constructor", NO_SPECIES);
      }
      ReflectApply(PromiseThen, resolved, [function __sbx_microtask() { fn(); }]);
    },
  };
  for (const k of ObjectKeys(guest)) {
    ObjectDefineProperty(global, k, { value: guest[k], writable: true, configurable: true, enumerable: false });
  }

  // ---- modules: duckdb, glpk (native, in the worker) and npm packages -----

  function __sbx_define(name, value) {
    ObjectDefineProperty(global, name, { __proto__: null, value: value, writable: true, configurable: true, enumerable: false });
  }

  // __sbx_modules makes the run's built-in modules globals.
  function __sbx_modules(list) {
    if (modulesAPI === undefined) modulesAPI = __sbx_partOf("modules");
    const names = JSONparse(list);
    for (let i = 0; i < names.length; i++) {
      if (names[i] === "duckdb") __sbx_define("duckdb", modulesAPI.duckdb);
      else if (names[i] === "glpk") __sbx_define("glpk", modulesAPI.glpk);
    }
  }

  // The package table: the step's rewritten imports call __sbx_require
  // (declarations) and __sbx_import (import() calls).
  let packages;
  function __sbx_package(name, ns) {
    if (packages === undefined) {
      packages = new MapCtor();
      const req = function __sbx_require(name) {
        const ns = mapGet(packages, name);
        if (ns === undefined) throw new ErrorCtor("package \"" + StringCtor(name) + "\" is not available in this run");
        return ns;
      };
      __sbx_define("__sbx_require", req);
      __sbx_define("__sbx_import", function __sbx_import(name) {
        return new PromiseCtor(function __sbx_importing(resolve) { resolve(req(name)); });
      });
    }
    mapSet(packages, name, ns);
  }

  // __sbx_failure describes a thrown value for the host without trusting it:
  // every read is guarded, and a value that is not an Error is formatted.
  function __sbx_failure(e) {
    const info = { __proto__: null, name: "", message: "", stack: "" };
    try {
      if (__sbx_isError(e)) {
        try { info.name = StringCtor(e.name); } catch (_) { info.name = "Error"; }
        try { info.message = StringCtor(e.message); } catch (_) {}
        try { const stack = e.stack; info.stack = typeof stack === "string" ? stack : ""; } catch (_) {}
      } else {
        info.name = "Uncaught";
        info.message = __sbx_formatArgs([e]);
      }
    } catch (_) {
      info.name = "Uncaught";
      info.message = "[unformattable thrown value]";
    }
    // Written by hand, not by JSON.stringify: a step can break that one's
    // internals (an inherited index setter, say), and a failure must still
    // reach the host as it happened.
    // The position comes from the stack (the host's RewriteStack).
    return '{"name":' + __sbx_quote(info.name) + ',"message":' + __sbx_quote(info.message) +
      ',"stack":' + __sbx_quote(info.stack) + "}";
  }

  // __sbx_quote returns s as a JSON string, at most MAX_FORMAT characters
  // of it, without touching any object the step can reach.
  const HEX = "0123456789abcdef";
  function __sbx_quote(s) {
    s = typeof s === "string" ? s : "";
    let out = '"';
    const n = s.length < MAX_FORMAT ? s.length : MAX_FORMAT;
    for (let i = 0; i < n; i++) {
      const c = ReflectApply(StringCharCodeAt, s, [i]);
      if (c === 34) out += '\\"';
      else if (c === 92) out += "\\\\";
      else if (c < 32 || (c >= 0xd800 && c < 0xe000)) out += "\\u" + HEX[(c >> 12) & 15] + HEX[(c >> 8) & 15] + HEX[(c >> 4) & 15] + HEX[c & 15];
      else out += s[i];
    }
    return out + '"';
  }

  function __sbx_finish(value) {
    let text;
    try {
      text = value === undefined ? "null" : __sbx_json(value, "the result");
    } catch (e) {
      host("done", false, __sbx_failure(e));
      return;
    }
    host("done", true, text);
  }

  function __sbx_fail(e) {
    host("done", false, __sbx_failure(e));
  }

  // The host passes a JSON value either built (the value itself) or as
  // its text, for JSON.parse.
  function __sbx_start(code, input, built) {
    let fn;
    try {
      fn = new AsyncFunction(code);
    } catch (e) {
      // The host compiled the same text before (compile only, nothing
      // ran), so a syntax error was reported then. What is thrown here
      // comes from code that closed the function's braces itself and ran
      // at construction: a runtime error, whatever its name.
      host("done", false, __sbx_failure(e));
      return;
    }
    try {
      if (!built) input = JSONparse(input);
    } catch (e) {
      host("done", false, __sbx_failure(e));
      return;
    }
    ObjectDefineProperty(global, "input", { __proto__: null, value: input, writable: true, configurable: true, enumerable: false });
    let p;
    try {
      p = fn();
    } catch (e) {
      __sbx_fail(e);
      return;
    }
    // p is the step's promise, which only the bootstrap holds (unless the
    // code closed the function's braces, when p may be anything, and then
    // fails here).
    ObjectDefineProperty(p, "constructor", NO_SPECIES);
    ReflectApply(PromiseThen, p, [__sbx_finish, __sbx_fail]);
  }

  function __sbx_reply(id, ok, payload, built) {
    const r = mapGet(pending, id);
    if (r === undefined) return;
    mapDelete(pending, id);
    if (ok) {
      let v;
      try {
        v = built ? payload : r[4] === AS_ROWS || r[4] === AS_TABLE ? JSONparse(payload, __sbx_bigints) : JSONparse(payload);
        if (r[2] === KIND_FETCH) v = new loaded.fetch.Response(v); // a fetch started: its part is loaded
        else if (r[4] === AS_UNDEFINED) v = undefined;
        else if (r[4] === AS_DATABASE) v = new modulesAPI.Database(v);
        else if (r[4] === AS_TABLE) v = new modulesAPI.Table(v);
        else if (r[4] === AS_CONNECTION) v = modulesAPI.connection(v);
      } catch (e) {
        r[1](e);
        return;
      }
      r[0](v);
    } else if (r[2] === KIND_FETCH) {
      r[1](new TypeErrorCtor("fetch failed: " + payload));
    } else if (r[2] === KIND_MODULE) {
      // A module call: its Error was made at the call, so that its stack
      // points at the step's line.
      const e = r[3];
      e.message = payload;
      r[1](e);
    } else {
      r[1](new ErrorCtor(payload));
    }
  }

  function __sbx_timer(id) {
    const t = mapGet(timers, id);
    if (t === undefined) return;
    if (t[2] >= 0) {
      host("timer", id, t[2]); // setInterval: the next tick keeps the same id
    } else {
      mapDelete(timers, id);
    }
    try {
      __sbx_call(t[0], undefined, t[1]);
    } catch (e) {
      __sbx_fail(e);
    }
  }

  // __sbx_dispatch is the host's way in. Nothing it can catch leaves it:
  // the host would read the exception (its toString, its properties),
  // which the step may have reached. What leaves it is what no catch
  // stops: an interrupt, or the end of the run.
  return function __sbx_dispatch(kind, a, b, c, d) {
    try {
      switch (kind) {
        case "start": __sbx_start(a, b, c); return;
        case "reply": __sbx_reply(a, b, c, d); return;
        case "timer": __sbx_timer(a); return;
        case "modules": __sbx_modules(a); return;
        case "package": __sbx_package(a, b); return;
      }
    } catch (e) {
      __sbx_fail(e);
    }
  };
})(globalThis);
