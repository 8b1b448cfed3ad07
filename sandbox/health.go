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
	// Standby is how many workers beyond Size are kept bound to no group
	// (Workers.Standby); Unbound counts the started workers bound to none
	// yet.
	Standby, Unbound int
	// Retired counts the workers replaced before they died: by the Workers
	// policy (runs, age, a run that crossed a limit, room for another
	// group) or because a run's leftovers could not be proven gone.
	// LastRetired says why the last one was.
	Retired     int
	LastRetired string
	// Processes lists the worker processes that are up.
	Processes []WorkerProcess
}

// WorkerProcess describes one worker process.
type WorkerProcess struct {
	PID  int  // as the host sees it
	Busy bool // running a step
	// Bound is set once the worker has served a run: from then on it
	// serves that run's group only (see Workers).
	Bound   bool
	Runs    int // runs it completed
	Started time.Time
	// ZygotePID is the host's pid of the worker's Python zygote, zero
	// until its first Python run.
	ZygotePID int
}

// PythonHealth describes Python: each worker that has run a Python step
// owns one jailed zygote, which it keeps until it is retired.
type PythonHealth struct {
	// Disabled is set when the configuration turned Python off.
	Disabled bool
	// Zygotes counts the zygotes that are up. A worker starts its zygote
	// at its first Python run, so zero is normal before then.
	Zygotes int
	// Workers describes, in-process, the worker processes that run the
	// Python steps (with process isolation they are Health.Workers).
	Workers *WorkerHealth `json:",omitempty"`
	// LastError says why Python cannot run here (the interpreter or the
	// jail is missing), once a Python run has found out.
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
		Python: PythonHealth{Disabled: e.cfg.Python.Disabled},
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
		h.Workers = workerHealth(p)
		h.Python.Zygotes = p.Zygotes
	default:
		h.Workers = WorkerHealth{Size: poolSize, Up: poolSize, Busy: running}
		e.py.mu.Lock()
		p := e.py.pool
		e.py.mu.Unlock()
		if p != nil {
			ph := p.Health()
			wh := workerHealth(ph)
			h.Python.Workers, h.Python.Zygotes = &wh, ph.Zygotes
		}
	}
	if e.py.tried.Load() {
		if _, err := e.py.launcher(); err != nil && !e.cfg.Python.Disabled {
			h.Python.LastError = err.Error()
		}
	}
	if closed {
		h.Workers.Up, h.Workers.Busy, h.Workers.Unbound, h.Workers.Processes = 0, 0, 0, nil
		h.Workers.LastError = ErrClosed.Error()
	}
	return h
}

func workerHealth(p pool.Health) WorkerHealth {
	h := WorkerHealth{Size: p.Size, Up: p.Up, Busy: p.Busy, Restarts: p.Restarts,
		Failing: p.Failing, LastError: p.LastError, LastErrorAt: p.LastErrorAt,
		Standby: p.Standby, Unbound: p.Unbound, Retired: p.Retired, LastRetired: p.LastRetired}
	for _, w := range p.Workers {
		wp := WorkerProcess{PID: w.PID, Busy: w.Busy, Bound: w.Bound, Runs: w.Runs, Started: w.Started}
		if w.Zygote != nil && w.Zygote.Up {
			wp.ZygotePID = w.Zygote.PID
		}
		h.Processes = append(h.Processes, wp)
	}
	return h
}
