// Package duckdb is the duckdb module of DESIGN decision 7: a fresh
// in-memory DuckDB database per run (github.com/duckdb/duckdb-go/v2,
// DuckDB 1.5), driven with JSON values in and out so that the runtime can
// call it from its VM goroutine and hand the results to the guest as they
// are. It runs in the worker, never in the host.
//
// # Use
//
//	pool := duckdb.NewPool(1)                      // once per worker: databases made ahead of time
//	db, err := pool.Open(ctx, duckdb.Config{       // per run (or duckdb.Open without a pool)
//		MemoryLimitBytes: duckdbShareOfRunMemory,   // from the run's memoryMb
//		MaxResultBytes:   remainingResultBytes,
//	})
//	defer db.Close()                               // at run end: interrupts, then frees everything
//	err = db.Load(ctx, "sales", rows)              // rows: JSON array of objects
//	err = db.LoadRows(ctx, "sales", values)        // or the same rows as values (Rows)
//	out, err := db.Query(ctx, "SELECT region, sum(amount) AS total FROM sales WHERE day >= ? GROUP BY ALL", []any{"2024-01-01"})
//	tab, err := db.QueryTable(ctx, "SELECT region FROM sales", nil) // {"columns": [{name, type}], "rows": [[…]]}
//	err = db.Exec(ctx, "CREATE TABLE big AS SELECT * FROM sales WHERE amount > 100")
//
// The guest API maps onto it one to one: duckdb.open() is Open,
// db.load(table, rows) is LoadRows for an array of plain objects (the
// JavaScript runtime reads them out of its VM) and Load for anything else
// (their JSON.stringify text), db.query(sql, ...params) is Query (its
// result is the JSON array to parse), db.exec(sql) is Exec; the
// DuckDB-WASM-style c.query(sql) and stmt.query(...params) are QueryTable.
//
// Every call takes the run's ctx: when it ends, DuckDB is interrupted
// (duckdb_interrupt, repeated until the call returns) and the call fails
// with KindCanceled, which unwraps to context.DeadlineExceeded or
// context.Canceled. A cross join that would run for minutes stops within
// milliseconds (TestCancel). Close interrupts the call in progress too.
//
// # Costs
//
// Creating a database takes about 10 ms (DuckDB builds its catalog of
// built-in functions), and an idle one holds about 4.5 MB; a Pool keeps
// one ready and makes the next when a run closes its own. Configuring and
// locking a pooled database takes 1-2 ms, Close about 2 ms. Loading
// 1,000 rows and aggregating them takes about 4 ms. Loading 10,000 rows
// of four columns takes about 3.5 ms from Rows, 10 ms from JSON text
// (BenchmarkLoad): the appender's per-row and per-string calls into
// DuckDB are most of the rest.
//
// # Security settings
//
// Open creates the database with the first group of options and then
// runs the second group, in this order (the last two must come last:
// external access cannot be re-enabled, and the lock freezes the rest).
//
//	option                            value          what it stops
//	threads                           1 (Config)     DuckDB's own worker threads; with 1 it starts none
//	autoinstall_known_extensions      false          downloading extensions on first use
//	autoload_known_extensions         false          loading installed extensions on first use
//	allow_community_extensions        false          INSTALL … FROM community
//	allow_unsigned_extensions         false          loading unsigned extension binaries
//	allow_persistent_secrets          false          CREATE PERSISTENT SECRET (a file)
//	temp_directory                    ''             spilling to disk: memory_limit is a hard cap
//	extension_directory,              /nonexistent/… naming the worker's home directory in errors
//	  secret_directory
//	-- then, as statements --
//	memory_limit                      Config         the buffer manager's size (tables, joins, sorts, results)
//	TimeZone                          UTC            host-dependent results
//	profiling_output                  /nonexistent/… "PRAGMA enable_profiling" printing to standard error
//	disabled_filesystems              LocalFileSystem every file, even where the next line would not catch it
//	enable_external_access            false          files, URLs, COPY, EXPORT, ATTACH of files, INSTALL, LOAD
//	lock_configuration                true           SET, RESET and PRAGMA of any global option
//
// TestSandbox checks that read_csv('/etc/passwd') and the other table
// functions that read files, "SELECT * FROM 'file'", http(s) URLs,
// COPY … TO and FROM, EXPORT DATABASE, ATTACH of a file, INSTALL,
// FORCE INSTALL, LOAD, UPDATE EXTENSIONS, persistent secrets, file
// logging, getenv() and SET/RESET/PRAGMA of the options above all fail,
// and that no file appears. The statically linked extensions (core
// functions, JSON, Parquet, ICU, TPC-H, TPC-DS, autocomplete) stay
// available; Parquet and JSON can read only what the step gives them as
// values.
//
// What the settings do not cover:
//
//   - Standard output. A few switches are session state that the lock does
//     not freeze: "PRAGMA enable_progress_bar" with "PRAGMA
//     enable_print_progress_bar", and "CALL enable_logging(storage =
//     'stdout')", make DuckDB print on descriptor 1. The worker never uses
//     its standard output (it is /dev/null; frames go over descriptors 3
//     and 4), so this output goes nowhere; it is one more reason why the
//     module must not run in the host process. No way is known for a step
//     to make DuckDB write to standard error, which the host logs: the
//     profiler, the one seen, writes to its (unwritable) output file
//     instead (TestProfilingGoesNowhere).
//   - Memory outside the buffer manager: the catalog, parsed statements
//     and the driver's Go-side copies of results are not counted against
//     memory_limit; the result caps bound the last, the worker's own
//     memory limit the rest.
//   - CPU: a statement runs until its ctx ends.
//   - ATTACH ':memory:' AS x creates another in-memory database inside the
//     same instance; it shares memory_limit.
//
// # Load: column types
//
// Columns are the union of the objects' keys, in order of first
// appearance; a missing key is NULL. Types are what DuckDB's JSON reader
// (read_json, auto-detection) infers for the same rows, over all rows
// (infer.go mirrors it; read_json cannot run here, it reads files):
//
//	values                                    type
//	only true/false                           BOOLEAN
//	integers of one sign within int64         BIGINT
//	  beyond int64 (to 2^64-1), or both signs HUGEINT
//	numbers with fraction or exponent         DOUBLE
//	strings                                   VARCHAR, or TIME / DATE / TIMESTAMP (one ISO 8601
//	                                            form) / UUID if every string is one
//	arrays                                    LIST of the elements' type ([] alone: JSON[])
//	objects                                   STRUCT of the union of their keys; MAP(VARCHAR, T)
//	                                            if keys appear in < 10% of them on average, or
//	                                            200+ keys of like values; {} alone MAP(VARCHAR, JSON)
//	kinds mixed, or only nulls                JSON (each value as its JSON text)
//
// Values of the direct types (BOOLEAN, BIGINT, DOUBLE, VARCHAR, JSON) go
// through the appender; the others as JSON text through DuckDB's
// json_transform in a query appender. TestLoadOracle compares types and
// answers with read_json's.
//
// LoadRows takes the rows as values (Rows, filled by the caller) and
// gives the table Load gives for their JSON text: NumberValue is a number
// as JSON.stringify writes it (NaN and the infinities null, an integral
// double of the int64 range an integer), and the text stored for a number
// in a VARCHAR or JSON column, or for a string in a JSON column, is
// JSON.stringify's (AppendNumber, AppendQuoted).
//
// The table name must be a plain identifier (letters, digits, _, not
// starting with a digit, at most 63 bytes) and the table must not exist.
// Column names are any non-empty keys up to 255 bytes (quoted in SQL where
// needed: "unit price"); DuckDB's names are case-insensitive, so "a" and
// "A" in one table is an error. Rows are added with DuckDB's appender; a
// failed Load drops the table.
//
// # Query: values
//
// The result is a JSON array with one object per row, keys in column
// order. A repeated column name gets a suffix (a, a_1, a_2).
//
//	SQL type                          JSON
//	NULL                              null
//	BOOLEAN                           true, false
//	TINYINT … INTEGER, U…             number
//	BIGINT, UBIGINT, HUGEINT,         an integer, written exactly whatever its size: the JavaScript
//	  UHUGEINT, BIGNUM (VARINT)         runtime makes a BigInt of one beyond ±(2^53-1), Python an int
//	FLOAT, DOUBLE                     number, always with a fraction or exponent (3.0, 1.0e+21);
//	                                    NaN and ±infinity as "NaN", "Infinity", "-Infinity"
//	DECIMAL(w,s)                      the double that reads back as the same decimal (12.50 → 12.5);
//	                                    none: the query fails (KindInvalid). With ExactDecimals:
//	                                    unscaled integer and scale, 1250e-2
//	VARCHAR, ENUM                     string
//	BIT                               string of 0 and 1
//	BLOB, GEOMETRY                    string, standard base64
//	UUID                              string, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
//	DATE                              "2024-03-01"
//	TIME                              "13:45:00", "13:45:00.5"
//	TIMETZ                            "13:45:00+02:00"
//	TIMESTAMP, TIMESTAMP_S/_MS/_NS    RFC 3339 in UTC: "2024-03-01T13:45:00.123456Z" (new Date(x) reads it)
//	TIMESTAMPTZ                       the instant, RFC 3339 in UTC
//	'infinity', '-infinity'           "infinity", "-infinity" (DATE, TIMESTAMP, TIMESTAMPTZ)
//	  dates past year 9999            ISO 8601 expanded years: "+020000-01-01"
//	INTERVAL                          {"months": 1, "days": 2, "micros": 3500000}
//	LIST, ARRAY                       array, elements converted alike
//	STRUCT                            object, fields in declaration order
//	MAP                               object in map order; non-string keys as their JSON text (1 → "1")
//	UNION                             the value of the member that is set
//	JSON                              the JSON value (re-encoded: object keys sorted, numbers as doubles;
//	                                    cast to VARCHAR for the exact text)
//
// Parameters are JSON values too: an integer-valued number within
// ±(2^53-1) binds as BIGINT, other numbers as DOUBLE, strings as VARCHAR,
// arrays as LISTs, objects as JSON text; DuckDB casts them to what each
// placeholder needs (? or $1).
//
// Config.MaxResultRows and Config.MaxResultBytes cap a result; crossing
// either fails the call (KindLimit) without a partial result.
//
// # Errors
//
// Every method returns *Error with a Kind (KindInvalid, KindSQL,
// KindMemory, KindLimit, KindCanceled; errors.go gives the engine
// mapping) and a Message for the step's author. SQL errors carry DuckDB's
// own text, caret diagram included:
//
//	duckdb: Catalog Error: Table with name nope does not exist!
//
// # Building
//
// The package needs cgo: duckdb-go links DuckDB's prebuilt static
// libraries (github.com/duckdb/duckdb-go-bindings/lib/linux-amd64 and the
// other platforms' modules), which needs a C++ toolchain at build time
// (Debian: build-essential) and libstdc++ and libgcc_s at run time. They
// add about 69 MB to a binary (57 MB stripped). Built without cgo, the
// package compiles and every call fails with KindUnavailable, wrapping
// errors.ErrUnsupported.
//
// # Concurrency
//
// A DB has one connection and runs one call at a time; calls from several
// goroutines queue. Separate DBs are independent and may be used in
// parallel. A call blocks its goroutine (one cgo call for the statement)
// until it ends or is interrupted.
package duckdb
