package pyrt

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stepbox/stepbox/internal/jail"
)

// zmsg is a message on the control socket, in either direction.
type zmsg struct {
	Op string `json:"op"`
	ID int64  `json:"id,omitempty"`

	// ready
	Proto   int    `json:"proto,omitempty"`
	Version string `json:"version,omitempty"`

	// spare: the host's ends of the spare's pipes (job and replies in,
	// events out, raw output out)
	files []*os.File

	// exit; CPUMs is also watch's: the CPU time after which the zygote
	// kills the run
	Killed bool `json:"killed,omitempty"`
	// CPUKilled says the zygote killed the run for its CPU time (watch).
	CPUKilled bool    `json:"cpuKilled,omitempty"`
	CPUMs     float64 `json:"cpuMs,omitempty"`
	// watch: the run process's CPU clock when it took its job, as it
	// read it (the zygote never takes a later one than its own).
	BaseNs   int64   `json:"baseNs,omitempty"`
	MaxRssKb float64 `json:"maxRssKb,omitempty"`
	Signal   int     `json:"signal,omitempty"`
	Status   int     `json:"status,omitempty"`
	// Dirty says what the run left that the zygote could not prove gone
	// (see Zygote.clean_tmp in prelude.py); the zygote then serves no
	// other run and waits to be stopped.
	Dirty string `json:"dirty,omitempty"`
}

// runRlimits are set by the run's process on itself when it gets its job.
type runRlimits struct {
	AS     int64 `json:"as"`     // RLIMIT_AS, bytes
	CPUMs  int   `json:"cpuMs"`  // ITIMER_PROF
	CPUSec int   `json:"cpuSec"` // RLIMIT_CPU, the backstop
	NoFile int   `json:"nofile"`
	FSize  int64 `json:"fsize"`
	NProc  int   `json:"nproc"`
}

// protocolVersion is the version of the control protocol that the prelude
// must announce.
const protocolVersion = 1

// zygote is one running, jailed python3 and its control socket. It is
// used by one run at a time (whoever holds Runtime.turn).
type zygote struct {
	conn *net.UnixConn
	cmd  *exec.Cmd
	pid  int

	msgs   chan zmsg     // from the zygote, in order; buffered
	held   *zmsg         // a spare taken from msgs but not used (tests); owned by the turn
	dead   chan struct{} // closed when the control socket fails or closes
	exited chan struct{} // closed once the process is reaped
	stderr *tail

	// Baseline memory of the zygote after its preloads, in bytes: the
	// run's RLIMIT_AS is on top of the address space, and its reported
	// peak is above the resident set.
	vsz, rss int64

	// netUnix is /proc/<pid>/net/unix, open from the start (a read is
	// then half the cost of an open and a read); sockets are the named
	// unix sockets of the zygote's network namespace when it was ready
	// (none), or socketsErr says why they could not be read.
	netUnix    *os.File
	sockets    []string
	socketsErr error

	stopOnce sync.Once
}

// maxControlMessage bounds a message from the zygote.
const maxControlMessage = 1 << 16

// startZygote starts the zygote in its jail and waits for its hello.
func (r *Runtime) startZygote() (*zygote, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("pyrt: control socket: %w", os.NewSyscallError("socketpair", err))
	}
	hostEnd := os.NewFile(uintptr(fds[0]), "pyrt-control")
	childEnd := os.NewFile(uintptr(fds[1]), "pyrt-control-zygote")
	defer childEnd.Close()
	fc, err := net.FileConn(hostEnd)
	hostEnd.Close()
	if err != nil {
		return nil, fmt.Errorf("pyrt: control socket: %w", err)
	}
	z := &zygote{
		conn:   fc.(*net.UnixConn),
		msgs:   make(chan zmsg, 8),
		dead:   make(chan struct{}),
		exited: make(chan struct{}),
		stderr: newTail(8 << 10),
	}
	z.cmd = &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{"stepbox-pyzygote"},
		Env:        []string{EnvZygote + "=" + r.spec},
		ExtraFiles: []*os.File{childEnd},
		Stderr:     z.stderr,
		WaitDelay:  time.Second,
	}
	h, err := jail.Prepare(z.cmd, r.jail)
	if err != nil {
		z.conn.Close()
		return nil, fmt.Errorf("pyrt: jail: %w", err)
	}
	// Linux sends the parent-death signal when the thread that forked the
	// child exits: start it from a locked thread that lives exactly as
	// long as the zygote.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the zygote
		defer close(z.exited)
		defer h.Cleanup()
		err := z.cmd.Start()
		if err == nil {
			err = h.Started(z.cmd.Process.Pid)
			if err != nil {
				_ = z.cmd.Wait()
			}
		}
		started <- err
		if err == nil {
			_ = z.cmd.Wait()
		}
	}()
	err = <-started
	childEnd.Close() // the zygote's now: its exit must close the socket
	if err != nil {
		z.conn.Close()
		<-z.exited
		return nil, fmt.Errorf("pyrt: start zygote: %w", err)
	}
	z.pid = z.cmd.Process.Pid
	go z.read()
	timer := time.NewTimer(r.cfg.StartTimeout)
	defer timer.Stop()
	select {
	case m := <-z.msgs:
		if m.Op != "ready" || m.Proto != protocolVersion {
			closeFiles(m.files)
			z.stop()
			return nil, fmt.Errorf("pyrt: zygote: unexpected hello %+v", m)
		}
	case <-z.dead:
		z.stop()
		return nil, fmt.Errorf("pyrt: the zygote did not start: %s", z.diagnostics())
	case <-timer.C:
		z.stop()
		return nil, fmt.Errorf("pyrt: the zygote did not start within %v: %s", r.cfg.StartTimeout, z.diagnostics())
	}
	z.vsz, z.rss = statm(z.pid)
	if z.vsz == 0 {
		// Without it no run could get a sound RLIMIT_AS.
		z.stop()
		return nil, fmt.Errorf("pyrt: cannot read the zygote's memory use from /proc/%d/statm", z.pid)
	}
	z.netUnix, z.socketsErr = os.Open("/proc/" + strconv.Itoa(z.pid) + "/net/unix")
	if z.socketsErr == nil {
		z.sockets, z.socketsErr = z.namedSockets()
	}
	return z, nil
}

// namedSockets lists the unix sockets bound to a name, abstract ("@...")
// or a path, in the zygote's network namespace, from the host's /proc.
// The namespace is the zygote's alone, and shared by its runs in turn: a
// socket a run bound that outlives it (in flight in a descriptor passed
// over a socket that nothing holds, until the kernel's garbage collector
// frees the cycle) could be found by a later run by its name.
func (z *zygote) namedSockets() ([]string, error) {
	// From offset 0 each time: the kernel lists the sockets afresh.
	data, err := io.ReadAll(io.NewSectionReader(z.netUnix, 0, 1<<40))
	if err != nil {
		return nil, err
	}
	return namedUnixSockets(string(data))
}

// namedUnixSockets returns the names in the text of a /proc/net/unix.
func namedUnixSockets(data string) ([]string, error) {
	lines := strings.Split(data, "\n")
	if !strings.HasPrefix(lines[0], "Num ") {
		return nil, fmt.Errorf("/proc/net/unix: unexpected header %q", cut(lines[0], 80))
	}
	var names []string
	for _, line := range lines[1:] {
		// Num RefCount Protocol Flags Type St Inode [Path]. A name may
		// hold spaces and newlines, but an abstract one prints as "@..."
		// on the line of its socket, so that line has more fields.
		if f := strings.Fields(line); len(f) > 7 {
			names = append(names, cut(strings.Join(f[7:], " "), 200))
		}
	}
	return names, nil
}

// proveSockets checks, after a run, that the zygote's network namespace
// holds no named socket that it did not hold at the start.
func (z *zygote) proveSockets() error {
	if z.socketsErr != nil {
		return fmt.Errorf("the zygote's unix sockets cannot be listed: %w", z.socketsErr)
	}
	names, err := z.namedSockets()
	if err != nil {
		return fmt.Errorf("the zygote's unix sockets cannot be listed: %w", err)
	}
	var left []string
	for _, n := range names {
		if !slices.Contains(z.sockets, n) {
			left = append(left, n)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("%d named unix sockets outlived the run: %q", len(left), left)
	}
	return nil
}

// read delivers the zygote's messages until its socket closes or it
// breaks the protocol; then it closes dead.
func (z *zygote) read() {
	defer close(z.dead)
	buf := make([]byte, maxControlMessage)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, flags, _, err := z.conn.ReadMsgUnix(buf, oob)
		if err != nil || n == 0 {
			return
		}
		fds := rights(oob[:oobn])
		var m zmsg
		if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 || json.Unmarshal(buf[:n], &m) != nil ||
			(m.Op == "spare") != (len(fds) == 3) {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return
		}
		for i, fd := range fds {
			// Pollable, so that closing our end unblocks its reader.
			if err := unix.SetNonblock(fd, true); err != nil {
				for _, fd := range fds[i:] {
					unix.Close(fd)
				}
				closeFiles(m.files)
				return
			}
			m.files = append(m.files, os.NewFile(uintptr(fd), "pyrt-run-pipe"))
		}
		select {
		case z.msgs <- m:
		default:
			closeFiles(m.files)
			return // nobody asked for that many messages
		}
	}
}

// rights returns the descriptors passed in a control message.
func rights(oob []byte) []int {
	if len(oob) == 0 {
		return nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var out []int
	for i := range msgs {
		if fds, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			out = append(out, fds...)
		}
	}
	return out
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// takeSpare returns the newest spare the zygote forked that is still
// alive, waiting for one up to the start timeout. The caller owns its
// files.
func (z *zygote) takeSpare(ctx, closeCtx context.Context, timeout time.Duration) (*zmsg, error) {
	spare := z.held
	z.held = nil
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		var m zmsg
		if spare == nil {
			select {
			case m = <-z.msgs:
			case <-z.dead:
				return nil, fmt.Errorf("the Python zygote died: %s", z.diagnostics())
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-closeCtx.Done():
				return nil, closeCtx.Err()
			case <-timer.C:
				return nil, fmt.Errorf("the Python zygote made no process for the run within %v", timeout)
			}
		} else {
			select {
			case m = <-z.msgs:
			default:
				return spare, nil
			}
		}
		switch {
		case m.Op == "spare":
			if spare != nil {
				closeFiles(spare.files)
			}
			spare = &m
		case m.Op == "exit" && m.Dirty != "":
			// A spare died before it was used, and what it left could not
			// be proven gone: the zygote forks no more.
			if spare != nil {
				closeFiles(spare.files)
			}
			return nil, &dirtyError{m.Dirty}
		case m.Op == "exit" && spare != nil && m.ID == spare.ID:
			closeFiles(spare.files) // it died before it was used
			spare = nil
		}
	}
}

// dirtyError is the zygote's report that what a run left in its jail
// could not be proven gone: it must serve no other run.
type dirtyError struct{ reason string }

func (e *dirtyError) Error() string { return "the Python zygote is not clean: " + e.reason }

// send writes one message, with descriptors to pass, to the zygote.
func (z *zygote) send(m zmsg, files ...*os.File) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var oob []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	_ = z.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _, err = z.conn.WriteMsgUnix(b, oob, nil)
	runtime.KeepAlive(files) // their descriptors were in use until here
	return err
}

// isDead reports whether the zygote's control socket is gone.
func (z *zygote) isDead() bool {
	select {
	case <-z.dead:
		return true
	default:
		return false
	}
}

// stop asks the zygote to exit (closing its socket makes it kill every run
// process and exit), waits briefly, then kills it; it returns once the
// zygote is reaped.
func (z *zygote) stop() {
	z.stopOnce.Do(func() {
		z.conn.Close()
		select {
		case <-z.exited:
		case <-time.After(2 * time.Second):
			z.kill()
			<-z.exited
		}
		<-z.dead
		if z.netUnix != nil {
			z.netUnix.Close()
		}
		// Spares nobody will use.
		if z.held != nil {
			closeFiles(z.held.files)
			z.held = nil
		}
		for {
			select {
			case m := <-z.msgs:
				closeFiles(m.files)
				continue
			default:
			}
			break
		}
	})
}

// reapWait bounds how long diagnostics waits for a dying zygote's status.
const reapWait = 500 * time.Millisecond

// kill SIGKILLs the zygote; the kernel then kills everything in its pid
// namespace.
func (z *zygote) kill() {
	if z.cmd.Process != nil {
		_ = z.cmd.Process.Kill()
	}
}

// diagnostics describes why the zygote is gone, for error messages. Its
// pipe closes a moment before it is reaped: diagnostics waits a little for
// the exit status, which names the signal that killed it.
func (z *zygote) diagnostics() string {
	var parts []string
	select {
	case <-z.exited:
		if st := z.cmd.ProcessState; st != nil {
			parts = append(parts, st.String())
		}
	case <-time.After(reapWait):
	}
	if s := strings.TrimSpace(z.stderr.String()); s != "" {
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "no diagnostics"
	}
	return strings.Join(parts, ": ")
}

// statm returns a process's address space and resident set, in bytes.
func statm(pid int) (vsz, rss int64) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0, 0
	}
	page := int64(os.Getpagesize())
	a, _ := strconv.ParseInt(f[0], 10, 64)
	b, _ := strconv.ParseInt(f[1], 10, 64)
	return a * page, b * page
}

// tail keeps the last bytes written to it: a bounded record of a
// process's standard error.
type tail struct {
	mu  sync.Mutex
	buf []byte // guarded by mu
	max int
	cut bool // guarded by mu; bytes were dropped from the front
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut {
		return "..." + string(t.buf)
	}
	return string(t.buf)
}
