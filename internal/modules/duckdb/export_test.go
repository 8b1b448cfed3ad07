//go:build cgo

package duckdb

// Creates returns how many databases this process has made.
func Creates() int64 { return creates.Load() }

// Busy reports whether a call holds db: it runs, or is about to.
func Busy(db *DB) bool {
	if db.mu.TryLock() {
		db.mu.Unlock()
		return false
	}
	return true
}

// Ready returns how many databases the pool holds ready.
func Ready(p *Pool) int { return len(p.ready) }
