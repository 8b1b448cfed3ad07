// Stepbox guest bootstrap, part three: the built-in modules' objects
// (duckdb, glpk), made for a run that is granted a module (bootstrap.js,
// __sbx_modules; most runs are not), from bytecode of their own like the
// fetch API's (fetch.js, whose header says what a part may do).
"use strict";
(function __sbx_modulesPart(bridge, inner) {
  const {
    host, SymbolIterator, __sbx_rejected, __sbx_resolved, ArrayIsArray, ErrorCtor, ObjectFreeze, StringCtor,
    TypeErrorCtor,
  } = bridge;
  const {
    pending, mapSet, KIND_MODULE, AS_IS, AS_UNDEFINED, AS_DATABASE, AS_ROWS, AS_TABLE, AS_CONNECTION, MapCtor,
    mapGet, ObjectHasOwn, ObjectPrototype, readRows, __sbx_json, ObjectDefineProperty, JSONstringify,
    ObjectSetPrototypeOf, PromiseCtor, SymbolCtor, JSONparse,
  } = inner;
  // The linked GLPK's version ("5.0"), written in by runtime.go, as
  // glpk.js's glpk.version is its own.
  const GLPK_VERSION = __SBX_GLPK_VERSION__;

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

  let Database, Connection, PreparedStatement, Table, duckdbObj, glpkObj;
  {
    // handleOf: (db) -> its handle, for the connections over it; fileOf:
    // a text registered with db.registerFileText; queryOf: a prepared
    // statement's query on its connection.
    let handleOf, fileOf, queryOf;
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
      // DuckDB-WASM's AsyncDuckDB.connect: a connection to this database,
      // whose close leaves the database open.
      connect() { return __sbx_resolved(new Connection(this, false)); }
      // DuckDB-WASM's registerFileText, for insertJSONFromPath: the text
      // stays in the run's memory; nothing is written anywhere.
      registerFileText(name, text) {
        try {
          __sbx_str(name, "db.registerFileText: the name");
          __sbx_str(text, "db.registerFileText: the text");
          mapSet(this.#files, name, text);
          return __sbx_resolved(undefined);
        } catch (e) {
          return __sbx_rejected(e);
        }
      }
      #files = new MapCtor();
      static {
        handleOf = function __sbx_handleOf(db) { return db.#h; };
        fileOf = function __sbx_fileOf(db, name) { return mapGet(db.#files, name); };
      }
    };

    // A query's result as DuckDB-WASM's Arrow table gives it, for the part
    // of its API steps use: numRows, numCols, schema.fields, toArray(),
    // get(i), getChild(name), iteration. A row is an object with the
    // columns as properties and toJSON(), as Arrow's StructRow. Values are
    // converted as db.query's rows (README: a BIGINT is a number within
    // ±(2^53-1), a DATE a string), not as Arrow's.
    const rowProto = { __proto__: ObjectPrototype };
    ObjectDefineProperty(rowProto, "toJSON", {
      __proto__: null,
      // A plain copy of the row's columns.
      value: function toJSON() {
        const o = {};
        for (const k in this) if (ObjectHasOwn(this, k)) defineValue(o, k, this[k]);
        return o;
      },
    });
    ObjectFreeze(rowProto);
    function defineValue(o, k, v) {
      ObjectDefineProperty(o, k, { __proto__: null, value: v, writable: true, enumerable: true, configurable: true });
    }
    Table = class Table {
      #rows;
      #fields;
      #names;
      constructor(t) {
        const cols = t.columns, rows = t.rows;
        const names = [], fields = [];
        for (let j = 0; j < cols.length; j++) {
          defineValue(names, j, cols[j].name);
          defineValue(fields, j, ObjectFreeze({ name: cols[j].name, type: cols[j].type, nullable: true }));
        }
        for (let i = 0; i < rows.length; i++) {
          const a = rows[i], o = { __proto__: rowProto };
          for (let j = 0; j < names.length; j++) defineValue(o, names[j], a[j]);
          rows[i] = o; // an own element already: no setter of the step's runs
        }
        this.#rows = rows;
        this.#names = names;
        this.#fields = ObjectFreeze(fields);
        ObjectDefineProperty(this, "schema", { __proto__: null, value: ObjectFreeze({ fields: this.#fields }), enumerable: true });
      }
      get numRows() { return this.#rows.length; }
      get numCols() { return this.#names.length; }
      // toArray returns the rows, a new array each time.
      toArray() {
        const out = [], rows = this.#rows;
        for (let i = 0; i < rows.length; i++) defineValue(out, i, rows[i]);
        return out;
      }
      get(i) { return this.#rows[i] ?? null; }
      // getChild returns a column by name, as a vector: length, get(i),
      // toArray() (a plain array), iteration; null for no such column.
      getChild(name) {
        const j = indexOf(this.#names, name);
        if (j < 0) return null;
        const out = [], rows = this.#rows;
        for (let i = 0; i < rows.length; i++) defineValue(out, i, rows[i][name]);
        return new Column(out);
      }
      *[SymbolIterator]() {
        const rows = this.toArray();
        for (let i = 0; i < rows.length; i++) yield rows[i];
      }
      toString() {
        let s = "";
        for (let j = 0; j < this.#names.length; j++) s += (j > 0 ? ", " : "") + this.#names[j];
        return "[Table of " + this.#rows.length + " rows: " + s + "]";
      }
    };
    class Column {
      #v;
      constructor(v) { this.#v = v; }
      get length() { return this.#v.length; }
      get(i) { return this.#v[i] ?? null; }
      toArray() {
        const out = [], v = this.#v;
        for (let i = 0; i < v.length; i++) defineValue(out, i, v[i]);
        return out;
      }
      *[SymbolIterator]() {
        const v = this.toArray();
        for (let i = 0; i < v.length; i++) yield v[i];
      }
    }
    function indexOf(names, name) {
      for (let j = 0; j < names.length; j++) if (names[j] === name) return j;
      return -1;
    }

    function tableQuery(db, sql, params, what) {
      try {
        __sbx_str(sql, what + ": the SQL");
        return __sbx_module("duckdb.table", AS_TABLE, handleOf(db), sql, params.length === 0 ? "" : __sbx_params(params));
      } catch (e) {
        return __sbx_rejected(e);
      }
    }

    // DuckDB-WASM's AsyncDuckDBConnection, for the part of it a step
    // needs over in-memory data: query, prepare, insertJSONFromPath, close.
    Connection = class Connection {
      #db;
      #owns; // duckdb.connect's own database, closed with the connection
      #closed = false;
      constructor(db, owns) { this.#db = db; this.#owns = owns; }
      #check(what) {
        if (this.#closed) throw new ErrorCtor(what + ": the connection is closed");
      }
      query(sql, ...params) {
        try {
          this.#check("c.query");
        } catch (e) {
          return __sbx_rejected(e);
        }
        return tableQuery(this.#db, sql, params, "c.query");
      }
      prepare(sql) {
        try {
          this.#check("c.prepare");
          __sbx_str(sql, "c.prepare: the SQL");
          return __sbx_resolved(new PreparedStatement(this, sql));
        } catch (e) {
          return __sbx_rejected(e);
        }
      }
      insertJSONFromPath(path, options) {
        try {
          this.#check("c.insertJSONFromPath");
          __sbx_str(path, "c.insertJSONFromPath: the path");
          const text = fileOf(this.#db, path);
          if (text === undefined) throw new ErrorCtor("c.insertJSONFromPath: no file " + JSONstringify(path) + " was registered with db.registerFileText (a step reads no files)");
          const table = options === null || typeof options !== "object" ? undefined : options.name;
          return this.#db.load(__sbx_str(table, "c.insertJSONFromPath: options.name"), text);
        } catch (e) {
          return __sbx_rejected(e);
        }
      }
      close() {
        if (this.#closed) return __sbx_resolved(undefined);
        this.#closed = true;
        return this.#owns ? this.#db.close() : __sbx_resolved(undefined);
      }
      [SymbolCtor.asyncDispose]() { return this.close(); }
      static {
        queryOf = function __sbx_queryOf(c, sql, params) {
          try {
            c.#check("stmt.query");
          } catch (e) {
            return __sbx_rejected(e);
          }
          return tableQuery(c.#db, sql, params, "stmt.query");
        };
      }
    };

    // DuckDB-WASM's prepared statement: query(...params) runs it with
    // params bound to its placeholders. The SQL is checked when it runs.
    PreparedStatement = class PreparedStatement {
      #c;
      #sql;
      #closed = false;
      constructor(c, sql) { this.#c = c; this.#sql = sql; }
      query(...params) {
        if (this.#closed) return __sbx_rejected(new ErrorCtor("stmt.query: the statement is closed"));
        return queryOf(this.#c, this.#sql, params);
      }
      close() { this.#closed = true; return __sbx_resolved(undefined); }
    };

    duckdbObj = ObjectFreeze({
      open: function open() {
        try {
          return __sbx_module("duckdb.open", AS_DATABASE);
        } catch (e) {
          return __sbx_rejected(e);
        }
      },
      // connect opens a database and returns a DuckDB-WASM-style connection
      // to it, whose close closes the database.
      connect: function connect() {
        try {
          return __sbx_module("duckdb.open", AS_CONNECTION);
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
      version: GLPK_VERSION,
      // glpk.js's write: the model as CPLEX LP text; {format: "mps"} gives
      // free MPS. A promise, as solve's result is.
      write: function write(model, options) {
        try {
          if (typeof model === "string") model = JSONparse(model);
          if (model === null || typeof model !== "object") throw new TypeErrorCtor("glpk.write: the model must be an object or its JSON text");
          const m = __sbx_json(model, "glpk.write model");
          const o = options === undefined ? "" : __sbx_json(options, "glpk.write options");
          return __sbx_module("glpk.write", AS_IS, m, o);
        } catch (e) {
          return __sbx_rejected(e);
        }
      },
      solve: function solve(model, options) {
        try {
          if (typeof model === "string") model = JSONparse(model); // glpk.js takes the model as JSON text too
          if (model === null || typeof model !== "object") throw new TypeErrorCtor("glpk.solve: the model must be an object or its JSON text");
          const m = __sbx_json(model, "glpk.solve model");
          // glpk.js 5 lays options over model.options; its cb.call, a
          // function, cannot travel: the host is told there is one, sends
          // the snapshots glpk.js would pass it, and solveWithProgress
          // calls it with each before the promise settles.
          let call;
          if (!(typeof options === "number" && options % 1 === 0)) {
            const cb = { ...model.options, ...options }.cb;
            if (cb !== null && typeof cb === "object" && typeof cb.call === "function") {
              call = cb.call;
              options = { ...options, cb: { call: true, each: +cb.each > 0 ? +cb.each : 1 } };
            }
          }
          const o = options === undefined ? "" : __sbx_json(options, "glpk.solve options");
          const p = __sbx_module("glpk.solve", AS_IS, m, o);
          return call === undefined ? p : solveWithProgress(p, call);
        } catch (e) {
          return __sbx_rejected(e);
        }
      },
    });
  }

  async function solveWithProgress(p, call) {
    const r = await p;
    const steps = r.progress;
    delete r.progress;
    if (steps !== undefined) {
      for (let i = 0; i < steps.length; i++) {
        const s = steps[i];
        call({ status: s.status, z: s.z, vars: s.vars, dual: s.dual, rows: s.rows });
      }
    }
    return r;
  }

  return ObjectFreeze({ __proto__: null, Database: Database, Table: Table,
    connection: function __sbx_connection(h) { return new Connection(new Database(h), true); },
    duckdb: duckdbObj, glpk: glpkObj });
})
