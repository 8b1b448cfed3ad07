//go:build linux

package worker

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// passFile returns descriptor PassFD as a pollable file, or nil if it is
// not open.
func passFile() *os.File {
	if err := unix.SetNonblock(PassFD, true); err != nil {
		return nil // a host that passes no descriptors
	}
	return os.NewFile(PassFD, "stepbox-pass")
}

// passTimeout bounds the wait for a descriptor the host announced.
const passTimeout = 10 * time.Second

// recvFile receives one descriptor from the host on the descriptor-passing
// socket sock. The host sends it before the frame that announces it, so it
// has normally arrived; a host that breaks that rule gets an error within
// passTimeout.
func recvFile(sock *os.File) (*os.File, error) {
	raw, err := sock.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fds []int
	var rerr error
	deadline := time.Now().Add(passTimeout)
	if err := sock.SetReadDeadline(deadline); err != nil && !errors.Is(err, os.ErrNoDeadline) {
		return nil, err
	}
	err = raw.Read(func(fd uintptr) bool {
		buf := make([]byte, 1)
		oob := make([]byte, unix.CmsgSpace(4))
		n, oobn, flags, _, err := unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EAGAIN {
			return false // wait for it (the poller, until the deadline)
		}
		switch {
		case err != nil:
			rerr = os.NewSyscallError("recvmsg", err)
		case n == 0:
			rerr = errors.New("the host closed the descriptor-passing socket")
		case flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0:
			rerr = errors.New("a truncated message")
		default:
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err == nil && len(msgs) == 1 {
				fds, err = unix.ParseUnixRights(&msgs[0])
			}
			if err != nil {
				rerr = err
			}
		}
		return true
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, err
	}
	if len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("%d descriptors in a message, want 1", len(fds))
	}
	return os.NewFile(uintptr(fds[0]), "stepbox-passed"), nil
}
