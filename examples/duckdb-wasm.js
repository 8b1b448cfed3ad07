// A step written for DuckDB-WASM, its set-up replaced by duckdb.connect():
// stepbox run examples/duckdb-wasm.js --modules duckdb
// prints {"fields":["region","n","total"],"rows":[{"region":"north","n":2,"total":42.5},{"region":"south","n":1,"total":7}]}
const c = await duckdb.connect();
await c.query("CREATE TABLE sales AS SELECT * FROM (VALUES ('north', 30), ('south', 7), ('north', 12.5)) t(region, amount)");
const stmt = await c.prepare("SELECT region, count(*) AS n, sum(amount) AS total FROM sales WHERE amount > ? GROUP BY ALL ORDER BY total DESC");
const t = await stmt.query(1);
await c.close();
return { fields: t.schema.fields.map((f) => f.name), rows: t.toArray().map((r) => r.toJSON()) };
