package jail

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Install sets no_new_privs and installs f on every thread of the process
// (SECCOMP_FILTER_FLAG_TSYNC: the Go runtime is multithreaded, and threads
// started later inherit the filter). It cannot be undone.
//
// Errors the kernel returns wrap errors.ErrUnsupported (see LayerError).
func (f Filter) Install() error {
	raw, err := f.Assemble()
	if err != nil {
		return err
	}
	return installProgram(raw)
}

// installProgram installs an assembled filter as Install does.
func installProgram(raw []bpf.RawInstruction) error {
	prog := make([]unix.SockFilter, len(raw))
	for i, ins := range raw {
		prog[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// TSYNC copies no_new_privs to the other threads together with the filter.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return refused(LayerNoNewPrivs, os.NewSyscallError("prctl(PR_SET_NO_NEW_PRIVS)", err))
	}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return refused(LayerSeccomp, os.NewSyscallError("seccomp(SECCOMP_SET_MODE_FILTER)", errno))
	}
	if r != 0 {
		// TSYNC failed: thread r has a filter that is not an ancestor of ours.
		return &LayerError{Layer: LayerSeccomp, Err: fmt.Errorf("thread %d could not be synchronized", r)}
	}
	return nil
}

// seccompAvailable reports whether filter mode and the actions the policy
// uses exist, without installing anything.
func seccompAvailable() error {
	for _, a := range []Action{ActionKillProcess, actionErrno, ActionAllow} {
		action := uint32(a)
		_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
		if errno != 0 {
			return refused(LayerSeccomp, os.NewSyscallError(fmt.Sprintf("seccomp(SECCOMP_GET_ACTION_AVAIL, %v)", a), errno))
		}
	}
	return nil
}
