package jail

import "testing"

func TestContainerRuntime(t *testing.T) {
	for _, c := range []struct {
		env    map[string]string
		files  []string
		cgroup string
		want   string
	}{
		{want: ""},
		{cgroup: "0::/init.scope\n", want: ""},
		{env: map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, files: []string{"/.dockerenv"}, want: "kubernetes"},
		{files: []string{"/.dockerenv"}, want: "docker"},
		{files: []string{"/run/.containerenv", "/.dockerenv"}, want: "podman"},
		{env: map[string]string{"container": "systemd-nspawn"}, want: "systemd-nspawn"},
		{cgroup: "12:pids:/kubepods/burstable/pod1/abc\n", want: "kubernetes"},
		{cgroup: "0::/system.slice/docker-0123.scope\n", want: "docker"},
		{cgroup: "0::/machine.slice/libpod-0123.scope\n", want: "podman"},
	} {
		got := containerRuntime(func(k string) string { return c.env[k] },
			func(p string) bool {
				for _, f := range c.files {
					if f == p {
						return true
					}
				}
				return false
			}, []byte(c.cgroup))
		if got != c.want {
			t.Errorf("containerRuntime(%v, %v, %q) = %q, want %q", c.env, c.files, c.cgroup, got, c.want)
		}
	}
}
