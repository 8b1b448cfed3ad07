// DuckDB-WASM (DuckDB compiled to WebAssembly) in Node for bench/sidebyside;
// protocol in common.mjs.
//
// The step: load rows (id, region, amount) into a table and aggregate them
// with the GROUP BY the harness passes, as a user of DuckDB-WASM writes it:
// registerFileText of the rows' JSON, insertJSONFromPath into `sales`, the
// query, toArray(), the rows as plain values. The blocking Node bindings
// (dist/duckdb-node-blocking.cjs: no worker thread), loaded from the npm
// package's own files (no CDN).
//
// Cold: every run creates and instantiates a DuckDB of its own
// (createDuckDB + instantiate + connect), as a sandbox must when tenants
// never share one. Warm: one instance, instantiated before the timed runs;
// each run connects, loads a fresh `sales` table, queries, drops the table
// and its file, and closes its connection. The runs share the instance's
// memory, settings and catalogue: no isolation between them.

import { createRequire } from "node:module";
import path from "node:path";
import { main, at, latency } from "./common.mjs";

const PKG = "@duckdb/duckdb-wasm";
const require = createRequire(import.meta.url);

let duckdb;
let bundles;
function load() {
  if (!duckdb) {
    const entry = require.resolve(`${PKG}/dist/duckdb-node-blocking.cjs`);
    duckdb = require(entry);
    const dist = path.dirname(entry);
    bundles = {
      mvp: { mainModule: path.join(dist, "duckdb-mvp.wasm"), mainWorker: path.join(dist, "duckdb-node-mvp.worker.cjs") },
      eh: { mainModule: path.join(dist, "duckdb-eh.wasm"), mainWorker: path.join(dist, "duckdb-node-eh.worker.cjs") },
    };
  }
  return duckdb;
}

async function instance() {
  const d = load();
  const db = await d.createDuckDB(bundles, new d.VoidLogger(), d.NODE_RUNTIME);
  await db.instantiate();
  return db;
}

// The step's rows: the same as the harness gives Stepbox's step as input.
function makeRows(n) {
  const rows = new Array(n);
  for (let i = 0; i < n; i++) rows[i] = { id: i, region: `r${i % 20}`, amount: (i % 997) / 10 };
  return rows;
}

// plain turns a result row into JSON-ready values (BIGINT comes as BigInt).
function plain(row) {
  const o = row.toJSON();
  for (const [k, v] of Object.entries(o)) if (typeof v === "bigint") o[k] = Number(v);
  return o;
}

function loadAndQuery(db, conn, rows, sql) {
  db.registerFileText("rows.json", JSON.stringify(rows));
  conn.insertJSONFromPath("rows.json", { name: "sales" });
  return conn.query(sql).toArray().map(plain);
}

// cold runs the step in a new instance; it adds the time the instance took
// to create and instantiate to setup.
async function cold(rows, sql, setup) {
  const t0 = performance.now();
  const db = await instance();
  setup.push(performance.now() - t0);
  const conn = db.connect();
  const out = loadAndQuery(db, conn, rows, sql);
  conn.close();
  return out;
}

function warm(db, rows, sql) {
  const conn = db.connect();
  const out = loadAndQuery(db, conn, rows, sql);
  conn.query("DROP TABLE sales");
  conn.close();
  db.dropFile("rows.json");
  return out;
}

async function engineVersion() {
  const db = await instance();
  return db.getVersion();
}

const measures = {
  info: async () => { load(); return {}; },

  duckdb: async ({ rows, sql, runs, warmup }) => {
    const data = makeRows(rows);
    const v = await engineVersion();
    const setup = [];
    const r = await latency(runs, warmup, () => cold(data, sql, setup));
    const timed = setup.slice(warmup).sort((a, b) => a - b);
    return {
      ...r,
      how: `createDuckDB + instantiate + connect per run (blocking Node bindings, DuckDB ${v}; createDuckDB + instantiate alone: median ${at(timed, 0.5).toFixed(0)} ms), then registerFileText + insertJSONFromPath + the query + toArray()`,
    };
  },

  "warm-duckdb": async ({ rows, sql, runs, warmup }) => {
    const data = makeRows(rows);
    const db = await instance();
    return {
      ...(await latency(runs, warmup, () => warm(db, data, sql))),
      how: `one instance (DuckDB ${db.getVersion()}); per run connect, registerFileText + insertJSONFromPath + the query + toArray(), DROP TABLE, dropFile, close`,
    };
  },
};

main(PKG, measures, async () => { throw new Error("no throughput measure"); });
