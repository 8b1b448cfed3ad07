package pool

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// zygote is the host's handle on a worker's Python zygote: a process the
// pool started and reaps like a worker, in a jail of its own, whose
// control socket it handed to the worker. The worker drives it; the host
// keeps the process and the check that no run left a named socket in its
// network namespace.
type zygote struct {
	*process
	z *pyrt.Zygote
}

// currentZygote returns w's zygote, or nil.
func (w *proc) currentZygote() *zygote {
	w.zmu.Lock()
	defer w.zmu.Unlock()
	return w.zygote
}

// sendPass passes f to the worker on its descriptor socket, unless the
// worker is gone and the reaper closed the socket: under zmu, so that the
// socket's descriptor is not closed, and its number perhaps reused by
// another worker's, while it is used.
func (w *proc) sendPass(f *os.File) error {
	w.zmu.Lock()
	defer w.zmu.Unlock()
	if w.passClosed {
		return fmt.Errorf("worker %d is gone", w.pid)
	}
	return sendFile(w.pass, f)
}

// ensureZygote makes sure that w, which the caller holds for a Python run,
// has a live zygote: it starts one for w's first Python run and hands its
// control socket to the worker. A worker whose zygote died is not given
// another: ok is false, and the caller retires the worker. A failure is
// the run's (UNAVAILABLE).
func (p *Pool) ensureZygote(w *proc) (ok bool, f *ipc.Failure) {
	if z := w.currentZygote(); z != nil {
		return z.usable(), nil
	}
	if p.cfg.Python == nil {
		return true, &ipc.Failure{Code: ipc.CodeUnavailable, Message: "Python is not available to this pool"}
	}
	l, err := p.cfg.Python()
	if err != nil {
		return true, &ipc.Failure{Code: ipc.CodeUnavailable, Message: "Python is unavailable: " + err.Error()}
	}
	if w.pass == nil {
		return true, &ipc.Failure{Code: ipc.CodeUnavailable, Message: "Python is not available on this system"}
	}
	if err := p.startZygote(w, l); err != nil {
		p.mu.Lock()
		p.lastErr, p.lastAt = err, time.Now()
		p.mu.Unlock()
		p.log.Warn("zygote failed", logPID, w.pid, logErr, err)
		return true, &ipc.Failure{Code: ipc.CodeUnavailable, Message: "Python is unavailable: " + err.Error()}
	}
	return true, nil
}

// startZygote starts a Python zygote for w (w.zygote from its start),
// waits until it is ready, measures it, and hands its control socket to
// the worker (the zygote frame follows the socket).
func (p *Pool) startZygote(w *proc, l *pyrt.Launcher) error {
	cmd, control, err := l.Command()
	if err != nil {
		return err
	}
	defer control.Close()
	child := cmd.ExtraFiles[0]
	prepare := func(cmd *exec.Cmd) (Handle, error) {
		h, err := jail.Prepare(cmd, l.Jail(w.id.UID, w.id.GID))
		if err != nil {
			return nil, err
		}
		return h, nil
	}
	// The zygote is w's from its start: the worker's supervisor, when the
	// worker goes, kills it and waits for it to be reaped before the slot
	// (and its host id) takes another worker. zmu orders the two.
	w.zmu.Lock()
	if w.zclosed {
		w.zmu.Unlock()
		child.Close()
		return fmt.Errorf("worker %d is gone", w.pid)
	}
	pr, err := p.startProcess("zygote", cmd, prepare, nil)
	child.Close() // the zygote's now: its exit must close the socket
	if err != nil {
		w.zmu.Unlock()
		return err
	}
	z := &zygote{process: pr}
	w.zygote = z
	w.zmu.Unlock()
	fail := func(err error) error {
		z.kill("")
		<-z.exited
		w.zmu.Lock()
		if w.zygote == z {
			w.zygote = nil
		}
		w.zmu.Unlock()
		return fmt.Errorf("%w (%s)", err, z.diagnostics())
	}
	if z.z, err = l.Ready(control, pr.pid); err != nil {
		return fail(err)
	}
	b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameZygote, Zygote: &z.z.Info}, p.cfg.MaxFrameBytes)
	if err != nil {
		z.z.Close()
		return fail(err)
	}
	if err := w.sendPass(control); err != nil {
		z.z.Close()
		return fail(fmt.Errorf("pass the control socket to worker %d: %w", w.pid, err))
	}
	if err := w.write(b, time.Now().Add(p.cfg.StartTimeout)); err != nil {
		z.z.Close()
		return fail(fmt.Errorf("send the zygote frame to worker %d: %w", w.pid, err))
	}
	p.log.Debug("zygote started", logPID, z.pid, "worker", w.pid)
	return nil
}
