//go:build !linux

package jail_test

func childHook() {}
