package pyrt

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jail"
)

// Runtime runs Python steps, each in a process forked from one warm, jailed
// python3 zygote. Runs take turns: one at a time per Runtime (a worker runs
// one step at a time anyway, and one run never shares the zygote's pid,
// IPC or /tmp with another).
//
//	rt, err := pyrt.New(pyrt.Config{})   // errors.Is(err, errors.ErrUnsupported): no Python here
//	defer rt.Close()
//	ev := rt.Run(ctx, pyrt.Job{Code: "return 1 + 1", Limits: lim, Host: host, Replies: replies})
//
// Notes: Run is safe for concurrent use; concurrent calls wait for their
// turn (the wait is not part of their wall time; ctx still aborts it). If
// the zygote dies, the run on it fails (CRASHED) and the next run starts a
// new one. After every run the zygote empties /tmp and proves it (and the
// host its unix sockets) back to how they were when it started; where
// that fails, the run keeps its outcome and the next run starts on a new
// zygote. Close ends runs in progress (ABORTED), stops the zygote and
// waits for it.
type Runtime struct {
	cfg  Config
	py   pythonInfo
	jail jail.Config
	spec string // launchSpec, JSON

	// turn holds a token while a run, a start or Close owns the zygote.
	turn chan struct{}
	// z is owned by the holder of turn.
	z *zygote
	// retired counts the zygotes replaced because what a run left in the
	// jail could not be proven gone, and retiredWhy says why the last one
	// was; both owned by the holder of turn.
	retired    int
	retiredWhy string

	closeCtx  context.Context // done once Close starts
	closeNow  context.CancelFunc
	closeOnce sync.Once
}

// New checks that Python can run jailed here, finds the interpreter and
// starts the zygote. Where the kernel refuses a layer of the jail or there
// is no usable python3, the error wraps errors.ErrUnsupported: Python is
// then unavailable, never run unjailed.
//
// The binary must call MaybeZygote first thing in main (see there).
func New(cfg Config) (*Runtime, error) {
	return newRuntime(cfg, "")
}

// newRuntime is New; testKeepTmp, for tests only, is a name in /tmp that
// the zygote's cleaner leaves alone, so that its proof fails.
func newRuntime(cfg Config, testKeepTmp string) (*Runtime, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := jail.Probe().Err(); err != nil {
		return nil, fmt.Errorf("pyrt: Python needs the jail: %w", err)
	}
	py, err := findPython(cfg.Python)
	if err != nil {
		return nil, err
	}
	binds, err := py.binds(cfg.SitePackages)
	if err != nil {
		return nil, err
	}
	filter, err := lockdownFilter()
	if err != nil {
		return nil, err
	}
	pc, err := json.Marshal(preludeConfig{
		Filter: hex.EncodeToString(filter), SysSeccomp: unix.SYS_SECCOMP,
		Path: cfg.SitePackages, Preload: cfg.Preload, TestKeepTmp: testKeepTmp,
	})
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(launchSpec{Python: py.Executable, Config: string(pc)})
	if err != nil {
		return nil, err
	}
	r := &Runtime{
		cfg: cfg,
		py:  py,
		jail: jail.Config{
			ReadOnlyBinds:    binds,
			TmpfsSizeBytes:   cfg.TmpfsSizeBytes,
			TmpfsInodes:      cfg.TmpfsInodes,
			MemoryBytes:      int64(cfg.MaxMemoryMB)<<20 + cfg.TmpfsSizeBytes + 256<<20,
			MaxProcs:         max(jail.DefaultMaxProcs, cfg.MaxProcs+8),
			MaxFileSizeBytes: cfg.MaxFileSizeBytes,
			CgroupParent:     cfg.CgroupParent,
			Syscalls:         zygoteRules(),
		},
		spec: string(spec),
		turn: make(chan struct{}, 1),
	}
	r.closeCtx, r.closeNow = context.WithCancel(context.Background())
	z, err := r.startZygote()
	if err != nil {
		return nil, err
	}
	r.z = z
	return r, nil
}

// Python returns the path of the interpreter the zygote runs.
func (r *Runtime) Python() string { return r.py.Executable }

// Version returns the interpreter's version ("3.11.2").
func (r *Runtime) Version() string {
	v := make([]string, len(r.py.Version))
	for i, n := range r.py.Version {
		v[i] = fmt.Sprint(n)
	}
	return strings.Join(v, ".")
}

// Close ends the runs in progress (ABORTED), stops the zygote and waits for
// it to be reaped. Later runs fail with UNAVAILABLE. Close is idempotent.
func (r *Runtime) Close() {
	r.closeOnce.Do(func() {
		r.closeNow()
		r.turn <- struct{}{} // the run in progress sees closeCtx and ends
		if r.z != nil {
			r.z.stop()
			r.z = nil
		}
		// The token stays: nothing runs after Close.
	})
}

// Run executes one step and returns its terminal event, with the
// semantics of (*jsrt.Runtime).Run: it blocks until the step ends (returns,
// raises, crosses a limit, or ctx ends: ABORTED), and every call returns
// exactly one terminal event; Stats.QueueMs is left for the caller. A job
// that asks for modules needs RunWithModules.
func (r *Runtime) Run(ctx context.Context, job Job) *ipc.Event {
	return r.RunWithModules(ctx, job, nil)
}

// RunWithModules is Run for a job that may ask for built-in modules
// (Job.Modules): the step gets them as the globals duckdb and glpk, and
// their calls go to a session that host opens at the first call. A job
// with modules and no host is UNAVAILABLE.
func (r *Runtime) RunWithModules(ctx context.Context, job Job, host ModuleHost) *ipc.Event {
	if f := checkModules(job.Modules, host); f != nil {
		return failure(f, ipc.Stats{})
	}
	if len(job.Code) > job.Limits.MaxCodeBytes {
		return failure(&ipc.Failure{
			Code:    ipc.CodeValidation,
			Limit:   ipc.LimitCode,
			Message: fmt.Sprintf("code is %d bytes, more than maxCodeBytes=%d", len(job.Code), job.Limits.MaxCodeBytes),
		}, ipc.Stats{})
	}
	input := job.Input
	if strings.TrimSpace(string(input)) == "" {
		input = json.RawMessage("null")
	}
	if !json.Valid(input) {
		return failure(&ipc.Failure{Code: ipc.CodeValidation, Message: "the input is not valid JSON"}, ipc.Stats{})
	}
	if err := ipc.CheckJSONDepth(input, ipc.MaxJSONDepth); err != nil {
		return failure(&ipc.Failure{Code: ipc.CodeValidation, Limit: ipc.LimitJSONDepth, Message: "the input is " + err.Error()}, ipc.Stats{})
	}
	select {
	case r.turn <- struct{}{}:
	case <-ctx.Done():
		return failure(aborted(ctx), ipc.Stats{})
	case <-r.closeCtx.Done():
		return failure(closed(), ipc.Stats{})
	}
	defer func() { <-r.turn }()
	if r.closeCtx.Err() != nil {
		return failure(closed(), ipc.Stats{})
	}
	spare, f := r.spare(ctx)
	if f != nil {
		return failure(f, ipc.Stats{})
	}
	rn := newRun(ctx, r, r.z, spare, job, input)
	rn.modHost = host
	ev := rn.execute()
	switch {
	case rn.zygoteBroken:
		r.z.stop()
		r.z = nil
	case rn.exit != nil && rn.exit.Dirty != "":
		r.retire(rn.exit.Dirty)
	default:
		if err := r.z.proveSockets(); err != nil {
			r.retire(err.Error())
		}
	}
	return ev
}

// spare returns the spare for the next run, starting a zygote first if
// there is none (or it died), and replacing one that reports that it is
// not clean.
//
// Preconditions: the caller holds turn.
func (r *Runtime) spare(ctx context.Context) (*zmsg, *ipc.Failure) {
	for attempt := 0; ; attempt++ {
		if r.z == nil || r.z.isDead() {
			if r.z != nil {
				r.z.stop()
				r.z = nil
			}
			z, err := r.startZygote()
			if err != nil {
				return nil, &ipc.Failure{Code: ipc.CodeUnavailable, Message: "Python is unavailable: " + err.Error()}
			}
			r.z = z
		}
		spare, err := r.z.takeSpare(ctx, r.closeCtx, r.cfg.StartTimeout)
		if err == nil {
			return spare, nil
		}
		switch {
		case ctx.Err() != nil:
			return nil, aborted(ctx)
		case r.closeCtx.Err() != nil:
			return nil, closed()
		}
		var dirty *dirtyError
		if errors.As(err, &dirty) && attempt == 0 {
			r.retire(dirty.reason)
			continue
		}
		r.z.stop()
		r.z = nil
		return nil, &ipc.Failure{Code: ipc.CodeCrashed, Message: err.Error()}
	}
}

// retire stops a zygote that must serve no other run, because what a run
// left in its jail could not be proven gone; the next run starts a new
// one. The run that left it keeps its outcome.
//
// Preconditions: the caller holds turn.
func (r *Runtime) retire(why string) {
	r.retired++
	r.retiredWhy = why
	r.z.stop()
	r.z = nil
}

func aborted(ctx context.Context) *ipc.Failure {
	msg := "the run was aborted"
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		msg += ": " + cause.Error()
	}
	return &ipc.Failure{Code: ipc.CodeAborted, Message: msg}
}

func closed() *ipc.Failure {
	return &ipc.Failure{Code: ipc.CodeUnavailable, Message: "the Python runtime is closed"}
}

func failure(f *ipc.Failure, st ipc.Stats) *ipc.Event {
	f.Stats = st
	return &ipc.Event{Kind: ipc.KindError, Error: f}
}
