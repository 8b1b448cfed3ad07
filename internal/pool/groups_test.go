package pool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/pool"
	"github.com/stepbox/stepbox/internal/testenv"
)

// runOn runs a step of group that asks for data once, and returns the pid
// of the worker that was busy with it when its request arrived: the
// process that ran it, as the host sees it.
func runOn(t *testing.T, p *pool.Pool, group string) int {
	t.Helper()
	pid := 0
	h := newRecorder()
	h.answer = func(d *ipc.DataRequest) *ipc.Reply {
		for _, w := range p.Health().Workers {
			if w.Busy {
				if pid != 0 {
					t.Errorf("two workers busy with one run")
				}
				pid = w.PID
				if w.Group != group {
					t.Errorf("run of %q on a worker of %q", group, w.Group)
				}
			}
		}
		return &ipc.Reply{ID: d.ID, Value: json.RawMessage(`1`)}
	}
	ev := p.RunGroup(context.Background(), group, jsrt.Job{Code: `return await dataProxy.request("which")`, Limits: testLimits, Host: h, Replies: h.replies})
	expectResult(t, ev, "1")
	if pid == 0 {
		t.Fatalf("no worker was busy with the run of %q", group)
	}
	return pid
}

// TestGroupsNeverShareAProcess is the one worker model's promise: runs of
// groups a, b, a on a pool of one never run b's in a's process; with two
// slots and no standby to keep, a's worker waits for a's next run.
func TestGroupsNeverShareAProcess(t *testing.T) {
	for _, c := range []struct{ size, standby int }{{1, 0}, {1, 1}, {2, 0}} {
		t.Run(fmt.Sprintf("size=%d,standby=%d", c.size, c.standby), func(t *testing.T) {
			p := newPool(t, pool.Config{Size: c.size, Standby: c.standby})
			a1 := runOn(t, p, "a")
			b := runOn(t, p, "b")
			a2 := runOn(t, p, "a")
			if b == a1 || b == a2 {
				t.Fatalf("a ran in %d and %d, b in %d: b shared a's process", a1, a2, b)
			}
			if c.size == 2 && a2 != a1 {
				t.Errorf("a's second run on %d, its first on %d: a's worker was not kept", a2, a1)
			}
			for _, w := range p.Health().Workers {
				if w.Bound && w.Group != "a" && w.Group != "b" {
					t.Errorf("a worker bound to %q", w.Group)
				}
			}
		})
	}
}

// TestOneProcessPerRun: with MaxRuns 1 no two runs share a process, even
// of one group.
func TestOneProcessPerRun(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1, Standby: 1, MaxRuns: 1})
	seen := map[int]bool{}
	for i := 0; i < 4; i++ {
		pid := runOn(t, p, "a")
		if seen[pid] {
			t.Fatalf("run %d reused process %d", i, pid)
		}
		seen[pid] = true
	}
	if h := p.Health(); h.Retired < 3 {
		t.Errorf("retired %d workers, want at least 3", h.Retired)
	}
}

// TestSharedWorkers: one group for every run is today's pool: one process
// serves every run.
func TestSharedWorkers(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	first := runOn(t, p, "")
	for i := 0; i < 3; i++ {
		if pid := runOn(t, p, ""); pid != first {
			t.Fatalf("run %d on %d, the first on %d", i, pid, first)
		}
	}
}

// TestStandbyRefilled: binding the unbound worker makes the pool retire
// an idle worker of another group, so that one is unbound again.
func TestStandbyRefilled(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1, Standby: 1})
	runOn(t, p, "a")
	runOn(t, p, "b") // binds the standby; a's idle worker makes way
	testenv.WaitFor(t, "an unbound worker again", func() bool {
		h := p.Health()
		return h.Unbound == 1 && h.Up == 2
	})
	h := p.Health()
	for _, w := range h.Workers {
		if w.Bound && w.Group != "b" {
			t.Errorf("a worker of %q is still up", w.Group)
		}
	}
	if h.Retired < 1 {
		t.Errorf("retired %d workers", h.Retired)
	}
}

// TestStandbyRefilledAfterRun: the run that binds the standby runs beside
// no worker start: the worker that makes way for the new standby is
// retired when that run ends, not while it runs.
func TestStandbyRefilledAfterRun(t *testing.T) {
	defer pool.SetRefillDelay(time.Hour)()
	p := newPool(t, pool.Config{Size: 1, Standby: 1})
	a := runOn(t, p, "a")
	h := newRecorder()
	h.answer = func(d *ipc.DataRequest) *ipc.Reply {
		// Give a premature retirement time to show.
		time.Sleep(50 * time.Millisecond)
		hl := p.Health()
		if hl.Retired != 0 || hl.Up != 2 {
			t.Errorf("during the run that bound the standby: %+v", hl)
		}
		for _, w := range hl.Workers {
			if w.PID == a && (!w.Bound || w.Group != "a") {
				t.Errorf("a's worker changed during b's run: %+v", w)
			}
		}
		return &ipc.Reply{ID: d.ID, Value: json.RawMessage(`1`)}
	}
	ev := p.RunGroup(context.Background(), "b", jsrt.Job{Code: `return await dataProxy.request("x")`, Limits: testLimits, Host: h, Replies: h.replies})
	expectResult(t, ev, "1")
	testenv.WaitFor(t, "an unbound worker again", func() bool {
		h := p.Health()
		return h.Unbound == 1 && h.Up == 2 && h.Retired == 1
	})
	for _, w := range p.Health().Workers {
		if w.PID == a {
			t.Errorf("a's worker %d is still up", a)
		}
	}
}

// TestStandbyRefilledDuringLongRun: a run that binds the standby and runs
// longer than the refill delay does not keep the pool without a standby.
func TestStandbyRefilledDuringLongRun(t *testing.T) {
	defer pool.SetRefillDelay(time.Millisecond)()
	p := newPool(t, pool.Config{Size: 1, Standby: 1})
	runOn(t, p, "a")
	h := newRecorder()
	h.answer = func(d *ipc.DataRequest) *ipc.Reply {
		testenv.WaitFor(t, "a new standby while b runs", func() bool {
			h := p.Health()
			return h.Unbound == 1 && h.Up == 2 && h.Retired == 1
		})
		return &ipc.Reply{ID: d.ID, Value: json.RawMessage(`1`)}
	}
	ev := p.RunGroup(context.Background(), "b", jsrt.Job{Code: `return await dataProxy.request("x")`, Limits: testLimits, Host: h, Replies: h.replies})
	expectResult(t, ev, "1")
}

// TestRetireAfterLimit: a worker whose run crossed a time limit or its
// memory serves no other run.
func TestRetireAfterLimit(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1, RetireAfterLimit: true})
	before := runOn(t, p, "")
	lim := testLimits
	lim.CPUMs = 100
	expectError(t, runStep(p, context.Background(), "while (true) {}", lim, nil), ipc.CodeTimeout, ipc.LimitCPU)
	after := runOn(t, p, "")
	if after == before {
		t.Fatalf("the run after a TIMEOUT ran in the same process (%d)", before)
	}
	// A run that ends normally keeps its worker.
	if again := runOn(t, p, ""); again != after {
		t.Fatalf("a clean run cost the worker (%d, then %d)", after, again)
	}
}

// TestMaxAge: an idle worker older than MaxAge is retired and replaced.
func TestMaxAge(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1, MaxAge: 200 * time.Millisecond})
	first := runOn(t, p, "")
	testenv.WaitFor(t, "the old worker to be replaced", func() bool {
		h := p.Health()
		return h.Retired >= 1 && h.Up == 1
	})
	if pid := runOn(t, p, ""); pid == first {
		t.Fatalf("the run after MaxAge ran in the old worker %d", pid)
	}
}

// TestHostIDs: each slot's workers run under a host uid of their own when
// the host is root.
func TestHostIDs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("host ids are mapped only when the host is root")
	}
	const first = 1_900_000_000
	p := newPool(t, pool.Config{Size: 2, HostIDs: pool.IDRange{First: first, Count: 2}, Prepare: jailed})
	uids := map[string]bool{}
	for _, w := range p.Health().Workers {
		status, err := os.ReadFile("/proc/" + strconv.Itoa(w.PID) + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
				uids[f[1]] = true
			}
		}
	}
	if len(uids) != 2 || !uids[strconv.Itoa(first)] || !uids[strconv.Itoa(first+1)] {
		t.Fatalf("the workers run as %v, want %d and %d", uids, first, first+1)
	}
	if _, err := pool.New(pool.Config{Size: 2, Standby: 1, HostIDs: pool.IDRange{First: first, Count: 2}}); err == nil ||
		!strings.Contains(err.Error(), "does not cover the 3 worker slots") {
		t.Errorf("a range too small: %v", err)
	}
}

// jailed confines a worker with the jail, under its host identity.
func jailed(cmd *exec.Cmd, id pool.HostID) (pool.Handle, error) {
	h, err := jail.Prepare(cmd, jail.Config{ReadOnlyBinds: jail.SystemLibraryBinds(), HostUID: id.UID, HostGID: id.GID})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// TestStandbyRefilledAfterBusy: when the standby is bound while every
// other worker is busy, nothing can make way then; the pool refills the
// standby when a worker goes idle.
func TestStandbyRefilledAfterBusy(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1, Standby: 1})
	asked := make(chan struct{})
	release := make(chan struct{})
	h := newRecorder()
	h.answer = func(d *ipc.DataRequest) *ipc.Reply {
		close(asked)
		<-release
		return &ipc.Reply{ID: d.ID, Value: json.RawMessage(`1`)}
	}
	done := make(chan *ipc.Event, 1)
	go func() {
		done <- p.RunGroup(context.Background(), "a", jsrt.Job{Code: `return await dataProxy.request("wait")`, Limits: testLimits, Host: h, Replies: h.replies})
	}()
	<-asked
	// b's run binds the standby while a's worker is busy.
	expectResult(t, p.RunGroup(context.Background(), "b", jsrt.Job{Code: `return 2`, Limits: testLimits}), "2")
	close(release)
	expectResult(t, <-done, "1")
	testenv.WaitFor(t, "an unbound worker again", func() bool {
		h := p.Health()
		return h.Unbound == 1 && h.Up == 2
	})
	if h := p.Health(); h.Retired < 1 {
		t.Errorf("retired %d workers", h.Retired)
	}
}
