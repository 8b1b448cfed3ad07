//go:build linux

package pool_test

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/stepbox/stepbox/internal/pool"
	"github.com/stepbox/stepbox/internal/testenv"
)

// parentOf reads the parent pid of pid from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	var state string
	var ppid int
	if _, err := fmt.Sscan(string(stat[bytes.LastIndexByte(stat, ')')+1:]), &state, &ppid); err != nil {
		t.Fatal(err)
	}
	return ppid
}

// TestJailedWorkersFromTheForkServer: jailed workers are forked by the
// pool's fork server, yet are the host's children (the host reaps them);
// when the server dies, the next start forks on its own and the one after
// starts a new server.
func TestJailedWorkersFromTheForkServer(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1, MaxRuns: 1, Prepare: jailed, ForkServer: pool.ForkServerAlways})
	pid := runOn(t, p, "")
	servers, forks, server := pool.ForkServer(p)
	if servers != 1 || forks < 1 || server == 0 {
		t.Fatalf("%d fork servers, %d forks, server pid %d", servers, forks, server)
	}
	testenv.WaitFor(t, "the replacement worker", func() bool {
		h := p.Health()
		return h.Up == 1 && h.Workers[0].PID != pid
	})
	w := p.Health().Workers[0].PID
	if got := parentOf(t, w); got != os.Getpid() {
		t.Errorf("worker %d has parent %d, want the host %d", w, got, os.Getpid())
	}
	if got := parentOf(t, server); got != os.Getpid() {
		t.Errorf("the fork server %d has parent %d, want the host %d", server, got, os.Getpid())
	}

	// The server dies; the workers it started do not.
	if err := syscall.Kill(server, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if got := runOn(t, p, ""); got != w {
		t.Fatalf("the run went to %d, not the idle worker %d", got, w)
	}
	// That run's worker retired; its replacement and the next one start
	// with the server gone.
	for range 2 {
		prev := p.Health().Workers[0].PID
		testenv.WaitFor(t, "a replacement worker", func() bool {
			h := p.Health()
			return h.Up == 1 && h.Workers[0].PID != prev
		})
		runOn(t, p, "")
	}
	if servers, _, pid := pool.ForkServer(p); servers != 2 || pid == server {
		t.Errorf("after the server died: %d servers started, the last %d", servers, pid)
	}
}

// TestForkServerPolicy: ForkServerNever forks in the host; the default
// forks the first jailed worker in the host while the server starts, and
// the next ones through the server.
func TestForkServerPolicy(t *testing.T) {
	for _, c := range []struct {
		name           string
		policy         pool.ForkServerPolicy
		servers, forks int64 // after two worker starts
	}{
		{"never", pool.ForkServerNever, 0, 0},
		{"auto", pool.ForkServerAuto, 1, 1},
		{"always", pool.ForkServerAlways, 1, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newPool(t, pool.Config{Size: 1, MaxRuns: 1, Prepare: jailed, ForkServer: c.policy})
			first := runOn(t, p, "")
			testenv.WaitFor(t, "the second worker", func() bool {
				h := p.Health()
				return h.Up == 1 && h.Workers[0].PID != first
			})
			if servers, forks, _ := pool.ForkServer(p); servers != c.servers || forks != c.forks {
				t.Errorf("%d fork servers, %d forks; want %d, %d", servers, forks, c.servers, c.forks)
			}
		})
	}
}
