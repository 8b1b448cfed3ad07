//go:build linux

package pool

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// socketpair returns the two ends of a unix SOCK_SEQPACKET socket for
// passing descriptors to a worker: the host's, and the worker's.
func socketpair() (host, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("pool: descriptor socket: %w", os.NewSyscallError("socketpair", err))
	}
	return os.NewFile(uintptr(fds[0]), "stepbox-pass"), os.NewFile(uintptr(fds[1]), "stepbox-pass-worker"), nil
}

// sendFile passes f to the worker on its descriptor socket sock.
func sendFile(sock, f *os.File) error {
	err := unix.Sendmsg(int(sock.Fd()), []byte{0}, unix.UnixRights(int(f.Fd())), nil, 0)
	runtime.KeepAlive(f)
	runtime.KeepAlive(sock)
	if err != nil {
		return os.NewSyscallError("sendmsg", err)
	}
	return nil
}
