//go:build linux

package jail

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

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

// TestStaleCgroupName: a cgroup directory left with the name a worker's
// cgroup is about to get (an earlier process with the same pid) is replaced,
// while one that still holds a task is not taken over.
func TestStaleCgroupName(t *testing.T) {
	p := detectCgroups("")
	if p.pids == nil && p.memory == nil {
		t.Skip("no writable cgroup hierarchy here: workers use rlimits (TestProbe reports it)")
	}
	next := fmt.Sprintf("stepbox-%d-%d", os.Getpid(), cgroupSeq.Load()+1)
	var stale []string
	seen := map[string]bool{}
	for _, tg := range []*cgroupTarget{p.memory, p.pids} {
		if tg != nil && !seen[tg.parent] {
			seen[tg.parent] = true
			dir := filepath.Join(tg.parent, next)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			stale = append(stale, dir)
		}
	}
	made, _, err := p.makeCgroups(Config{MemoryBytes: 64 << 20, MaxProcs: 8})
	if err != nil {
		for _, d := range stale {
			os.Remove(d)
		}
		t.Fatalf("makeCgroups over stale directories: %v", err)
	}
	if err := removeCgroups(made); err != nil {
		t.Fatal(err)
	}
	// A cgroup with a task in it is never removed to make room.
	busy := filepath.Join(stale[0][:len(stale[0])-len(next)], fmt.Sprintf("stepbox-busy-%d", os.Getpid()))
	if err := os.Mkdir(busy, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(busy)
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if err := os.WriteFile(filepath.Join(busy, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := mkdirCgroup(busy); err == nil {
		t.Fatal("mkdirCgroup took over a cgroup with a task in it")
	}
}
