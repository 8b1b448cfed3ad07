package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/pool"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// PythonConfig configures Python steps. Python runs in the machine's CPython,
// jailed (Linux namespaces, a read-only root, no network, seccomp,
// rlimits), forked per run from a warm zygote. Where the jail cannot be
// set up, Python is UNAVAILABLE (wrapping errors.ErrUnsupported); it never
// runs unjailed.
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

// pythonPool holds the Python runtimes, one per concurrent run, each with
// its own jailed zygote, started on first use.
type pythonPool struct {
	cfg  pyrt.Config
	off  bool
	free chan *pyrt.Runtime // idle runtimes

	mu      sync.Mutex
	all     []*pyrt.Runtime // guarded by mu
	lastErr error           // guarded by mu: why the last start failed
	closed  bool            // guarded by mu
}

func newPythonPool(c PythonConfig, size int) *pythonPool {
	return &pythonPool{
		cfg:  pyrt.Config{Python: c.Interpreter, SitePackages: c.SitePackages, Preload: c.Preload},
		off:  c.Disabled,
		free: make(chan *pyrt.Runtime, size),
	}
}

// get returns an idle runtime or starts one. The engine's scheduler bounds
// the runs in flight, so at most PoolSize runtimes exist.
func (p *pythonPool) get() (*pyrt.Runtime, error) {
	if p.off {
		return nil, fmt.Errorf("disabled in this engine's configuration: %w", errors.ErrUnsupported)
	}
	select {
	case rt := <-p.free:
		return rt, nil
	default:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	rt, err := pyrt.New(p.cfg)
	if err != nil {
		p.lastErr = err
		return nil, err
	}
	p.all = append(p.all, rt)
	return rt, nil
}

func (p *pythonPool) put(rt *pyrt.Runtime) {
	select {
	case p.free <- rt:
	default:
		rt.Close()
	}
}

// run executes a Python job, or fails it UNAVAILABLE when Python cannot
// start here. The job's built-in modules run where the engine runs
// JavaScript (see moduleHost).
func (p *pythonPool) run(ctx context.Context, job jsrt.Job, js runner) (*ipc.Event, error) {
	rt, err := p.get()
	if err != nil {
		return &ipc.Event{Kind: ipc.KindError, Error: &ipc.Failure{Code: ipc.CodeUnavailable,
			Message: "Python is not available: " + err.Error()}}, err
	}
	defer p.put(rt)
	var host pyrt.ModuleHost
	if len(job.Modules) > 0 {
		host = moduleHost(js)
	}
	return rt.RunWithModules(ctx, job, host), nil
}

// moduleHost is where a Python run's DuckDB and GLPK calls execute: the
// CPython process cannot load them (they are cgo in this binary), so they
// run where the engine's JavaScript runs. With process isolation, a jailed
// worker of the pool is leased for the run, from its first module call to
// its end; they never run in the host. In-process, the host's own runtime
// runs them, as it runs JavaScript steps' module calls.
func moduleHost(js runner) pyrt.ModuleHost {
	switch r := js.(type) {
	case *pool.Pool:
		return func(ctx context.Context, lim ipc.Limits, modules []string, deadline time.Time) pyrt.ModuleSession {
			return r.OpenModules(ctx, lim, modules, deadline)
		}
	case *jsrt.Runtime:
		return func(ctx context.Context, lim ipc.Limits, modules []string, deadline time.Time) pyrt.ModuleSession {
			return r.OpenModules(ctx, lim, modules, deadline)
		}
	}
	return nil
}

func (p *pythonPool) close() {
	p.mu.Lock()
	p.closed = true
	all := p.all
	p.all = nil
	p.mu.Unlock()
	for _, rt := range all {
		rt.Close()
	}
}
