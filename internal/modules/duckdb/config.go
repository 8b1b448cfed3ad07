package duckdb

import (
	"errors"
	"fmt"
	"net/url"
)

// Defaults for the zero fields of Config.
const (
	// DefaultMemoryLimitBytes is DuckDB's memory_limit when
	// Config.MemoryLimitBytes is zero.
	DefaultMemoryLimitBytes = 256 << 20
	// DefaultMaxResultRows caps the rows one Query returns.
	DefaultMaxResultRows = 100_000
	// DefaultMaxResultBytes caps the JSON one Query returns.
	DefaultMaxResultBytes = 16 << 20
	// DefaultMaxLoadColumns caps the columns Load creates.
	DefaultMaxLoadColumns = 1000
	// MinMemoryLimitBytes is the smallest memory_limit Open accepts, a
	// floor at which loading and querying small tables still works.
	MinMemoryLimitBytes = 8 << 20
)

// Config is the per-run configuration of a database. The zero value is
// usable: every zero field means its documented default. Requests never set
// these directly; the engine derives them from the run's limits.
type Config struct {
	// MemoryLimitBytes is DuckDB's memory_limit: the cap on its buffer
	// manager (tables, hash tables, sort runs, materialised results).
	// DuckDB cannot spill (there is no temp directory), so a statement that
	// needs more fails with KindMemory. Bytes; zero means
	// DefaultMemoryLimitBytes; at least MinMemoryLimitBytes. The engine
	// derives it from the run's memoryMb.
	MemoryLimitBytes int64
	// Threads is DuckDB's worker thread count, the calling goroutine's
	// thread included. Zero means 1, which also means DuckDB starts no
	// threads of its own.
	Threads int
	// MaxResultRows caps the rows one Query returns (KindLimit,
	// LimitResultRows). Zero means DefaultMaxResultRows.
	MaxResultRows int
	// MaxResultBytes caps the size of the JSON one Query returns (KindLimit,
	// LimitResultBytes). Bytes; zero means DefaultMaxResultBytes. The engine
	// passes no more than what the run may still receive.
	MaxResultBytes int
	// MaxLoadColumns caps the columns one Load creates (KindInvalid). Zero
	// means DefaultMaxLoadColumns.
	MaxLoadColumns int
	// ExactDecimals makes Query write a DECIMAL as its unscaled integer
	// and scale (12.50 as 1250e-2), which a reader that keeps decimals
	// exact (Python's decimal.Decimal) reads as written. Without it, a
	// DECIMAL is the double that reads back as the same decimal (12.5),
	// and a value no double gives back fails the query.
	ExactDecimals bool
}

func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.MemoryLimitBytes == 0 {
		c.MemoryLimitBytes = DefaultMemoryLimitBytes
	}
	if c.MemoryLimitBytes < MinMemoryLimitBytes {
		errs = append(errs, fmt.Errorf("duckdb: MemoryLimitBytes %d is below the minimum %d", c.MemoryLimitBytes, MinMemoryLimitBytes))
	}
	if c.Threads == 0 {
		c.Threads = 1
	}
	if c.Threads < 0 {
		errs = append(errs, fmt.Errorf("duckdb: Threads %d is negative", c.Threads))
	}
	if c.MaxResultRows == 0 {
		c.MaxResultRows = DefaultMaxResultRows
	}
	if c.MaxResultRows < 0 {
		errs = append(errs, fmt.Errorf("duckdb: MaxResultRows %d is negative", c.MaxResultRows))
	}
	if c.MaxResultBytes == 0 {
		c.MaxResultBytes = DefaultMaxResultBytes
	}
	if c.MaxResultBytes < 0 {
		errs = append(errs, fmt.Errorf("duckdb: MaxResultBytes %d is negative", c.MaxResultBytes))
	}
	if c.MaxLoadColumns == 0 {
		c.MaxLoadColumns = DefaultMaxLoadColumns
	}
	if c.MaxLoadColumns < 0 {
		errs = append(errs, fmt.Errorf("duckdb: MaxLoadColumns %d is negative", c.MaxLoadColumns))
	}
	return c, errors.Join(errs...)
}

// nowhere is a directory that does not exist. DuckDB's extension, secret
// and profiling paths point into it so that neither the worker's home
// directory nor any real file is ever named or touched; with external
// access off DuckDB refuses them anyway.
const nowhere = "/nonexistent/stepbox-duckdb"

// startupDSN holds the options that must be given when the database is
// created (DuckDB refuses some of them later) and that do not depend on the
// run. Their relative order does not matter: the driver applies DSN options
// in map order, which is why the order-sensitive ones are SET afterwards,
// in runSettings.
var startupDSN = "?" + url.Values{
	"threads":                      {"1"}, // no scheduler threads are started, whatever Config says later
	"autoinstall_known_extensions": {"false"},
	"autoload_known_extensions":    {"false"},
	"allow_community_extensions":   {"false"},
	"allow_unsigned_extensions":    {"false"},
	"allow_persistent_secrets":     {"false"},
	"temp_directory":               {""}, // no spilling: memory_limit is a hard cap and nothing is written
	"extension_directory":          {nowhere},
	"secret_directory":             {nowhere},
}.Encode()

// runSettings are the statements Open runs, in this order, before the DB is
// handed out. Locking comes last: after it no SET, RESET or PRAGMA can
// change a global option, and external access cannot be re-enabled anyway.
func runSettings(cfg Config) []string {
	return []string{
		fmt.Sprintf("SET threads = %d", cfg.Threads),
		fmt.Sprintf("SET memory_limit = '%dB'", cfg.MemoryLimitBytes),
		"SET TimeZone = 'UTC'",
		// "PRAGMA enable_profiling" is not a locked option: with an output
		// file set, the profile goes there, that is nowhere, and the
		// statement fails, instead of being printed on standard error.
		"SET profiling_output = '" + nowhere + "/profile.txt'",
		// Belt and braces under enable_external_access: without a local
		// file system, "CALL enable_logging(storage = 'file', …)" fails
		// at once instead of failing at every flush (and aborting the
		// process when the connection closes).
		"SET disabled_filesystems = 'LocalFileSystem'",
		"SET enable_external_access = false",
		"SET lock_configuration = true",
	}
}
