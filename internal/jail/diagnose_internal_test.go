package jail

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestDiagnose: each way a machine refuses the jail gets its own cause and
// fix, and the most specific setting wins.
func TestDiagnose(t *testing.T) {
	eperm := os.NewSyscallError("clone", syscall.EPERM)
	linux := func(f facts) facts {
		f.GOOS = "linux"
		if f.Layer == "" {
			f.Layer = LayerUserNS
		}
		if f.Err == nil {
			f.Err = eperm
		}
		if f.MaxUserNS == "" {
			f.MaxUserNS = "63484"
		}
		if f.Seccomp == "" {
			f.Seccomp = "0"
		}
		return f
	}
	for _, c := range []struct {
		name       string
		f          facts
		cause, fix []string // substrings that must appear
		not        []string // substrings of cause+fix that must not
	}{
		{name: "darwin", f: facts{GOOS: "darwin", Layer: LayerOS, Err: errors.New("darwin has no namespaces or seccomp")},
			cause: []string{"Linux-only", "darwin"}, fix: []string{"Linux", "deploy/README.md"}},
		{name: "windows", f: facts{GOOS: "windows", Layer: LayerOS, Err: errors.New("x")},
			cause: []string{"Linux-only", "windows"}},
		{name: "max_user_namespaces=0", f: linux(facts{MaxUserNS: "0", Err: syscall.ENOSPC, Euid: 1000}),
			cause: []string{"user.max_user_namespaces = 0"}, fix: []string{"sysctl -w user.max_user_namespaces=15000", "/etc/sysctl.d"},
			not: []string{"on the host"}},
		{name: "max_user_namespaces=0 beats the container", f: linux(facts{MaxUserNS: "0", Err: syscall.ENOSPC, Container: "docker", Seccomp: "2"}),
			cause: []string{"user.max_user_namespaces = 0"}, fix: []string{"sysctl -w user.max_user_namespaces=15000", "on the host"}},
		{name: "limit used up", f: linux(facts{MaxUserNS: "10", Err: syscall.ENOSPC}),
			cause: []string{"used up", "user.max_user_namespaces = 10"}, fix: []string{"raise"}},
		{name: "debian unprivileged_userns_clone=0", f: linux(facts{UnprivClone: "0", Euid: 1000}),
			cause: []string{"kernel.unprivileged_userns_clone = 0"}, fix: []string{"sysctl -w kernel.unprivileged_userns_clone=1"}},
		{name: "unprivileged_userns_clone=1 is not the cause", f: linux(facts{UnprivClone: "1", Euid: 1000}),
			not: []string{"unprivileged_userns_clone = 0"}},
		{name: "ubuntu apparmor", f: linux(facts{AppArmorRestrict: "1", Euid: 1000, Exe: "/home/ada/go/bin/stepbox"}),
			cause: []string{"AppArmor", "kernel.apparmor_restrict_unprivileged_userns = 1"},
			fix:   []string{"deploy/apparmor/stepbox", "/etc/apparmor.d/stepbox", "apparmor_parser -r", "/home/ada/go/bin/stepbox", "kernel.apparmor_restrict_unprivileged_userns=0"}},
		{name: "ubuntu apparmor, go run", f: linux(facts{AppArmorRestrict: "1", Euid: 1000, Exe: "/tmp/go-build123/b001/exe/stepbox"}),
			fix: []string{"go build -o /usr/local/bin/stepbox", "go run"}, not: []string{"/tmp/go-build123"}},
		{name: "ubuntu apparmor, EACCES", f: linux(facts{AppArmorRestrict: "1", Euid: 1000, Err: syscall.EACCES}),
			cause: []string{"AppArmor"}, fix: []string{"apparmor_parser"}},
		{name: "apparmor off", f: linux(facts{AppArmorRestrict: "0", Euid: 1000}),
			not: []string{"AppArmor restricts"}},
		{name: "docker default seccomp", f: linux(facts{Seccomp: "2", Container: "docker", Euid: 0}),
			cause: []string{"seccomp filter", "Seccomp: 2", "docker container's default"},
			fix:   []string{"docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined", "deploy/README.md"}},
		{name: "docker seccomp on ubuntu host", f: linux(facts{Seccomp: "2", Container: "docker", AppArmorRestrict: "1", Euid: 1000}),
			cause: []string{"seccomp filter"}, fix: []string{"seccomp=unconfined"}},
		{name: "kubernetes RuntimeDefault", f: linux(facts{Seccomp: "2", Container: "kubernetes", Euid: 65532}),
			cause: []string{"seccomp filter", "kubernetes"},
			fix:   []string{"securityContext", "deploy/k8s/deployment.yaml", "seccompProfile Unconfined", "appArmorProfile Unconfined"}},
		{name: "seccomp filter outside a container", f: linux(facts{Seccomp: "2"}),
			cause: []string{"seccomp filter"}, fix: []string{"without that seccomp filter", "clone3 and unshare"}, not: []string{"docker", "securityContext"}},
		{name: "seccomp ENOSYS", f: linux(facts{Seccomp: "2", Err: syscall.ENOSYS}),
			cause: []string{"seccomp filter"}},
		{name: "container apparmor, no seccomp", f: linux(facts{Container: "podman", AppArmorRestrict: "1", Euid: 1000}),
			cause: []string{"podman container", "must allow userns"}, fix: []string{"podman run --security-opt"}},
		{name: "no CONFIG_USER_NS", f: linux(facts{Err: syscall.EINVAL}),
			cause: []string{"no user namespaces"}, fix: []string{"CONFIG_USER_NS"}},
		{name: "unexplained", f: linux(facts{UnprivClone: "1", AppArmorRestrict: "0"}),
			cause: []string{"operation not permitted", "user.max_user_namespaces = 63484", "kernel.unprivileged_userns_clone = 1"},
			fix:   []string{"security module"}},
		{name: "unexplained, sysctls missing", f: linux(facts{}),
			cause: []string{"kernel.unprivileged_userns_clone = (not set on this kernel)"}},
		{name: "mount refused in a container", f: linux(facts{Layer: LayerMount, Err: eperm, Container: "docker"}),
			cause: []string{"docker container", "mount"}, fix: []string{"apparmor=unconfined"}},
		{name: "pivot_root refused on a host", f: linux(facts{Layer: LayerPivotRoot}),
			cause: []string{"pivot_root"}, fix: []string{"deploy/README.md"}},
		{name: "no seccomp in the kernel", f: linux(facts{Layer: LayerSeccomp, Err: os.NewSyscallError("seccomp", syscall.EINVAL)}),
			cause: []string{"no seccomp filters"}, fix: []string{"CONFIG_SECCOMP_FILTER"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := diagnose(c.f)
			if d.Cause == "" || d.Fix == "" {
				t.Fatalf("empty diagnosis: %+v", d)
			}
			for _, s := range c.cause {
				if !strings.Contains(d.Cause, s) {
					t.Errorf("cause %q lacks %q", d.Cause, s)
				}
			}
			for _, s := range c.fix {
				if !strings.Contains(d.Fix, s) {
					t.Errorf("fix %q lacks %q", d.Fix, s)
				}
			}
			for _, s := range c.not {
				if strings.Contains(d.Cause+d.Fix, s) {
					t.Errorf("diagnosis %+v has %q", d, s)
				}
			}
		})
	}
}
