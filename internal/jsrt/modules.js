// Stepbox guest bootstrap, part three: the built-in modules' objects
// (duckdb, glpk), made for a run that is granted a module (bootstrap.js,
// __sbx_modules; most runs are not), from bytecode of their own like the
// fetch API's (fetch.js, whose header says what a part may do).
"use strict";
(function __sbx_modulesPart(bridge) {
  const {
    host, pending, mapSet, KIND_MODULE, AS_IS, AS_UNDEFINED, AS_DATABASE, AS_ROWS,
    readRows, __sbx_json, __sbx_rejected, ArrayIsArray, ErrorCtor,
    JSONstringify, ObjectFreeze, ObjectSetPrototypeOf, PromiseCtor, StringCtor,
    SymbolCtor, TypeErrorCtor,
  } = bridge;

  // __sbx_module starts a module operation and returns its promise, which
  // resolves as shape says. The Error a failure rejects with is made now,
  // so that its stack shows the step's line.
  function __sbx_module(op, shape, a, b, c) {
    const err = new ErrorCtor("");
    const id = host(op, a, b, c);
    return new PromiseCtor(function __sbx_pendingModule(resolve, reject) {
      mapSet(pending, id, [resolve, reject, KIND_MODULE, err, shape]);
    });
  }

  function __sbx_str(v, what) {
    if (typeof v !== "string") throw new TypeErrorCtor(what + " must be a string");
    return v;
  }

  // Query parameters: JSON values; a BigInt travels as its decimal text,
  // which DuckDB casts to the placeholder's type.
  function __sbx_params(params) {
    ObjectSetPrototypeOf(params, null); // the bridge's own array (rest parameters)
    try {
      return JSONstringify(params, function __sbx_bigint(k, v) { return typeof v === "bigint" ? StringCtor(v) : v; });
    } catch (e) {
      let why;
      try { why = StringCtor(e && e.message); } catch (_) { why = "unknown"; }
      if (why === "out of memory") throw e;
      throw new TypeErrorCtor("db.query parameters are not JSON-serializable: " + why);
    }
  }

  let Database, duckdbObj, glpkObj;
  {
    // Module methods return their promises rather than being async
    // functions: an argument they refuse rejects the promise, as it would.
    Database = class Database {
      #h;
      constructor(h) { this.#h = h; }
      load(table, rows) {
        try {
          __sbx_str(table, "db.load: the table name");
          // JSON text (from fetch's text(), say) goes as it is, unparsed. An
          // array of plain objects the host reads without running anything of
          // the step's (true); any other array (getters, Dates, Proxies, …)
          // goes as JSON.stringify writes it, which the host reads the same.
          if (typeof rows !== "string" && !ArrayIsArray(rows)) throw new TypeErrorCtor("db.load: rows must be an array of objects, or its JSON text");
          return __sbx_module("duckdb.load", AS_UNDEFINED, this.#h, table, typeof rows === "string" ? rows : readRows(rows) || __sbx_json(rows, "db.load rows"));
        } catch (e) {
          return __sbx_rejected(e);
        }
      }
      query(sql, ...params) {
        try {
          __sbx_str(sql, "db.query: the SQL");
          return __sbx_module("duckdb.query", AS_ROWS, this.#h, sql, params.length === 0 ? "" : __sbx_params(params));
        } catch (e) {
          return __sbx_rejected(e);
        }
      }
      exec(sql) {
        try {
          __sbx_str(sql, "db.exec: the SQL");
          return __sbx_module("duckdb.exec", AS_UNDEFINED, this.#h, sql);
        } catch (e) {
          return __sbx_rejected(e);
        }
      }
      #close() {
        try {
          return __sbx_module("duckdb.close", AS_UNDEFINED, this.#h);
        } catch (e) {
          return __sbx_rejected(e);
        }
      }
      close() { return this.#close(); }
      [SymbolCtor.asyncDispose]() { return this.#close(); }
    };

    duckdbObj = ObjectFreeze({
      open: function open() {
        try {
          return __sbx_module("duckdb.open", AS_DATABASE);
        } catch (e) {
          return __sbx_rejected(e);
        }
      },
    });

    // glpk.js's constants (GLPK's own numbers) and solve.
    glpkObj = ObjectFreeze({
      GLP_MIN: 1, GLP_MAX: 2,
      GLP_FR: 1, GLP_LO: 2, GLP_UP: 3, GLP_DB: 4, GLP_FX: 5,
      GLP_MSG_OFF: 0, GLP_MSG_ERR: 1, GLP_MSG_ON: 2, GLP_MSG_ALL: 3, GLP_MSG_DBG: 4,
      GLP_UNDEF: 1, GLP_FEAS: 2, GLP_INFEAS: 3, GLP_NOFEAS: 4, GLP_OPT: 5, GLP_UNBND: 6,
      solve: function solve(model, options) {
        try {
          if (model === null || typeof model !== "object") throw new TypeErrorCtor("glpk.solve: the model must be an object");
          const m = __sbx_json(model, "glpk.solve model");
          const o = options === undefined ? "" : __sbx_json(options, "glpk.solve options");
          return __sbx_module("glpk.solve", AS_IS, m, o);
        } catch (e) {
          return __sbx_rejected(e);
        }
      },
    });
  }

  return ObjectFreeze({ __proto__: null, Database: Database, duckdb: duckdbObj, glpk: glpkObj });
})
