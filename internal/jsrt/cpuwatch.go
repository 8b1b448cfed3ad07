package jsrt

import (
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
)

// OverrunCPU is how far past its CPU limit a run may get before Job.Overrun
// ends it, for a CPU limit of limit: 5% and 5 ms, half of what the limits
// promise (a CPU limit ends a run within 10% and 10 ms of it), which
// leaves the other half for the end itself (polling, the terminal frame,
// a worker's exit).
func OverrunCPU(limit time.Duration) time.Duration {
	return limit + limit/20 + 5*time.Millisecond
}

// minStopCPU is the CPU time a stopped VM is always given to notice the
// interrupt before it counts as stuck: the engine polls it every few
// thousand instructions, well within this.
const minStopCPU = 2 * time.Millisecond

// armCPU starts the CPU watchdog. It checks the VM thread's CPU clock
// when the budget could first be spent (CPU time never runs faster than
// the wall clock on one thread) and again when it could be spent next, so
// a step that mostly waits costs no polling. At the limit it stops the run
// (the engine's interrupt ends the step at its next instruction); past
// OverrunCPU, if the VM is still inside the same call into the engine,
// the step is in one long native call that no interrupt reaches, and the
// watchdog ends the run without it (overrun). It keeps watching after any
// other stop, so a stuck run ends by its CPU limit whatever stopped it.
//
// The timer can fire before AfterFunc has returned (a small limit, a busy
// machine); checkCPU resets rn.cpuTimer, so it waits until the field is
// set.
func (rn *run) armCPU() {
	armed := make(chan struct{})
	rn.cpuTimer = time.AfterFunc(time.Duration(rn.job.Limits.CPUMs)*time.Millisecond, func() {
		<-armed
		rn.checkCPU()
	})
	close(armed)
}

func (rn *run) checkCPU() {
	select {
	case <-rn.exited:
		return // finish stopped the timer; this check was already running
	default:
	}
	limit := time.Duration(rn.job.Limits.CPUMs) * time.Millisecond
	used := rn.cpu.used()
	if used < limit {
		rn.cpuTimer.Reset(max(limit-used, time.Millisecond))
		return
	}
	rn.stop(rn.timeout(ipc.LimitCPU)) // unless a stop came first
	if !rn.cpu.busy() {
		return // the VM let go: the event loop ends the run
	}
	at := rn.stopCPU.Load()
	if at == 0 {
		at = int64(used)
		rn.stopCPU.Store(at)
	}
	deadline := max(OverrunCPU(limit), time.Duration(at)+minStopCPU)
	if used < deadline {
		rn.cpuTimer.Reset(max(deadline-used, time.Millisecond))
		return
	}
	rn.overrun()
}

// overrun ends a run whose VM is stuck past its CPU limit, on the CPU
// watchdog's goroutine: it decides the terminal event (the reason the run
// was stopped) and hands it to Job.Overrun. Run returns the same event
// when the VM lets go.
func (rn *run) overrun() {
	if rn.job.Overrun == nil {
		return
	}
	f := rn.reason()
	ev := ipc.Failed(&ipc.Failure{Code: f.Code, Limit: f.Limit, Name: f.Name, Message: f.Message}, ipc.Stats{})
	rn.fillStats(ev)
	// Under endMu: Run, which decides through end too, cannot return
	// before Overrun has.
	rn.endMu.Lock()
	defer rn.endMu.Unlock()
	if rn.ended != nil {
		return // the run ended meanwhile
	}
	rn.ended = ev
	rn.job.Overrun(ev)
}
