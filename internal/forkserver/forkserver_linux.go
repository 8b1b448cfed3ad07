package forkserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// EnvServe, set to "1" in its environment, makes MaybeServe turn the
// process into a fork server. Only Start sets it.
const EnvServe = "STEPBOX_FORKSERVER"

// serveFD is the server's end of its socket.
const serveFD = 3

// maxMessage bounds one request (command line, environment, attributes)
// and one reply.
const maxMessage = 1 << 20

// request is one process to start. Files and CgroupFD index the
// descriptors that came with it (-1: none).
type request struct {
	Path     string
	Argv     []string
	Env      []string
	Dir      string
	Files    []int
	CgroupFD int
	Sys      *syscall.SysProcAttr
}

type reply struct {
	Pid   int
	Errno int    // the errno of a failed start, if it had one
	Err   string // why the start failed
}

// ErrGone is returned by StartProcess once the server has exited or
// been closed.
var ErrGone = errors.New("forkserver: server gone")

// Server is a running fork server. It is safe for concurrent use; starts
// are served one at a time.
type Server struct {
	proc *os.Process
	comm string        // its command name, which what it forks keeps until they exec
	done chan struct{} // closed when proc has been reaped

	mu   sync.Mutex
	conn *os.File // guarded by mu; nil after Close
}

// Start re-executes exe (normally /proc/self/exe) as a fork server.
//
// Call it from the OS thread whose exit must kill what the server starts:
// the server's parent-death signal, and with CLONE_PARENT that of every
// process it starts, follows the thread that forked the server. Lock the
// goroutine to that thread first (runtime.LockOSThread).
func Start(exe string) (*Server, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("forkserver: %w", os.NewSyscallError("socketpair", err))
	}
	host, child := os.NewFile(uintptr(fds[0]), "forkserver"), os.NewFile(uintptr(fds[1]), "forkserver-child")
	defer child.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		host.Close()
		return nil, fmt.Errorf("forkserver: %w", err)
	}
	defer null.Close()
	p, err := os.StartProcess(exe, []string{"stepbox-forkserver"}, &os.ProcAttr{
		Env: []string{EnvServe + "=1"},
		// Its standard error is the host's: a server that cannot start
		// says why where the host's own messages go.
		Files: []*os.File{null, null, os.Stderr, child},
		Sys: &syscall.SysProcAttr{
			Pdeathsig: syscall.SIGKILL,
			Setpgid:   true, // a terminal's Ctrl-C is for the host, which stops it in order
		},
	})
	if err != nil {
		host.Close()
		return nil, fmt.Errorf("forkserver: start: %w", err)
	}
	s := &Server{proc: p, done: make(chan struct{}), conn: host}
	if st, ok := readStat(p.Pid); ok { // it has exec'd: StartProcess waits for that
		s.comm = st.comm
	}
	go func() {
		_, _ = p.Wait()
		close(s.done)
	}()
	return s, nil
}

// Done is closed once the server process has exited and been reaped.
func (s *Server) Done() <-chan struct{} { return s.done }

// Pid is the server's process id.
func (s *Server) Pid() int { return s.proc.Pid }

// StartProcess starts a process like os.StartProcess, forked by the
// server, and returns it as a child of the caller. attr.Sys must ask for
// new user and pid namespaces (CLONE_NEWUSER and CLONE_NEWPID in
// Cloneflags): only a process in a pid namespace of its own passes Go's
// check of the parent-death signal, which compares its parent with the
// server. Every file of attr.Files must be an *os.File the caller keeps
// open until StartProcess returns; the server's copies are closed once
// the process has started.
//
// When the server dies during a start, StartProcess kills and reaps the
// process it may have forked (found by the descriptors it holds) and
// returns ErrGone: the caller may start the command again itself. A start
// that fails inside the server after the fork (the exec refused, say)
// leaves a zombie child of the caller that nothing reaps: the server
// cannot reap the caller's child and does not learn its pid.
func (s *Server) StartProcess(name string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	if attr == nil || attr.Sys == nil || attr.Sys.Cloneflags&(unix.CLONE_NEWUSER|unix.CLONE_NEWPID) != unix.CLONE_NEWUSER|unix.CLONE_NEWPID {
		return nil, errors.New("forkserver: StartProcess needs new user and pid namespaces")
	}
	req := request{Path: name, Argv: argv, Env: attr.Env, Dir: attr.Dir, CgroupFD: -1}
	sys := *attr.Sys
	sys.PidFD = nil
	var fds []int
	for _, f := range attr.Files {
		if f == nil {
			req.Files = append(req.Files, -1)
			continue
		}
		req.Files = append(req.Files, len(fds))
		fds = append(fds, int(f.Fd()))
	}
	if sys.UseCgroupFD {
		req.CgroupFD = len(fds)
		fds = append(fds, sys.CgroupFD)
		sys.CgroupFD = -1
	}
	req.Sys = &sys
	b, err := json.Marshal(&req)
	if err != nil {
		return nil, fmt.Errorf("forkserver: %w", err)
	}
	if len(b) > maxMessage {
		return nil, fmt.Errorf("forkserver: request of %d bytes, more than %d", len(b), maxMessage)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil, ErrGone
	}
	fd := int(s.conn.Fd())
	since := now() - 1 // a tick of slack: /proc counts whole ticks
	if err := unix.Sendmsg(fd, b, unix.UnixRights(fds...), nil, 0); err != nil {
		return nil, s.lost("send", err, attr.Files, since)
	}
	buf := make([]byte, 4<<10)
	n, _, _, _, err := unix.Recvmsg(fd, buf, nil, 0)
	if err != nil {
		return nil, s.lost("receive", err, attr.Files, since)
	}
	if n == 0 {
		return nil, s.lost("receive", ErrGone, attr.Files, since)
	}
	var r reply
	if err := json.Unmarshal(buf[:n], &r); err != nil {
		return nil, fmt.Errorf("forkserver: reply: %w", err)
	}
	if r.Err != "" {
		err := errors.New(r.Err)
		if r.Errno != 0 {
			err = syscall.Errno(r.Errno)
		}
		return nil, &os.PathError{Op: "fork/exec", Path: name, Err: err}
	}
	// The process is our child (CLONE_PARENT): it stays a zombie, and its
	// pid ours, until we wait for it, so FindProcess cannot find another.
	return os.FindProcess(r.Pid)
}

// lost closes the connection after the server stopped answering, and
// reaps the process it may have forked for the request before it died:
// that process is the caller's child, holds the request's descriptors,
// and nothing else would ever wait for it.
func (s *Server) lost(op string, err error, files []*os.File, since uint64) error {
	s.conn.Close()
	s.conn = nil
	_ = s.proc.Kill()
	<-s.done // gone for good: it forks nothing more
	reapHolders(files, s.comm, since)
	return fmt.Errorf("%w: %s: %w", ErrGone, op, err)
}

// reapHolders SIGKILLs and reaps the children of this process that the
// dead server may have forked for a request: those that hold one of
// files' pipes or sockets (the request's own: such a child waits for its
// jail's release, which only the caller gives), and those that already
// exited (a fork that failed when the server died under it), told by
// their command name (the server's, which a fork keeps until it execs)
// and a start no earlier than since, in clock ticks since boot. It
// returns how many it reaped.
func reapHolders(files []*os.File, comm string, since uint64) int {
	keys := map[string]bool{}
	for _, f := range files {
		if f == nil {
			continue
		}
		t, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
		if err == nil && (strings.HasPrefix(t, "pipe:") || strings.HasPrefix(t, "socket:")) {
			keys[t] = true
		}
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self, n := os.Getpid(), 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readStat(pid)
		if !ok || st.ppid != self {
			continue
		}
		orphan := holds(pid, keys) || st.state == 'Z' && comm != "" && st.comm == comm && st.start >= since
		if !orphan {
			continue
		}
		p, err := os.FindProcess(pid) // a pidfd: the pid is ours until we wait
		if err != nil {
			continue
		}
		_ = p.Kill()
		if _, err := p.Wait(); err == nil {
			n++
		}
	}
	return n
}

// procStat is what reapHolders reads of /proc/<pid>/stat.
type procStat struct {
	comm  string
	state byte
	ppid  int
	start uint64 // clock ticks since boot
}

func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64) // field 22 of the line
	if err1 != nil || err2 != nil {
		return procStat{}, false
	}
	return procStat{comm: string(b[open+1 : end]), state: f[0][0], ppid: ppid, start: start}, true
}

// now is the time since boot in clock ticks, the unit of a process's start
// in /proc (USER_HZ, 100 on every Linux architecture Go supports).
func now() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0
	}
	return uint64(ts.Sec)*100 + uint64(ts.Nsec)/10_000_000
}

// holds reports whether pid has a descriptor open on one of keys
// (readlink targets such as "pipe:[123]").
func holds(pid int, keys map[string]bool) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if t, err := os.Readlink(dir + "/" + e.Name()); err == nil && keys[t] {
			return true
		}
	}
	return false
}

// Close stops the server and waits until it has been reaped. The
// processes it started are not touched. The server holds nothing that
// needs an orderly exit: it is killed.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	s.mu.Unlock()
	_ = s.proc.Kill()
	<-s.done
	return nil
}

// MaybeServe turns the process into a fork server if Start started it,
// and then never returns: it serves requests until its socket closes and
// exits. Otherwise it returns at once. Call it first thing, before the
// process opens anything: what it holds open, the processes it starts
// would not inherit, but the server keeps for its life.
func MaybeServe() {
	if os.Getenv(EnvServe) != "1" {
		return
	}
	os.Unsetenv(EnvServe)
	if err := serve(serveFD); err != nil {
		fmt.Fprintf(os.Stderr, "stepbox: fork server: %v\n", err)
		os.Exit(3)
	}
	os.Exit(0)
}

func serve(fd int) error {
	unix.CloseOnExec(fd)
	buf := make([]byte, maxMessage+1)
	oob := make([]byte, unix.CmsgSpace(64*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("recvmsg", err)
		}
		if n == 0 && oobn == 0 {
			return nil // the host closed its end
		}
		fds, err := receivedFDs(oob[:oobn])
		var r reply
		switch {
		case err != nil:
			r.Err = err.Error()
		case flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0:
			r.Err = "request truncated"
		default:
			r = start(buf[:n], fds)
		}
		for _, f := range fds {
			unix.Close(f)
		}
		b, _ := json.Marshal(&r)
		if err := unix.Sendmsg(fd, b, nil, nil, 0); err != nil {
			return os.NewSyscallError("sendmsg", err)
		}
	}
}

func receivedFDs(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		f, err := unix.ParseUnixRights(&m)
		if err != nil {
			return fds, err
		}
		fds = append(fds, f...)
	}
	return fds, nil
}

// start starts what req describes, with CLONE_PARENT.
func start(b []byte, fds []int) reply {
	var req request
	if err := json.Unmarshal(b, &req); err != nil {
		return reply{Err: "bad request: " + err.Error()}
	}
	if req.Sys == nil || req.Sys.Cloneflags&(unix.CLONE_NEWUSER|unix.CLONE_NEWPID) != unix.CLONE_NEWUSER|unix.CLONE_NEWPID {
		return reply{Err: "bad request: new user and pid namespaces required"}
	}
	attr := &syscall.ProcAttr{Dir: req.Dir, Env: req.Env, Sys: req.Sys}
	for _, i := range req.Files {
		if i < 0 {
			attr.Files = append(attr.Files, ^uintptr(0))
			continue
		}
		if i >= len(fds) {
			return reply{Err: "bad request: no such descriptor"}
		}
		attr.Files = append(attr.Files, uintptr(fds[i]))
	}
	req.Sys.PidFD = nil
	if req.Sys.UseCgroupFD {
		if req.CgroupFD < 0 || req.CgroupFD >= len(fds) {
			return reply{Err: "bad request: no cgroup descriptor"}
		}
		req.Sys.CgroupFD = fds[req.CgroupFD]
	}
	req.Sys.Cloneflags |= unix.CLONE_PARENT
	pid, err := syscall.ForkExec(req.Path, req.Argv, attr)
	if err != nil {
		r := reply{Err: err.Error()}
		if errno, ok := err.(syscall.Errno); ok {
			r.Errno = int(errno)
		}
		return r
	}
	return reply{Pid: pid}
}
