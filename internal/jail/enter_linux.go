package jail

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Enter finishes the jail from inside. Call it first thing in the worker's
// main, before reading any inherited descriptor, with the ChildConfig from
// ChildConfigFromEnv.
//
// Enter runs twice. The first time (the process Prepare started, still with
// the setup capabilities) it waits for Handle.Started, makes every mount
// private, builds a new root on a tmpfs (the executable at ExePath and
// cfg.ReadOnlyBinds read-only, nosuid, nodev; /dev with only null, zero and
// urandom bound from the host; /tmp a size-capped tmpfs; /proc only if
// asked), pivots into it and detaches the old root, sets the host name and
// rlimits, marks every descriptor from cfg.KeepFDs on close-on-exec, and on
// one locked thread drops the bounding and ambient sets, locks the
// securebits, sets no_new_privs, drops every capability and re-executes
// ExePath: the new image starts with a single thread and no capabilities,
// so every thread the Go runtime creates afterwards inherits nothing. That
// execution's main calls Enter again, which checks that all of this
// holds, removes EnvConfig from the environment, sets PR_SET_DUMPABLE 0,
// installs the seccomp filter on all threads (TSYNC) and returns nil.
//
// The first run happens in this package's init (early_linux.go), before
// the packages that import it initialise; a main that calls Enter itself
// gets the second. Consequences for the worker: only the package
// initialisers that run before this package's run twice, and their state
// from the first execution is lost; only descriptors below cfg.KeepFDs
// survive. After Enter the
// worker sees only its new root: load what it needs from bound paths or
// over its pipes. It may read, write, mmap, make threads, fork (without
// namespaces), use AF_UNIX sockets and its inherited descriptors, write
// /tmp; it may not open network sockets, exec (unless the filter allows),
// mount, ptrace, or regain any privilege. It is pid 1 of its pid namespace:
// it must reap its children, and when it dies they die with it.
//
// Any error leaves the process partly jailed: the caller must exit. Errors
// from a layer the kernel refused wrap errors.ErrUnsupported.
func Enter(cfg ChildConfig) (err error) {
	if cfg.Probe {
		defer func() { reportProbe(err) }()
	}
	if os.Getenv(envStage) == "2" {
		return finish(cfg)
	}
	return setup(cfg)
}

// setup builds the jail and re-executes; it returns only on error.
func setup(cfg ChildConfig) error {
	if err := checkNamespaces(); err != nil {
		return err
	}
	exe, err := waitForHost(cfg.SyncFD)
	if err != nil {
		return err
	}
	defer unix.Close(exe)
	// Descriptors beyond the ones the caller passed (any the host leaked
	// without O_CLOEXEC) must not survive the exec; ours are all O_CLOEXEC.
	if err := closeOnExecFrom(cfg.KeepFDs); err != nil {
		return err
	}
	// The address space in use now (Go reserves more than it touches);
	// RLIMIT_AS is this plus the budget. /proc is gone after pivot_root.
	var asBase int64
	if cfg.AddressSpaceBytes > 0 {
		b, err := addressSpaceInUse()
		if err != nil {
			return &LayerError{Layer: LayerRlimit, Err: err}
		}
		asBase = b
	}
	if err := buildRoot(cfg, exe); err != nil {
		return err
	}
	if err := unix.Sethostname([]byte(Hostname)); err != nil {
		return refused(LayerUTSNS, os.NewSyscallError("sethostname", err))
	}
	if err := unix.Setdomainname([]byte(Hostname)); err != nil {
		return refused(LayerUTSNS, os.NewSyscallError("setdomainname", err))
	}
	limits := []rlimit{
		{unix.RLIMIT_NOFILE, "RLIMIT_NOFILE", uint64(cfg.MaxOpenFiles)},
		{unix.RLIMIT_FSIZE, "RLIMIT_FSIZE", uint64(cfg.MaxFileSizeBytes)},
		{unix.RLIMIT_CORE, "RLIMIT_CORE", 0},
		{unix.RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK", 0},
		{unix.RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE", 0},
	}
	if cfg.AddressSpaceBytes > 0 {
		limits = append(limits, rlimit{unix.RLIMIT_AS, "RLIMIT_AS", uint64(asBase + cfg.AddressSpaceBytes)})
	}
	for _, l := range limits {
		if err := l.set(); err != nil {
			return err
		}
	}
	return dropAndExec(cfg)
}

// rlimit is one resource limit, soft and hard.
type rlimit struct {
	resource int
	name     string
	value    uint64
}

func (l rlimit) set() error {
	if err := unix.Setrlimit(l.resource, &unix.Rlimit{Cur: l.value, Max: l.value}); err != nil {
		return refused(LayerRlimit, os.NewSyscallError("setrlimit("+l.name+")", err))
	}
	return nil
}

// releaseTimeout bounds the wait for Handle.Started.
const releaseTimeout = 30 * time.Second

// waitForHost blocks until Handle.Started releases the child, so that it
// runs in its cgroups from its first allocation on. It returns the
// descriptor of the executable that the host opened in our mount namespace.
func waitForHost(fd int) (exe int, err error) {
	if fd < 3 {
		return -1, errors.New("jail: no sync descriptor: was the process started by jail.Prepare?")
	}
	defer unix.Close(fd)
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, int(releaseTimeout/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return -1, fmt.Errorf("jail: waiting for the host to release the worker: %v", cmp.Or(err, error(unix.ETIMEDOUT)))
		}
		break
	}
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(fd, b[:], oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil || n != 1 || b[0] != '1' {
		return -1, fmt.Errorf("jail: waiting for the host to release the worker: %v", cmp.Or(err, io.ErrUnexpectedEOF))
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("jail: no executable from the host: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, fmt.Errorf("jail: no executable from the host: %v", err)
	}
	// It must be the program that is running.
	var got, want unix.Stat_t
	if err := unix.Fstat(fds[0], &got); err != nil {
		unix.Close(fds[0])
		return -1, fmt.Errorf("jail: executable from the host: %w", err)
	}
	if err := unix.Stat("/proc/self/exe", &want); err != nil || got.Dev != want.Dev || got.Ino != want.Ino {
		unix.Close(fds[0])
		return -1, fmt.Errorf("jail: the executable the host sent is not this program (replaced on disk?)")
	}
	return fds[0], nil
}

// closeOnExecFrom marks every descriptor from first on close-on-exec.
func closeOnExecFrom(first int) error {
	err := unix.CloseRange(uint(first), ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if err != unix.ENOSYS && err != unix.EINVAL {
		return fmt.Errorf("jail: %w", os.NewSyscallError("close_range", err))
	}
	// Before Linux 5.11.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("jail: close descriptors: %w", err)
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= first {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}

// checkNamespaces fails closed when the process was not cloned into the
// namespaces Prepare asks for.
func checkNamespaces() error {
	if os.Getpid() != 1 {
		return &LayerError{Layer: LayerPIDNS, Err: fmt.Errorf("pid is %d, not 1: not in a new pid namespace", os.Getpid())}
	}
	m, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return &LayerError{Layer: LayerUserNS, Err: err}
	}
	if f := strings.Fields(string(m)); len(f) != 3 || f[2] != "1" {
		return &LayerError{Layer: LayerUserNS, Err: fmt.Errorf("unexpected uid_map %q", strings.TrimSpace(string(m)))}
	}
	return nil
}

func addressSpaceInUse() (int64, error) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0, fmt.Errorf("unexpected /proc/self/statm %q", data)
	}
	pages, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, err
	}
	return pages * int64(os.Getpagesize()), nil
}

// stagingDirs are host directories the new root's tmpfs may be mounted on
// (in our private mount namespace, so the host does not see it).
var stagingDirs = []string{"/tmp", "/mnt", "/var/tmp", "/run"}

// bindSource is a path to bind, opened before anything is shadowed.
type bindSource struct {
	path    string
	fd      int // O_PATH descriptor; -1 for a symlink
	dir     bool
	symlink string
}

// openBind opens path; a symbolic link is recorded as such unless follow
// (for /proc/self/exe, a magic link to the executable).
func openBind(path string, follow bool) (bindSource, error) {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	st, err := stat(path)
	if err != nil {
		return bindSource{}, err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(path)
		return bindSource{path: path, fd: -1, symlink: target}, err
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return bindSource{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return bindSource{path: path, fd: fd, dir: st.IsDir()}, nil
}

// buildRoot makes the new root and pivots into it.
func buildRoot(cfg ChildConfig, exeFD int) (err error) {
	// Nothing we mount may propagate back to the host, and pivot_root
	// requires private mounts.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return refused(LayerMount, &os.PathError{Op: "make private", Path: "/", Err: err})
	}

	// Open every source first: the new root is built on top of a host
	// directory, which may hide some of them.
	var sources []bindSource
	defer func() {
		for _, s := range sources {
			if s.fd >= 0 && s.fd != exeFD {
				unix.Close(s.fd)
			}
		}
	}()
	sources = append(sources, bindSource{path: ExePath, fd: exeFD})
	for _, p := range cfg.ReadOnlyBinds {
		s, err := openBind(p, false)
		if err != nil {
			return &LayerError{Layer: LayerMount, Err: err}
		}
		sources = append(sources, s)
	}
	var devs []bindSource
	for _, d := range []string{"/dev/null", "/dev/zero", "/dev/urandom"} {
		s, err := openBind(d, true)
		if err != nil {
			return &LayerError{Layer: LayerMount, Err: err}
		}
		sources = append(sources, s)
		devs = append(devs, s)
	}

	root := ""
	for _, d := range stagingDirs {
		if st, err := os.Lstat(d); err == nil && st.IsDir() {
			root = d
			break
		}
	}
	if root == "" {
		return &LayerError{Layer: LayerMount, Err: fmt.Errorf("no directory to build the root on (tried %v)", stagingDirs)}
	}
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV,
		"size=1m,nr_inodes=4096,mode=0755"); err != nil {
		return refused(LayerMount, &os.PathError{Op: "mount tmpfs", Path: root, Err: err})
	}
	for _, d := range []string{"/dev", "/tmp", filepath.Dir(ExePath)} {
		if err := os.Mkdir(root+d, 0o755); err != nil {
			return &LayerError{Layer: LayerMount, Err: err}
		}
	}
	readOnly := uint64(unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
	for _, s := range sources {
		if isDev(s, devs) {
			continue
		}
		if err := bindAt(root, s, readOnly); err != nil {
			return err
		}
	}
	for _, s := range devs {
		// Device nodes need a mount without nodev; read-only does not stop
		// writing to a device.
		if err := bindAt(root, s, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC); err != nil {
			return err
		}
	}
	opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700", cfg.TmpfsSizeBytes, cfg.TmpfsInodes)
	if err := unix.Mount("tmpfs", root+"/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, opts); err != nil {
		return refused(LayerMount, &os.PathError{Op: "mount tmpfs", Path: "/tmp", Err: err})
	}
	if cfg.MountProc {
		if err := os.Mkdir(root+"/proc", 0o555); err != nil {
			return &LayerError{Layer: LayerMount, Err: err}
		}
		if err := unix.Mount("proc", root+"/proc", "proc",
			unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, ""); err != nil {
			return refused(LayerMount, &os.PathError{Op: "mount proc", Path: "/proc", Err: err})
		}
	}

	if err := pivotRoot(root); err != nil {
		return err
	}
	if err := setMountAttr("/", false, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC); err != nil {
		return refused(LayerMount, &os.PathError{Op: "remount read-only", Path: "/", Err: err})
	}
	return nil
}

func isDev(s bindSource, devs []bindSource) bool {
	for _, d := range devs {
		if d.fd == s.fd {
			return true
		}
	}
	return false
}

// bindAt binds s at root+s.path and applies attrs to it and its submounts.
func bindAt(root string, s bindSource, attrs uint64) error {
	target := root + s.path
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return &LayerError{Layer: LayerMount, Err: err}
	}
	if s.fd < 0 {
		if err := os.Symlink(s.symlink, target); err != nil {
			return &LayerError{Layer: LayerMount, Err: err}
		}
		return nil
	}
	var err error
	if s.dir {
		err = os.Mkdir(target, 0o755)
	} else {
		var f *os.File
		if f, err = os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444); err == nil {
			err = f.Close()
		}
	}
	if err != nil {
		return &LayerError{Layer: LayerMount, Err: err}
	}
	// Bind through the descriptor: the source path may be hidden by now.
	src := "/proc/self/fd/" + strconv.Itoa(s.fd)
	if err := unix.Mount(src, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return refused(LayerMount, &os.PathError{Op: "bind", Path: s.path, Err: err})
	}
	if err := setMountAttr(target, true, attrs); err != nil {
		return refused(LayerMount, &os.PathError{Op: "bind read-only", Path: s.path, Err: err})
	}
	return nil
}

// setMountAttr sets attrs (MOUNT_ATTR_*) on the mount at path and, if
// recursive, its submounts. It falls back to MS_REMOUNT before Linux 5.12.
func setMountAttr(path string, recursive bool, attrs uint64) error {
	flags := uint(unix.AT_SYMLINK_NOFOLLOW)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	err := unix.MountSetattr(unix.AT_FDCWD, path, flags, &unix.MountAttr{Attr_set: attrs})
	if err != unix.ENOSYS {
		return err
	}
	var ms uintptr = unix.MS_BIND | unix.MS_REMOUNT
	for _, m := range []struct {
		attr uint64
		flag uintptr
	}{{unix.MOUNT_ATTR_RDONLY, unix.MS_RDONLY}, {unix.MOUNT_ATTR_NOSUID, unix.MS_NOSUID},
		{unix.MOUNT_ATTR_NODEV, unix.MS_NODEV}, {unix.MOUNT_ATTR_NOEXEC, unix.MS_NOEXEC}} {
		if attrs&m.attr != 0 {
			ms |= m.flag
		}
	}
	points := []string{path}
	if recursive {
		points = append(points, submounts(path)...)
	}
	for _, p := range points {
		// A remount inside a user namespace must keep the flags locked by
		// the mount's original owner (nosuid, nodev, atime, ...).
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err != nil {
			return err
		}
		locked := uintptr(0)
		for _, f := range []struct{ st, ms uintptr }{
			{unix.ST_RDONLY, unix.MS_RDONLY}, {unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV},
			{unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME},
			{unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
		} {
			if uintptr(st.Flags)&f.st != 0 {
				locked |= f.ms
			}
		}
		if err := unix.Mount("", p, "", ms|locked, ""); err != nil {
			return err
		}
	}
	return nil
}

// submounts lists the mount points strictly below path (fallback path only).
func submounts(path string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) > 4 {
			if mp := unescapeMount(f[4]); strings.HasPrefix(mp, path+"/") {
				out = append(out, mp)
			}
		}
	}
	return out
}

// pivotRoot makes root the root and detaches the old one (as runc does).
func pivotRoot(root string) error {
	oldRoot, err := unix.Open("/", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &LayerError{Layer: LayerPivotRoot, Err: os.NewSyscallError("open /", err)}
	}
	defer unix.Close(oldRoot)
	if err := unix.Chdir(root); err != nil {
		return &LayerError{Layer: LayerPivotRoot, Err: &os.PathError{Op: "chdir", Path: root, Err: err}}
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return refused(LayerPivotRoot, err)
	}
	// The old root is now stacked on the new one at "/"; detach it.
	if err := unix.Fchdir(oldRoot); err != nil {
		return &LayerError{Layer: LayerPivotRoot, Err: os.NewSyscallError("fchdir", err)}
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return refused(LayerPivotRoot, os.NewSyscallError("umount old root", err))
	}
	if err := unix.Chdir("/"); err != nil {
		return &LayerError{Layer: LayerPivotRoot, Err: os.NewSyscallError("chdir /", err)}
	}
	return nil
}

// Securebits: never regain capabilities through uid 0, setuid fixups or
// ambient raises, and lock that.
const secureBits = 1<<0 | 1<<1 | // SECBIT_NOROOT, _LOCKED
	1<<2 | 1<<3 | // SECBIT_NO_SETUID_FIXUP, _LOCKED
	1<<5 | // SECBIT_KEEP_CAPS_LOCKED (KEEP_CAPS off)
	1<<6 | 1<<7 // SECBIT_NO_CAP_AMBIENT_RAISE, _LOCKED

// dropAndExec drops every privilege of the calling thread and re-executes
// ExePath, which replaces all threads with this one.
func dropAndExec(cfg ChildConfig) error {
	runtime.LockOSThread() // never unlocked: the thread execs or the process exits

	// The parent-death signal belongs to a thread: Go's fork set it on the
	// thread that became this process's main thread, and exec keeps only
	// the signal of the thread that calls it, which need not be that one
	// (the runtime may have moved this goroutine). Set it here too. Race
	// free: had the parent died before this, the main thread's signal
	// would already have killed the process.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return refused(LayerCaps, os.NewSyscallError("prctl(PR_SET_PDEATHSIG)", err))
	}

	for c := 0; c < 64; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EINVAL { // beyond CAP_LAST_CAP
				break
			}
			return refused(LayerCaps, os.NewSyscallError("prctl(PR_CAPBSET_DROP)", err))
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return refused(LayerCaps, os.NewSyscallError("prctl(PR_CAP_AMBIENT_CLEAR_ALL)", err))
	}
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secureBits, 0, 0, 0); err != nil {
		return refused(LayerCaps, os.NewSyscallError("prctl(PR_SET_SECUREBITS)", err))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return refused(LayerNoNewPrivs, os.NewSyscallError("prctl(PR_SET_NO_NEW_PRIVS)", err))
	}
	// Last: the runtime must not need another thread after this.
	if err := (rlimit{unix.RLIMIT_NPROC, "RLIMIT_NPROC", uint64(cfg.MaxProcs)}).set(); err != nil {
		return err
	}
	if err := capsetZero(); err != nil {
		return refused(LayerCaps, os.NewSyscallError("capset", err))
	}
	env := append(os.Environ(), envStage+"=2")
	err := unix.Exec(ExePath, os.Args, env)
	return &LayerError{Layer: LayerMount, Err: &os.PathError{Op: "exec", Path: ExePath, Err: err}}
}

func capsetZero() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// finish runs in the re-executed worker: verify, then seccomp.
func finish(cfg ChildConfig) error {
	if err := verifyJailed(cfg); err != nil {
		return err
	}
	os.Unsetenv(EnvConfig)
	os.Unsetenv(envStage)
	// Not dumpable: no core dumps, and /proc/<pid> of the worker is owned by
	// root, so nothing in its user namespace can inspect it.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return &LayerError{Layer: LayerCaps, Err: os.NewSyscallError("prctl(PR_SET_DUMPABLE)", err)}
	}
	if cfg.Program == "" {
		return NewFilter(cfg.Syscalls...).Install()
	}
	raw, err := unpackProgram(cfg.Program)
	if err != nil {
		return &LayerError{Layer: LayerSeccomp, Err: err}
	}
	return installProgram(raw)
}

// verifyJailed checks, from the calling thread (which every other thread
// of this image was cloned from), what setup promised.
func verifyJailed(cfg ChildConfig) error {
	if os.Getpid() != 1 {
		return &LayerError{Layer: LayerPIDNS, Err: fmt.Errorf("pid is %d, not 1", os.Getpid())}
	}
	if uid, gid := os.Getuid(), os.Getgid(); uid != cfg.UID || os.Geteuid() != cfg.UID || gid != cfg.GID || os.Getegid() != cfg.GID {
		return &LayerError{Layer: LayerCaps, Err: fmt.Errorf("running as uid %d gid %d, want %d %d", uid, gid, cfg.UID, cfg.GID)}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return &LayerError{Layer: LayerCaps, Err: os.NewSyscallError("capget", err)}
	}
	if data != [2]unix.CapUserData{} {
		return &LayerError{Layer: LayerCaps, Err: fmt.Errorf("capabilities left: %+v", data)}
	}
	for c := 0; c < 64; c++ {
		r, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err != nil {
			break
		}
		if r != 0 {
			return &LayerError{Layer: LayerCaps, Err: fmt.Errorf("capability %d left in the bounding set", c)}
		}
	}
	if r, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || r != 1 {
		return &LayerError{Layer: LayerNoNewPrivs, Err: fmt.Errorf("no_new_privs is %d (%v)", r, err)}
	}
	var st unix.Statfs_t
	if err := unix.Statfs("/", &st); err != nil {
		return &LayerError{Layer: LayerPivotRoot, Err: os.NewSyscallError("statfs /", err)}
	}
	if st.Type != unix.TMPFS_MAGIC || st.Flags&unix.ST_RDONLY == 0 {
		return &LayerError{Layer: LayerPivotRoot, Err: fmt.Errorf("root is not the read-only tmpfs (type %#x, flags %#x)", st.Type, st.Flags)}
	}
	if _, err := os.Stat("/proc/self"); err == nil && !cfg.MountProc {
		return &LayerError{Layer: LayerMount, Err: errors.New("/proc is visible")}
	}
	return nil
}

// probeResult is what a probe child prints.
type probeResult struct {
	OK          bool   `json:"ok"`
	Layer       Layer  `json:"layer,omitempty"`
	Error       string `json:"error,omitempty"`
	Unsupported bool   `json:"unsupported,omitempty"`
}

// reportProbe ends a probe child: success only after the filter is in.
func reportProbe(err error) {
	var r probeResult
	if err == nil {
		r.OK = true
	} else {
		r.Layer, r.Error = LayerProbe, err.Error()
		var le *LayerError
		if errors.As(err, &le) {
			r.Layer, r.Error, r.Unsupported = le.Layer, le.Err.Error(), le.Unsupported
		}
	}
	out, _ := json.Marshal(r)
	os.Stdout.Write(append(out, '\n'))
	// Exit without the runtime's exit hooks: under the race detector they
	// sleep a second (GORACE, which would turn that off, is read from
	// /proc, which the jail lacks).
	if r.OK {
		syscall.Exit(0)
	}
	syscall.Exit(1)
}
