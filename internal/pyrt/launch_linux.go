package pyrt

import (
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/stepbox/stepbox/internal/jail"
)

//go:embed prelude.py
var preludeSource string

// EnvZygote is the environment variable that makes a process the launcher
// of a Python zygote (see MaybeZygote). Its value is a launchSpec (JSON).
const EnvZygote = "STEPBOX_PYZYGOTE"

// execFD is the descriptor through which the launcher executes the
// interpreter; the jail's seccomp filter allows execveat of this
// descriptor only.
const execFD = 10

// loader is the -c program: it compiles the prelude (argv[1]) under the
// file name that tracebacks use to tell its frames from the step's.
const loader = "import sys;exec(compile(sys.argv[1],'<stepbox>','exec'))"

// launchSpec is what the launcher needs to start the interpreter.
type launchSpec struct {
	Python string `json:"python"` // the interpreter, at the same path inside the jail
	Config string `json:"config"` // the prelude's configuration (JSON)
}

// preludeConfig is the prelude's configuration.
type preludeConfig struct {
	Filter     string   `json:"filter"`     // hex of the lockdown seccomp program
	SysSeccomp int      `json:"sysSeccomp"` // the seccomp(2) system call number
	Path       []string `json:"path"`       // appended to sys.path
	Preload    []string `json:"preload"`
	// GLPKVersion is the linked GLPK's version, glpk.version in a step.
	GLPKVersion string `json:"glpkVersion"`
	// TestKeepTmp, set by tests only, is a name in /tmp that the cleaner
	// leaves alone, so that its proof fails.
	TestKeepTmp string `json:"testKeepTmp,omitempty"`
}

// MaybeZygote turns the process into the launcher of a Python zygote if
// a Launcher's Command started it as one, and never returns then: it enters the jail
// (jail.Enter, which re-executes the binary once) and replaces itself with
// the jailed python3. Otherwise it returns at once.
//
// Every binary that calls New must call it first thing, before anything
// else in main (or in TestMain):
//
//	func main() {
//		pyrt.MaybeZygote()
//		...
//	}
//
// Like every user of package jail, the binary must also let jail.Probe's
// child in (jail.ChildConfigFromEnv and jail.Enter); MaybeZygote leaves
// that child alone.
func MaybeZygote() {
	spec, ok := os.LookupEnv(EnvZygote)
	if !ok {
		return
	}
	err := launch(spec)
	fmt.Fprintf(os.Stderr, "stepbox python zygote: %v\n", err)
	// Not os.Exit: under the race detector it sleeps first.
	syscall.Exit(3)
}

// launch enters the jail and execs the interpreter; it returns only on
// error.
func launch(specJSON string) error {
	cfg, ok, err := jail.ChildConfigFromEnv()
	if !ok {
		return errors.New("not started by a pyrt.Launcher (no jail configuration): refusing to run unjailed")
	}
	if err == nil {
		err = jail.Enter(cfg) // returns only in the second, jailed execution
	}
	if err != nil {
		return err
	}
	var spec launchSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		return fmt.Errorf("%s: %w", EnvZygote, err)
	}
	fd, err := unix.Open(spec.Python, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: spec.Python, Err: err}
	}
	if fd != execFD {
		if err := unix.Dup3(fd, execFD, unix.O_CLOEXEC); err != nil {
			return os.NewSyscallError("dup3", err)
		}
		unix.Close(fd)
	}
	argv := []string{spec.Python, "-I", "-S", "-B", "-X", "utf8", "-c", loader, preludeSource, spec.Config}
	// TZ=UTC: a run's local time is UTC (time.localtime,
	// datetime.now().astimezone()), whatever the host's zone; the jail
	// holds no /etc/localtime and the host's environment never reaches it.
	env := append([]string{"LANG=C.UTF-8", "HOME=/tmp", "TMPDIR=/tmp", "TZ=UTC"}, threadEnv...)
	runtime.LockOSThread()
	return execveat(execFD, argv, env)
}

// threadEnv makes the thread pools of numerical libraries (OpenBLAS, an
// OpenMP runtime, MKL, numexpr, Apple's Accelerate elsewhere) run one
// thread, in the caller's. They read it when they load, and a zygote that
// imported one of them with worker threads would fork runs without those
// threads, whose locks could be held: a run would hang in its first
// matrix product. One thread also keeps a run within its RLIMIT_NPROC and
// its CPU share.
var threadEnv = []string{
	"OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1",
	"NUMEXPR_NUM_THREADS=1", "VECLIB_MAXIMUM_THREADS=1", "GOTO_NUM_THREADS=1",
}

// execveat executes the program open at fd (AT_EMPTY_PATH): the only form
// of exec the jail's filter lets through.
func execveat(fd int, argv, env []string) error {
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	empty, _ := syscall.BytePtrFromString("")
	_, _, errno := syscall.Syscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(empty)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])), unix.AT_EMPTY_PATH, 0)
	return os.NewSyscallError("execveat", errno)
}

// mask32 selects the low 32 bits of a system call argument.
const mask32 = 0xffffffff

// zygoteRules are the seccomp rules the zygote needs on top of the jail's
// base policy.
func zygoteRules() []jail.Rule {
	return []jail.Rule{
		// One exec: the interpreter, through the descriptor the launcher
		// opened. The prelude then stacks lockdownFilter, which refuses
		// every exec, before it runs anything else.
		{Names: []string{"execveat"}, Args: []jail.Arg{{Index: 0, Mask: mask32, Value: execFD}, {Index: 4, Mask: mask32, Value: unix.AT_EMPTY_PATH}}, Action: jail.ActionAllow},
		// Adding a filter only ever takes permissions away; no flags (no
		// user notification, no TSYNC games).
		{Names: []string{"seccomp"}, Args: []jail.Arg{{Index: 0, Mask: mask32, Value: unix.SECCOMP_SET_MODE_FILTER}, {Index: 1, Mask: mask32, Value: 0}}, Action: jail.ActionAllow},
		// shutil.copy2 and friends read extended attributes.
		{Names: []string{"getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr"}, Action: jail.ActionAllow},
	}
}

// lockdownFilter is the classic BPF program (struct sock_filter array, in
// the host's byte order) that the prelude stacks over the jail's filter:
// execve and execveat fail with EPERM, everything else is left to the
// jail's filter.
func lockdownFilter() ([]byte, error) {
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_EXECVE, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_EXECVEAT, SkipTrue: 1},
		bpf.RetConstant{Val: uint32(jail.ActionAllow)},
		bpf.RetConstant{Val: uint32(jail.ActionErrno(uint16(unix.EPERM)))},
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("pyrt: lockdown filter: %w", err)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, ins := range raw {
		out = binary.NativeEndian.AppendUint16(out, ins.Op)
		out = append(out, ins.Jt, ins.Jf)
		out = binary.NativeEndian.AppendUint32(out, ins.K)
	}
	return out, nil
}
