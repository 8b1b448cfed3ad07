//go:build cgo

package duckdb

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Pool keeps up to size databases created ahead of time, so that a run
// does not wait for DuckDB's start-up (about 10 ms, most of it building
// the catalog of built-in functions). A database in the pool has only the
// run-independent start-up options and an open connection; Pool.Open
// applies the run's Config and locks it exactly as the package-level Open
// does, so a pooled database is indistinguishable from a fresh one.
// Databases are never returned to the pool: each serves one run.
//
//	pool := duckdb.NewPool(1) // once per worker
//	defer pool.Close()
//	db, err := pool.Open(ctx, cfg) // per run
//	defer db.Close()
//
// A replacement is made when a database from the pool is closed, not when
// it is taken: creating a database while the run uses its own slows both
// down (DuckDB's start-up contends with the running queries), while after
// Close the worker is between runs. A run that opens a database while the
// replacement is being made waits for it rather than making another.
//
// Notes: one goroutine makes the databases; NewPool starts it and Close
// stops and waits for it. A ready database costs a few megabytes. Pool is
// safe for concurrent use.
type Pool struct {
	ready chan instance
	need  chan struct{} // one token per database to make
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once

	mu sync.Mutex
	// pending counts the databases asked for and not yet in ready.
	// Guarded by mu.
	pending int
	// making is closed when a database asked for is in ready, or when
	// making one failed; nil when none is on its way. Guarded by mu.
	making chan struct{}
}

// NewPool starts filling a pool of size ready databases. Size zero or less
// means 1.
func NewPool(size int) *Pool {
	if size < 1 {
		size = 1
	}
	p := &Pool{
		ready: make(chan instance, size),
		need:  make(chan struct{}, size),
		stop:  make(chan struct{}),
	}
	for range size {
		p.need <- struct{}{}
	}
	p.pending, p.making = size, make(chan struct{})
	p.wg.Add(1) // Done when fill returns, after Close.
	go p.fill()
	return p
}

func (p *Pool) fill() {
	defer p.wg.Done()
	for {
		select {
		case <-p.stop:
			return
		case <-p.need:
		}
		for !p.make() {
			// Pool.Open creates its own when none is ready, and reports
			// the error to its caller; retry later.
			select {
			case <-p.stop:
				return
			case <-time.After(time.Second):
			}
		}
	}
}

// make makes one database and puts it in ready; it reports whether it did.
// While it works, Open waits for it rather than start another: what is
// left of a creation under way is less than a whole one, and two at once
// slow each other down.
func (p *Pool) make() bool {
	p.mu.Lock()
	if p.making == nil { // a retry
		p.making = make(chan struct{})
	}
	p.mu.Unlock()
	inst, err := create(context.Background())
	if err != nil {
		p.signal(false)
		return false
	}
	select {
	case p.ready <- inst:
	case <-p.stop:
		inst.close()
	}
	p.signal(true)
	return true
}

// signal wakes the Opens waiting for a database: one is in ready (made),
// or making one failed and is retried later, without them.
func (p *Pool) signal(made bool) {
	p.mu.Lock()
	done := p.making
	p.making = nil
	if made {
		p.pending--
		if p.pending > 0 {
			p.making = make(chan struct{})
		}
	}
	p.mu.Unlock()
	if done != nil {
		close(done)
	}
}

// replace asks for one more database, if the pool has room for it.
func (p *Pool) replace() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case p.need <- struct{}{}:
		p.pending++
		if p.making == nil {
			p.making = make(chan struct{})
		}
	default:
	}
}

// Open returns a database configured for one run, from the pool when one
// is ready and freshly created otherwise. See the package-level Open.
func (p *Pool) Open(ctx context.Context, cfg Config) (*DB, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	closed := &Error{Kind: KindCanceled, Message: "open: the pool is closed", err: ErrClosed}
	var inst instance
	select {
	case <-p.stop:
		return nil, closed
	case inst = <-p.ready:
		return start(ctx, cfg, inst, p.replace)
	default:
	}
	p.mu.Lock()
	making := p.making
	p.mu.Unlock()
	if making != nil {
		select {
		case inst = <-p.ready:
			return start(ctx, cfg, inst, p.replace)
		case <-making: // made, and perhaps taken by another Open; or failed
			select {
			case inst = <-p.ready:
				return start(ctx, cfg, inst, p.replace)
			default:
			}
		case <-ctx.Done():
			return nil, wrap(ctx, "open", ctx.Err())
		case <-p.stop:
			return nil, closed
		}
	}
	if inst, err = create(ctx); err != nil {
		return nil, err
	}
	return start(ctx, cfg, inst, p.replace)
}

// Close stops making databases, waits for the goroutine that makes them
// and frees the ready ones. Databases already handed out are not affected.
// It is idempotent.
func (p *Pool) Close() error {
	p.once.Do(func() { close(p.stop) })
	p.wg.Wait()
	var errs []error
	for {
		select {
		case inst := <-p.ready:
			errs = append(errs, inst.close())
		default:
			return errors.Join(errs...)
		}
	}
}
