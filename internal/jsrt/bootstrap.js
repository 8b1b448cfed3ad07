// Stepbox guest bootstrap. Evaluated once per runtime, before any user code,
// from bytecode compiled by Stepbox itself. It captures the built-ins it relies
// on, removes the raw host entry point from the global object, installs the
// guest API (input, dataProxy, reportStatus, console, timers, fetch) and
// evaluates to the dispatch function the host drives the run with. The module
// objects (duckdb, glpk) and the package table are built here too, but become
// globals only in a run that asks for them.
//
// Every function here is named __sbx_* so that stack traces can drop the
// bootstrap's own frames; user code is compiled by the AsyncFunction
// constructor and its frames are the ones named "<input>".
"use strict";
(function __sbx_boot(global) {
  const host = global.__sbx_host;
  delete global.__sbx_host;
  const readRows = global.__sbx_rows; // (array) -> whether the host read it for the next duckdb.load
  delete global.__sbx_rows;

  const JSONstringify = JSON.stringify;
  const JSONparse = JSON.parse;
  const ObjectKeys = Object.keys;
  const ObjectFreeze = Object.freeze;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ObjectPrototypeToString = Object.prototype.toString;
  const ArrayIsArray = Array.isArray;
  const StringCtor = String;
  const PromiseCtor = Promise;
  const PromiseResolve = Promise.resolve.bind(Promise);
  const PromiseThen = Promise.prototype.then;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const ReflectApply = Reflect.apply;
  const MapCtor = Map;
  const MapGet = Map.prototype.get;
  const MapSet = Map.prototype.set;
  const MapDelete = Map.prototype.delete;
  const MapHas = Map.prototype.has;
  const AsyncFunction = (async function () {}).constructor;

  // The bootstrap never calls a method through .call: a step may replace
  // Function.prototype.call, and would then be handed the bootstrap's maps.
  function mapGet(m, k) { return ReflectApply(MapGet, m, [k]); }
  function mapSet(m, k, v) { ReflectApply(MapSet, m, [k, v]); }
  function mapDelete(m, k) { ReflectApply(MapDelete, m, [k]); }
  function mapHas(m, k) { return ReflectApply(MapHas, m, [k]); }
  function then(p, ok, fail) { return ReflectApply(PromiseThen, p, [ok, fail]); }

  // TypeScript's "using" declarations compile to helpers that look for
  // these well-known symbols, which QuickJS does not define.
  const SymbolCtor = Symbol;
  if (SymbolCtor.dispose === undefined) ObjectDefineProperty(SymbolCtor, "dispose", { value: SymbolCtor.for("Symbol.dispose") });
  if (SymbolCtor.asyncDispose === undefined) ObjectDefineProperty(SymbolCtor, "asyncDispose", { value: SymbolCtor.for("Symbol.asyncDispose") });

  const pending = new MapCtor(); // request id -> [resolve, reject, isFetch, moduleError]
  const timers = new MapCtor(); // timer id -> [fn, args, intervalMs]

  const MAX_FORMAT = 64 * 1024; // characters of one formatted console argument

  function __sbx_call(fn, thisArg, args) {
    return ReflectApply(fn, thisArg, args);
  }

  // __sbx_json turns a guest value into JSON text, copying it exactly once:
  // the host receives a string, never a live object, so a getter cannot
  // change a value after the host checked it.
  function __sbx_json(value, what) {
    let text;
    try {
      text = JSONstringify(value);
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

  function __sbx_format(v, depth, seen) {
    const t = typeof v;
    if (t === "string") return depth === 0 ? v : JSONstringify(v);
    if (t === "number" || t === "boolean" || v === undefined || v === null) return StringCtor(v);
    if (t === "bigint") return StringCtor(v) + "n";
    if (t === "symbol") return v.toString();
    if (t === "function") return "[Function: " + (v.name || "(anonymous)") + "]";
    if (seen.indexOf(v) >= 0) return "[Circular]";
    if (v instanceof ErrorCtor) {
      const stack = typeof v.stack === "string" ? __sbx_userStack(v.stack) : "";
      return StringCtor(v.name) + ": " + StringCtor(v.message) + (stack ? "\n" + stack : "");
    }
    if (depth > 4) return ArrayIsArray(v) ? "[Array]" : "[Object]";
    seen.push(v);
    let out;
    if (ArrayIsArray(v)) {
      const parts = [];
      let size = 0;
      for (let i = 0; i < v.length; i++) {
        if (i >= 100 || size > MAX_FORMAT) { parts.push("... " + (v.length - i) + " more items"); break; }
        const s = __sbx_format(v[i], depth + 1, seen);
        size += s.length;
        parts.push(s);
      }
      out = "[ " + parts.join(", ") + " ]";
      if (parts.length === 0) out = "[]";
    } else {
      const tag = ReflectApply(ObjectPrototypeToString, v, []);
      if (tag === "[object Date]") { seen.pop(); return v.toISOString ? v.toISOString() : StringCtor(v); }
      if (tag === "[object Map]" || tag === "[object Set]") {
        out = tag.slice(8, -1) + "(" + v.size + ") " + __sbx_format(ArrayFrom(v), depth + 1, seen);
      } else {
        const keys = ObjectKeys(v);
        const parts = [];
        let size = 0;
        for (let i = 0; i < keys.length; i++) {
          if (i >= 100 || size > MAX_FORMAT) { parts.push("... " + (keys.length - i) + " more keys"); break; }
          const k = keys[i];
          const s = k + ": " + __sbx_format(v[k], depth + 1, seen);
          size += s.length;
          parts.push(s);
        }
        out = parts.length === 0 ? "{}" : "{ " + parts.join(", ") + " }";
      }
    }
    seen.pop();
    return out;
  }
  const ArrayFrom = Array.from;

  // __sbx_userStack rewrites a stack trace as the host's RewriteStack does:
  // the bootstrap's frames dropped, the step's named step.js with the
  // user's line numbers (the AsyncFunction header is two lines).
  const StringSplit = String.prototype.split;
  const StringReplace = String.prototype.replace;
  const StringIncludes = String.prototype.includes;
  const ArrayJoin = Array.prototype.join;
  const ArrayPush = Array.prototype.push;
  const userLoc = /<input>:(\d+)/g;
  function __sbx_userStack(stack) {
    const out = [];
    const lines = ReflectApply(StringSplit, stack, ["\n"]);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (line === "" || ReflectApply(StringIncludes, line, ["<eval>"])) continue;
      ReflectApply(ArrayPush, out, [ReflectApply(StringReplace, line, [userLoc, function __sbx_loc(_, n) { return "step.js:" + (n - 2); }])]);
    }
    return ReflectApply(ArrayJoin, out, ["\n"]);
  }

  function __sbx_formatArgs(args) {
    const parts = [];
    for (let i = 0; i < args.length; i++) {
      let s;
      try {
        s = __sbx_format(args[i], 0, []);
      } catch (e) {
        s = "[unformattable value]";
      }
      if (s.length > MAX_FORMAT) s = s.slice(0, MAX_FORMAT) + "...";
      parts.push(s);
    }
    return parts.join(" ");
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
      return PromiseCtor.reject(new TypeErrorCtor("dataProxy.request: method must be a string"));
    }
    let text;
    try {
      text = params === undefined ? "null" : __sbx_json(params, "dataProxy.request params");
    } catch (e) {
      return PromiseCtor.reject(e);
    }
    // The Error a refused request rejects with is made when the refusal
    // arrives: capturing a stack per request would cost a tenth of the
    // round trip.
    const id = host("request", method, text);
    return new PromiseCtor(function __sbx_pending(resolve, reject) {
      mapSet(pending, id, [resolve, reject, false]);
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

  // ---- fetch: relayed to the host's FetchProxy ----------------------------

  const Uint8ArrayCtor = Uint8Array;
  const ArrayBufferCtor = ArrayBuffer;
  const ArrayBufferIsView = ArrayBuffer.isView;
  const StringFromCharCode = String.fromCharCode;
  const StringToLowerCase = String.prototype.toLowerCase;
  const StringCharCodeAt = String.prototype.charCodeAt;
  const ObjectEntries = Object.entries;
  const SymbolIterator = Symbol.iterator;
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

  function __sbx_lower(s) { return ReflectApply(StringToLowerCase, StringCtor(s), []); }

  function __sbx_b64encode(bytes) {
    let out = "";
    for (let i = 0; i < bytes.length; i += 3) {
      const n = (bytes[i] << 16) | ((bytes[i + 1] || 0) << 8) | (bytes[i + 2] || 0);
      out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63] +
        (i + 1 < bytes.length ? B64[(n >> 6) & 63] : "=") + (i + 2 < bytes.length ? B64[n & 63] : "=");
    }
    return out;
  }
  function __sbx_b64decode(s) {
    const out = [];
    let buf = 0, bits = 0;
    for (let i = 0; i < s.length; i++) {
      const c = B64.indexOf(s[i]);
      if (c < 0) continue;
      buf = (buf << 6) | c; bits += 6;
      if (bits >= 8) { bits -= 8; out.push((buf >> bits) & 255); }
    }
    return new Uint8ArrayCtor(out);
  }
  function __sbx_utf8encode(str) {
    const out = [];
    for (let i = 0; i < str.length; i++) {
      let c = ReflectApply(StringCharCodeAt, str, [i]);
      if (c >= 0xd800 && c < 0xdc00 && i + 1 < str.length) {
        const d = ReflectApply(StringCharCodeAt, str, [i + 1]);
        if (d >= 0xdc00 && d < 0xe000) { c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00); i++; }
      }
      if (c < 0x80) out.push(c);
      else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
      else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
      else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
    return new Uint8ArrayCtor(out);
  }
  function __sbx_utf8decode(b) {
    let out = "";
    for (let i = 0; i < b.length;) {
      const c = b[i];
      let cp = 0xfffd, n = 1;
      if (c < 0x80) { cp = c; }
      else if (c >= 0xc2 && c < 0xe0 && (b[i + 1] & 0xc0) === 0x80) { cp = ((c & 31) << 6) | (b[i + 1] & 63); n = 2; }
      else if (c >= 0xe0 && c < 0xf0 && (b[i + 1] & 0xc0) === 0x80 && (b[i + 2] & 0xc0) === 0x80) { cp = ((c & 15) << 12) | ((b[i + 1] & 63) << 6) | (b[i + 2] & 63); n = 3; }
      else if (c >= 0xf0 && c < 0xf5 && (b[i + 1] & 0xc0) === 0x80 && (b[i + 2] & 0xc0) === 0x80 && (b[i + 3] & 0xc0) === 0x80) { cp = ((c & 7) << 18) | ((b[i + 1] & 63) << 12) | ((b[i + 2] & 63) << 6) | (b[i + 3] & 63); n = 4; }
      if (cp >= 0x10000) { cp -= 0x10000; out += StringFromCharCode(0xd800 + (cp >> 10), 0xdc00 + (cp & 1023)); }
      else out += StringFromCharCode(cp);
      i += n;
    }
    return out;
  }

  class Headers {
    #list = []; // [lower-case name, value]
    constructor(init) {
      if (init === undefined || init === null) return;
      if (init instanceof Headers) { for (const [k, v] of init) this.append(k, v); return; }
      if (typeof init[SymbolIterator] === "function") { for (const pair of init) this.append(pair[0], pair[1]); return; }
      for (const [k, v] of ObjectEntries(init)) this.append(k, v);
    }
    append(name, value) { this.#list.push([__sbx_lower(name), StringCtor(value)]); }
    set(name, value) { this.delete(name); this.append(name, value); }
    delete(name) { const n = __sbx_lower(name); this.#list = this.#list.filter(function __sbx_keep(p) { return p[0] !== n; }); }
    get(name) {
      const n = __sbx_lower(name);
      const vs = [];
      for (const p of this.#list) if (p[0] === n) vs.push(p[1]);
      return vs.length === 0 ? null : vs.join(", ");
    }
    has(name) { return this.get(name) !== null; }
    forEach(fn, thisArg) { for (const [k, v] of this) ReflectApply(fn, thisArg, [v, k, this]); }
    *entries() {
      const names = [];
      for (const p of this.#list) if (names.indexOf(p[0]) < 0) names.push(p[0]);
      names.sort();
      for (const n of names) yield [n, this.get(n)];
    }
    *keys() { for (const [k] of this.entries()) yield k; }
    *values() { for (const [, v] of this.entries()) yield v; }
    [SymbolIterator]() { return this.entries(); }
    __sbx_pairs() { return this.#list.map(function __sbx_pair(p) { return [p[0], p[1]]; }); }
  }

  class Response {
    #body; #encoding; #used = false;
    constructor(r) {
      this.status = r.status;
      this.statusText = r.statusText;
      this.ok = r.status >= 200 && r.status < 300;
      this.headers = new Headers(r.headers);
      this.url = r.url;
      this.redirected = !!r.redirected;
      this.type = "basic";
      this.#body = r.body;
      this.#encoding = r.bodyEncoding || "";
    }
    get bodyUsed() { return this.#used; }
    #take() {
      if (this.#used) throw new TypeErrorCtor("Body is unusable: body has already been read");
      this.#used = true;
    }
    async text() {
      this.#take();
      return this.#encoding === "base64" ? __sbx_utf8decode(__sbx_b64decode(this.#body)) : this.#body;
    }
    async json() { return JSONparse(await this.text()); }
    async arrayBuffer() {
      this.#take();
      const b = this.#encoding === "base64" ? __sbx_b64decode(this.#body) : __sbx_utf8encode(this.#body);
      return b.buffer;
    }
  }

  const AbortSignalObj = {
    timeout: function timeout(ms) { return ObjectFreeze({ aborted: false, __sbx_timeoutMs: +ms }); },
  };

  function __sbx_fetchRequest(input, init) {
    if (init === undefined || init === null) init = {};
    const url = typeof input === "string" ? input : input && typeof input.url === "string" ? input.url : StringCtor(input);
    const req = { url: url, method: init.method === undefined ? "GET" : StringCtor(init.method) };
    if (init.headers !== undefined && init.headers !== null) {
      req.headers = new Headers(init.headers).__sbx_pairs();
    }
    const body = init.body;
    if (body !== undefined && body !== null) {
      if (typeof body === "string") {
        req.body = body;
      } else if (body instanceof ArrayBufferCtor) {
        req.body = __sbx_b64encode(new Uint8ArrayCtor(body)); req.bodyEncoding = "base64";
      } else if (ArrayBufferIsView(body)) {
        req.body = __sbx_b64encode(new Uint8ArrayCtor(body.buffer, body.byteOffset, body.byteLength)); req.bodyEncoding = "base64";
      } else if (typeof body === "object" && typeof body.toString === "function" && body.toString !== Object.prototype.toString) {
        req.body = StringCtor(body); // a URLSearchParams-like form
      } else {
        throw new TypeErrorCtor("fetch: body must be a string, an ArrayBuffer or a typed array (use JSON.stringify for JSON)");
      }
    }
    if (init.timeoutMs !== undefined) req.timeoutMs = +init.timeoutMs | 0;
    if (init.signal && init.signal.__sbx_timeoutMs !== undefined) req.timeoutMs = init.signal.__sbx_timeoutMs | 0;
    if (init.redirect !== undefined) req.redirect = StringCtor(init.redirect);
    return JSONstringify(req);
  }

  function __sbx_fetch(input, init) {
    let text;
    try {
      text = __sbx_fetchRequest(input, init);
    } catch (e) {
      return PromiseCtor.reject(e);
    }
    const id = host("fetch", text);
    return new PromiseCtor(function __sbx_pendingFetch(resolve, reject) {
      mapSet(pending, id, [resolve, reject, true]);
    });
  }

  const guest = {
    input: undefined,
    dataProxy: ObjectFreeze({ request: __sbx_request }),
    fetch: function fetch(input, init) { return __sbx_fetch(input, init); },
    Headers: Headers,
    Response: Response,
    AbortSignal: AbortSignalObj,
    reportStatus: __sbx_reportStatus,
    console: consoleObj,
    setTimeout: function setTimeout(fn, ms, ...args) { return __sbx_setTimer(fn, ms, args, false); },
    setInterval: function setInterval(fn, ms, ...args) { return __sbx_setTimer(fn, ms, args, true); },
    clearTimeout: function clearTimeout(id) { __sbx_clearTimer(id); },
    clearInterval: function clearInterval(id) { __sbx_clearTimer(id); },
    queueMicrotask: function queueMicrotask(fn) {
      if (typeof fn !== "function") throw new TypeErrorCtor("queueMicrotask: the callback must be a function");
      then(PromiseResolve(), function __sbx_microtask() { fn(); });
    },
  };
  for (const k of ObjectKeys(guest)) {
    ObjectDefineProperty(global, k, { value: guest[k], writable: true, configurable: true, enumerable: false });
  }

  // ---- modules: duckdb, glpk (native, in the worker) and npm packages -----

  // __sbx_module starts a module operation and returns its promise. The
  // Error a failure rejects with is made now, so that its stack shows the
  // step's line.
  function __sbx_module(op, a, b, c) {
    const err = new ErrorCtor("");
    const id = host(op, a, b, c);
    return new PromiseCtor(function __sbx_pendingModule(resolve, reject) {
      mapSet(pending, id, [resolve, reject, false, err]);
    });
  }

  function __sbx_str(v, what) {
    if (typeof v !== "string") throw new TypeErrorCtor(what + " must be a string");
    return v;
  }

  // Query parameters: JSON values; a BigInt travels as its decimal text,
  // which DuckDB casts to the placeholder's type.
  function __sbx_params(params) {
    try {
      return JSONstringify(params, function __sbx_bigint(k, v) { return typeof v === "bigint" ? StringCtor(v) : v; });
    } catch (e) {
      let why;
      try { why = StringCtor(e && e.message); } catch (_) { why = "unknown"; }
      if (why === "out of memory") throw e;
      throw new TypeErrorCtor("db.query parameters are not JSON-serializable: " + why);
    }
  }

  class Database {
    #h;
    constructor(h) { this.#h = h; }
    async load(table, rows) {
      __sbx_str(table, "db.load: the table name");
      // JSON text (from fetch's text(), say) goes as it is, unparsed. An
      // array of plain objects the host reads without running anything of
      // the step's (true); any other array (getters, Dates, Proxies, …)
      // goes as JSON.stringify writes it, which the host reads the same.
      if (typeof rows !== "string" && !ArrayIsArray(rows)) throw new TypeErrorCtor("db.load: rows must be an array of objects, or its JSON text");
      await __sbx_module("duckdb.load", this.#h, table, typeof rows === "string" ? rows : readRows(rows) || __sbx_json(rows, "db.load rows"));
    }
    async query(sql, ...params) {
      __sbx_str(sql, "db.query: the SQL");
      return __sbx_module("duckdb.query", this.#h, sql, params.length === 0 ? "" : __sbx_params(params));
    }
    async exec(sql) {
      __sbx_str(sql, "db.exec: the SQL");
      await __sbx_module("duckdb.exec", this.#h, sql);
    }
    async close() {
      await __sbx_module("duckdb.close", this.#h);
    }
    [SymbolCtor.asyncDispose]() { return this.close(); }
  }

  const duckdbObj = ObjectFreeze({
    open: async function open() {
      const h = await __sbx_module("duckdb.open");
      return new Database(h);
    },
  });

  // glpk.js's constants (GLPK's own numbers) and solve.
  const glpkObj = ObjectFreeze({
    GLP_MIN: 1, GLP_MAX: 2,
    GLP_FR: 1, GLP_LO: 2, GLP_UP: 3, GLP_DB: 4, GLP_FX: 5,
    GLP_MSG_OFF: 0, GLP_MSG_ERR: 1, GLP_MSG_ON: 2, GLP_MSG_ALL: 3, GLP_MSG_DBG: 4,
    GLP_UNDEF: 1, GLP_FEAS: 2, GLP_INFEAS: 3, GLP_NOFEAS: 4, GLP_OPT: 5, GLP_UNBND: 6,
    solve: async function solve(model, options) {
      if (model === null || typeof model !== "object") throw new TypeErrorCtor("glpk.solve: the model must be an object");
      const m = __sbx_json(model, "glpk.solve model");
      const o = options === undefined ? "" : __sbx_json(options, "glpk.solve options");
      return __sbx_module("glpk.solve", m, o);
    },
  });

  function __sbx_define(name, value) {
    ObjectDefineProperty(global, name, { value: value, writable: true, configurable: true, enumerable: false });
  }

  // __sbx_modules makes the run's built-in modules globals.
  function __sbx_modules(list) {
    const names = JSONparse(list);
    for (let i = 0; i < names.length; i++) {
      if (names[i] === "duckdb") __sbx_define("duckdb", duckdbObj);
      else if (names[i] === "glpk") __sbx_define("glpk", glpkObj);
    }
  }

  // The package table: the step's rewritten imports call __sbx_require
  // (declarations) and __sbx_import (import() calls).
  let packages;
  function __sbx_package(name, ns) {
    if (packages === undefined) {
      packages = new MapCtor();
      __sbx_define("__sbx_require", function __sbx_require(name) {
        const ns = mapGet(packages, name);
        if (ns === undefined) throw new ErrorCtor("package \"" + StringCtor(name) + "\" is not available in this run");
        return ns;
      });
      const req = global.__sbx_require;
      __sbx_define("__sbx_import", function __sbx_import(name) {
        return new PromiseCtor(function __sbx_importing(resolve) { resolve(req(name)); });
      });
    }
    mapSet(packages, name, ns);
  }

  // __sbx_failure describes a thrown value for the host without trusting it:
  // every read is guarded, and a value that is not an Error is formatted.
  function __sbx_failure(e) {
    const info = { name: "", message: "", stack: "", line: 0, column: 0 };
    try {
      if (e instanceof ErrorCtor) {
        try { info.name = StringCtor(e.name); } catch (_) { info.name = "Error"; }
        try { info.message = StringCtor(e.message); } catch (_) {}
        try { info.stack = typeof e.stack === "string" ? e.stack : ""; } catch (_) {}
        try { info.line = e.lineNumber | 0; info.column = e.columnNumber | 0; } catch (_) {}
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
    return '{"name":' + __sbx_quote(info.name) + ',"message":' + __sbx_quote(info.message) +
      ',"stack":' + __sbx_quote(info.stack) + ',"line":' + (info.line | 0) + ',"column":' + (info.column | 0) + "}";
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
    ObjectDefineProperty(global, "input", { value: input, writable: true, configurable: true, enumerable: false });
    let p;
    try {
      p = fn();
    } catch (e) {
      __sbx_fail(e);
      return;
    }
    then(p, __sbx_finish, __sbx_fail);
  }

  function __sbx_reply(id, ok, payload, built) {
    const r = mapGet(pending, id);
    if (r === undefined) return;
    mapDelete(pending, id);
    if (ok) {
      let v;
      try {
        v = built ? payload : JSONparse(payload);
        if (r[2]) v = new Response(v);
      } catch (e) {
        r[1](e);
        return;
      }
      r[0](v);
    } else if (r[2]) {
      r[1](new TypeErrorCtor("fetch failed: " + payload));
    } else if (r[3] !== undefined) {
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

  return function __sbx_dispatch(kind, a, b, c, d) {
    switch (kind) {
      case "start": return __sbx_start(a, b, c);
      case "reply": return __sbx_reply(a, b, c, d);
      case "timer": return __sbx_timer(a);
      case "modules": return __sbx_modules(a);
      case "package": return __sbx_package(a, b);
    }
  };
})(globalThis);
