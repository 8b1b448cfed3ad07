package jail

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strings"
)

// readFacts reads what this machine says about user namespaces (see facts).
func readFacts() facts {
	f := facts{
		GOOS:             runtime.GOOS,
		Euid:             os.Geteuid(),
		AppArmorRestrict: readSysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
		UnprivClone:      readSysctl("/proc/sys/kernel/unprivileged_userns_clone"),
		MaxUserNS:        readSysctl("/proc/sys/user/max_user_namespaces"),
		Seccomp:          statusField("/proc/self/status", "Seccomp"),
	}
	f.Exe, _ = os.Executable()
	cgroup, _ := os.ReadFile("/proc/1/cgroup")
	f.Container = containerRuntime(os.Getenv, exists, cgroup)
	return f
}

func readSysctl(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// statusField returns the value of one "Name:\tvalue" line of a
// /proc/PID/status file.
func statusField(path, name string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && k == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// containerRuntime names the container runtime this process runs under,
// from the marks runtimes leave: Kubernetes' service environment, the
// files Docker and Podman create, the container variable systemd-nspawn,
// LXC and Podman set, and the cgroup path of pid 1.
func containerRuntime(getenv func(string) string, exists func(string) bool, pid1Cgroup []byte) string {
	switch {
	case getenv("KUBERNETES_SERVICE_HOST") != "":
		return "kubernetes"
	case exists("/run/.containerenv"):
		return "podman"
	case exists("/.dockerenv"):
		return "docker"
	}
	if c := getenv("container"); c != "" {
		return c
	}
	cg := string(pid1Cgroup)
	for _, m := range []struct{ mark, name string }{
		{"kubepods", "kubernetes"}, {"libpod", "podman"}, {"docker", "docker"}, {"containerd", "containerd"}, {"lxc", "lxc"},
	} {
		if strings.Contains(cg, m.mark) {
			return m.name
		}
	}
	return ""
}
