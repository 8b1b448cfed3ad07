package jail

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// namespaceFlags are the namespaces every worker gets at clone time.
var namespaceFlags = []struct {
	flag  uintptr
	layer Layer
}{
	{unix.CLONE_NEWPID, LayerPIDNS},
	{unix.CLONE_NEWNET, LayerNetNS},
	{unix.CLONE_NEWNS, LayerMountNS},
	{unix.CLONE_NEWIPC, LayerIPCNS},
	{unix.CLONE_NEWUTS, LayerUTSNS},
	{unix.CLONE_NEWCGROUP, LayerCgroupNS}, // optional: dropped when refused
}

// Capabilities the child keeps, as ambient capabilities across its first
// exec, to build the jail; Enter drops them before the second exec.
var setupCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}

// Prepare makes cmd start the worker inside new user, pid, network, mount,
// IPC and UTS namespaces (and a cgroup namespace where granted), as cfg.UID
// inside, with SIGKILL as its parent-death signal, in a new session, with
// only the descriptors the caller put in cmd (Stdin, Stdout, Stderr,
// ExtraFiles) and in its own memory and pids cgroups when granted.
//
// The caller builds cmd with Path "/proc/self/exe" (or os.Executable()),
// Args, Env (a nil Env becomes empty: the host environment is never
// inherited), Stdin/Stdout/Stderr and ExtraFiles, and leaves SysProcAttr nil.
// Prepare appends EnvConfig to cmd.Env and one socket to cmd.ExtraFiles.
// After cmd.Start the caller must call Started, which releases the child
// (until then it waits, at most 30 seconds, then exits).
//
//	h, err := jail.Prepare(cmd, cfg)   // errors.Is(err, errors.ErrUnsupported): no jail here
//	defer h.Cleanup()
//	if err := cmd.Start(); err != nil { ... }
//	if err := h.Started(cmd.Process.Pid); err != nil { ... } // releases the child
//	... cmd.Wait()
//
// Prepare fails closed: when Probe reports a mandatory layer refused, it
// returns that error (wrapping errors.ErrUnsupported) and leaves cmd alone.
func Prepare(cmd *exec.Cmd, cfg Config) (*Handle, error) {
	caps := Probe()
	if err := caps.Err(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	plan := detectCgroupsOnce(cfg.CgroupParent)
	if testHookNoCgroups {
		plan = cgroupPlan{}
	}
	return prepare(cmd, cfg, plan, caps.CgroupNS, false)
}

var (
	cgroupPlanMu sync.Mutex
	// cgroupPlans caches detectCgroups per CgroupParent. Guarded by cgroupPlanMu.
	cgroupPlans = map[string]cgroupPlan{}
)

func detectCgroupsOnce(parent string) cgroupPlan {
	cgroupPlanMu.Lock()
	defer cgroupPlanMu.Unlock()
	p, ok := cgroupPlans[parent]
	if !ok {
		p = detectCgroups(parent)
		cgroupPlans[parent] = p
	}
	return p
}

// prepare does Prepare's work without consulting Probe (Probe uses it).
func prepare(cmd *exec.Cmd, cfg Config, plan cgroupPlan, cgroupNS, probe bool) (_ *Handle, err error) {
	if cmd.SysProcAttr != nil {
		return nil, errors.New("jail: cmd.SysProcAttr must be nil: Prepare sets it")
	}
	if cmd.Process != nil {
		return nil, errors.New("jail: cmd already started")
	}
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, EnvConfig+"=") || strings.HasPrefix(kv, envStage+"=") {
			return nil, fmt.Errorf("jail: cmd.Env must not set %s", kv[:strings.IndexByte(kv, '=')])
		}
	}

	h := &Handle{}
	defer func() {
		if err != nil {
			h.Cleanup()
		}
	}()

	child := ChildConfig{
		ReadOnlyBinds:    cfg.ReadOnlyBinds,
		TmpfsSizeBytes:   cfg.TmpfsSizeBytes,
		TmpfsInodes:      cfg.TmpfsInodes,
		UID:              cfg.UID,
		GID:              cfg.GID,
		MaxProcs:         cfg.MaxProcs,
		MaxOpenFiles:     cfg.MaxOpenFiles,
		MaxFileSizeBytes: cfg.MaxFileSizeBytes,
		MountProc:        cfg.UnsafeMountProc,
		Syscalls:         cfg.Syscalls,
		KeepFDs:          3 + len(cmd.ExtraFiles),
		SyncFD:           3 + len(cmd.ExtraFiles),
		Probe:            probe,
	}
	if plan.memory == nil {
		child.AddressSpaceBytes = cfg.MemoryBytes
	}
	raw, err := assembled(cfg.Syscalls)
	if err != nil {
		return nil, err
	}
	child.Program = packProgram(raw)

	// The executable as the host sees it; Started opens it again inside the
	// child's mount namespace.
	h.exePath = cmd.Path
	if h.exePath == "/proc/self/exe" {
		if h.exePath, err = os.Readlink("/proc/self/exe"); err != nil {
			return nil, fmt.Errorf("jail: executable: %w", err)
		}
	}
	if !filepath.IsAbs(h.exePath) {
		if h.exePath, err = filepath.Abs(h.exePath); err != nil {
			return nil, fmt.Errorf("jail: executable: %w", err)
		}
	}
	if interp, err := elfInterpreter(h.exePath); err != nil {
		return nil, fmt.Errorf("jail: executable: %w", err)
	} else if interp != "" && !covered(interp, cfg.ReadOnlyBinds) {
		return nil, fmt.Errorf("jail: config: the executable is dynamically linked (it needs %s): "+
			"add its libraries to ReadOnlyBinds, for example jail.SystemLibraryBinds()", interp)
	}
	h.cgroups, h.v2, err = plan.makeCgroups(cfg)
	if err != nil {
		return nil, &LayerError{Layer: LayerCgroup, Err: err}
	}

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("jail: sync socket: %w", os.NewSyscallError("socketpair", err))
	}
	h.syncR, h.syncW = os.NewFile(uintptr(fds[0]), "jail-sync-child"), os.NewFile(uintptr(fds[1]), "jail-sync-host")
	env, err := json.Marshal(child)
	if err != nil {
		return nil, fmt.Errorf("jail: %w", err)
	}

	attr := &syscall.SysProcAttr{
		Setsid:    true,
		Pdeathsig: syscall.SIGKILL,
		// The child starts with every capability in its new user namespace;
		// it becomes cfg.UID at once and keeps only setupCaps (ambient) for
		// building the jail in Enter.
		AmbientCaps: setupCaps,
	}
	for _, ns := range namespaceFlags {
		if ns.flag != unix.CLONE_NEWCGROUP || cgroupNS {
			attr.Cloneflags |= ns.flag
		}
	}
	attr.Cloneflags |= unix.CLONE_NEWUSER
	hostUID, hostGID, privileged := hostIDs(cfg)
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: cfg.UID, HostID: hostUID, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: cfg.GID, HostID: hostGID, Size: 1}}
	// An unprivileged host must deny setgroups to map its gid, and then the
	// child keeps the host user's supplementary groups. A root host allows it
	// just long enough for the child to drop every supplementary group
	// (Credential.Groups is empty); afterwards the worker lacks CAP_SETGID
	// and seccomp refuses setgroups.
	attr.GidMappingsEnableSetgroups = privileged
	attr.Credential = &syscall.Credential{Uid: uint32(cfg.UID), Gid: uint32(cfg.GID), NoSetGroups: !privileged}
	if h.v2 != nil {
		h.cgroupFD, err = os.Open(h.v2.dir)
		if err != nil {
			return nil, &LayerError{Layer: LayerCgroup, Err: err}
		}
		attr.UseCgroupFD = true
		attr.CgroupFD = int(h.cgroupFD.Fd())
	}

	cmd.SysProcAttr = attr
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Env = append(cmd.Env, EnvConfig+"="+string(env))
	cmd.ExtraFiles = append(cmd.ExtraFiles, h.syncR)
	return h, nil
}

// interpKey identifies one version of an executable on disk.
type interpKey struct {
	path       string
	dev, ino   uint64
	size, mtim int64
}

var (
	interpMu sync.Mutex
	// interpCache remembers elfInterpreter per executable (a host starts
	// every worker from one): parsing the headers of a large binary costs
	// more than the stat that keys it. Guarded by interpMu.
	interpCache = map[interpKey]string{}
)

// elfInterpreter returns the ELF interpreter (dynamic loader) that path
// asks for, or "" for a static executable.
func elfInterpreter(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return "", &os.PathError{Op: "stat", Path: path, Err: err}
	}
	key := interpKey{path: path, dev: st.Dev, ino: st.Ino, size: st.Size, mtim: st.Mtim.Nano()}
	interpMu.Lock()
	interp, ok := interpCache[key]
	interpMu.Unlock()
	if ok {
		return interp, nil
	}
	interp, err := readELFInterpreter(path)
	if err != nil {
		return "", err
	}
	interpMu.Lock()
	if len(interpCache) >= 16 {
		clear(interpCache)
	}
	interpCache[key] = interp
	interpMu.Unlock()
	return interp, nil
}

func readELFInterpreter(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(io.LimitReader(p.Open(), 4096))
			if err != nil {
				return "", err
			}
			return strings.TrimRight(string(b), "\x00"), nil
		}
	}
	return "", nil
}

// hostIDs returns the host ids the worker's ids map to: cfg's when the host
// is root, else the host's own (the only mapping an unprivileged user may
// write without a setuid helper).
func hostIDs(cfg Config) (uid, gid int, privileged bool) {
	if os.Geteuid() == 0 {
		return cfg.HostUID, cfg.HostGID, true
	}
	return os.Geteuid(), os.Getegid(), false
}

// Handle is the host's side of one prepared worker: the pipe that releases
// it and its cgroups.
//
// Notes: Started and Cleanup may be called from different goroutines.
// Cleanup is idempotent; call it after cmd.Wait (it SIGKILLs whatever is
// left in the worker's cgroups).
type Handle struct {
	// exePath is the worker's executable, as the host sees it.
	exePath string

	mu sync.Mutex
	// syncR is the child's end of the sync socket (closed once started),
	// syncW the host's end (closed once the child is released). Guarded by mu.
	syncR, syncW *os.File
	// cgroupFD is the v2 cgroup directory the child is cloned into. Guarded by mu.
	cgroupFD *os.File
	// cgroups are the worker's cgroups; v2 is the one in cgroupFD. Guarded by mu.
	cgroups []*workerCgroup
	v2      *workerCgroup
}

// Started finishes starting the worker whose pid (the host's view) cmd.Start
// returned: it moves it into its cgroup v1 groups, if any, then releases it
// to build its jail. If Started fails it SIGKILLs pid: a worker never runs
// outside the limits that were asked for.
func (h *Handle) Started(pid int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.syncW == nil {
		return errors.New("jail: Started called twice or after Cleanup")
	}
	closeFile(&h.syncR)
	closeFile(&h.cgroupFD)
	err := func() error {
		for _, c := range h.cgroups {
			if c.version == 1 {
				if err := writeCgroupFile(c.dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
					return &LayerError{Layer: LayerCgroup, Err: err}
				}
			}
		}
		// The child cannot bind its own executable: /proc/self/exe leads to
		// the host's mount of it, which the kernel will not bind into
		// another mount namespace, and its uid may not be allowed to walk
		// the path. Open it here, with the host's rights but through the
		// child's root, and pass the descriptor along with the release.
		exe, err := unix.Open(fmt.Sprintf("/proc/%d/root%s", pid, h.exePath), unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return &LayerError{Layer: LayerMount, Err: &os.PathError{Op: "open executable", Path: h.exePath, Err: err}}
		}
		defer unix.Close(exe)
		if err := unix.Sendmsg(int(h.syncW.Fd()), []byte{'1'}, unix.UnixRights(exe), nil, 0); err != nil {
			return fmt.Errorf("jail: release worker: %w", os.NewSyscallError("sendmsg", err))
		}
		return nil
	}()
	closeFile(&h.syncW)
	if err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return err
}

// Cleanup closes the pipes and removes the worker's cgroups, killing any task
// left in them. A child not yet released sees the pipe close and exits.
func (h *Handle) Cleanup() error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	closeFile(&h.syncR)
	closeFile(&h.syncW)
	closeFile(&h.cgroupFD)
	err := removeCgroups(h.cgroups)
	h.cgroups, h.v2 = nil, nil
	return err
}

func closeFile(f **os.File) {
	if *f != nil {
		(*f).Close()
		*f = nil
	}
}

// refused wraps err as the kernel refusing layer when its errno says so.
func refused(layer Layer, err error) *LayerError {
	var errno syscall.Errno
	unsupported := errors.As(err, &errno) && (errno == unix.EPERM || errno == unix.EACCES || errno == unix.ENOSYS ||
		errno == unix.EINVAL || errno == unix.EOPNOTSUPP || errno == unix.ENOSPC || errno == unix.EUSERS)
	return &LayerError{Layer: layer, Err: err, Unsupported: unsupported}
}
