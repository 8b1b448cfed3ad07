package pyrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
)

// Runner is the worker's side of Python: it runs Python steps, one at a
// time, each in a process forked from the zygote whose control socket the
// host passed to this worker (the host started the zygote with a
// Launcher). A run's module calls go to modules, the worker's own
// JavaScript runtime, so DuckDB and GLPK run where the step's worker is.
//
//	r, err := pyrt.NewRunner(control, info, rt.OpenModules)
//	ev, retire := r.Run(ctx, job)   // retire != "": this worker must serve no other run
//	r.Close()
//
// Notes: Run is safe for concurrent use; concurrent calls take turns. When
// the zygote dies, the run on it is CRASHED and every later run too: the
// host replaces the worker. After every run the zygote empties /tmp and
// proves it back to how it was when it started; where that fails, the
// run keeps its outcome and Run's retire says why. Close ends a run in
// progress (ABORTED) and closes the control socket, which makes the zygote
// kill its processes and exit.
type Runner struct {
	info    ipc.Zygote
	z       *zygote
	modules ModuleHost

	mu sync.Mutex // held by a run

	closeCtx  context.Context // done once Close starts
	closeNow  context.CancelFunc
	closeOnce sync.Once
}

// NewRunner takes over control, the control socket of a zygote the host
// started and described with info. The Runner owns control from then on.
// modules runs the module calls of the steps that were granted modules;
// nil means none may be.
func NewRunner(control *os.File, info ipc.Zygote, modules ModuleHost) (*Runner, error) {
	if err := info.Check(); err != nil {
		control.Close()
		return nil, fmt.Errorf("pyrt: %w", err)
	}
	z, err := newZygote(control)
	control.Close() // newZygote has its own descriptor
	if err != nil {
		return nil, err
	}
	r := &Runner{info: info, z: z, modules: modules}
	r.closeCtx, r.closeNow = context.WithCancel(context.Background())
	return r, nil
}

// Dead reports whether the zygote's control socket is gone: no run can
// start any more.
func (r *Runner) Dead() bool { return r.z.isDead() }

// Close ends the run in progress (ABORTED) and stops the zygote. It is
// idempotent.
func (r *Runner) Close() {
	r.closeOnce.Do(func() {
		r.closeNow()
		r.mu.Lock() // the run in progress sees closeCtx and ends
		r.z.stop()
		r.mu.Unlock()
	})
}

// Run executes one step and returns its terminal event, with the semantics
// of (*jsrt.Runtime).Run: it blocks until the step ends (returns, raises,
// crosses a limit, or ctx ends: ABORTED), and every call returns exactly
// one terminal event; Stats.QueueMs is left for the caller. The host has
// checked the job (its size, its input's JSON, its modules against the
// plan). retire, if not empty, says why the worker must serve no other
// run: what the run left in the zygote's jail could not be proven gone,
// or the zygote is gone.
func (r *Runner) Run(ctx context.Context, job Job) (ev *ipc.Event, retire string) {
	if f := checkModules(job.Modules, r.modules); f != nil {
		return ipc.Failed(f, ipc.Stats{}), ""
	}
	input := job.Input
	if strings.TrimSpace(string(input)) == "" {
		input = json.RawMessage("null")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closeCtx.Err() != nil {
		return ipc.Failed(closed(), ipc.Stats{}), ""
	}
	spare, err := r.z.takeSpare(ctx, r.closeCtx, time.Duration(r.info.StartTimeoutMs)*time.Millisecond)
	if err != nil {
		var dirty *dirtyError
		switch {
		case ctx.Err() != nil:
			return ipc.Failed(ipc.Aborted(ctx), ipc.Stats{}), ""
		case r.closeCtx.Err() != nil:
			return ipc.Failed(closed(), ipc.Stats{}), ""
		case errors.As(err, &dirty):
			// The spare of an earlier run died unused and left what could
			// not be proven gone: this run did not start.
			return ipc.Failed(&ipc.Failure{Code: ipc.CodeCrashed, Message: err.Error()}, ipc.Stats{}), dirty.reason
		}
		r.z.stop()
		return ipc.Failed(&ipc.Failure{Code: ipc.CodeCrashed, Message: err.Error()}, ipc.Stats{}), err.Error()
	}
	rn := newRun(ctx, r, spare, job, input)
	ev = rn.execute()
	switch {
	case rn.zygoteBroken:
		r.z.stop()
		return ev, "the Python zygote died or did not end a run"
	case rn.exit != nil && rn.exit.Dirty != "":
		return ev, "the Python zygote is not clean: " + rn.exit.Dirty
	}
	return ev, ""
}

func closed() *ipc.Failure {
	return &ipc.Failure{Code: ipc.CodeUnavailable, Message: "the Python runtime is closed"}
}
