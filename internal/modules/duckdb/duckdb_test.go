//go:build cgo

package duckdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/modules/duckdb"
	"github.com/stepbox/stepbox/internal/testenv"
)

func open(t testing.TB, cfg duckdb.Config) *duckdb.DB {
	t.Helper()
	db, err := duckdb.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// query runs sql and returns its JSON text.
func query(t testing.TB, db *duckdb.DB, sql string, params ...any) string {
	t.Helper()
	out, err := db.Query(context.Background(), sql, params)
	if err != nil {
		t.Fatalf("Query(%q): %v", sql, err)
	}
	return string(out)
}

func expectQuery(t testing.TB, db *duckdb.DB, sql, want string, params ...any) {
	t.Helper()
	if got := query(t, db, sql, params...); got != want {
		t.Errorf("Query(%q)\n got %s\nwant %s", sql, got, want)
	}
}

func exec(t testing.TB, db *duckdb.DB, sql string) {
	t.Helper()
	if err := db.Exec(context.Background(), sql); err != nil {
		t.Fatalf("Exec(%q): %v", sql, err)
	}
}

// expectKind checks that err is a *duckdb.Error of kind.
func expectKind(t testing.TB, err error, kind duckdb.Kind) *duckdb.Error {
	t.Helper()
	var de *duckdb.Error
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *duckdb.Error", err, err)
	}
	if de.Kind != kind {
		t.Fatalf("error kind %q, want %q: %v", de.Kind, kind, err)
	}
	return de
}

func TestOpenSettings(t *testing.T) {
	db := open(t, duckdb.Config{MemoryLimitBytes: 64 << 20})
	expectQuery(t, db, `SELECT
		current_setting('threads') AS threads,
		current_setting('memory_limit') AS memory_limit,
		current_setting('enable_external_access') AS external,
		current_setting('lock_configuration') AS locked,
		current_setting('autoinstall_known_extensions') AS autoinstall,
		current_setting('autoload_known_extensions') AS autoload,
		current_setting('allow_community_extensions') AS community,
		current_setting('allow_unsigned_extensions') AS unsigned,
		current_setting('temp_directory') AS temp_directory,
		current_setting('TimeZone') AS tz`,
		`[{"threads":1,"memory_limit":"64.0 MiB","external":false,"locked":true,"autoinstall":false,"autoload":false,"community":false,"unsigned":false,"temp_directory":"","tz":"UTC"}]`)
}

func TestSmallestMemoryLimit(t *testing.T) {
	db := open(t, duckdb.Config{MemoryLimitBytes: duckdb.MinMemoryLimitBytes})
	load(t, db, "t", string(benchRows(1000)))
	expectQuery(t, db, "SELECT count(*) AS n, sum(units) AS u FROM t", `[{"n":1000,"u":5994}]`)
}

func TestConfigValidation(t *testing.T) {
	for _, cfg := range []duckdb.Config{
		{MemoryLimitBytes: 1 << 20},
		{Threads: -1},
		{MaxResultRows: -1},
		{MaxResultBytes: -1},
		{MaxLoadColumns: -1},
	} {
		if db, err := duckdb.Open(context.Background(), cfg); err == nil {
			db.Close()
			t.Errorf("Open(%+v) succeeded", cfg)
		}
	}
}

// TestSandbox checks that every way out that the issue lists, and a few
// more, is refused, and that nothing reached the file system.
func TestSandbox(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.csv")
	if err := os.WriteFile(secret, []byte("a,b\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	db := open(t, duckdb.Config{})
	cases := []struct{ name, sql, want string }{
		{"read_csv", "SELECT * FROM read_csv('/etc/passwd')", "Permission Error"},
		{"read_csv own file", fmt.Sprintf("SELECT * FROM read_csv('%s')", secret), "Permission Error"},
		{"replacement scan", fmt.Sprintf("SELECT * FROM '%s'", secret), "Permission Error"},
		{"read_text", "SELECT * FROM read_text('/etc/passwd')", "Permission Error"},
		{"read_blob", "SELECT * FROM read_blob('/etc/hostname')", "Permission Error"},
		{"glob", "SELECT * FROM glob('/etc/*')", "Permission Error"},
		{"parquet", "SELECT * FROM read_parquet('/tmp/x.parquet')", "Permission Error"},
		{"json", "SELECT * FROM read_json('/etc/os-release')", "Permission Error"},
		{"http", "SELECT * FROM read_csv('https://example.com/x.csv')", "Permission Error"},
		{"copy to", fmt.Sprintf("COPY (SELECT 42) TO '%s'", out("copy.csv")), "Permission Error"},
		{"copy from", fmt.Sprintf("CREATE TABLE c(a INT, b INT); COPY c FROM '%s'", secret), "Permission Error"},
		{"export", fmt.Sprintf("EXPORT DATABASE '%s'", out("export")), "Permission Error"},
		{"attach", fmt.Sprintf("ATTACH '%s' AS x", out("x.db")), "Permission Error"},
		{"install", "INSTALL httpfs", "Permission Error"},
		{"force install", "FORCE INSTALL httpfs", "Permission Error"},
		{"load", "LOAD httpfs", "Permission Error"},
		{"update extensions", "UPDATE EXTENSIONS", "Permission Error"},
		{"secret", "CREATE PERSISTENT SECRET s (TYPE http, BEARER_TOKEN 'x')", ""},
		{"set memory_limit", "SET memory_limit = '10GB'", "locked"},
		{"reset memory_limit", "RESET memory_limit", "locked"},
		{"pragma memory_limit", "PRAGMA memory_limit = '10GB'", "locked"},
		{"set global threads", "SET GLOBAL threads = 8", "locked"},
		{"unlock", "SET lock_configuration = false", "locked"},
		{"external access", "SET enable_external_access = true", "locked"},
		{"temp directory", fmt.Sprintf("SET temp_directory = '%s'", dir), "locked"},
		{"autoload", "SET autoload_known_extensions = true", "locked"},
		{"file systems", "SET disabled_filesystems = ''", "locked"},
		{"unsigned", "SET allow_unsigned_extensions = true", "locked"},
		{"profiling output", fmt.Sprintf("SET profiling_output = '%s'", out("p.txt")), "locked"},
		{"log query path", fmt.Sprintf("SET log_query_path = '%s'", out("q.log")), "locked"},
		{"file logging", fmt.Sprintf("CALL enable_logging(storage = 'file', storage_path = '%s')", out("logs")), ""},
		{"getenv", "SELECT getenv('HOME')", "getenv does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := db.Query(context.Background(), c.sql, nil)
			if err == nil {
				t.Fatalf("%s: succeeded", c.sql)
			}
			de := expectKind(t, err, duckdb.KindSQL)
			if !strings.Contains(de.Message, c.want) {
				t.Errorf("%s: message %q does not contain %q", c.sql, de.Message, c.want)
			}
			t.Log(firstLine(de.Message))
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("files appeared in %s: %v", dir, entries)
	}
	// The database is still usable and still locked afterwards.
	expectQuery(t, db, "SELECT current_setting('memory_limit') AS m", `[{"m":"256.0 MiB"}]`)
}

// TestProfilingGoesNowhere: "PRAGMA enable_profiling" cannot be locked, so
// the profile has an output file that cannot be written; queries then fail
// instead of printing the profile on the worker's standard error.
func TestProfilingGoesNowhere(t *testing.T) {
	db := open(t, duckdb.Config{})
	exec(t, db, "PRAGMA enable_profiling")
	_, err := db.Query(context.Background(), "SELECT 42", nil)
	de := expectKind(t, err, duckdb.KindSQL)
	if !strings.Contains(de.Message, "Permission Error") || strings.Contains(de.Message, os.Getenv("HOME")+"/") {
		t.Errorf("message %q", de.Message)
	}
	exec(t, db, "PRAGMA disable_profiling")
	expectQuery(t, db, "SELECT 42 AS x", `[{"x":42}]`)
}

func TestIsolation(t *testing.T) {
	a := open(t, duckdb.Config{})
	b := open(t, duckdb.Config{})
	exec(t, a, "CREATE TABLE t AS SELECT 1 AS x")
	_, err := b.Query(context.Background(), "SELECT * FROM t", nil)
	de := expectKind(t, err, duckdb.KindSQL)
	if !strings.Contains(de.Message, "Table with name t does not exist") {
		t.Errorf("message %q", de.Message)
	}
}

func TestExecMultipleStatements(t *testing.T) {
	db := open(t, duckdb.Config{})
	exec(t, db, "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2); CREATE TEMP TABLE u AS SELECT sum(a) AS s FROM t")
	expectQuery(t, db, "SELECT s FROM u", `[{"s":3}]`)
	// The last statement's rows are the result.
	expectQuery(t, db, "INSERT INTO t VALUES (3); SELECT count(*) AS n FROM t", `[{"n":3}]`)
	// A transaction spans calls: one connection, one session.
	exec(t, db, "BEGIN")
	exec(t, db, "INSERT INTO t VALUES (4)")
	exec(t, db, "ROLLBACK")
	expectQuery(t, db, "SELECT count(*) AS n FROM t", `[{"n":3}]`)
}

func TestSQLErrors(t *testing.T) {
	db := open(t, duckdb.Config{})
	cases := []struct{ sql, want string }{
		{"SELEC 1", `Parser Error: syntax error at or near "SELEC"`},
		{"SELECT * FROM nope", "Catalog Error: Table with name nope does not exist!"},
		{"SELECT nope FROM range(1)", `Binder Error: Referenced column "nope" not found`},
		{"SELECT 1/0::INTEGER // 0", ""},
		{"SELECT 'x'::INTEGER", "Conversion Error"},
		{"", "empty"},
	}
	for _, c := range cases {
		_, err := db.Query(context.Background(), c.sql, nil)
		if c.want == "" && err == nil {
			continue
		}
		if err == nil {
			t.Errorf("%q: succeeded", c.sql)
			continue
		}
		de := expectKind(t, err, duckdb.KindSQL)
		if !strings.Contains(de.Message, c.want) {
			t.Errorf("%q: message %q does not contain %q", c.sql, de.Message, c.want)
		}
		if !strings.HasPrefix(err.Error(), "duckdb: ") {
			t.Errorf("%q: Error() = %q", c.sql, err.Error())
		}
	}
}

// long is a cross join that runs for many minutes.
const long = "SELECT count(*) FROM range(1000000000) a, range(1000) b WHERE a.range + b.range = 7"

// startLong runs long on db in the background and returns once the call
// holds the database, with the channel its error comes on.
func startLong(t *testing.T, ctx context.Context, db *duckdb.DB) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := db.Query(ctx, long, nil)
		done <- err
	}()
	testenv.WaitFor(t, "the query to start", func() bool { return duckdb.Busy(db) || len(done) > 0 })
	if len(done) > 0 {
		t.Fatalf("the query ended at once: %v", <-done)
	}
	return done
}

// TestCancel: a cross join that runs for minutes stops within about a
// second of its context ending, and the database remains usable.
func TestCancel(t *testing.T) {
	db := open(t, duckdb.Config{})

	ctx, cancel := context.WithCancel(context.Background())
	done := startLong(t, ctx, db)
	start := time.Now()
	cancel()
	err := <-done
	took := time.Since(start)
	de := expectKind(t, err, duckdb.KindCanceled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(err, context.Canceled) is false: %v", err)
	}
	if took > testenv.ScaleDuration(time.Second) {
		t.Errorf("canceled query returned after %v", took)
	}
	t.Logf("canceled after %v: %v", took, de)

	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	err = db.Exec(ctx, "CREATE TABLE big AS "+long)
	took = time.Since(start)
	expectKind(t, err, duckdb.KindCanceled)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(err, context.DeadlineExceeded) is false: %v", err)
	}
	if took > 300*time.Millisecond+testenv.ScaleDuration(time.Second) {
		t.Errorf("query past its deadline returned after %v", took)
	}

	// Already ended: nothing runs.
	_, err = db.Query(ctx, "SELECT 1", nil)
	expectKind(t, err, duckdb.KindCanceled)

	expectQuery(t, db, "SELECT 42 AS x", `[{"x":42}]`)
}

func TestCloseInterrupts(t *testing.T) {
	db, err := duckdb.Open(context.Background(), duckdb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	done := startLong(t, context.Background(), db)
	start := time.Now()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > testenv.ScaleDuration(time.Second) {
		t.Errorf("Close took %v", took)
	}
	err = <-done
	expectKind(t, err, duckdb.KindCanceled)
	if !errors.Is(err, duckdb.ErrClosed) {
		t.Errorf("errors.Is(err, ErrClosed) is false: %v", err)
	}
	// After Close.
	_, err = db.Query(context.Background(), "SELECT 1", nil)
	expectKind(t, err, duckdb.KindCanceled)
	if !errors.Is(err, duckdb.ErrClosed) {
		t.Errorf("errors.Is(err, ErrClosed) is false: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestMemoryLimit(t *testing.T) {
	db := open(t, duckdb.Config{MemoryLimitBytes: 32 << 20})
	err := db.Exec(context.Background(), "CREATE TABLE t AS SELECT range AS a, random() AS b FROM range(20000000)")
	de := expectKind(t, err, duckdb.KindMemory)
	if !strings.Contains(de.Message, "Out of Memory Error") {
		t.Errorf("message %q", de.Message)
	}
	if !errors.Is(err, &duckdb.Error{Kind: duckdb.KindMemory}) {
		t.Errorf("errors.Is by kind is false")
	}
	// Still usable.
	expectQuery(t, db, "SELECT count(*) AS n FROM range(1000)", `[{"n":1000}]`)
}

func TestResultCaps(t *testing.T) {
	db := open(t, duckdb.Config{MaxResultRows: 100, MaxResultBytes: 1000})
	expectQuery(t, db, "SELECT count(*) AS n FROM range(100000)", `[{"n":100000}]`)
	if got := query(t, db, "SELECT range AS r FROM range(100)"); !strings.HasPrefix(got, `[{"r":0},`) {
		t.Errorf("100 rows: %s", got)
	}
	_, err := db.Query(context.Background(), "SELECT range AS r FROM range(101)", nil)
	de := expectKind(t, err, duckdb.KindLimit)
	if de.Limit != duckdb.LimitResultRows {
		t.Errorf("limit %q", de.Limit)
	}
	_, err = db.Query(context.Background(), "SELECT repeat('x', 2000) AS s", nil)
	de = expectKind(t, err, duckdb.KindLimit)
	if de.Limit != duckdb.LimitResultBytes {
		t.Errorf("limit %q", de.Limit)
	}
}

func TestConcurrentDBs(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1) // Done when the goroutine returns.
		go func() {
			defer wg.Done()
			db := open(t, duckdb.Config{})
			exec(t, db, fmt.Sprintf("CREATE TABLE t AS SELECT %d AS id, range AS v FROM range(1000)", i))
			expectQuery(t, db, "SELECT DISTINCT id, sum(v) AS s FROM t GROUP BY id", fmt.Sprintf(`[{"id":%d,"s":499500}]`, i))
		}()
	}
	wg.Wait()
}

func TestPool(t *testing.T) {
	pool := duckdb.NewPool(2)
	defer pool.Close()
	// The first two come ready from the pool, the others are made while
	// the test waits.
	testenv.WaitFor(t, "the pool to fill", func() bool { return duckdb.Ready(pool) == 2 })
	for i := range 4 {
		db, err := pool.Open(context.Background(), duckdb.Config{MemoryLimitBytes: int64(64+i) << 20})
		if err != nil {
			t.Fatal(err)
		}
		expectQuery(t, db, "SELECT current_setting('memory_limit') AS m, current_setting('lock_configuration') AS l, (SELECT count(*) FROM duckdb_tables()) AS tables",
			fmt.Sprintf(`[{"m":"%d.0 MiB","l":true,"tables":0}]`, 64+i))
		exec(t, db, "CREATE TABLE t AS SELECT 1")
		if _, err := db.Query(context.Background(), "SELECT * FROM read_csv('/etc/passwd')", nil); err == nil {
			t.Error("pooled database reads files")
		}
		db.Close()
	}
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Open(context.Background(), duckdb.Config{}); !errors.Is(err, duckdb.ErrClosed) {
		t.Errorf("Open after Close: %v", err)
	}
}

// TestPoolWaits checks that Open waits for the database the pool is
// making rather than make a second one, and stops waiting when its ctx
// ends or the pool closes.
func TestPoolWaits(t *testing.T) {
	pool := duckdb.NewPool(1)
	defer pool.Close()
	testenv.WaitFor(t, "the pool to fill", func() bool { return duckdb.Ready(pool) == 1 })
	db, err := pool.Open(context.Background(), duckdb.Config{}) // the ready one
	if err != nil {
		t.Fatal(err)
	}
	before := duckdb.Creates()
	db.Close() // the pool starts making a replacement
	db, err = pool.Open(context.Background(), duckdb.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if made := duckdb.Creates() - before; made != 1 {
		t.Errorf("%d databases made for one Open after Close, want the replacement only", made)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	db.Close() // another replacement
	if _, err := pool.Open(ctx, duckdb.Config{}); err == nil {
		// The replacement may have been ready already: nothing to wait for.
		t.Log("no wait")
	} else if !errors.Is(err, context.Canceled) {
		t.Errorf("Open with an ended ctx: %v", err)
	}
}

func TestQueryJSONIsValid(t *testing.T) {
	db := open(t, duckdb.Config{})
	out := query(t, db, `SELECT chr(range::INTEGER) AS c FROM range(1, 300)
		UNION ALL SELECT '\u2028' UNION ALL SELECT '"\'`)
	var v []map[string]string
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	if len(v) != 301 {
		t.Errorf("%d rows", len(v))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
