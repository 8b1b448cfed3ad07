//go:build cgo

package duckdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	duck "github.com/duckdb/duckdb-go/v2"
)

// DB is one run's in-memory DuckDB database. Open creates it; Close
// destroys it and everything in it.
//
//	db, err := duckdb.Open(ctx, duckdb.Config{MemoryLimitBytes: 128 << 20})
//	if err != nil { … }
//	defer db.Close()
//	err = db.Load(ctx, "sales", rowsJSON)
//	out, err := db.Query(ctx, "SELECT region, sum(amount) AS total FROM sales GROUP BY ALL", nil)
//
// Notes: the methods are safe for concurrent use but run one at a time, in
// call order, on the database's single connection (so temporary tables,
// variables and transactions behave as in one session). Each call is
// interrupted when its ctx ends; Close interrupts the call in progress,
// waits for it, then frees the database. Nothing of a DB survives Close.
type DB struct {
	cfg     Config
	inst    instance
	onClose func() // tells the Pool to make a replacement; may be nil

	// closing ends when Close starts: it interrupts the call in progress.
	closing context.Context
	close   context.CancelCauseFunc

	mu sync.Mutex
	// conn is inst's connection, the only one. Guarded by mu; nil once
	// closed.
	conn *duck.Conn
}

// Open creates a fresh in-memory database configured for one run: cfg's
// threads and memory limit, no temp directory, external access off,
// extension auto-install and auto-load off, community and unsigned
// extensions refused, time zone UTC, and finally the configuration locked
// (doc.go lists the settings and what each one stops).
//
// Open costs about 10 ms, most of it DuckDB building its catalog of
// built-in functions. A Pool keeps databases ready so that a run does not
// wait for that.
func Open(ctx context.Context, cfg Config) (*DB, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	inst, err := create(ctx)
	if err != nil {
		return nil, err
	}
	return start(ctx, cfg, inst, nil)
}

// instance is a database with the run-independent start-up options and
// its one connection, not yet configured for a run.
type instance struct {
	connector *duck.Connector
	conn      *duck.Conn
}

// creates counts the instances made, for tests.
var creates atomic.Int64

// create makes an instance.
func create(ctx context.Context) (instance, error) {
	creates.Add(1)
	c, err := duck.NewConnector(startupDSN, nil)
	if err != nil {
		return instance{}, fmt.Errorf("duckdb: create database: %w", err)
	}
	dc, err := c.Connect(ctx)
	if err != nil {
		c.Close()
		return instance{}, fmt.Errorf("duckdb: connect: %w", err)
	}
	return instance{connector: c, conn: dc.(*duck.Conn)}, nil
}

func (inst instance) close() error {
	return errors.Join(inst.conn.Close(), inst.connector.Close())
}

// start applies cfg to inst and returns it as a DB; onClose, if not nil,
// runs when the DB is closed, or now if start fails. start owns inst: on
// failure it closes it.
func start(ctx context.Context, cfg Config, inst instance, onClose func()) (*DB, error) {
	for _, stmt := range runSettings(cfg) {
		if _, err := inst.conn.ExecContext(ctx, stmt, nil); err != nil {
			inst.close()
			if onClose != nil {
				onClose()
			}
			return nil, fmt.Errorf("duckdb: configure (%s): %w", stmt, err)
		}
	}
	closing, cancel := context.WithCancelCause(context.Background())
	return &DB{cfg: cfg, inst: inst, onClose: onClose, closing: closing, close: cancel, conn: inst.conn}, nil
}

// Close interrupts the call in progress, if any, waits for it to return,
// and frees the database (about 2 ms). It is idempotent; calls after Close
// fail with KindCanceled wrapping ErrClosed.
func (db *DB) Close() error {
	db.close(ErrClosed)
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.conn == nil {
		return nil
	}
	err := db.inst.close()
	db.conn = nil
	if db.onClose != nil {
		db.onClose()
	}
	if err != nil {
		return fmt.Errorf("duckdb: close: %w", err)
	}
	return nil
}

// acquire locks the DB for one call and returns the call's context, which
// also ends when Close starts. release must be called when the call is done.
func (db *DB) acquire(ctx context.Context, op string) (conn *duck.Conn, cctx context.Context, release func(), err error) {
	db.mu.Lock()
	if db.conn == nil {
		db.mu.Unlock()
		return nil, nil, nil, &Error{Kind: KindCanceled, Message: op + ": the database is closed", err: ErrClosed}
	}
	cctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(db.closing, func() { cancel(ErrClosed) })
	release = func() {
		stop()
		cancel(nil)
		db.mu.Unlock()
	}
	if err := context.Cause(cctx); err != nil {
		release()
		return nil, nil, nil, wrap(cctx, op, err)
	}
	return db.conn, cctx, release, nil
}

// Exec runs one or more SQL statements separated by semicolons and
// discards their results.
//
//	err := db.Exec(ctx, "CREATE TABLE t AS SELECT * FROM range(10); DELETE FROM t WHERE range > 5")
func (db *DB) Exec(ctx context.Context, sql string) error {
	conn, ctx, release, err := db.acquire(ctx, "exec")
	if err != nil {
		return err
	}
	defer release()
	_, err = conn.ExecContext(ctx, sql, nil)
	return wrap(ctx, "exec", err)
}

// wrap turns an error from the driver into an *Error. ctx is the call's
// context: once it has ended, whatever DuckDB says (usually "INTERRUPT
// Error: Interrupted!") is reported as a cancellation.
func wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if cerr := context.Cause(ctx); cerr != nil {
		msg := op + ": interrupted"
		switch {
		case errors.Is(cerr, ErrClosed):
			msg = op + ": the database was closed"
		case errors.Is(cerr, context.DeadlineExceeded):
			msg = op + ": interrupted at the deadline"
		}
		return &Error{Kind: KindCanceled, Message: msg, err: cerr}
	}
	var de *duck.Error
	if errors.As(err, &de) && de.Msg != "" {
		kind := KindSQL
		switch de.Type {
		case duck.ErrorTypeOutOfMemory:
			kind = KindMemory
		case duck.ErrorTypeInterrupt:
			kind = KindCanceled
		}
		return &Error{Kind: kind, Message: cleanMessage(de.Msg), err: err}
	}
	// The driver's own errors (binding, conversion) read
	// "database/sql/driver: could not bind parameter: …".
	msg := strings.TrimPrefix(err.Error(), "database/sql/driver: ")
	return &Error{Kind: KindSQL, Message: op + ": " + cleanMessage(msg), err: err}
}

// cleanMessage trims the trailing newlines DuckDB leaves after its caret
// diagram, keeping the diagram: it points at the offending token.
func cleanMessage(s string) string {
	return strings.TrimRight(s, "\n ")
}
