package pool

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr is what every worker gets unless Config.Prepare set its own:
// SIGKILL when the host (the spawner thread) dies, and a process group of
// its own, so that a terminal's Ctrl-C reaches the host, which then stops
// its workers in order, rather than the workers directly.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// harden adds the parent-death signal to attributes that Config.Prepare
// set without one.
func harden(a *syscall.SysProcAttr) {
	if a.Pdeathsig == 0 {
		a.Pdeathsig = syscall.SIGKILL
	}
}

// jailed reports whether a process with these attributes is forked
// rather than vforked (it gets new user and pid namespaces), and so goes
// through the fork server.
func jailed(a *syscall.SysProcAttr) bool {
	const both = unix.CLONE_NEWUSER | unix.CLONE_NEWPID
	return a != nil && a.Cloneflags&both == both
}
