// Runs the DuckDB cases of duckdb_test.go through DuckDB-WASM under Node:
// reads a JSON array of cases on stdin and writes, for each, the result's
// schema, rows and loaded column types, or the message it threw, as JSON
// into the file named by its argument. Each case loads its rows as
// DuckDB-WASM code does (registerFileText, then insertJSONFromPath).
// Values Arrow gives in forms JSON has not are tagged: {$bigint},
// {$decimal, scale}, {$ms} (dates and timestamps), {$vector} (a list),
// {$bytes} (base64), {$double} (NaN, ±Infinity), {$typed} (another typed
// array). The step in duckdb_test.go tags Stepbox's BigInts the same way.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { writeFileSync } from "node:fs";

const require = createRequire(import.meta.url);
const entry = require.resolve("@duckdb/duckdb-wasm/dist/duckdb-node-blocking.cjs");
const duckdb = require(entry);
const dist = dirname(entry);
const bundles = {
  mvp: { mainModule: join(dist, "duckdb-mvp.wasm"), mainWorker: join(dist, "duckdb-node-mvp.worker.cjs") },
  eh: { mainModule: join(dist, "duckdb-eh.wasm"), mainWorker: join(dist, "duckdb-node-eh.worker.cjs") },
};

function tag(v, type) {
  if (v === null || v === undefined) return null;
  const t = type === undefined ? "" : String(type);
  if (typeof v === "bigint") return { $bigint: String(v) };
  if (typeof v === "number") {
    if (t.startsWith("Date") || t.startsWith("Timestamp")) return { $ms: v };
    if (!Number.isFinite(v)) return { $double: String(v) };
    return v;
  }
  if (t.startsWith("Decimal")) return { $decimal: String(v), scale: type.scale };
  if (v instanceof Uint8Array) return { $bytes: Buffer.from(v).toString("base64") };
  if (ArrayBuffer.isView(v)) return { $typed: Array.from(v, (x) => (typeof x === "bigint" ? String(x) : x)) };
  if (typeof v === "object" && typeof v.toArray === "function" && typeof v.get === "function" && "length" in v) {
    const child = type && type.children && type.children[0] ? type.children[0].type : undefined;
    return { $vector: Array.from(v.toArray(), (x) => tag(x, child)) };
  }
  if (typeof v === "object") {
    const o = typeof v.toJSON === "function" ? v.toJSON() : v;
    const kids = {};
    for (const c of (type && type.children) || []) kids[c.name] = c.type;
    const out = {};
    for (const k of Object.keys(o)) out[k] = tag(o[k], kids[k]);
    return out;
  }
  return v;
}

let text = "";
for await (const chunk of process.stdin) text += chunk;
const out = [];
// One instance for all cases (instantiating takes seconds), a fresh
// connection and tables for each.
const db = await duckdb.createDuckDB(bundles, new duckdb.VoidLogger(), duckdb.NODE_RUNTIME);
await db.instantiate(() => {});
for (const c of JSON.parse(text)) {
  const conn = db.connect();
  try {
    const types = {};
    for (const [name, rows] of Object.entries(c.tables || {})) {
      conn.query("DROP TABLE IF EXISTS " + name);
      db.registerFileText(name + ".json", JSON.stringify(rows));
      conn.insertJSONFromPath(name + ".json", { name });
      for (const r of conn.query("SELECT column_name AS c, column_type AS t FROM (DESCRIBE " + name + ")").toArray()) types[name + "." + r.c] = r.t;
    }
    const t = c.params ? conn.prepare(c.sql).query(...c.params) : conn.query(c.sql);
    const fields = t.schema.fields.map((f) => ({ name: f.name, type: String(f.type) }));
    const rows = t.toArray().map((r) => {
      const o = r.toJSON(), row = {};
      t.schema.fields.forEach((f) => { row[f.name] = tag(o[f.name], f.type); });
      return row;
    });
    out.push({ fields, rows, types });
  } catch (e) {
    out.push({ error: String(e && e.message) });
  } finally {
    conn.close();
  }
}
writeFileSync(process.argv[2], JSON.stringify({ version: duckdb.PACKAGE_VERSION, results: out }));
