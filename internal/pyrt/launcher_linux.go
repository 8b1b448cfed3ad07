package pyrt

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/modules/glpk"
)

// Launcher is the host's side of Python: it knows the interpreter and the
// jail its zygotes get, makes the command that starts one, and completes a
// zygote's handshake. The host's process supervisor (package pool) starts
// and reaps zygotes as it does workers; the worker that a zygote belongs
// to drives it (Runner). A Launcher is plain data once made and safe for
// concurrent use.
//
//	l, err := pyrt.NewLauncher(pyrt.Config{})  // errors.Is(err, errors.ErrUnsupported): no Python here
//	cmd, control, err := l.Command()
//	h, err := jail.Prepare(cmd, l.Jail(hostUID, hostGID))
//	... start cmd, h.Started(pid) ...
//	z, err := l.Ready(control, pid)              // the zygote said ready; measured
//	... pass control to the worker with z.Info ...
type Launcher struct {
	cfg  Config
	py   pythonInfo
	jail jail.Config
	spec string // launchSpec, JSON
}

// NewLauncher checks that Python can run jailed here and finds the
// interpreter. Where the kernel refuses a layer of the jail or there is no
// usable python3, the error wraps errors.ErrUnsupported: Python is then
// unavailable, never run unjailed.
//
// The binary must call MaybeZygote first thing in main (see there).
func NewLauncher(cfg Config) (*Launcher, error) {
	return newLauncher(cfg, "")
}

// newLauncher is NewLauncher; testKeepTmp, for tests only, is a name in
// /tmp that the zygotes' cleaner leaves alone, so that its proof fails.
func newLauncher(cfg Config, testKeepTmp string) (*Launcher, error) {
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
	sites, err := py.sitePackages(cfg)
	if err != nil {
		return nil, err
	}
	binds, err := py.binds(sites)
	if err != nil {
		return nil, err
	}
	filter, err := lockdownFilter()
	if err != nil {
		return nil, err
	}
	pc, err := json.Marshal(preludeConfig{
		Filter: hex.EncodeToString(filter), SysSeccomp: unix.SYS_SECCOMP,
		Path: sites, Preload: cfg.Preload, TestKeepTmp: testKeepTmp,
		GLPKVersion: glpk.Version(),
	})
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(launchSpec{Python: py.Executable, Config: string(pc)})
	if err != nil {
		return nil, err
	}
	return &Launcher{
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
	}, nil
}

// Python returns the path of the interpreter the zygotes run.
func (l *Launcher) Python() string { return l.py.Executable }

// Version returns the interpreter's version ("3.11.2").
func (l *Launcher) Version() string {
	v := make([]string, len(l.py.Version))
	for i, n := range l.py.Version {
		v[i] = strconv.Itoa(n)
	}
	return strings.Join(v, ".")
}

// StartTimeout bounds a zygote's start, from exec to its hello, and the
// wait for a spare process for a run.
func (l *Launcher) StartTimeout() time.Duration { return l.cfg.StartTimeout }

// Jail returns the jail of a zygote whose processes run as the given host
// ids (when the host is root; see jail.Config.HostUID).
func (l *Launcher) Jail(hostUID, hostGID int) jail.Config {
	c := l.jail
	c.ReadOnlyBinds = slices.Clone(c.ReadOnlyBinds)
	c.Syscalls = slices.Clone(c.Syscalls)
	c.HostUID, c.HostGID = hostUID, hostGID
	return c
}

// Command returns the command that starts one zygote (to be jailed with
// Jail and started from a thread that lives as long as it: see
// jail.Prepare) and the host's end of the zygote's control socket, which
// the zygote's descriptor 3 is the other end of. The command re-executes
// this binary; MaybeZygote takes it over.
func (l *Launcher) Command() (*exec.Cmd, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("pyrt: control socket: %w", os.NewSyscallError("socketpair", err))
	}
	host := os.NewFile(uintptr(fds[0]), "pyrt-control")
	child := os.NewFile(uintptr(fds[1]), "pyrt-control-zygote")
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{"stepbox-pyzygote"},
		Env:        []string{EnvZygote + "=" + l.spec},
		ExtraFiles: []*os.File{child},
	}
	return cmd, host, nil
}

// Zygote is the host's record of a started zygote: what its worker needs
// to know (Info) and the check that no run left a named unix socket in its
// network namespace.
type Zygote struct {
	// Info is what the zygote frame tells its worker.
	Info ipc.Zygote

	// netUnix is /proc/<pid>/net/unix, open from the start (a read is
	// then half the cost of an open and a read); sockets are the named
	// unix sockets of the zygote's network namespace when it was ready
	// (none), or socketsErr says why they could not be read.
	netUnix    *os.File
	sockets    []string
	socketsErr error
}

// Ready completes the host's half of a zygote's start: it waits until the
// zygote whose control socket is control (the host's end, from Command)
// and whose host pid is pid says it is ready, within StartTimeout, and
// measures it. control stays open for the caller, who passes it on to the
// zygote's worker.
func (l *Launcher) Ready(control *os.File, pid int) (*Zygote, error) {
	fc, err := net.FileConn(control)
	if err != nil {
		return nil, fmt.Errorf("pyrt: control socket: %w", err)
	}
	defer fc.Close()
	conn := fc.(*net.UnixConn)
	_ = conn.SetReadDeadline(time.Now().Add(l.cfg.StartTimeout))
	buf := make([]byte, maxControlMessage)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, flags, _, err := conn.ReadMsgUnix(buf, oob)
	for _, fd := range rights(oob[:oobn]) {
		unix.Close(fd) // a hello carries none
	}
	switch {
	case os.IsTimeout(err):
		return nil, fmt.Errorf("pyrt: the zygote did not start within %v", l.cfg.StartTimeout)
	case err == io.EOF || err == nil && n == 0:
		return nil, fmt.Errorf("pyrt: the zygote did not start")
	case err != nil:
		return nil, fmt.Errorf("pyrt: the zygote's hello: %w", err)
	}
	var m zmsg
	if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 || json.Unmarshal(buf[:n], &m) != nil || m.Op != "ready" || m.Proto != protocolVersion {
		return nil, fmt.Errorf("pyrt: zygote: unexpected hello %.200q", buf[:n])
	}
	vsz, rss := statm(pid)
	if vsz == 0 {
		// Without it no run could get a sound RLIMIT_AS.
		return nil, fmt.Errorf("pyrt: cannot read the zygote's memory use from /proc/%d/statm", pid)
	}
	z := &Zygote{Info: ipc.Zygote{
		VSZ: vsz, RSS: rss,
		MaxMemoryMB: l.cfg.MaxMemoryMB, MaxProcs: l.cfg.MaxProcs, MaxOpenFiles: l.cfg.MaxOpenFiles,
		MaxFileSizeBytes: l.cfg.MaxFileSizeBytes, StartTimeoutMs: l.cfg.StartTimeout.Milliseconds(),
	}}
	z.netUnix, z.socketsErr = os.Open("/proc/" + strconv.Itoa(pid) + "/net/unix")
	if z.socketsErr == nil {
		z.sockets, z.socketsErr = z.namedSockets()
	}
	return z, nil
}

// Close releases what the host holds of the zygote.
func (z *Zygote) Close() {
	if z.netUnix != nil {
		z.netUnix.Close()
	}
}

// namedSockets lists the unix sockets bound to a name, abstract ("@...")
// or a path, in the zygote's network namespace, from the host's /proc.
// The namespace is the zygote's alone, and shared by its runs in turn: a
// socket a run bound that outlives it (in flight in a descriptor passed
// over a socket that nothing holds, until the kernel's garbage collector
// frees the cycle) could be found by a later run by its name.
func (z *Zygote) namedSockets() ([]string, error) {
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

// ProveSockets checks, after a run, that the zygote's network namespace
// holds no named socket that it did not hold at the start. An error means
// the zygote must serve no other run.
func (z *Zygote) ProveSockets() error {
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
