// Package differential holds the differential tests of Stepbox's built-in
// modules against the libraries they stand in for, run by the suite: the
// same models through Stepbox's glpk and through glpk.js (GLPK compiled to
// WebAssembly), and the same queries through Stepbox's duckdb (its
// DuckDB-WASM-style surface in JavaScript, db.query in Python) and through
// DuckDB-WASM, each from npm; every difference is asserted to be one the
// README lists. The libraries are pinned in package.json and
// package-lock.json and installed with npm ci when the tests run, into the
// user's cache directory (reused while the lock file is the same); node
// and npm must be on PATH, as ./scripts/test ensures.
package differential
