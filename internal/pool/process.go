package pool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stepbox/stepbox/internal/forkserver"
	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/worker"
)

// DefaultCommand re-executes the running binary as a worker: on Linux
// through /proc/self/exe, so that a binary replaced on disk since the host
// started cannot slip in; elsewhere through os.Executable.
func DefaultCommand() (*exec.Cmd, error) {
	path := "/proc/self/exe"
	if runtime.GOOS != "linux" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("pool: find own executable: %w", err)
		}
		path = exe
	}
	return &exec.Cmd{Path: path, Args: []string{"stepbox-worker"}}, nil
}

// spawnRequest asks the spawner goroutine to start a command.
type spawnRequest struct {
	cmd  *exec.Cmd
	done chan spawned
}

// spawned is a started process and the read end of its standard error.
type spawned struct {
	proc   *os.Process
	stderr *os.File
	err    error
}

// spawner starts every worker from one OS thread that nothing else runs
// on. Linux delivers a child's parent-death signal when the thread that
// forked it exits, not the process: if workers were forked from arbitrary
// threads, a thread retired by the Go runtime (after a goroutine that had
// locked it exits) would SIGKILL healthy workers. The fork server, which
// forks the jailed ones, is started from this thread too: what it forks
// is this thread's child.
func (p *Pool) spawner() {
	defer p.spawnWG.Done()
	runtime.LockOSThread()
	// Never unlocked: when the spawner returns, at the end of Close, its
	// thread exits, and the kernel kills any worker it started that is
	// somehow still alive.
	var fs *forkserver.Server
	defer func() {
		if fs != nil {
			_ = fs.Close()
		}
	}()
	for {
		select {
		case r := <-p.spawnc:
			r.done <- p.startOn(&fs, r.cmd)
		case <-p.spawnDone:
			return
		}
	}
}

func (p *Pool) spawn(cmd *exec.Cmd) spawned {
	r := spawnRequest{cmd: cmd, done: make(chan spawned, 1)}
	select {
	case p.spawnc <- r:
	case <-p.spawnDone:
		return spawned{err: ErrClosed}
	}
	return <-r.done
}

// startOn starts cmd, on the spawner thread, with /dev/null as its
// standard input and output and a pipe as its standard error.
func (p *Pool) startOn(fs **forkserver.Server, cmd *exec.Cmd) spawned {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return spawned{err: err}
	}
	defer null.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		return spawned{err: err}
	}
	defer errW.Close()
	env := cmd.Env
	if env == nil {
		env = []string{} // never the host's
	}
	attr := &os.ProcAttr{
		Dir:   cmd.Dir,
		Env:   env,
		Files: append([]*os.File{null, null, errW}, cmd.ExtraFiles...),
		Sys:   cmd.SysProcAttr,
	}
	proc, err := p.fork(fs, cmd.Path, cmd.Args, attr)
	if err != nil {
		errR.Close()
		return spawned{err: err}
	}
	return spawned{proc: proc, stderr: errR}
}

// fork starts a process in new user and pid namespaces (a jailed one)
// through the fork server when Config.ForkServer says so, and any other
// directly. A fork of the host itself copies its page tables and leaves
// its memory copy-on-write, at a cost that grows with the host's memory
// (see package forkserver). When the server cannot be had, the host
// forks.
func (p *Pool) fork(fs **forkserver.Server, path string, args []string, attr *os.ProcAttr) (*os.Process, error) {
	if !jailed(attr.Sys) || p.cfg.ForkServer == ForkServerNever || p.noForkServer {
		return os.StartProcess(path, args, attr)
	}
	if *fs != nil {
		select {
		case <-(*fs).Done():
			_ = (*fs).Close()
			*fs = nil
		default:
		}
	}
	if *fs == nil {
		s, err := forkserver.Start("/proc/self/exe")
		if err != nil {
			p.noForkServer = true
			p.log.Warn("no fork server: the host forks its jailed workers itself", logErr, err)
			return os.StartProcess(path, args, attr)
		}
		*fs = s
		p.forkServers.Add(1)
		p.serverPID.Store(int64(s.Pid()))
		if p.cfg.ForkServer == ForkServerAuto {
			// The server takes a process start to come up: this process
			// forks here meanwhile, the next ones through the server.
			return os.StartProcess(path, args, attr)
		}
	}
	proc, err := (*fs).StartProcess(path, args, attr)
	if errors.Is(err, forkserver.ErrGone) {
		// It died under us: this start forks here, the next one starts
		// a new server.
		p.log.Warn("fork server gone", logErr, err)
		_ = (*fs).Close()
		*fs = nil
		return os.StartProcess(path, args, attr)
	}
	if err == nil {
		p.serverForks.Add(1)
	}
	return proc, err
}

func (p *Pool) closeSpawner() {
	p.mu.Lock()
	select {
	case <-p.spawnDone:
	default:
		close(p.spawnDone)
	}
	p.mu.Unlock()
	p.spawnWG.Wait()
}

// process is the host's handle on one child process of the pool, a worker
// or a Python zygote: how it was started (jailed by a Handle, forked from
// the spawner thread), how it is killed, and how it ended. The same code
// starts, kills and reaps both kinds.
type process struct {
	p       *Pool
	kind    string // "worker" or "zygote", for logs and errors
	proc    *os.Process
	pid     int
	started time.Time
	handle  Handle
	stderr  *tailWriter

	stderrDone chan struct{} // closed when the copy of its standard error into stderr ends

	killed chan struct{}    // closed by the first kill
	exited chan struct{}    // closed once the process has been reaped
	state  *os.ProcessState // set before exited is closed
	reaped func()           // called after the reap, before exited is closed; may be nil

	mu         sync.Mutex
	reason     string // guarded by mu: why the host killed the process, if it said
	hostKilled bool   // guarded by mu: the host killed it while it was alive
	retired    string // guarded by mu: why it must serve no other run, if so
}

// startProcess prepares cmd with prepare (its jail; nil for none), adds the
// pool's SysProcAttr hardening, starts it from the spawner thread, tells
// the handle its pid and starts reaping it; the tail of its standard error
// is kept. reaped, if set, runs once the process is reaped. On error
// nothing of the process is left.
func (p *Pool) startProcess(kind string, cmd *exec.Cmd, prepare func(*exec.Cmd) (Handle, error), reaped func()) (*process, error) {
	tail := &tailWriter{max: 4 << 10}
	var h Handle
	if prepare != nil {
		var err error
		if h, err = prepare(cmd); err != nil {
			return nil, fmt.Errorf("pool: prepare %s: %w", kind, err)
		}
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = sysProcAttr()
	} else {
		harden(cmd.SysProcAttr)
	}
	sp := p.spawn(cmd)
	if sp.err != nil {
		if h != nil {
			_ = h.Cleanup()
		}
		return nil, fmt.Errorf("pool: start %s: %w", kind, sp.err)
	}
	pr := &process{
		p: p, kind: kind, proc: sp.proc, pid: sp.proc.Pid, started: time.Now(), handle: h, stderr: tail,
		stderrDone: make(chan struct{}), killed: make(chan struct{}), exited: make(chan struct{}), reaped: reaped,
	}
	go func() {
		_, _ = io.Copy(tail, sp.stderr)
		sp.stderr.Close()
		close(pr.stderrDone)
	}()
	p.procs.Add(1) // Done when wait has reaped the process.
	go pr.wait(sp.stderr)
	if h != nil {
		if err := h.Started(pr.pid); err != nil {
			pr.kill("")
			<-pr.exited
			return nil, fmt.Errorf("pool: %s %d: %w (%s)", kind, pr.pid, err, pr.exitStatus())
		}
	}
	return pr, nil
}

// wait reaps the process, then waits for the end of its standard error
// (stderr, the pipe's read end), at most StopTimeout: a process it started
// may still hold the pipe.
func (pr *process) wait(stderr *os.File) {
	defer pr.p.procs.Done()
	pr.state, _ = pr.proc.Wait()
	select {
	case <-pr.stderrDone:
	case <-time.After(pr.p.cfg.StopTimeout):
		stderr.Close() // ends the copy
		<-pr.stderrDone
	}
	if pr.reaped != nil {
		pr.reaped()
	}
	close(pr.exited)
	if pr.handle != nil {
		if err := pr.handle.Cleanup(); err != nil {
			pr.p.log.Warn(pr.kind+" cleanup", logPID, pr.pid, logErr, err)
		}
	}
}

// kill SIGKILLs the process. reason, if not empty, says why the host did
// it (the first reason given wins); an empty reason is cleanup.
func (pr *process) kill(reason string) {
	pr.mu.Lock()
	if pr.reason == "" {
		pr.reason = reason
	}
	first := true
	select {
	case <-pr.killed:
		first = false
	default:
		close(pr.killed)
		select {
		case <-pr.exited:
		default:
			pr.hostKilled = true
		}
	}
	pr.mu.Unlock()
	if first {
		_ = pr.proc.Kill()
		if reason != "" {
			pr.p.log.Warn(pr.kind+" killed", logPID, pr.pid, logReason, reason)
		}
	}
}

func (pr *process) killReason() string {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.reason
}

// retire marks the process to serve no other run (the first reason given
// wins): it is killed when its run releases it.
func (pr *process) retire(reason string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.retired == "" {
		pr.retired = reason
	}
}

func (pr *process) retiredWhy() string {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.retired
}

func (pr *process) killedByHost() bool {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.hostKilled
}

// usable reports whether the process is alive and not condemned.
func (pr *process) usable() bool {
	select {
	case <-pr.killed:
		return false
	case <-pr.exited:
		return false
	default:
		return true
	}
}

// exitStatus describes how the process ended ("exit status 3", "signal:
// killed"). Call it after exited is closed.
func (pr *process) exitStatus() string {
	if pr.state == nil {
		return "not reaped"
	}
	return pr.state.String()
}

// diagnostics describes how an exited process ended: its status and the
// tail of its standard error.
func (pr *process) diagnostics() string {
	d := pr.exitStatus()
	if s := pr.stderr.String(); s != "" {
		d += ": " + s
	}
	return d
}

func (pr *process) logExit(attrs ...any) {
	attrs = append(attrs, logPID, pr.pid, logStatus, pr.exitStatus())
	if s := pr.stderr.String(); s != "" {
		attrs = append(attrs, logStderr, s)
	}
	if pr.killedByHost() {
		pr.p.log.Debug(pr.kind+" exited", attrs...)
		return
	}
	pr.p.log.Warn(pr.kind+" died", attrs...)
}

// proc is the host's handle on one worker process.
type proc struct {
	*process
	slot int
	in   *os.File // our end of the worker's descriptor 3
	out  *os.File // our end of the worker's descriptor 4
	pass *os.File // our end of the worker's descriptor 5: descriptors to pass
	w    *ipc.FrameWriter
	r    *ipc.FrameReader // owned by the handshake, then by the reader goroutine

	frames     chan *ipc.Frame // run frames from the reader; closed when it stops
	readerDone chan struct{}   // closed when the reader stops (or never started)
	diedBusy   bool            // set before exited is closed

	id HostID // the host identity of the worker's processes

	// bound is set when the worker takes its first run; group is the
	// group it serves from then on; lastUsed is when it last went idle.
	// Guarded by Pool.mu.
	bound    bool
	group    string
	lastUsed time.Time

	// zygote is the worker's Python zygote, started by its first Python
	// run. Set and read by the run that holds the worker; the reaper
	// reads it too, hence zmu.
	zmu     sync.Mutex
	zygote  *zygote // guarded by zmu
	zclosed bool    // guarded by zmu: the worker is gone, and so is its zygote
	// passClosed (guarded by zmu) is set when the reaper closed pass:
	// descriptors are passed on it under zmu (sendPass).
	passClosed bool

	busy    atomic.Bool   // a run is in progress: set by Run, cleared by the reader at the run's terminal
	exiting atomic.Bool   // its last terminal said it exits (ipc.Frame.Exiting)
	runID   atomic.Uint64 // the run in progress
	runs    atomic.Int64  // runs that ended with a terminal frame

	pingSeq  uint64    // owned by the slot's supervisor
	pingAt   time.Time // owned by the slot's supervisor
	pingRuns int64     // owned by the slot's supervisor
	pong     atomic.Uint64
}

// hostID is the host identity of slot's workers (Config.HostIDs).
func (p *Pool) hostID(slot int) HostID {
	if p.cfg.HostIDs.Count == 0 {
		return HostID{}
	}
	id := p.cfg.HostIDs.First + slot
	return HostID{UID: id, GID: id}
}

// startWorker starts one worker and completes its handshake.
func (p *Pool) startWorker(slot int) (_ *proc, err error) {
	cmd, err := p.cfg.Command()
	if err != nil {
		return nil, fmt.Errorf("pool: worker command: %w", err)
	}
	switch {
	case cmd == nil:
		return nil, errors.New("pool: Command returned no command")
	case cmd.Process != nil:
		return nil, errors.New("pool: Command returned a started command")
	case len(cmd.ExtraFiles) > 0 || cmd.SysProcAttr != nil:
		return nil, errors.New("pool: Command must leave ExtraFiles and SysProcAttr to the pool")
	}
	toWorker, in, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pool: pipe: %w", err)
	}
	out, fromWorker, err := os.Pipe()
	if err != nil {
		toWorker.Close()
		in.Close()
		return nil, fmt.Errorf("pool: pipe: %w", err)
	}
	pass, passChild, err := socketpair() // none off Linux
	if err != nil {
		for _, f := range []*os.File{toWorker, in, out, fromWorker} {
			f.Close()
		}
		return nil, err
	}
	childEnds := []*os.File{toWorker, fromWorker}
	if passChild != nil {
		childEnds = append(childEnds, passChild)
	}
	env := make([]string, 0, len(cmd.Env)+2)
	for _, kv := range cmd.Env {
		if !strings.HasPrefix(kv, worker.EnvSwitch+"=") && !strings.HasPrefix(kv, "TZ=") {
			env = append(env, kv)
		}
	}
	// TZ=UTC: a worker's local time (QuickJS's Date reads it from the C
	// library) is UTC whatever the host's, jailed or not; a run in another
	// zone gets it from jsrt's zone.js.
	cmd.Env = append(env, "TZ=UTC", worker.EnvSwitch+"="+worker.SwitchValue)
	cmd.ExtraFiles = childEnds // descriptors 3, 4 and 5: worker.InFD, worker.OutFD, worker.PassFD
	w := &proc{
		slot: slot, id: p.hostID(slot), in: in, out: out, pass: pass,
		w:          ipc.NewFrameWriter(in, p.cfg.MaxFrameBytes),
		r:          ipc.NewFrameReader(out, p.cfg.MaxFrameBytes),
		frames:     make(chan *ipc.Frame),
		readerDone: make(chan struct{}),
	}
	var prepare func(*exec.Cmd) (Handle, error)
	if p.cfg.Prepare != nil {
		prepare = func(cmd *exec.Cmd) (Handle, error) { return p.cfg.Prepare(cmd, w.id) }
	}
	// The process may die before startProcess returns and w.process is
	// set: reaped must not reach the pool through it.
	pr, err := p.startProcess("worker", cmd, prepare, func() { w.reaped(p) })
	for _, f := range childEnds {
		f.Close()
	}
	if err != nil {
		in.Close()
		out.Close()
		if pass != nil {
			pass.Close()
		}
		return nil, err
	}
	w.process = pr
	fail := func(err error) (*proc, error) {
		w.kill("")
		close(w.readerDone)
		<-w.exited
		w.out.Close()
		return nil, fmt.Errorf("pool: worker %d: %w (%s)", w.pid, err, w.exitStatus())
	}
	if err := w.handshake(p.cfg.StartTimeout); err != nil {
		return fail(err)
	}
	p.procs.Add(1) // Done when readLoop returns.
	go w.readLoop()
	return w, nil
}

// helloLocales is Config.Locales as the hello carries it, where an absent
// list means every locale: English alone is ["en"], which is always
// offered.
func helloLocales(l []string) []string {
	if l != nil && len(l) == 0 {
		return []string{"en"}
	}
	return l
}

func (w *proc) handshake(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	hello := &ipc.Hello{Protocol: ipc.ProtocolVersion, MaxFrameBytes: w.p.cfg.MaxFrameBytes, Warm: w.p.cfg.Warm,
		Locales: helloLocales(w.p.cfg.Locales), Bootstrap: hostBootstrap()}
	b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameHello, Hello: hello}, w.p.cfg.MaxFrameBytes)
	if err != nil && hello.Bootstrap != nil {
		// Too large for a small MaxFrameBytes: the worker compiles its own.
		hello.Bootstrap = nil
		b, err = ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameHello, Hello: hello}, w.p.cfg.MaxFrameBytes)
	}
	if err != nil {
		return err
	}
	if err := w.w.WriteEncoded(b, deadline); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			// The worker is gone before it read its hello: the same
			// failure as its exit seen from the reading side.
			return fmt.Errorf("exited before its hello: %w", err)
		}
		return fmt.Errorf("send hello: %w", err)
	}
	if err := w.out.SetReadDeadline(deadline); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	// Close must not wait StartTimeout for a worker that is slow to start.
	done, watched := make(chan struct{}), make(chan struct{})
	stopped := false
	go func() {
		defer close(watched)
		select {
		case <-w.p.stop:
			stopped = true
			_ = w.out.SetReadDeadline(time.Now())
		case <-done:
		}
	}()
	f, err := w.r.Read()
	close(done)
	<-watched
	_ = w.out.SetReadDeadline(time.Time{})
	switch {
	case stopped && err != nil:
		return ErrClosed
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("exited before its hello")
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("no hello within %v", timeout)
	case err != nil:
		return fmt.Errorf("handshake: %w", err)
	case f.Type != ipc.FrameHello:
		return fmt.Errorf("handshake: first frame is %s, not hello", f.Type)
	case f.Hello.Protocol != ipc.ProtocolVersion:
		return fmt.Errorf("handshake: the worker speaks protocol %d, the host %d", f.Hello.Protocol, ipc.ProtocolVersion)
	}
	return nil
}

// hostBootstrap is the JavaScript bootstrap compiled once by the host, for
// every worker's hello (compiling it was some 8 ms of each worker's
// start), or nil if it does not compile here.
var hostBootstrap = sync.OnceValue(func() *ipc.Bootstrap {
	id, code, err := jsrt.Bootstrap()
	if err != nil {
		return nil
	}
	return &ipc.Bootstrap{ID: id, Code: code}
})

// reaped runs once the worker has been reaped: a Run writing to the dead
// worker fails at once, its zygote is killed, and the reader is not kept
// waiting by a grandchild that still holds a descriptor.
func (w *proc) reaped(p *Pool) {
	w.diedBusy = w.busy.Load()
	w.in.Close()
	w.zmu.Lock()
	if w.pass != nil && !w.passClosed {
		// Under zmu: a run starting a zygote may be passing a descriptor
		// on it (sendPass), and a number closed while it does could be
		// another descriptor's by the time it sends.
		w.pass.Close()
		w.passClosed = true
	}
	z := w.zygote
	w.zmu.Unlock()
	if z != nil {
		z.kill("")
	}
	p.procs.Add(1) // Done when the reader stopped or its grace is over.
	go func() {
		defer p.procs.Done()
		t := time.NewTimer(p.cfg.StopTimeout)
		defer t.Stop()
		select {
		case <-w.readerDone:
		case <-t.C:
			w.out.Close()
		}
	}()
}

// readLoop reads the worker's frames. It answers for the protocol rules
// that hold whether or not a run is in progress, and passes run frames to
// Run through w.frames.
func (w *proc) readLoop() {
	defer w.p.procs.Done()
	defer close(w.readerDone)
	defer close(w.frames)
	defer w.out.Close()
	for {
		f, err := w.r.Read()
		if err != nil {
			if errors.Is(err, ipc.ErrFrameInvalid) || errors.Is(err, ipc.ErrFrameTooLarge) {
				w.kill("sent a bad frame: " + err.Error())
			}
			return
		}
		switch {
		case f.Type == ipc.FramePong:
			w.pong.Store(f.Seq)
			continue
		case !w.busy.Load():
			w.kill(fmt.Sprintf("sent a %s frame while idle", f.Type))
			return
		case f.Type == ipc.FrameTerminal && f.RunID == w.runID.Load():
			// Idle from here on: anything more before the next execute
			// is a violation.
			w.busy.Store(false)
		}
		select {
		case w.frames <- f:
		case <-w.killed:
			return
		}
	}
}

// begin marks the worker busy with run id; the execute frame follows.
func (w *proc) begin(id uint64) {
	w.runID.Store(id)
	w.busy.Store(true)
}

// reusable reports whether the worker can take another run.
func (w *proc) reusable() bool { return w.usable() && !w.busy.Load() && w.retiredWhy() == "" }

// lost kills what is left of the worker, waits until it has been reaped,
// and says what happened to it.
func (w *proc) lost() string {
	w.kill("")
	<-w.exited
	if r := w.killReason(); r != "" {
		return "the worker process broke the protocol and was killed: it " + r
	}
	return fmt.Sprintf("the worker process running the step died (%s)", w.exitStatus())
}

func (w *proc) logWorkerExit() {
	if w.exiting.Load() && !w.killedByHost() {
		// It said it would exit (ipc.Frame.Exiting), and did.
		w.p.log.Debug("worker exited", logSlot, w.slot, logPID, w.pid, logStatus, w.exitStatus())
		return
	}
	w.logExit(logSlot, w.slot)
}

// write sends an encoded frame; a write still blocked at deadline fails.
func (w *proc) write(b []byte, deadline time.Time) error {
	return w.w.WriteEncoded(b, deadline)
}

// ping sends an idle worker a ping. A worker that stayed idle and has not
// answered the previous ping within timeout is killed instead.
func (w *proc) ping(timeout time.Duration) {
	if w.pingSeq != 0 && w.pong.Load() < w.pingSeq && w.runs.Load() == w.pingRuns && !w.busy.Load() {
		if time.Since(w.pingAt) < timeout {
			return // still waiting for the answer
		}
		w.kill(fmt.Sprintf("did not answer a ping within %v", timeout))
		return
	}
	w.pingSeq++
	w.pingAt = time.Now()
	w.pingRuns = w.runs.Load()
	b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FramePing, Seq: w.pingSeq}, w.p.cfg.MaxFrameBytes)
	if err != nil {
		panic(err)
	}
	if err := w.write(b, time.Now().Add(timeout)); err != nil && w.usable() {
		w.kill("did not read its input")
	}
}

// shutdown stops an idle worker: it closes the worker's input, waits up to
// timeout for it to exit, then SIGKILLs it, and returns once it is reaped.
func (w *proc) shutdown(timeout time.Duration) {
	w.in.Close()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-w.exited:
	case <-t.C:
		w.kill("")
		<-w.exited
	}
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte // guarded by mu
}

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
