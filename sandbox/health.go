package sandbox

import (
	"time"

	"github.com/stepbox/stepbox/internal/pool"
)

// Health is a snapshot of an engine's capacity and of the processes that
// run its steps, for readiness probes, metrics and dashboards.
type Health struct {
	// Isolation is the engine's isolation mode.
	Isolation Isolation
	// Running counts runs executing; Queued, runs waiting for a slot.
	// PoolSize and QueueSize are their capacities (Config).
	Running, Queued     int
	PoolSize, QueueSize int

	// Workers describes the JavaScript workers. In-process, there are no
	// processes: the pool is goroutines, always up, and Workers.Up equals
	// PoolSize.
	Workers WorkerHealth
	// Python describes the Python runtimes (one jailed zygote each).
	Python PythonHealth
}

// WorkerHealth describes a pool of worker processes.
type WorkerHealth struct {
	Size int // configured workers
	Up   int // started and alive
	Busy int // running a step
	// Restarts counts worker starts after each slot's first: replacements
	// of workers that crashed, were killed for a deadline or for breaking
	// the protocol, and retries of failed starts.
	Restarts int
	// Failing counts workers whose last starts all failed; they are retried
	// with exponential backoff.
	Failing int
	// LastError says why the last worker start failed or the last worker
	// died; LastErrorAt is when. Empty when nothing went wrong.
	LastError   string
	LastErrorAt time.Time
}

// PythonHealth describes the Python runtimes.
type PythonHealth struct {
	// Disabled is set when the configuration turned Python off.
	Disabled bool
	// Runtimes counts the started runtimes; Python starts them on first use,
	// so zero is normal before the first Python run.
	Runtimes int
	// LastError says why the last runtime could not start.
	LastError string
}

// Ready reports whether the engine can take a run now: it is not closed,
// at least one worker is up, and the queue has room.
func (h Health) Ready() (bool, string) {
	switch {
	case h.Workers.Up == 0 && h.Workers.LastError != "":
		return false, "no worker is up: " + h.Workers.LastError
	case h.Workers.Up == 0:
		return false, "no worker is up yet"
	case h.Running >= h.PoolSize && h.Queued >= h.QueueSize:
		return false, "saturated: every slot busy and the queue full"
	}
	return true, ""
}

// healthReporter is implemented by runners with processes to report on.
type healthReporter interface {
	Health() pool.Health
}

// Health returns a snapshot of the engine's load and workers. It is cheap:
// a server may call it on every probe and scrape.
func (e *Engine) Health() Health {
	running, queued, poolSize, queueSize := e.Load()
	h := Health{
		Isolation: IsolationProcess,
		Running:   running, Queued: queued, PoolSize: poolSize, QueueSize: queueSize,
		Python: e.py.health(),
	}
	if e.cfg.Isolation != "" {
		h.Isolation = e.cfg.Isolation
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	switch r := e.js.(type) {
	case healthReporter:
		p := r.Health()
		h.Workers = WorkerHealth{Size: p.Size, Up: p.Up, Busy: p.Busy, Restarts: p.Restarts,
			Failing: p.Failing, LastError: p.LastError, LastErrorAt: p.LastErrorAt}
	default:
		h.Workers = WorkerHealth{Size: poolSize, Up: poolSize, Busy: running}
	}
	if closed {
		h.Workers.Up, h.Workers.Busy = 0, 0
		h.Workers.LastError = ErrClosed.Error()
	}
	return h
}

func (p *pythonPool) health() PythonHealth {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := PythonHealth{Disabled: p.off, Runtimes: len(p.all)}
	if p.lastErr != nil {
		h.LastError = p.lastErr.Error()
	}
	return h
}
