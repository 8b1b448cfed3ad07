package jail_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/stepbox/stepbox/internal/jail"
)

// Environment of the test processes.
const (
	envAction = "JAILTEST_ACTION" // a jailed child performs this action
	envHelper = "JAILTEST_HELPER" // an unjailed helper process plays this role
	envArg    = "JAILTEST_ARG"    // an argument for either
	envArg2   = "JAILTEST_ARG2"   // another one
)

// childHook turns the test binary into a jailed child or a helper when the
// environment says so; it never returns then.
func childHook() {
	if cfg, ok, err := jail.ChildConfigFromEnv(); ok {
		if err == nil {
			err = jail.Enter(cfg)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "enter: %v\n", err)
			os.Exit(3)
		}
		action := actions[os.Getenv(envAction)]
		if action == nil {
			fmt.Fprintf(os.Stderr, "unknown action %q\n", os.Getenv(envAction))
			os.Exit(4)
		}
		out, err := json.Marshal(action())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(5)
		}
		os.Stdout.Write(append(out, '\n'))
		// Not os.Exit: under the race detector it sleeps a second, and the
		// jail hides the GORACE setting that turns that off.
		syscall.Exit(0)
	}
	if h := os.Getenv(envHelper); h != "" {
		helpers[h]()
		os.Exit(0)
	}
}

type result = map[string]any

// errnoName gives the errno of err ("OK" for nil) for comparisons.
func errnoName(err error) string {
	if err == nil {
		return "OK"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

func rawErr(errno syscall.Errno) error {
	if errno == 0 {
		return nil
	}
	return errno
}

// rawFork forks with raw clone flags; the child exits at once, so it runs
// no Go code. Zombies are left for the caller to reap.
//
//go:nosplit
//go:norace
func rawFork(flags uintptr) (uintptr, syscall.Errno) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, flags, 0, 0, 0, 0, 0)
	if e == 0 && r == 0 {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
	}
	return r, e
}

func reapAll() {
	for {
		var ws syscall.WaitStatus
		if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
			return
		}
	}
}

var actions = map[string]func() result{
	// syscalls tries what the filter and the jail must refuse.
	"syscalls": func() result {
		r := result{}
		try := func(name string, err error) { r[name] = errnoName(err) }
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		try("socket(AF_INET)", err)
		_, err = unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM, 0)
		try("socket(AF_INET6)", err)
		_, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
		try("socket(AF_NETLINK)", err)
		_, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		try("socket(AF_PACKET)", err)
		_, err = unix.Socketpair(unix.AF_INET, unix.SOCK_STREAM, 0)
		try("socketpair(AF_INET)", err)
		_ = fd
		// AF_UNIX works, end to end.
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			_, err = unix.Write(fds[0], []byte("ping"))
			buf := make([]byte, 4)
			if err == nil {
				var n int
				n, err = unix.Read(fds[1], buf)
				if err == nil && string(buf[:n]) != "ping" {
					err = fmt.Errorf("read %q", buf[:n])
				}
			}
		}
		try("socketpair(AF_UNIX)", err)
		_, _, e := unix.RawSyscall(unix.SYS_PTRACE, unix.PTRACE_TRACEME, 0, 0)
		try("ptrace(TRACEME)", rawErr(e))
		_, _, e = unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_ATTACH, 1, 0, 0, 0, 0)
		try("ptrace(ATTACH, 1)", rawErr(e))
		try("mount", unix.Mount("tmpfs", "/tmp", "tmpfs", 0, ""))
		try("umount2", unix.Unmount("/tmp", unix.MNT_DETACH))
		try("pivot_root", unix.PivotRoot("/tmp", "/tmp"))
		try("chroot", unix.Chroot("/tmp"))
		try("unshare(CLONE_NEWUSER)", unix.Unshare(unix.CLONE_NEWUSER))
		try("unshare(CLONE_NEWNET)", unix.Unshare(unix.CLONE_NEWNET))
		try("setns", unix.Setns(0, 0))
		_, e = rawFork(unix.CLONE_NEWUSER | uintptr(unix.SIGCHLD))
		try("clone(CLONE_NEWUSER)", rawErr(e))
		_, e = rawFork(unix.CLONE_NEWNS | unix.CLONE_NEWPID | uintptr(unix.SIGCHLD))
		try("clone(CLONE_NEWNS|CLONE_NEWPID)", rawErr(e))
		_, _, e = unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
		try("clone3", rawErr(e))
		_, err = unix.Fsopen("tmpfs", 0)
		try("fsopen", err)
		_, err = unix.OpenTree(unix.AT_FDCWD, "/", 0)
		try("open_tree", err)
		try("move_mount", unix.MoveMount(-1, "", unix.AT_FDCWD, "/tmp", 0))
		try("mount_setattr", unix.MountSetattr(unix.AT_FDCWD, "/", 0, &unix.MountAttr{}))
		var params [120]byte
		_, _, e = unix.RawSyscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
		try("io_uring_setup", rawErr(e))
		_, _, e = unix.RawSyscall(unix.SYS_BPF, 0, 0, 0)
		try("bpf", rawErr(e))
		_, _, e = unix.RawSyscall6(unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0, 0)
		try("perf_event_open", rawErr(e))
		_, _, e = unix.RawSyscall(unix.SYS_USERFAULTFD, 0, 0, 0)
		try("userfaultfd", rawErr(e))
		_, err = unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_SESSION_KEYRING, 0, 0, 0)
		try("keyctl", err)
		_, err = unix.AddKey("user", "stepbox", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
		try("add_key", err)
		_, _, e = unix.RawSyscall(unix.SYS_INIT_MODULE, 0, 0, 0)
		try("init_module", rawErr(e))
		_, _, e = unix.RawSyscall6(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0, 0, 0)
		try("kexec_load", rawErr(e))
		_, _, e = unix.RawSyscall6(unix.SYS_REBOOT, 0, 0, 0, 0, 0, 0) // bad magic either way
		try("reboot", rawErr(e))
		p, _ := unix.BytePtrFromString("/nonexistent")
		_, _, e = unix.RawSyscall(unix.SYS_SWAPON, uintptr(unsafe.Pointer(p)), 0, 0)
		try("swapon", rawErr(e))
		local := []unix.Iovec{{Base: &params[0], Len: 1}}
		_, err = unix.ProcessVMReadv(1, local, []unix.RemoteIovec{{Base: uintptr(unsafe.Pointer(&params[1])), Len: 1}}, 0)
		try("process_vm_readv", err)
		_, _, e = unix.RawSyscall(unix.SYS_PERSONALITY, 0x0008, 0, 0) // PER_LINUX32
		try("personality(PER_LINUX32)", rawErr(e))
		_, _, e = unix.RawSyscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
		try("personality(query)", rawErr(e))
		try("execve", unix.Exec(jail.ExePath, []string{"x"}, nil))
		try("setuid(0)", rawSetuid(0))
		try("prctl(PR_SET_DUMPABLE, 1)", unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0))
		var si unix.Sysinfo_t
		try("sysinfo (not allowed)", unix.Sysinfo(&si))
		return r
	},
	"fs": func() result {
		r := result{}
		for _, p := range []string{"/etc/hostname", "/etc/passwd", "/home", "/root", "/sys/kernel", "/proc/self", "/dev/sda", "/dev/random", os.Getenv(envArg)} {
			_, err := os.Stat(p)
			r["stat "+p] = errnoName(err)
		}
		entries, _ := os.ReadDir("/")
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		r["root"] = strings.Join(names, " ")
		entries, _ = os.ReadDir("/dev")
		names = nil
		for _, e := range entries {
			names = append(names, e.Name())
		}
		r["dev"] = strings.Join(names, " ")
		for _, p := range []string{"/x", "/stepbox/x", "/dev/x"} {
			r["create "+p] = errnoName(os.WriteFile(p, []byte("x"), 0o644))
		}
		r["write /stepbox/exe"] = errnoName(func() error {
			f, err := os.OpenFile(jail.ExePath, os.O_WRONLY, 0)
			if err == nil {
				f.Close()
			}
			return err
		}())
		r["write /dev/null"] = errnoName(os.WriteFile("/dev/null", []byte("x"), 0))
		r["read /dev/urandom"] = errnoName(func() error {
			f, err := os.Open("/dev/urandom")
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.ReadFull(f, make([]byte, 16))
			return err
		}())
		r["write /tmp"] = errnoName(os.WriteFile("/tmp/small", []byte("hello"), 0o600))
		// Fill /tmp past its size.
		f, err := os.Create("/tmp/fill")
		var written int64
		if err == nil {
			chunk := make([]byte, 256<<10)
			for written < 1<<30 {
				var n int
				n, err = f.Write(chunk)
				written += int64(n)
				if err != nil {
					break
				}
			}
			f.Close()
		}
		r["fill /tmp"] = errnoName(err)
		r["fill /tmp bytes"] = written
		if dir := os.Getenv(envArg2); dir != "" {
			r["create in "+dir] = errnoName(os.WriteFile(filepath.Join(dir, "new"), []byte("x"), 0o644))
			data, err := os.ReadFile(filepath.Join(dir, "f"))
			r["read in "+dir] = string(data) + errnoName(err)
		}
		r["hostname"], _ = os.Hostname()
		wd, _ := os.Getwd()
		r["cwd"] = wd
		return r
	},
	"ids": func() result {
		groups, _ := unix.Getgroups()
		var uts unix.Utsname
		_ = unix.Uname(&uts)
		sid, _ := unix.Getsid(0)
		dumpable, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		return result{
			"sid": sid, "pgrp": unix.Getpgrp(), "dumpable": dumpable,
			"uid": unix.Getuid(), "euid": unix.Geteuid(), "gid": unix.Getgid(), "egid": unix.Getegid(),
			"groups": len(groups), "pid": unix.Getpid(), "ppid": unix.Getppid(),
			"nodename": unix.ByteSliceToString(uts.Nodename[:]),
			"env":      strings.Join(os.Environ(), " "),
		}
	},
	"rlimits": func() result {
		r := result{}
		for name, res := range map[string]int{"nofile": unix.RLIMIT_NOFILE, "fsize": unix.RLIMIT_FSIZE,
			"nproc": unix.RLIMIT_NPROC, "core": unix.RLIMIT_CORE, "as": unix.RLIMIT_AS} {
			var l unix.Rlimit
			if err := unix.Getrlimit(res, &l); err != nil {
				r[name] = err.Error()
				continue
			}
			r[name] = fmt.Sprintf("%d/%d", l.Cur, l.Max)
		}
		return r
	},
	// procfs reads what a mounted /proc shows (UnsafeMountProc).
	"procfs": func() result {
		startThreads(4)
		r := result{}
		entries, err := os.ReadDir("/proc")
		if err != nil {
			r["error"] = err.Error()
			return r
		}
		var pids []string
		for _, e := range entries {
			if e.Name()[0] >= '0' && e.Name()[0] <= '9' {
				pids = append(pids, e.Name())
			}
		}
		r["pids"] = strings.Join(pids, " ")
		r["threads"] = threadStatus("/proc/self/task")
		return r
	},
	// wait reports ready and blocks until stdin closes, so the host can look
	// at the worker from outside.
	"wait": func() result {
		startThreads(4)
		os.Stdout.Write([]byte("ready\n"))
		io.Copy(io.Discard, os.Stdin)
		return result{}
	},
	"sleep": func() result {
		os.Stdout.Write([]byte("ready\n"))
		time.Sleep(time.Hour)
		return result{}
	},
	// oom allocates and touches memory until something stops it.
	"oom": func() result {
		var keep [][]byte
		for i := 0; i < 256; i++ {
			b := make([]byte, 16<<20)
			for j := 0; j < len(b); j += 4096 {
				b[j] = 1
			}
			keep = append(keep, b)
		}
		return result{"survived": len(keep)}
	},
	// forkbomb forks until the kernel refuses.
	"forkbomb": func() result {
		runtime.LockOSThread()
		n := 0
		var errno syscall.Errno
		for n < 10000 {
			if _, errno = rawFork(uintptr(unix.SIGCHLD)); errno != 0 {
				break
			}
			n++
		}
		reapAll()
		return result{"forks": n, "err": errnoName(rawErr(errno))}
	},
	// fds reports which of the descriptors listed in JAILTEST_ARG are open.
	"fds": func() result {
		r := result{}
		for _, s := range strings.Split(os.Getenv(envArg), ",") {
			fd, _ := strconv.Atoi(s)
			_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
			r[s] = errnoName(err)
		}
		return r
	},
	// x32 makes an x32-ABI system call: the filter kills the process.
	"x32": func() result {
		unix.RawSyscall(0x40000000|unix.SYS_GETPID, 0, 0, 0)
		return result{"survived": true}
	},
}

func rawSetuid(uid int) error {
	_, _, e := unix.RawSyscall(unix.SYS_SETUID, uintptr(uid), 0, 0)
	return rawErr(e)
}

// startThreads makes sure the runtime has several OS threads.
func startThreads(n int) {
	ready := make(chan struct{})
	for i := 0; i < n; i++ {
		go func() {
			runtime.LockOSThread()
			ready <- struct{}{}
			select {}
		}()
	}
	for i := 0; i < n; i++ {
		<-ready
	}
}

// threadStatus collects the security fields of every thread under dir
// (/proc/<pid>/task).
func threadStatus(dir string) []map[string]string {
	tasks, _ := os.ReadDir(dir)
	var out []map[string]string
	for _, task := range tasks {
		f, err := os.Open(filepath.Join(dir, task.Name(), "status"))
		if err != nil {
			continue
		}
		m := map[string]string{"tid": task.Name()}
		s := bufio.NewScanner(f)
		for s.Scan() {
			k, v, _ := strings.Cut(s.Text(), ":")
			switch k {
			case "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp", "Uid", "Gid", "Groups":
				m[k] = strings.Join(strings.Fields(v), " ")
			}
		}
		f.Close()
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["tid"] < out[j]["tid"] })
	return out
}

// helpers are roles of the unjailed test binary.
var helpers = map[string]func(){
	// pdeath starts a jailed child, prints its pid and waits to be killed.
	"pdeath": func() {
		restore := jail.SetNoCgroupsForTest(true) // nobody would remove them
		defer restore()
		cmd := exec.Command("/proc/self/exe")
		cmd.Env = childEnv(envAction + "=sleep")
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		h, err := jail.Prepare(cmd, withLibs(jail.Config{}))
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if err := cmd.Start(); err != nil {
			fmt.Println("error:", err)
			return
		}
		if err := h.Started(cmd.Process.Pid); err != nil {
			fmt.Println("error:", err)
			return
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line != "ready\n" {
			fmt.Printf("error: child said %q\n", line)
			return
		}
		fmt.Println(cmd.Process.Pid)
		time.Sleep(time.Hour)
	},
	// deny installs a seccomp filter that makes the kernel refuse one layer
	// (JAILTEST_ARG: userns or pivot_root) to this process and its
	// children, then reports what Probe and Prepare say.
	"deny": func() {
		var rule jail.Rule
		switch os.Getenv(envArg) {
		case "userns":
			rule = jail.Rule{Names: []string{"clone"}, Args: []jail.Arg{{Index: 0, Mask: unix.CLONE_NEWUSER, Value: unix.CLONE_NEWUSER}}, Action: jail.ActionErrno(uint16(unix.EPERM))}
		case "pivot_root":
			rule = jail.Rule{Names: []string{"pivot_root"}, Action: jail.ActionErrno(uint16(unix.EPERM))}
		}
		f := jail.Filter{Rules: []jail.Rule{rule}, Default: jail.ActionAllow}
		if err := f.Install(); err != nil {
			fmt.Println(`{"error":"install"}`)
			return
		}
		caps := jail.Probe()
		cmd := exec.Command("/proc/self/exe")
		_, perr := jail.Prepare(cmd, withLibs(jail.Config{}))
		out, _ := json.Marshal(result{
			"probe":                caps,
			"probeErr":             errString(caps.Err()),
			"prepareErr":           errString(perr),
			"prepareIsUnsupported": errors.Is(perr, errors.ErrUnsupported),
			"sysProcAttrUntouched": cmd.SysProcAttr == nil,
		})
		fmt.Println(string(out))
	},
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
