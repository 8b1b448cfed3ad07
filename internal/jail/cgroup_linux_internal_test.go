package jail

import "testing"

func TestCgroupPaths(t *testing.T) {
	if got := unescapeMount(`/sys/fs/cgroup/with\040space`); got != "/sys/fs/cgroup/with space" {
		t.Errorf("unescapeMount: %q", got)
	}
	for _, c := range []struct {
		name                 string
		m                    cgroupMount
		own, parent, wantDir string
	}{
		{"own cgroup", cgroupMount{root: "/", dir: "/sys/fs/cgroup/memory"}, "/a/b", "", "/sys/fs/cgroup/memory/a/b"},
		{"root cgroup", cgroupMount{root: "/", dir: "/sys/fs/cgroup"}, "/", "", "/sys/fs/cgroup"},
		{"parent overrides", cgroupMount{root: "/", dir: "/sys/fs/cgroup"}, "/a", "/stepbox.slice", "/sys/fs/cgroup/stepbox.slice"},
		{"mount of a subtree (cgroup namespace)", cgroupMount{root: "/docker/x", dir: "/sys/fs/cgroup"}, "/docker/x/y", "", "/sys/fs/cgroup/y"},
	} {
		if got := cgroupDir(c.m, c.own, c.parent); got != c.wantDir {
			t.Errorf("%s: cgroupDir = %q, want %q", c.name, got, c.wantDir)
		}
	}
}
