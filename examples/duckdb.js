// A step with DuckDB: stepbox run examples/duckdb.js --modules duckdb
// prints [{"region":"north","total":42.5},{"region":"south","total":7}]
const db = await duckdb.open();
await db.load("sales", [
  { region: "north", amount: 30 },
  { region: "south", amount: 7 },
  { region: "north", amount: 12.5 },
]);
return await db.query("SELECT region, sum(amount) AS total FROM sales GROUP BY ALL ORDER BY total DESC");
