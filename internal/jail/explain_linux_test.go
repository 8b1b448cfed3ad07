package jail_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/testenv"
)

func init() {
	// explain makes user namespaces unavailable to this process for real
	// (JAILTEST_ARG: maxuserns or seccomp, see TestExplain), then reports
	// what Probe refuses and how Explain diagnoses it.
	helpers["explain"] = func() {
		switch os.Getenv(envArg) {
		case "maxuserns":
			// This process is root of a user namespace of its own, whose
			// limit on nested user namespaces it may set.
			if err := testenv.DisableUserNamespaces(); err != nil {
				fmt.Printf("{\"error\":%q}\n", err.Error())
				return
			}
		case "seccomp":
			// What a container runtime's default profile does.
			newUser := []jail.Arg{{Index: 0, Mask: unix.CLONE_NEWUSER, Value: unix.CLONE_NEWUSER}}
			f := jail.Filter{Default: jail.ActionAllow, Rules: []jail.Rule{
				{Names: []string{"clone", "unshare"}, Args: newUser, Action: jail.ActionErrno(uint16(unix.EPERM))},
				{Names: []string{"clone3"}, Action: jail.ActionErrno(uint16(unix.ENOSYS))},
			}}
			if err := f.Install(); err != nil {
				fmt.Printf("{\"error\":%q}\n", err.Error())
				return
			}
		}
		caps := jail.Probe()
		out, _ := json.Marshal(result{"probeErr": errString(caps.Err()), "diagnosis": jail.Explain(caps)})
		fmt.Println(string(out))
	}
}

// TestExplain makes the kernel refuse user namespaces for real, in a helper
// process, and expects the diagnosis to name the setting that refuses them
// and its fix. The machine's own sysctls are left alone: the helper lowers
// user.max_user_namespaces in a user namespace of its own, or installs a
// seccomp filter on itself.
func TestExplain(t *testing.T) {
	requireJail(t)
	for _, c := range []struct {
		arg, probeErr string
		cause, fix    []string
	}{
		{"maxuserns", "jail: user namespaces: no space left on device",
			[]string{"user.max_user_namespaces = 0"}, []string{"sysctl -w user.max_user_namespaces="}},
		{"seccomp", "jail: user namespaces: operation not permitted",
			[]string{"seccomp filter", "Seccomp: 2"}, []string{"seccomp", "clone3 and unshare with namespace flags"}},
	} {
		t.Run(c.arg, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("/proc/self/exe")
			cmd.Env = childEnv(envHelper+"=explain", envArg+"="+c.arg)
			if c.arg == "maxuserns" {
				testenv.InOwnUserNamespace(cmd)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var got struct {
				Error     string
				ProbeErr  string
				Diagnosis jail.Diagnosis
			}
			if err := json.Unmarshal(out, &got); err != nil || got.Error != "" {
				t.Fatalf("%v %s: %s", err, got.Error, out)
			}
			t.Logf("%s\ncause: %s\nfix: %s", got.ProbeErr, got.Diagnosis.Cause, got.Diagnosis.Fix)
			if got.ProbeErr != c.probeErr {
				t.Errorf("Probe: %q, want %q", got.ProbeErr, c.probeErr)
			}
			for _, s := range c.cause {
				if !strings.Contains(got.Diagnosis.Cause, s) {
					t.Errorf("cause %q lacks %q", got.Diagnosis.Cause, s)
				}
			}
			for _, s := range c.fix {
				if !strings.Contains(got.Diagnosis.Fix, s) {
					t.Errorf("fix %q lacks %q", got.Diagnosis.Fix, s)
				}
			}
		})
	}
}

// TestExplainGranted: nothing refused, nothing to explain.
func TestExplainGranted(t *testing.T) {
	caps := requireJail(t)
	if d := jail.Explain(caps); d != (jail.Diagnosis{}) {
		t.Errorf("Explain of a working jail = %+v", d)
	}
}
