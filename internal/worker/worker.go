// Package worker is the child side of the process pool: the code that runs
// inside a re-executed copy of the host's own binary, speaks the ipc frame
// protocol with the host, and runs one step at a time in its own warm
// jsrt.Runtime.
//
// A process becomes a worker when the environment variable EnvSwitch is
// set; the host's pool sets it (and nothing else) when it starts one. The
// binary must give the worker control early, before its own main does
// anything:
//
//	func init() { worker.MaybeRun(worker.Config{}) } // never returns in a worker
//
// or, in a test binary,
//
//	func TestMain(m *testing.M) {
//		if worker.Enabled() {
//			os.Exit(worker.Main(worker.Config{}))
//		}
//		os.Exit(m.Run())
//	}
//
// # Descriptors
//
// The worker reads frames from descriptor 3 and writes frames to descriptor
// 4 (pool puts its pipes there with exec.Cmd.ExtraFiles). Descriptor 5 is a
// unix socket on which the host passes descriptors: the control socket of a
// Python zygote it started for this worker, before the zygote frame that
// announces it. Standard input and
// output are not used: a stray print from a library cannot corrupt the
// protocol. Standard error stays open for the Go runtime's panic and fatal
// error reports; the host logs what it reads there. Any other descriptor the
// process inherited (one the host itself inherited without close-on-exec)
// is closed after Config.Enter, before the worker serves.
//
// # Trust
//
// The host is trusted and the worker is not: the worker runs guest code,
// so the host checks and recounts everything the worker says. The worker
// checks the host's frames only to fail loudly on a bug.
//
// # Lifetime
//
// The worker exits when descriptor 3 reaches end of file (the host closed
// it, or died), when its parent process changes (the host died and the
// worker was re-parented; on Linux the host also sets PR_SET_PDEATHSIG to
// SIGKILL), or when writing to descriptor 4 fails. It also exits, with
// status ExitOverrun, after a run it could not stop: a step stuck in one
// native call of the engine past its CPU limit (jsrt.Job.Overrun) keeps
// its goroutine busy until the call returns, if ever, and only the end of
// the process stops it. The worker first sends the run's terminal frame,
// marked Exiting (TIMEOUT cpuMs, or whichever limit stopped the run
// first), so the run ends with its limit, not CRASHED.
package worker

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
)

// EnvSwitch is the environment variable that turns a process into a worker.
// Its value is the protocol version the host speaks (SwitchValue).
const EnvSwitch = "STEPBOX_WORKER"

// SwitchValue is the value of EnvSwitch that this binary's workers accept.
var SwitchValue = fmt.Sprint(ipc.ProtocolVersion)

// The descriptors the worker speaks the protocol on.
const (
	InFD   = 3 // frames from the host
	OutFD  = 4 // frames to the host
	PassFD = 5 // descriptors from the host (a unix SOCK_SEQPACKET socket)
)

// Runner runs one job and returns its one terminal event, with the
// semantics of (*jsrt.Runtime).Run. *jsrt.Runtime is the Runner of
// JavaScript steps.
type Runner interface {
	Run(ctx context.Context, job jsrt.Job) *ipc.Event
	Close()
}

// Config configures a worker. The zero value is a JavaScript worker with no
// jail on descriptors 3 and 4.
type Config struct {
	// Enter, if set, confines the process (see internal/jail). It is called
	// first, before the worker reads any descriptor or loads its runtime,
	// because a jail may re-execute the process (losing everything done
	// before) and may hide the file system; whatever the worker needs later
	// it gets over its pipes. An error ends the worker with exit status 1
	// before it serves anything: a worker never runs unconfined when a
	// jail was asked for.
	Enter func() error

	// NewRunner makes the Runner once the host's hello has said how many
	// warm runtimes to keep. Nil means jsrt.New. It is an extension point
	// for other runtimes and for tests that inject faults; a guest has no
	// way to reach it.
	NewRunner func(jsrt.Config) (Runner, error)

	// In, Out and Pass replace descriptors 3, 4 and 5 (for tests that run
	// a worker in-process over os.Pipe pairs and a socketpair). Nil In and
	// Out mean the descriptors; a nil Pass then means descriptor 5, and
	// otherwise none: such a worker cannot be given a Python zygote.
	In, Out, Pass *os.File

	// WatchParent makes the worker exit when its parent process changes.
	// Main sets it when it uses the real descriptors; in-process tests
	// leave it off.
	WatchParent bool
}

// Enabled reports whether this process was started as a worker.
func Enabled() bool {
	_, ok := os.LookupEnv(EnvSwitch)
	return ok
}

// MaybeRun turns the process into a worker if it was started as one: it
// runs Main and exits with its status, never returning. Otherwise it
// returns at once. Call it from a package init or the start of main.
func MaybeRun(cfg Config) {
	if Enabled() {
		os.Exit(Main(cfg))
	}
}

// Main runs the worker until the host goes away and returns the process's
// exit status: 0 after a clean end of input, 1 after an error (reported on
// standard error).
func Main(cfg Config) int {
	if err := serve(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "stepbox worker: %v\n", err)
		return 1
	}
	return 0
}

// errHostGone reports that the host's end of a pipe is gone.
var errHostGone = errors.New("worker: the host is gone")

func serve(cfg Config) error {
	// The worker owns its descriptors: the host sees end of file however
	// it ends.
	for _, f := range []*os.File{cfg.In, cfg.Out, cfg.Pass} {
		if f != nil {
			defer f.Close()
		}
	}
	if cfg.In == nil && cfg.Out == nil {
		if v := os.Getenv(EnvSwitch); v != SwitchValue {
			return fmt.Errorf("%s=%q: this binary speaks protocol %s", EnvSwitch, v, SwitchValue)
		}
		cfg.WatchParent = true
	}
	if cfg.Enter != nil {
		if err := cfg.Enter(); err != nil {
			return fmt.Errorf("enter jail: %w", err)
		}
	}
	// Nothing started by the worker needs the switch; a child that saw it
	// would try to become a worker itself. Not before Enter: a jail that
	// re-executes the process needs the switch to come back here.
	_ = os.Unsetenv(EnvSwitch)
	in, out, pass := cfg.In, cfg.Out, cfg.Pass
	if in == nil && out == nil {
		closeInherited()
		pass = passFile()
	}
	if in == nil {
		in = os.NewFile(InFD, "stepbox-in")
	}
	if out == nil {
		out = os.NewFile(OutFD, "stepbox-out")
	}

	for _, f := range []*os.File{in, out} {
		if _, err := f.Stat(); err != nil {
			return fmt.Errorf("descriptor %s is not open (start workers with package pool): %w", f.Name(), err)
		}
	}
	newRunner := cfg.NewRunner
	if newRunner == nil {
		newRunner = func(c jsrt.Config) (Runner, error) { return jsrt.New(c) }
	}
	// A worker on the real descriptors is its own process, and exits
	// after a run it could not stop; one in-process (tests) ends serve.
	s := newServer(in, out, newRunner, cfg.WatchParent, cfg.In == nil && cfg.Out == nil)
	s.pass = pass
	return s.serve()
}
