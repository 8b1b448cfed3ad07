package pyrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
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

// zygote is the worker's side of one running, jailed python3: its control
// socket. The host started the zygote and passed the socket here; the
// worker that holds it is the only one that talks to it. It is used by
// one run at a time (the Runner's).
type zygote struct {
	conn *net.UnixConn

	msgs chan zmsg     // from the zygote, in order; buffered
	held *zmsg         // a spare taken from msgs but not used; owned by the run in turn
	dead chan struct{} // closed when the control socket fails or closes

	stopOnce sync.Once
}

// maxControlMessage bounds a message from the zygote.
const maxControlMessage = 1 << 16

// newZygote takes over the control socket of a zygote that the host has
// started and found ready, and starts reading its messages.
func newZygote(control *os.File) (*zygote, error) {
	fc, err := net.FileConn(control)
	if err != nil {
		return nil, fmt.Errorf("pyrt: control socket: %w", err)
	}
	uc, ok := fc.(*net.UnixConn)
	if !ok {
		fc.Close()
		return nil, fmt.Errorf("pyrt: control socket: not a unix socket")
	}
	z := &zygote{conn: uc, msgs: make(chan zmsg, 8), dead: make(chan struct{})}
	go z.read() // stop waits for it
	return z, nil
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
				return nil, errZygoteDied
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

// stop closes the control socket, which makes the zygote kill every run
// process and exit (the host reaps it), and returns once the reader has
// stopped and every spare's descriptors are closed.
func (z *zygote) stop() {
	z.stopOnce.Do(func() {
		z.conn.Close()
		<-z.dead
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

// errZygoteDied is why a run cannot start when the zygote's control socket
// is gone; the host, which reaps the zygote, says how it ended.
var errZygoteDied = errors.New(ZygoteDied)

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
