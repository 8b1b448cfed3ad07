package jail

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
)

// Diagnosis says why the jail cannot be set up on this machine and what
// would let it, for the people who run the host.
type Diagnosis struct {
	// Cause names what refuses, with the setting that says so, e.g.
	// "AppArmor restricts unprivileged user namespaces
	// (kernel.apparmor_restrict_unprivileged_userns = 1)".
	Cause string
	// Fix says what to change: a sysctl, the AppArmor profile in
	// deploy/apparmor, a container's flags or a pod's securityContext.
	Fix string
}

// Explain diagnoses the refusals of c from what this machine says about
// itself (on Linux: the sysctls that govern user namespaces, this process's
// seccomp mode, the marks a container runtime leaves, and the errno of the
// refused call). It returns the zero Diagnosis when c refuses nothing.
func Explain(c Capabilities) Diagnosis {
	if len(c.Refused) == 0 {
		return Diagnosis{}
	}
	f := readFacts()
	f.Layer = c.Refused[0].Layer
	f.Err = c.Refused[0].Err
	return diagnose(f)
}

// facts are the inputs of diagnose: what this machine says about itself.
// A sysctl that does not exist on this kernel is "".
type facts struct {
	GOOS string
	Euid int
	// Layer is the first refused layer and Err its error; a refused clone
	// carries its errno.
	Layer Layer
	Err   error
	// AppArmorRestrict is kernel.apparmor_restrict_unprivileged_userns
	// (Ubuntu 23.10 and later), UnprivClone kernel.unprivileged_userns_clone
	// (Debian's and Ubuntu's older kernels), MaxUserNS
	// user.max_user_namespaces.
	AppArmorRestrict, UnprivClone, MaxUserNS string
	// Seccomp is the "Seccomp:" line of /proc/self/status: "0" none, "1"
	// strict, "2" a filter (what a container runtime installs).
	Seccomp string
	// Container is "kubernetes", "docker", "podman", "containerd", another
	// runtime's name, or "" when nothing says this is a container.
	Container string
	// Exe is this binary's path, for the AppArmor profile.
	Exe string
}

// Where the fixes are documented.
const (
	docSecurityContext = `deploy/README.md, "Security context: what the worker jail needs"`
	profilePath        = "deploy/apparmor/stepbox"
)

// diagnose is the pure rule from facts to a diagnosis: the most specific
// setting that explains the refusal wins.
func diagnose(f facts) Diagnosis {
	if f.GOOS != "linux" {
		return Diagnosis{
			Cause: "the worker jail is Linux-only: " + f.GOOS + " has no user namespaces or seccomp",
			Fix:   "run Stepbox on Linux with user namespaces: a Linux machine or VM, or a container given the securityContext of " + docSecurityContext,
		}
	}
	var errno syscall.Errno
	errors.As(f.Err, &errno)
	denied := errno == syscall.EPERM || errno == syscall.EACCES
	inContainer := f.Container != ""
	onHost := ""
	if inContainer {
		onHost = " on the host (in a container /proc/sys is read-only; a pod's node needs it)"
	}
	switch f.Layer {
	case LayerUserNS, LayerPIDNS, LayerNetNS, LayerMountNS, LayerIPCNS, LayerUTSNS:
	case LayerSeccomp:
		if !inContainer && (errno == syscall.EINVAL || errno == syscall.ENOSYS) {
			return Diagnosis{
				Cause: fmt.Sprintf("the kernel has no seccomp filters (%v)", f.Err),
				Fix:   "use a kernel built with CONFIG_SECCOMP_FILTER=y (every distribution kernel is)",
			}
		}
		fallthrough
	default:
		d := Diagnosis{Cause: fmt.Sprintf("the kernel refused the jail's %s (%v)", f.Layer, f.Err),
			Fix: "allow what the jail needs as " + docSecurityContext + " lists"}
		if inContainer {
			d.Cause = fmt.Sprintf("the %s container refuses the jail's %s (%v)", f.Container, f.Layer, f.Err)
			d.Fix = containerFix(f.Container)
		}
		return d
	}

	// A namespace was refused.
	switch {
	case f.MaxUserNS == "0":
		return Diagnosis{
			Cause: "user namespaces are switched off: user.max_user_namespaces = 0",
			Fix:   "sysctl -w user.max_user_namespaces=15000" + onHost + ", and persist it in /etc/sysctl.d/",
		}
	case errno == syscall.ENOSPC || errno == syscall.EUSERS:
		return Diagnosis{
			Cause: fmt.Sprintf("the user namespaces this user may create are used up (user.max_user_namespaces = %s)", orUnknown(f.MaxUserNS)),
			Fix:   "raise it: sysctl -w user.max_user_namespaces=15000" + onHost,
		}
	case f.UnprivClone == "0" && (denied || errno == 0):
		return Diagnosis{
			Cause: "unprivileged user namespaces are switched off: kernel.unprivileged_userns_clone = 0",
			Fix:   "sysctl -w kernel.unprivileged_userns_clone=1" + onHost + ", and persist it in /etc/sysctl.d/",
		}
	case f.Seccomp == "2" && (denied || errno == syscall.ENOSYS):
		where := "this process runs under a seccomp filter (Seccomp: 2 in /proc/self/status) that refuses clone and unshare with CLONE_NEWUSER"
		if inContainer {
			where += " (a " + f.Container + " container's default seccomp profile does)"
		}
		fix := "run it without that seccomp filter, or with one that allows clone, clone3 and unshare with namespace flags, mount, umount2 and pivot_root"
		if inContainer {
			fix = containerFix(f.Container)
		}
		return Diagnosis{Cause: where, Fix: fix}
	case f.AppArmorRestrict == "1" && (denied || errno == 0) && f.Euid != 0 && !inContainer:
		attach := "make its attachment path " + f.Exe + " if it names another (a path only root can write)"
		switch {
		case strings.Contains(f.Exe, "/go-build"):
			attach = "build the binary to a path it names (sudo go build -o /usr/local/bin/stepbox ./cmd/stepbox: `go run` makes a new path each time)"
		case f.Exe == "":
			attach = "make its attachment path that of the stepbox binary"
		}
		return Diagnosis{
			Cause: "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1, as on Ubuntu 23.10 and later)",
			Fix: "allow this binary user namespaces with the AppArmor profile " + profilePath + ": install it as /etc/apparmor.d/stepbox, " +
				attach + ", and load it with `sudo apparmor_parser -r /etc/apparmor.d/stepbox` (deploy/README.md); " +
				"or, for every program, sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
		}
	case inContainer && (denied || errno == 0):
		why := ""
		if f.AppArmorRestrict == "1" {
			why = ": with kernel.apparmor_restrict_unprivileged_userns = 1 its AppArmor profile must allow userns"
		}
		return Diagnosis{
			Cause: fmt.Sprintf("the %s container refuses new user namespaces (%v)%s", f.Container, f.Err, why),
			Fix:   containerFix(f.Container),
		}
	case errno == syscall.EINVAL:
		return Diagnosis{
			Cause: fmt.Sprintf("the kernel has no user namespaces (%v)", f.Err),
			Fix:   "use a kernel built with CONFIG_USER_NS=y (every current distribution kernel is)",
		}
	}
	return Diagnosis{
		Cause: fmt.Sprintf("the kernel refused a new %s (%v) although user.max_user_namespaces = %s, kernel.unprivileged_userns_clone = %s and kernel.apparmor_restrict_unprivileged_userns = %s",
			f.Layer, f.Err, orUnknown(f.MaxUserNS), orUnknown(f.UnprivClone), orUnknown(f.AppArmorRestrict)),
		Fix: "look for a security module (SELinux, AppArmor) or seccomp filter that refuses user namespaces; " + docSecurityContext + " lists what the jail needs",
	}
}

// containerFix says how to start a container of runtime in which the jail
// works.
func containerFix(runtime string) string {
	const calls = "clone, clone3 and unshare with namespace flags, mount, umount2 and pivot_root"
	switch runtime {
	case "kubernetes":
		return "give the pod the securityContext of deploy/k8s/deployment.yaml: seccompProfile Unconfined (or a Localhost profile that is RuntimeDefault plus " + calls +
			") and appArmorProfile Unconfined (or a Localhost profile allowing mount, pivot_root and userns); see " + docSecurityContext
	case "docker", "podman":
		return runtime + " run --security-opt seccomp=unconfined --security-opt apparmor=unconfined ... (or a seccomp profile that is the default plus " + calls +
			", and an AppArmor profile allowing mount, pivot_root and userns); see " + docSecurityContext
	}
	return "start the container without a seccomp filter and AppArmor profile, or with ones that allow " + calls + " (and userns); see " + docSecurityContext
}

func orUnknown(s string) string {
	if s == "" {
		return "(not set on this kernel)"
	}
	return strings.TrimSpace(s)
}
