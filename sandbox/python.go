package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/pool"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// PythonConfig configures Python steps. Python runs in the machine's CPython,
// jailed (Linux namespaces, a read-only root, no network, seccomp,
// rlimits), forked per run from a warm zygote that belongs to one worker
// process. Where the jail cannot be set up, Python is UNAVAILABLE (wrapping
// errors.ErrUnsupported); it never runs unjailed.
type PythonConfig struct {
	// Disabled turns Python off: Python requests are UNAVAILABLE.
	Disabled bool `json:"disabled,omitempty"`
	// Interpreter is the python3 to use. Empty means /usr/bin/python3 if
	// present, else python3 from PATH.
	Interpreter string `json:"interpreter,omitempty"`
	// SitePackages are extra directories bound read-only and added to
	// sys.path (e.g. a virtualenv's site-packages).
	SitePackages []string `json:"sitePackages,omitempty"`
	// Preload lists modules each zygote imports once, before any run.
	// Nil means json, re, datetime, decimal, statistics, math,
	// collections, itertools, functools.
	Preload []string `json:"preload,omitempty"`
}

// python is the engine's Python: the launcher of the zygotes, found on the
// first Python run, and the workers that run Python steps — the engine's
// pool with process isolation, a pool of its own in-process (started on
// the first Python run), since a Python step always runs in a worker that
// owns its zygote, and its module calls run in that worker.
type python struct {
	launcher func() (*pyrt.Launcher, error) // once
	tried    atomic.Bool                    // launcher has been called

	mu     sync.Mutex
	pool   *pool.Pool // guarded by mu: in-process only, started on first use
	closed bool       // guarded by mu
}

func newPython(c PythonConfig) *python {
	cfg := pyrt.Config{Python: c.Interpreter, SitePackages: c.SitePackages, Preload: c.Preload}
	return &python{launcher: sync.OnceValues(func() (*pyrt.Launcher, error) {
		if c.Disabled {
			return nil, fmt.Errorf("disabled in this engine's configuration: %w", errors.ErrUnsupported)
		}
		return pyrt.NewLauncher(cfg)
	})}
}

// pythonPool returns the workers that run Python steps, or why there are
// none.
func (e *Engine) pythonPool() (*pool.Pool, error) {
	e.py.tried.Store(true)
	if _, err := e.py.launcher(); err != nil {
		return nil, err
	}
	if p, ok := e.js.(*pool.Pool); ok {
		return p, nil
	}
	py := e.py
	py.mu.Lock()
	defer py.mu.Unlock()
	if py.closed {
		return nil, ErrClosed
	}
	if py.pool == nil {
		p, err := newPool(e.cfg, py.launcher)
		if err != nil {
			return nil, err
		}
		py.pool = p
	}
	return py.pool, nil
}

// runPython runs a Python job on a worker of group (see Workers), or
// fails it UNAVAILABLE when Python cannot run here; err is then why.
func (e *Engine) runPython(ctx context.Context, group string, job jsrt.Job) (*ipc.Event, error) {
	p, err := e.pythonPool()
	if err != nil {
		return ipc.Failed(&ipc.Failure{Code: ipc.CodeUnavailable, Message: "Python is not available: " + err.Error()}, ipc.Stats{}), err
	}
	job.Language = ipc.LanguagePython
	return p.RunGroup(ctx, group, job), nil
}

// close stops the in-process engine's Python workers, letting runs finish
// until ctx ends.
func (py *python) close(ctx context.Context) {
	py.mu.Lock()
	py.closed = true
	p := py.pool
	py.mu.Unlock()
	if p != nil {
		_ = p.Close(ctx)
	}
}
