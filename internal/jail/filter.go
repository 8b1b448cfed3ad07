package jail

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
)

// Action is what a seccomp filter does with a system call: a SECCOMP_RET_*
// value with its data.
type Action uint32

// Actions. ActionErrno builds the "fail with this errno" action.
const (
	ActionAllow       Action = 0x7fff0000 // SECCOMP_RET_ALLOW
	ActionKillProcess Action = 0x80000000 // SECCOMP_RET_KILL_PROCESS
	actionErrno       Action = 0x00050000 // SECCOMP_RET_ERRNO
)

// Linux errno values used by the policy (identical on amd64 and arm64).
const (
	errnoEPERM  = 1
	errnoENOTTY = 25
	errnoENOSYS = 38
)

// ActionErrno returns the action that fails the call with errno (a Linux
// errno number, e.g. 1 for EPERM) without running it.
func ActionErrno(errno uint16) Action { return actionErrno | Action(errno) }

func (a Action) String() string {
	switch {
	case a == ActionAllow:
		return "allow"
	case a == ActionKillProcess:
		return "kill_process"
	case a&0xffff0000 == actionErrno:
		return fmt.Sprintf("errno(%d)", a&0xffff)
	}
	return fmt.Sprintf("action(%#x)", uint32(a))
}

// Arg is a condition on one argument of a system call: it holds when
// args[Index] & Mask == Value. A zero Mask means all 64 bits.
type Arg struct {
	Index int    `json:"index"`
	Mask  uint64 `json:"mask,omitempty"`
	Value uint64 `json:"value"`
}

// Rule applies Action to the named system calls when every Arg holds. Names
// that do not exist on the running architecture (open on arm64) are skipped;
// names unknown on every supported architecture are an error.
type Rule struct {
	Names  []string `json:"names"`
	Args   []Arg    `json:"args,omitempty"`
	Action Action   `json:"action"`
}

// Filter is a seccomp policy: for each system call the first rule that names
// it and whose arguments match decides; a call no rule decides gets Default.
// Whatever the rules say, a call from another architecture (i386 through
// int 0x80) or the x32 ABI kills the process.
type Filter struct {
	Rules   []Rule `json:"rules"`
	Default Action `json:"default"`
	// fixed is the number of leading Rules that extra rules may not name.
	fixed int
}

// Linux constants the policy tests arguments against.
const (
	afUnix = 1
	// Every namespace flag clone(2) accepts (CLONE_NEWTIME shares its bit
	// with the exit signal there, so only unshare/clone3 take it).
	cloneNSFlags = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
	queryPersona = 0xffffffff
	mask32       = 0xffffffff
)

// deniedSyscalls fail with EPERM whatever extra rules say: they reach kernel
// surface or other processes that a worker never needs.
var deniedSyscalls = []string{
	// Debugging and other processes' memory.
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
	// Mounts, old and new API, and changing root.
	"mount", "umount2", "pivot_root", "chroot",
	"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "open_tree_attr", "mount_setattr",
	"listmount", "statmount",
	// Namespaces.
	"unshare", "setns",
	// Large kernel attack surface.
	"bpf", "io_uring_setup", "io_uring_enter", "io_uring_register", "perf_event_open", "userfaultfd",
	"keyctl", "add_key", "request_key", "fanotify_init", "open_by_handle_at", "name_to_handle_at",
	"lookup_dcookie", "nfsservctl", "uselib", "_sysctl", "modify_ldt", "iopl", "ioperm",
	// Machine administration.
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "create_module",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
	"lsm_set_self_attr",
	// Identity: the worker keeps the uid, gid and (empty) capabilities it has.
	"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
	"setfsuid", "setfsgid", "capset",
}

// fixedRules come first and decide their system calls completely.
func fixedRules() []Rule {
	eperm := ActionErrno(errnoEPERM)
	return []Rule{
		{Names: deniedSyscalls, Action: eperm},
		// ENOSYS, not EPERM: glibc and Go then fall back to clone(2), whose
		// flags (unlike clone3's, behind a pointer) the filter can inspect.
		{Names: []string{"clone3"}, Action: ActionErrno(errnoENOSYS)},
		// Threads and plain fork, never a new namespace.
		{Names: []string{"clone"}, Args: []Arg{{Index: 0, Mask: cloneNSFlags, Value: 0}}, Action: ActionAllow},
		{Names: []string{"clone"}, Action: eperm},
		// AF_UNIX only: no network, netlink, packet or vsock sockets.
		{Names: []string{"socket", "socketpair"}, Args: []Arg{{Index: 0, Mask: mask32, Value: afUnix}}, Action: ActionAllow},
		{Names: []string{"socket", "socketpair"}, Action: eperm},
		// Querying the execution domain is fine; changing it (READ_IMPLIES_EXEC,
		// ADDR_NO_RANDOMIZE, ...) is not.
		{Names: []string{"personality"}, Args: []Arg{{Index: 0, Mask: mask32, Value: queryPersona}}, Action: ActionAllow},
		{Names: []string{"personality"}, Action: eperm},
	}
}

// allowedSyscalls are what the Go runtime and a worker that talks over
// inherited pipes and AF_UNIX sockets need; found by running the worker
// under strace -f and under this filter.
var allowedSyscalls = []string{
	// Memory.
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "msync", "mincore", "membarrier",
	// Threads, synchronization, scheduling.
	"futex", "futex_waitv", "set_robust_list", "get_robust_list", "rseq", "set_tid_address",
	"sched_yield", "sched_getaffinity", "sched_getparam", "sched_getscheduler", "getcpu",
	"exit", "exit_group", "gettid", "getpid", "getppid",
	"wait4", "waitid", "kill", "tkill", "tgkill", "restart_syscall", "pause", "alarm",
	// Signals.
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigsuspend",
	"rt_sigtimedwait", "sigaltstack",
	// Time.
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
	"getitimer", "setitimer", "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun",
	"timer_delete", "times", "getrusage",
	"timerfd_create", "timerfd_settime", "timerfd_gettime",
	// File descriptors and I/O (what is visible is the jail's root).
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
	"lseek", "close", "close_range", "dup", "dup2", "dup3", "fcntl", "flock", "fsync", "fdatasync",
	"ftruncate", "truncate", "fallocate", "fadvise64", "sendfile", "splice", "tee", "copy_file_range",
	"pipe", "pipe2", "eventfd", "eventfd2",
	"open", "openat", "openat2", "creat", "stat", "fstat", "lstat", "newfstatat", "statx", "statfs", "fstatfs",
	"access", "faccessat", "faccessat2", "readlink", "readlinkat", "getdents", "getdents64",
	"getcwd", "chdir", "fchdir", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
	"chmod", "fchmod", "fchmodat", "fchmodat2", "umask", "utimensat", "futimesat", "utimes", "utime",
	// Polling.
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2",
	"poll", "ppoll", "select", "pselect6",
	// Sockets: only AF_UNIX ones can be created (see fixedRules).
	"connect", "accept", "accept4", "bind", "listen", "shutdown", "getsockname", "getpeername",
	"getsockopt", "setsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
	// Identity and system facts (read only).
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups",
	"getpgid", "getpgrp", "getsid", "uname", "getrlimit", "getrandom", "capget",
}

// Arguments of the conditionally allowed calls.
const (
	prSetDumpable   = 4 // only to 0, below
	prGetDumpable   = 3
	prSetName       = 15
	prGetName       = 16
	prGetSeccomp    = 21
	prSetNoNewPrivs = 38
	prGetNoNewPrivs = 39
	prSetVMA        = 0x53564d41 // naming anonymous mappings (Go runtime)
	archSetFS       = 0x1002
	archGetFS       = 0x1003
	ioctlTCGETS     = 0x5401
	ioctlTIOCGWINSZ = 0x5413
	ioctlFIONREAD   = 0x541b
	ioctlFIONBIO    = 0x5421
	ioctlFIONCLEX   = 0x5450
	ioctlFIOCLEX    = 0x5451
)

// baseRules come after any extra rules.
func baseRules() []Rule {
	eperm := ActionErrno(errnoEPERM)
	var rules []Rule
	allowArg := func(name string, index int, values ...uint64) {
		for _, v := range values {
			rules = append(rules, Rule{Names: []string{name}, Args: []Arg{{Index: index, Mask: mask32, Value: v}}, Action: ActionAllow})
		}
	}
	rules = append(rules, Rule{Names: allowedSyscalls, Action: ActionAllow})
	// Go sets the TLS of every new thread with arch_prctl (amd64).
	allowArg("arch_prctl", 0, archSetFS, archGetFS)
	// prctl: names, queries, dropping privileges further; nothing that
	// raises them back (PR_SET_DUMPABLE 1, PR_SET_PDEATHSIG games, ...).
	allowArg("prctl", 0, prGetDumpable, prSetName, prGetName, prGetSeccomp, prSetNoNewPrivs, prGetNoNewPrivs, prSetVMA)
	rules = append(rules, Rule{Names: []string{"prctl"}, Args: []Arg{{Index: 0, Mask: mask32, Value: prSetDumpable}, {Index: 1, Value: 0}}, Action: ActionAllow})
	// ioctl: terminal probing and descriptor flags only (no TIOCSTI & co).
	allowArg("ioctl", 1, ioctlTCGETS, ioctlTIOCGWINSZ, ioctlFIONREAD, ioctlFIONBIO, ioctlFIONCLEX, ioctlFIOCLEX)
	// Resource limits of the calling process only (lowering is always
	// allowed; raising hard limits needs a capability the worker lacks).
	rules = append(rules,
		Rule{Names: []string{"prlimit64"}, Args: []Arg{{Index: 0, Value: 0}}, Action: ActionAllow},
		Rule{Names: []string{"setrlimit"}, Action: ActionAllow},
		Rule{Names: []string{"arch_prctl", "prctl", "prlimit64"}, Action: eperm},
		Rule{Names: []string{"ioctl"}, Action: ActionErrno(errnoENOTTY)},
		// Running another program is refused unless extra rules allow it
		// (the Python zygote).
		Rule{Names: []string{"execve", "execveat"}, Action: eperm},
	)
	return rules
}

// NewFilter returns the worker's seccomp policy with extra rules composed in:
//
//  1. fixed rules, which extra rules may not name (Assemble reports a
//     conflict): EPERM for ptrace, mounts, namespaces, bpf, io_uring, keys,
//     perf, userfaultfd, modules, kexec, reboot, swap, chroot,
//     process_vm_*, identity changes; ENOSYS for clone3; clone without
//     namespace flags; socket and socketpair for AF_UNIX only;
//     personality queries only;
//  2. the extra rules, in order;
//  3. the base allowlist (see allowedSyscalls) and its conditional rules
//     (arch_prctl, prctl, ioctl, prlimit64); EPERM for execve and execveat.
//
// Any other system call fails with ENOSYS, so that libraries take their
// fallback paths. Python adds, for example,
//
//	jail.NewFilter(jail.Rule{Names: []string{"execve"}, Action: jail.ActionAllow})
func NewFilter(extra ...Rule) Filter {
	fixed := fixedRules()
	rules := slices.Concat(fixed, extra, baseRules())
	return Filter{Rules: rules, Default: ActionErrno(errnoENOSYS), fixed: len(fixed)}
}

// seccomp_data offsets.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

const x32SyscallBit = 0x40000000

// archInfo resolves a GOARCH or Linux architecture name.
func archInfo(name string) (*arch.Info, error) {
	switch name {
	case "amd64", "x86_64":
		return arch.X86_64, nil
	case "arm64", "aarch64":
		return arch.AARCH64, nil
	}
	return nil, fmt.Errorf("jail: seccomp: architecture %q is not supported", name)
}

// Assemble compiles f for the running architecture into classic BPF.
func (f Filter) Assemble() ([]bpf.RawInstruction, error) {
	return f.AssembleFor(runtime.GOARCH)
}

// AssembleFor compiles f for an architecture ("amd64" or "arm64").
func (f Filter) AssembleFor(archName string) ([]bpf.RawInstruction, error) {
	prog, err := f.program(archName)
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("jail: seccomp: %w", err)
	}
	return raw, nil
}

// ruleCase is one rule as it applies to one syscall.
type ruleCase struct {
	args   []Arg
	action Action
}

func (f Filter) program(archName string) ([]bpf.Instruction, error) {
	info, err := archInfo(archName)
	if err != nil {
		return nil, err
	}
	cases := map[uint32][]ruleCase{}
	fixedNames := map[string]bool{}
	for i, r := range f.Rules {
		if len(r.Names) == 0 {
			return nil, fmt.Errorf("jail: seccomp: rule %d names no system call", i)
		}
		for _, a := range r.Args {
			if a.Index < 0 || a.Index > 5 {
				return nil, fmt.Errorf("jail: seccomp: rule %d: argument index %d out of range", i, a.Index)
			}
			if m := a.mask(); a.Value&^m != 0 {
				return nil, fmt.Errorf("jail: seccomp: rule %d: value %#x has bits outside mask %#x", i, a.Value, m)
			}
		}
		for _, name := range r.Names {
			if i < f.fixed {
				fixedNames[name] = true
			} else if fixedNames[name] {
				return nil, fmt.Errorf("jail: seccomp: rule for %s conflicts with the fixed policy", name)
			}
			nr, ok := info.SyscallNames[name]
			if !ok {
				if knownSyscall(name) {
					continue
				}
				return nil, fmt.Errorf("jail: seccomp: unknown system call %q", name)
			}
			cases[uint32(nr)] = append(cases[uint32(nr)], ruleCase{args: r.Args, action: r.Action})
		}
	}
	nrs := make([]uint32, 0, len(cases))
	bodies := make(map[uint32][]bpf.Instruction, len(cases))
	for nr, cs := range cases {
		body, err := caseBody(cs, f.Default)
		if err != nil {
			return nil, err
		}
		if len(body) > 255 {
			return nil, fmt.Errorf("jail: seccomp: too many rules for system call %d", nr)
		}
		nrs = append(nrs, nr)
		bodies[nr] = body
	}
	slices.Sort(nrs)

	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(ActionKillProcess)},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
	if info.ID == arch.X86_64.ID {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32SyscallBit, SkipFalse: 1},
			bpf.RetConstant{Val: uint32(ActionKillProcess)},
		)
	}
	prog = append(prog, tree(nrs, bodies, f.Default)...)
	if len(prog) > 4096 {
		return nil, fmt.Errorf("jail: seccomp: program of %d instructions exceeds the kernel's 4096", len(prog))
	}
	return prog, nil
}

func (a Arg) mask() uint64 {
	if a.Mask == 0 {
		return ^uint64(0)
	}
	return a.Mask
}

func knownSyscall(name string) bool {
	for _, info := range []*arch.Info{arch.X86_64, arch.AARCH64} {
		if _, ok := info.SyscallNames[name]; ok {
			return true
		}
	}
	return false
}

// caseBody evaluates the rule cases of one syscall in order; every path
// ends in a return. The accumulator holds the syscall number on entry.
func caseBody(cs []ruleCase, def Action) ([]bpf.Instruction, error) {
	var body []bpf.Instruction
	for _, c := range cs {
		if len(c.args) == 0 {
			return append(body, bpf.RetConstant{Val: uint32(c.action)}), nil
		}
		// Each check is load, optional and, jeq; on mismatch skip to the
		// end of this case (past its return).
		type check struct {
			off       uint32
			mask, val uint32
		}
		var checks []check
		for _, a := range c.args {
			m := a.mask()
			off := offArgs + 8*uint32(a.Index) // little endian: low word first
			if lo := uint32(m); lo != 0 {
				checks = append(checks, check{off, lo, uint32(a.Value)})
			}
			if hi := uint32(m >> 32); hi != 0 {
				checks = append(checks, check{off + 4, hi, uint32(a.Value >> 32)})
			}
		}
		n := 1 // the return
		for _, ch := range checks {
			n += 2
			if ch.mask != 0xffffffff {
				n++
			}
		}
		at := 0
		for _, ch := range checks {
			body = append(body, bpf.LoadAbsolute{Off: ch.off, Size: 4})
			at++
			if ch.mask != 0xffffffff {
				body = append(body, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: ch.mask})
				at++
			}
			at++
			skip := n - at
			if skip > 255 {
				return nil, fmt.Errorf("jail: seccomp: rule with too many argument checks")
			}
			body = append(body, bpf.JumpIf{Cond: bpf.JumpEqual, Val: ch.val, SkipFalse: uint8(skip)})
		}
		body = append(body, bpf.RetConstant{Val: uint32(c.action)})
	}
	return append(body, bpf.RetConstant{Val: uint32(def)}), nil
}

// tree dispatches on the syscall number (in the accumulator) with a binary
// search over nrs, then linear checks at the leaves.
func tree(nrs []uint32, bodies map[uint32][]bpf.Instruction, def Action) []bpf.Instruction {
	if len(nrs) <= 4 {
		var out []bpf.Instruction
		for _, nr := range nrs {
			body := bodies[nr]
			// Bodies are a few instructions; caseBody bounds argument checks.
			out = append(out, bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: uint8(len(body))})
			out = append(out, body...)
		}
		return append(out, bpf.RetConstant{Val: uint32(def)})
	}
	mid := len(nrs) / 2
	left := tree(nrs[:mid], bodies, def)
	right := tree(nrs[mid:], bodies, def)
	out := []bpf.Instruction{
		bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: nrs[mid], SkipFalse: 1},
		bpf.Jump{Skip: uint32(len(left))},
	}
	out = append(out, left...)
	return append(out, right...)
}

// packProgram encodes an assembled program for ChildConfig.Program: each
// instruction as 8 little-endian bytes (op, jt, jf, k, as struct
// sock_filter lays them out), base64.
func packProgram(raw []bpf.RawInstruction) string {
	b := make([]byte, 0, 8*len(raw))
	for _, ins := range raw {
		b = binary.LittleEndian.AppendUint16(b, ins.Op)
		b = append(b, ins.Jt, ins.Jf)
		b = binary.LittleEndian.AppendUint32(b, ins.K)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// unpackProgram decodes what packProgram encoded.
func unpackProgram(s string) ([]bpf.RawInstruction, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%8 != 0 || len(b) == 0 || len(b)/8 > 4096 {
		return nil, fmt.Errorf("jail: seccomp: malformed program from the host (%d bytes, %v)", len(b), err)
	}
	raw := make([]bpf.RawInstruction, len(b)/8)
	for i := range raw {
		r := b[8*i:]
		raw[i] = bpf.RawInstruction{Op: binary.LittleEndian.Uint16(r), Jt: r[2], Jf: r[3], K: binary.LittleEndian.Uint32(r[4:])}
	}
	return raw, nil
}
