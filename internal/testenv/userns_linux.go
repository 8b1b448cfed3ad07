package testenv

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// InOwnUserNamespace makes cmd start as root of a user namespace of its own
// (this process's uid and gid mapped to 0), where DisableUserNamespaces can
// switch nested user namespaces off without touching the machine's
// sysctls: a real refusal of the jail, for the tests of what is said then.
func InOwnUserNamespace(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
	}
}

// DisableUserNamespaces, in a process that InOwnUserNamespace started,
// sets its user namespace's user.max_user_namespaces to 0 (a limit per
// user namespace): no user namespace, so no jail, can be made under it.
func DisableUserNamespaces() error {
	return os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0"), 0)
}

// OutputWithoutUserNamespaces runs this test binary again, with env added
// and no tests of its own, in a user namespace of its own
// (InOwnUserNamespace), and returns its stdout; the helper that env
// selects calls DisableUserNamespaces. It skips t where the machine gives
// no user namespace to test with, unless RequireJail.
func OutputWithoutUserNamespaces(t testing.TB, env ...string) []byte {
	t.Helper()
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env...), "GORACE=atexit_sleep_ms=0")
	InOwnUserNamespace(cmd)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if errors.Is(err, syscall.EPERM) && !RequireJail() {
		t.Skipf("this machine gives no user namespaces to test with: %v", err)
	}
	if err != nil {
		t.Fatalf("%v: %s\n%s", err, b, stderr.String())
	}
	return b
}
