//go:build unix

package worker

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInherited closes every descriptor above PassFD that the process
// inherited rather than opened. exec.Cmd passes a child only its standard
// descriptors and ExtraFiles of the descriptors Go opened (all close-on-
// exec), but a host process may itself have inherited descriptors without
// close-on-exec from its own parent (a shell, a supervisor), and those
// pass through every exec. The Go runtime opens its own descriptors
// close-on-exec, so a descriptor without the flag is one the worker was
// handed and has no use for: a guest must not find it.
func closeInherited() {
	for _, fd := range openFDs() {
		if fd <= PassFD {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			_ = unix.Close(fd)
		}
	}
}

// openFDs lists the open descriptors, from /proc (or /dev/fd), or, where
// neither is mounted, every number below 1024.
func openFDs() []int {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		fds := make([]int, 0, len(ents))
		for _, e := range ents {
			if n, err := strconv.Atoi(e.Name()); err == nil {
				fds = append(fds, n)
			}
		}
		return fds
	}
	fds := make([]int, 1024)
	for i := range fds {
		fds[i] = i
	}
	return fds
}
