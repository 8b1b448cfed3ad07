package jail_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"

	"github.com/stepbox/stepbox/internal/jail"
)

const (
	auditArchX86_64  = 0xc000003e
	auditArchAArch64 = 0xc00000b7
	auditArchI386    = 0x40000003
)

var (
	eperm  = jail.ActionErrno(1)
	enotty = jail.ActionErrno(25)
	enosys = jail.ActionErrno(38)
)

// filterVM runs an assembled filter the way the kernel would, on
// seccomp_data built from nr, the audit arch and args.
type filterVM struct {
	t    *testing.T
	vm   *bpf.VM
	info *arch.Info
}

func newFilterVM(t *testing.T, f jail.Filter, goarch string) *filterVM {
	t.Helper()
	raw, err := f.AssembleFor(goarch)
	if err != nil {
		t.Fatalf("AssembleFor(%s): %v", goarch, err)
	}
	prog, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatalf("filter does not disassemble")
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatalf("NewVM: %v", err)
	}
	info := arch.X86_64
	if goarch == "arm64" {
		info = arch.AARCH64
	}
	return &filterVM{t: t, vm: vm, info: info}
}

// run evaluates the filter. x/net/bpf loads words big-endian while seccomp
// loads them in native order, so each 32-bit word is stored big-endian at
// the offset where the kernel would find it (low half of an arg first).
func (v *filterVM) run(nr uint32, audit uint32, args ...uint64) jail.Action {
	v.t.Helper()
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[0:], nr)
	binary.BigEndian.PutUint32(data[4:], audit)
	for i, a := range args {
		binary.BigEndian.PutUint32(data[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(data[16+8*i+4:], uint32(a>>32))
	}
	out, err := v.vm.Run(data)
	if err != nil {
		v.t.Fatalf("vm: %v", err)
	}
	return jail.Action(out)
}

func (v *filterVM) call(name string, args ...uint64) jail.Action {
	v.t.Helper()
	nr, ok := v.info.SyscallNames[name]
	if !ok {
		v.t.Fatalf("no system call %s on %s", name, v.info.Name)
	}
	return v.run(uint32(nr), uint32(v.info.ID), args...)
}

func TestFilterPolicy(t *testing.T) {
	const (
		cloneThread = 0x00000100 | 0x00000200 | 0x00000400 | 0x00000800 | 0x00040000 | 0x00010000 // VM|FS|FILES|SIGHAND|SYSVSEM|THREAD
		sigchld     = 17
		cloneNewNS  = 0x00020000
		cloneNewPID = 0x20000000
		cloneNewNet = 0x40000000
		cloneNewUsr = 0x10000000
	)
	type tc struct {
		name    string
		syscall string
		args    []uint64
		want    jail.Action
	}
	common := []tc{
		{"read", "read", nil, jail.ActionAllow},
		{"futex", "futex", nil, jail.ActionAllow},
		{"epoll_pwait", "epoll_pwait", nil, jail.ActionAllow},
		{"socket AF_UNIX", "socket", []uint64{1, 1}, jail.ActionAllow},
		{"socket AF_UNIX, high garbage", "socket", []uint64{1 | 7<<32}, jail.ActionAllow},
		{"socket AF_INET", "socket", []uint64{2, 1}, eperm},
		{"socket AF_INET6", "socket", []uint64{10, 1}, eperm},
		{"socket AF_NETLINK", "socket", []uint64{16, 3}, eperm},
		{"socket AF_PACKET", "socket", []uint64{17, 3}, eperm},
		{"socket AF_VSOCK", "socket", []uint64{40, 1}, eperm},
		{"socketpair AF_UNIX", "socketpair", []uint64{1, 1}, jail.ActionAllow},
		{"socketpair AF_INET", "socketpair", []uint64{2, 1}, eperm},
		{"clone thread", "clone", []uint64{cloneThread}, jail.ActionAllow},
		{"clone fork", "clone", []uint64{sigchld}, jail.ActionAllow},
		{"clone newuser", "clone", []uint64{cloneNewUsr | sigchld}, eperm},
		{"clone newpid", "clone", []uint64{cloneNewPID | sigchld}, eperm},
		{"clone newnet", "clone", []uint64{cloneNewNet}, eperm},
		{"clone newns", "clone", []uint64{cloneNewNS}, eperm},
		{"clone3", "clone3", nil, enosys},
		{"personality query", "personality", []uint64{0xffffffff}, jail.ActionAllow},
		{"personality PER_LINUX32", "personality", []uint64{0x0008}, eperm},
		{"personality READ_IMPLIES_EXEC", "personality", []uint64{0x0400000}, eperm},
		{"execve", "execve", nil, eperm},
		{"execveat", "execveat", nil, eperm},
		{"ioctl FIONREAD", "ioctl", []uint64{0, 0x541b}, jail.ActionAllow},
		{"ioctl TIOCSTI", "ioctl", []uint64{0, 0x5412}, enotty},
		{"prctl PR_SET_NAME", "prctl", []uint64{15}, jail.ActionAllow},
		{"prctl PR_SET_DUMPABLE 0", "prctl", []uint64{4, 0}, jail.ActionAllow},
		{"prctl PR_SET_DUMPABLE 1", "prctl", []uint64{4, 1}, eperm},
		{"prctl PR_SET_SECUREBITS", "prctl", []uint64{28, 0}, eperm},
		{"prctl PR_CAP_AMBIENT", "prctl", []uint64{47, 2}, eperm},
		{"prlimit64 self", "prlimit64", []uint64{0, 7}, jail.ActionAllow},
		{"prlimit64 other", "prlimit64", []uint64{2, 7}, eperm},
		{"sysinfo (unlisted)", "sysinfo", nil, enosys},
		{"mq_open (unlisted)", "mq_open", nil, enosys},
		{"seccomp (unlisted)", "seccomp", nil, enosys},
	}
	for _, name := range []string{
		"ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root", "chroot",
		"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
		"unshare", "setns", "bpf", "io_uring_setup", "io_uring_enter", "io_uring_register",
		"keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd",
		"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
		"reboot", "swapon", "swapoff", "open_by_handle_at", "setuid", "setresuid", "setgroups", "capset",
	} {
		common = append(common, tc{name, name, nil, eperm})
	}
	for _, goarch := range []string{"amd64", "arm64"} {
		t.Run(goarch, func(t *testing.T) {
			vm := newFilterVM(t, jail.NewFilter(), goarch)
			for _, c := range common {
				if got := vm.call(c.syscall, c.args...); got != c.want {
					t.Errorf("%s: got %v, want %v", c.name, got, c.want)
				}
			}
			if got := vm.run(999, uint32(vm.info.ID)); got != enosys {
				t.Errorf("unknown number: got %v, want %v", got, enosys)
			}
			// Another architecture's calling convention kills, whatever the call.
			for _, audit := range []uint32{auditArchI386, auditArchX86_64 ^ auditArchAArch64 ^ uint32(vm.info.ID)} {
				if got := vm.run(0, audit); got != jail.ActionKillProcess {
					t.Errorf("arch %#x: got %v, want kill_process", audit, got)
				}
			}
		})
	}
	t.Run("amd64 only", func(t *testing.T) {
		vm := newFilterVM(t, jail.NewFilter(), "amd64")
		getpid := uint32(arch.X86_64.SyscallNames["getpid"])
		if got := vm.run(getpid|0x40000000, auditArchX86_64); got != jail.ActionKillProcess {
			t.Errorf("x32 getpid: got %v, want kill_process", got)
		}
		if got := vm.run(getpid, auditArchX86_64); got != jail.ActionAllow {
			t.Errorf("getpid: got %v, want allow", got)
		}
		if got := vm.call("arch_prctl", 0x1002); got != jail.ActionAllow {
			t.Errorf("arch_prctl ARCH_SET_FS: got %v", got)
		}
		if got := vm.call("arch_prctl", 0x1012); got != eperm {
			t.Errorf("arch_prctl ARCH_SET_CPUID: got %v", got)
		}
		if got := vm.call("open"); got != jail.ActionAllow {
			t.Errorf("open: got %v", got)
		}
	})
}

func TestFilterComposition(t *testing.T) {
	allow := func(names ...string) jail.Rule { return jail.Rule{Names: names, Action: jail.ActionAllow} }
	t.Run("extra allow", func(t *testing.T) {
		vm := newFilterVM(t, jail.NewFilter(allow("execve"), allow("sysinfo")), "amd64")
		for _, name := range []string{"execve", "sysinfo"} {
			if got := vm.call(name); got != jail.ActionAllow {
				t.Errorf("%s: got %v, want allow", name, got)
			}
		}
		if got := vm.call("execveat"); got != eperm {
			t.Errorf("execveat: got %v, want eperm", got)
		}
	})
	t.Run("extra tightens the base", func(t *testing.T) {
		f := jail.NewFilter(
			jail.Rule{Names: []string{"openat"}, Args: []jail.Arg{{Index: 2, Mask: 3, Value: 0}}, Action: jail.ActionAllow}, // O_RDONLY
			jail.Rule{Names: []string{"openat"}, Action: jail.ActionErrno(13)},
		)
		vm := newFilterVM(t, f, "amd64")
		if got := vm.call("openat", 0, 0, 0); got != jail.ActionAllow {
			t.Errorf("openat O_RDONLY: got %v", got)
		}
		if got := vm.call("openat", 0, 0, 2); got != jail.ActionErrno(13) {
			t.Errorf("openat O_RDWR: got %v", got)
		}
	})
	t.Run("names missing on one architecture are skipped", func(t *testing.T) {
		newFilterVM(t, jail.NewFilter(allow("open", "stat")), "arm64")
	})
	for _, c := range []struct {
		name string
		rule jail.Rule
		want string
	}{
		{"fixed ptrace", allow("ptrace"), "conflicts with the fixed policy"},
		{"fixed socket", jail.Rule{Names: []string{"socket"}, Args: []jail.Arg{{Index: 0, Value: 2}}, Action: jail.ActionAllow}, "conflicts"},
		{"fixed clone3", allow("clone3"), "conflicts"},
		{"unknown", allow("no_such_call"), `unknown system call "no_such_call"`},
		{"no names", jail.Rule{Action: jail.ActionAllow}, "names no system call"},
		{"bad index", jail.Rule{Names: []string{"read"}, Args: []jail.Arg{{Index: 6}}, Action: jail.ActionAllow}, "out of range"},
		{"value outside mask", jail.Rule{Names: []string{"read"}, Args: []jail.Arg{{Index: 0, Mask: 1, Value: 2}}, Action: jail.ActionAllow}, "outside mask"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := jail.NewFilter(c.rule).AssembleFor("amd64")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := jail.NewFilter().AssembleFor("riscv64"); err == nil {
		t.Errorf("riscv64: want an error")
	}
}
