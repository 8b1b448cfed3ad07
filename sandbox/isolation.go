package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/modules/npm"
	"github.com/stepbox/stepbox/internal/pool"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// Isolation says where JavaScript and TypeScript steps run.
type Isolation string

const (
	// IsolationProcess, the default, runs steps in a pool of jailed worker
	// processes that re-execute the host's own binary: each worker is in
	// new user, pid, net, mount, IPC and UTS namespaces on a read-only root
	// holding only the binary and its libraries, with no capabilities,
	// no_new_privs, a seccomp allowlist and a memory ceiling. A crash, an
	// engine bug or a runaway step there costs one run, never the host.
	IsolationProcess Isolation = "process"
	// IsolationInProcess runs steps on goroutines of the host process: the
	// lowest latency, for tests and trusted embeddings. A memory-safety bug
	// in the JavaScript engine then reaches the host.
	IsolationInProcess Isolation = "inprocess"
)

// DefaultGrace is how long a worker may outlive a run's wall-clock limit
// before it is killed, when Config.Grace is zero.
const DefaultGrace = time.Second

// runner executes jobs: a jsrt.Runtime in-process, or a pool of workers.
type runner interface {
	Run(ctx context.Context, job jsrt.Job) *ipc.Event
}

// newRunner starts the executor the configuration asks for, and returns the
// function that stops it.
func newRunner(r *resolved, py *python) (runner, func(context.Context), error) {
	switch r.Isolation {
	case IsolationInProcess:
		js, err := jsrt.New(jsrt.Config{Warm: r.Warm, Locales: r.Locales})
		if err != nil {
			return nil, nil, err
		}
		return js, func(context.Context) { js.Close() }, nil
	case IsolationProcess:
	default:
		return nil, nil, fmt.Errorf("isolation=%q: want %q or %q", r.Isolation, IsolationProcess, IsolationInProcess)
	}
	p, err := newPool(r, py.launcher)
	if err != nil {
		return nil, nil, err
	}
	return p, func(ctx context.Context) { _ = p.Close(ctx) }, nil
}

// newPool starts the jailed worker processes of an engine: those of every
// step with process isolation, those of Python steps in-process. python
// finds the launcher of their zygotes.
func newPool(r *resolved, python func() (*pyrt.Launcher, error)) (*pool.Pool, error) {
	w := r.workers
	pc := pool.Config{
		Size:             r.PoolSize,
		Warm:             r.Warm,
		Locales:          r.Locales,
		Grace:            r.Grace,
		MaxFrameBytes:    maxFrameBytes(r),
		Logger:           r.Logger,
		Python:           python,
		Standby:          w.standby,
		MaxRuns:          w.maxRuns,
		MaxAge:           w.maxAge,
		RetireAfterLimit: w.retireAfterLimit,
	}
	if !r.UnsafeNoJail {
		if caps := jail.Probe(); caps.Err() != nil {
			d := jail.Explain(caps)
			return nil, &JailUnavailableError{Cause: d.Cause, Fix: d.Fix, err: caps.Err()}
		}
		ids := w.hostIDs
		if w.defaultIDs {
			var err error
			if ids, err = takeDefaultIDs(r.PoolSize + w.standby); err != nil && r.Logger != nil {
				r.Logger.Warn("the workers share the jail's default host uid", "err", err)
			}
		}
		pc.HostIDs = pool.IDRange{First: ids.First, Count: ids.Count}
		jc := jail.Config{
			ReadOnlyBinds: jail.SystemLibraryBinds(),
			MemoryBytes:   int64(2*maxPlanMemory(r)+1024) << 20,
		}
		pc.Prepare = func(cmd *exec.Cmd, id pool.HostID) (pool.Handle, error) {
			jc := jc
			jc.HostUID, jc.HostGID = id.UID, id.GID
			h, err := jail.Prepare(cmd, jc)
			if err != nil {
				return nil, err
			}
			return h, nil
		}
	}
	return pool.New(pc)
}

// maxFrameBytes fits the largest value a frame may carry, plus room for
// its envelope. An execute frame carries the code, the input and the
// bundles of the packages the step imports.
func maxFrameBytes(r *resolved) int {
	m := 0
	for _, l := range r.plans {
		m = max(m, l.MaxResultBytes, l.MaxDataBytes+l.MaxCodeBytes+npm.MaxBundleBytes, l.MaxConsoleBytes)
	}
	return min(m+(1<<20), 1<<31)
}

func maxPlanMemory(r *resolved) int {
	m := 0
	for _, l := range r.plans {
		m = max(m, l.MemoryMB)
	}
	return m
}
