// Stepbox guest bootstrap, a part: the web platform's core globals
// (WinterTC's minimum common API) but the text ones (text.js):
// DOMException, Event, EventTarget, AbortController, AbortSignal,
// performance, Blob, File and FormData (structuredClone is clone.js's). A VM reads it only
// when a step first reads one of these globals (bootstrap.js, __sbx_lazy),
// from bytecode compiled by Stepbox itself. crypto.js and fetch.js use its
// helpers (the __sbx_* members of what it returns, which are no globals).
//
// These are library code the step uses, not the bridge: they may run after
// the step replaced built-ins, and then see its replacements, as any
// library would. What they must not do is let a step break another global
// or the bridge: they keep nothing of the bridge's but what bridge hands
// them, give none of it away, and the host calls (performance.now) go
// through bridge.host.
"use strict";
(function __sbx_webPart(bridge) {
  const { host, ReflectApply, ObjectFreeze, ObjectSetPrototypeOf, StringCtor, Uint8ArrayCtor, ArrayBufferIsView, ArrayBufferByteLength, TypedArrayBuffer,
    TypedArrayByteOffset, TypedArrayByteLength, DataViewBuffer, DataViewByteOffset, DataViewByteLength,
    TypeErrorCtor, ErrorCtor, __sbx_resolved, __sbx_list, setTimer } = bridge;
  const ObjectPrototypeToString = Object.prototype.toString;
  const SymbolToStringTag = Symbol.toStringTag;
  const SymbolIterator = Symbol.iterator;

  function __sbx_setTag(C, name) {
    Object.defineProperty(C.prototype, SymbolToStringTag, { value: name, configurable: true });
  }

  // ---- DOMException -------------------------------------------------------

  const CODES = {
    __proto__: null, IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4,
    InvalidCharacterError: 5, NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9,
    InvalidStateError: 11, SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14,
    InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19,
    AbortError: 20, URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23,
    InvalidNodeTypeError: 24, DataCloneError: 25,
  };
  class DOMException extends ErrorCtor {
    #name; #message;
    constructor(message = "", options = "Error") {
      super();
      this.#message = StringCtor(message);
      let name = options;
      if (options !== null && typeof options === "object") {
        name = options.name === undefined ? "Error" : options.name;
        if ("cause" in options) Object.defineProperty(this, "cause", { value: options.cause, writable: true, configurable: true });
      }
      this.#name = StringCtor(name);
      // The stack the Error constructor captured names the class; a
      // DOMException prints as its name.
      const stack = this.stack;
      if (typeof stack === "string") {
        const nl = stack.indexOf("\n");
        Object.defineProperty(this, "stack", { value: this.#name + ": " + this.#message + (nl < 0 ? "" : stack.slice(nl)), writable: true, configurable: true });
      }
    }
    get name() { return this.#name; }
    get message() { return this.#message; }
    get code() { return CODES[this.#name] || 0; }
  }
  __sbx_setTag(DOMException, "DOMException");
  {
    const names = Object.keys(CODES);
    for (let i = 0; i < names.length; i++) {
      const constName = names[i].replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase().replace(/_ERROR$/, "_ERR");
      const d = { value: CODES[names[i]], enumerable: true };
      Object.defineProperty(DOMException, constName, d);
      Object.defineProperty(DOMException.prototype, constName, d);
    }
  }
  function __sbx_dom(message, name) { return new DOMException(message, name); }

  // ---- bytes, base64, TextEncoder, TextDecoder: text.js -------------------

  // text.js's helpers, loaded with the first Blob or FormData value that
  // needs them: an Event, an AbortController or performance do not.
  function __sbx_view(v) { return bridge.part("text").__sbx_view(v); }
  function __sbx_bufferSource(v, what) { return bridge.part("text").__sbx_bufferSource(v, what); }
  function __sbx_binary(b) { return bridge.part("text").__sbx_binary(b); }
  function __sbx_fromBinary(s) { return bridge.part("text").__sbx_fromBinary(s); }
  function __sbx_utf8(s) { return bridge.part("text").__sbx_utf8(s); }
  function __sbx_utf8decode(b) { return bridge.part("text").__sbx_utf8decode(b); }

  // ---- Event, EventTarget -----------------------------------------------

  let eventSetTarget;
  class Event {
    #type; #bubbles; #cancelable; #composed; #canceled = false; #stopped = false;
    #target = null; #current = null; #timeStamp; #dispatching = false;
    constructor(type, init = undefined) {
      if (arguments.length === 0) throw new TypeErrorCtor("Event: the type argument is required");
      this.#type = StringCtor(type);
      this.#bubbles = !!(init && init.bubbles);
      this.#cancelable = !!(init && init.cancelable);
      this.#composed = !!(init && init.composed);
      this.#timeStamp = __sbx_now();
    }
    get type() { return this.#type; }
    get bubbles() { return this.#bubbles; }
    get cancelable() { return this.#cancelable; }
    get composed() { return this.#composed; }
    get defaultPrevented() { return this.#canceled; }
    get target() { return this.#target; }
    get srcElement() { return this.#target; }
    get currentTarget() { return this.#current; }
    get eventPhase() { return this.#current === null ? 0 : 2; }
    get timeStamp() { return this.#timeStamp; }
    get isTrusted() { return false; }
    get returnValue() { return !this.#canceled; }
    get cancelBubble() { return this.#stopped; }
    set cancelBubble(v) { if (v) this.#stopped = true; }
    composedPath() { return this.#current === null ? [] : [this.#current]; }
    preventDefault() { if (this.#cancelable) this.#canceled = true; }
    stopPropagation() { this.#stopped = true; }
    stopImmediatePropagation() { this.#stopped = true; }
    static {
      eventSetTarget = function __sbx_eventState(e, target, current, dispatching) {
        if (dispatching === undefined) return [e.#dispatching, e.#stopped];
        e.#target = target; e.#current = current; e.#dispatching = dispatching;
        if (!dispatching) e.#stopped = false;
        return undefined;
      };
    }
  }
  Event.NONE = 0; Event.CAPTURING_PHASE = 1; Event.AT_TARGET = 2; Event.BUBBLING_PHASE = 3;
  __sbx_setTag(Event, "Event");

  class EventTarget {
    #listeners = new Map(); // type -> [{ fn, capture, once, removed }]
    addEventListener(type, listener, options = undefined) {
      if (listener === null || listener === undefined) return;
      type = StringCtor(type);
      const capture = typeof options === "boolean" ? options : !!(options && options.capture);
      const once = !!(options && typeof options === "object" && options.once);
      const signal = options && typeof options === "object" ? options.signal : undefined;
      if (signal !== undefined && signal.aborted) return;
      let list = this.#listeners.get(type);
      if (list === undefined) this.#listeners.set(type, list = []);
      for (let i = 0; i < list.length; i++) if (list[i].fn === listener && list[i].capture === capture) return;
      const entry = { fn: listener, capture, once, removed: false };
      list.push(entry);
      if (signal !== undefined) signal.addEventListener("abort", () => this.removeEventListener(type, listener, { capture }));
    }
    removeEventListener(type, listener, options = undefined) {
      const list = this.#listeners.get(StringCtor(type));
      if (list === undefined) return;
      const capture = typeof options === "boolean" ? options : !!(options && options.capture);
      for (let i = 0; i < list.length; i++) {
        if (list[i].fn === listener && list[i].capture === capture) { list[i].removed = true; list.splice(i, 1); return; }
      }
    }
    dispatchEvent(event) {
      if (!(event instanceof Event)) throw new TypeErrorCtor("EventTarget.dispatchEvent: the argument must be an Event");
      if (eventSetTarget(event)[0]) throw __sbx_dom("The event is already being dispatched.", "InvalidStateError");
      eventSetTarget(event, this, this, true);
      try {
        const list = (this.#listeners.get(event.type) || []).slice();
        for (let i = 0; i < list.length; i++) {
          const l = list[i];
          if (l.removed) continue;
          if (l.once) this.removeEventListener(event.type, l.fn, { capture: l.capture });
          __sbx_invoke(l.fn, this, event);
          if (eventSetTarget(event)[1]) break;
        }
      } finally {
        eventSetTarget(event, event.target, null, false);
      }
      return !event.defaultPrevented;
    }
  }
  __sbx_setTag(EventTarget, "EventTarget");
  // A listener that throws does not stop the dispatch: its exception is
  // reported (the console, as Node's process does on an uncaught one) and
  // the other listeners run.
  function __sbx_invoke(fn, target, event) {
    try {
      if (typeof fn === "function") ReflectApply(fn, target, [event]);
      else if (fn !== null && typeof fn === "object" && typeof fn.handleEvent === "function") fn.handleEvent(event);
    } catch (e) {
      queueMicrotask(() => { throw e; });
    }
  }

  // ---- AbortController, AbortSignal ----------------------------------------

  let signalAbort, signalInfo, onAbort;
  class AbortSignal extends EventTarget {
    #aborted = false; #reason = undefined; #timeoutMs = undefined; #onabort = null; #dependents = null;
    #hooks = null; // the bridge's functions to call on abort (fetch's), a list of its own
    constructor(key) {
      if (key !== NEW_SIGNAL) throw new TypeErrorCtor("Illegal constructor");
      super();
    }
    get aborted() { return this.#aborted; }
    get reason() { return this.#reason; }
    get onabort() { return this.#onabort; }
    set onabort(fn) {
      if (this.#onabort !== null) this.removeEventListener("abort", this.#onabort);
      this.#onabort = typeof fn === "function" ? fn : null;
      if (this.#onabort !== null) this.addEventListener("abort", this.#onabort);
    }
    throwIfAborted() { if (this.#aborted) throw this.#reason; }
    static abort(reason = undefined) {
      const s = new AbortSignal(NEW_SIGNAL);
      s.#aborted = true;
      s.#reason = reason === undefined ? __sbx_dom("This operation was aborted", "AbortError") : reason;
      return s;
    }
    static timeout(ms) {
      ms = +ms;
      if (!(ms >= 0) || ms > 9007199254740991) throw new TypeErrorCtor("AbortSignal.timeout: the delay must be a non-negative number");
      const s = new AbortSignal(NEW_SIGNAL);
      s.#timeoutMs = ms;
      setTimer(() => signalAbort(s, __sbx_dom("The operation was aborted due to timeout", "TimeoutError")), ms, [], false);
      return s;
    }
    static any(signals) {
      const s = new AbortSignal(NEW_SIGNAL);
      const list = [];
      for (const x of signals) {
        if (!(x instanceof AbortSignal)) throw new TypeErrorCtor("AbortSignal.any: every item must be an AbortSignal");
        list.push(x);
      }
      for (let i = 0; i < list.length; i++) {
        if (list[i].#aborted) { s.#aborted = true; s.#reason = list[i].#reason; return s; }
      }
      for (let i = 0; i < list.length; i++) {
        if (list[i].#dependents === null) list[i].#dependents = [];
        list[i].#dependents.push(s);
        if (list[i].#timeoutMs !== undefined && (s.#timeoutMs === undefined || list[i].#timeoutMs < s.#timeoutMs)) s.#timeoutMs = list[i].#timeoutMs;
      }
      return s;
    }
    static {
      signalAbort = function __sbx_signalAbort(s, reason) {
        if (s.#aborted) return;
        s.#aborted = true;
        s.#reason = reason;
        const hooks = s.#hooks;
        s.#hooks = null;
        if (hooks !== null) for (let i = 0; i < hooks.length; i++) ReflectApply(hooks[i], undefined, [reason]);
        s.dispatchEvent(new Event("abort"));
        const deps = s.#dependents;
        s.#dependents = null;
        if (deps !== null) for (let i = 0; i < deps.length; i++) __sbx_signalAbort(deps[i], reason);
      };
      // signalInfo tells fetch a signal's state: undefined for what is not
      // an AbortSignal.
      signalInfo = function __sbx_signalInfo(s) {
        if (s === null || typeof s !== "object" || !(#aborted in s)) return undefined;
        return { __proto__: null, aborted: s.#aborted, reason: s.#reason, timeoutMs: s.#timeoutMs };
      };
      // onAbort has fn called with the reason when s aborts, before its
      // listeners, touching nothing the step can reach.
      onAbort = function __sbx_onAbort(s, fn) {
        if (s.#hooks === null) s.#hooks = __sbx_list();
        s.#hooks[s.#hooks.length] = fn;
      };
    }
  }
  const NEW_SIGNAL = ObjectFreeze({ __proto__: null });
  __sbx_setTag(AbortSignal, "AbortSignal");

  class AbortController {
    #signal = new AbortSignal(NEW_SIGNAL);
    get signal() { return this.#signal; }
    abort(reason = undefined) {
      signalAbort(this.#signal, reason === undefined ? __sbx_dom("This operation was aborted", "AbortError") : reason);
    }
  }
  __sbx_setTag(AbortController, "AbortController");

  // ---- performance -----------------------------------------------------------

  function __sbx_now() { return host("web", "now"); }
  const timeOrigin = Date.now() - __sbx_now();
  const performance = ObjectFreeze({
    __proto__: null,
    now: function now() { return __sbx_now(); },
    timeOrigin: timeOrigin,
    toJSON: function toJSON() { return { timeOrigin: timeOrigin }; },
    [SymbolToStringTag]: "Performance",
  });

  // ---- Blob, File -----------------------------------------------------------

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
          else if ((b = __sbx_view(p)) === undefined) {
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

  // ---- FormData -------------------------------------------------------------

  let formEntries;
  function __sbx_formValue(value, filename, n) {
    if (value instanceof Blob) {
      if (value instanceof File && filename === undefined) return value;
      return new File([value], filename === undefined ? "blob" : StringCtor(filename), { type: value.type });
    }
    if (n > 2) throw new TypeErrorCtor("FormData: a filename is only for a Blob value");
    return StringCtor(value);
  }
  class FormData {
    #entries = [];
    constructor(form = undefined) {
      if (form !== undefined) throw new TypeErrorCtor("FormData: there is no HTML form in a step");
    }
    append(name, value, filename = undefined) { this.#entries.push([StringCtor(name), __sbx_formValue(value, filename, arguments.length)]); }
    set(name, value, filename = undefined) {
      name = StringCtor(name);
      const v = __sbx_formValue(value, filename, arguments.length);
      const i = this.#entries.findIndex((e) => e[0] === name);
      if (i < 0) { this.#entries.push([name, v]); return; }
      this.#entries[i] = [name, v];
      this.#entries = this.#entries.filter((e, j) => j <= i || e[0] !== name);
    }
    get(name) { name = StringCtor(name); const e = this.#entries.find((e) => e[0] === name); return e === undefined ? null : e[1]; }
    getAll(name) { name = StringCtor(name); return this.#entries.filter((e) => e[0] === name).map((e) => e[1]); }
    has(name) { name = StringCtor(name); return this.#entries.some((e) => e[0] === name); }
    delete(name) { name = StringCtor(name); this.#entries = this.#entries.filter((e) => e[0] !== name); }
    forEach(fn, thisArg = undefined) {
      for (let i = 0; i < this.#entries.length; i++) ReflectApply(fn, thisArg, [this.#entries[i][1], this.#entries[i][0], this]);
    }
    *entries() { for (let i = 0; i < this.#entries.length; i++) yield [this.#entries[i][0], this.#entries[i][1]]; }
    *keys() { for (let i = 0; i < this.#entries.length; i++) yield this.#entries[i][0]; }
    *values() { for (let i = 0; i < this.#entries.length; i++) yield this.#entries[i][1]; }
    [SymbolIterator]() { return this.entries(); }
    static {
      formEntries = function __sbx_formEntries(f) { return f !== null && typeof f === "object" && #entries in f ? f.#entries.slice() : undefined; };
    }
  }
  __sbx_setTag(FormData, "FormData");

  return ObjectFreeze({
    __proto__: null,
    DOMException, Event, EventTarget,
    AbortController, AbortSignal, performance, Blob, File, FormData,
    // for the other parts, not globals
    __sbx_dom, __sbx_view, __sbx_bufferSource, __sbx_binary, __sbx_fromBinary, __sbx_utf8,
    __sbx_utf8decode, __sbx_blobBytes: blobBytes, __sbx_formEntries: formEntries,
    __sbx_signalInfo: signalInfo, __sbx_onAbort: onAbort,
  });
})
