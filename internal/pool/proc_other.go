//go:build !linux

package pool

import "syscall"

// sysProcAttr returns nil off Linux: there is no parent-death signal, and
// workers rely on the end of file of their input to notice a dead host.
func sysProcAttr() *syscall.SysProcAttr { return nil }

func harden(*syscall.SysProcAttr) {}

// jailed is false off Linux: there is no jail to fork into.
func jailed(*syscall.SysProcAttr) bool { return false }
