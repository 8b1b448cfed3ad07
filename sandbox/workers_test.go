package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// A kind of run the Workers tests place: a language under an isolation.
// JavaScript in-process runs in the host, so it has no process to place.
type placement struct {
	name      string
	isolation sandbox.Isolation
	language  sandbox.Language
	// burn computes while the host answers true to "burn".
	burn string
}

var placements = []placement{
	{"javascript", sandbox.IsolationProcess, sandbox.JavaScript,
		`let n = 0; while (await dataProxy.request("burn")) { for (let i = 0; i < 100000; i++) n += i % 7 } return n >= 0`},
	{"python", sandbox.IsolationProcess, sandbox.Python,
		"n = 0\nwhile await data_proxy.request(\"burn\"):\n    for i in range(100000):\n        n += i % 7\nreturn n >= 0"},
	{"python/inprocess", sandbox.IsolationInProcess, sandbox.Python,
		"n = 0\nwhile await data_proxy.request(\"burn\"):\n    for i in range(100000):\n        n += i % 7\nreturn n >= 0"},
}

// workersEngine starts an engine of one slot with the policy w for runs
// of pl, skipping the test where pl cannot run here.
func workersEngine(t *testing.T, pl placement, w sandbox.Workers) *sandbox.Engine {
	t.Helper()
	if pl.language == sandbox.Python && !testenv.RequireJail() {
		if _, err := engine(t).Run(context.Background(), sandbox.Request{Language: sandbox.Python, Code: "return 1"}, nil); err != nil {
			t.Skipf("Python is not available here: %v", err)
		}
	}
	plan := testPlan
	plan.MaxDataRequests = 100_000 // a step asks for more work until the host has seen enough
	return newEngine(t, sandbox.Config{Isolation: pl.isolation, PoolSize: 1, Workers: w, Plans: map[string]sandbox.Limits{"default": plan}})
}

// settled reports whether every worker slot of wh is up and the standby
// unbound: a worker that a run's bind retired has been replaced.
func settled(wh *sandbox.WorkerHealth) bool {
	return wh != nil && wh.Up == wh.Size+wh.Standby && wh.Unbound >= wh.Standby
}

// workersOf returns the engine's pool that runs steps of language.
func workersOf(e *sandbox.Engine, language sandbox.Language) *sandbox.WorkerHealth {
	h := e.Health()
	if h.Isolation == sandbox.IsolationInProcess {
		if language == sandbox.Python {
			return h.Python.Workers
		}
		return nil
	}
	return &h.Workers
}

// burnTicks is how much more CPU time, in clock ticks of /proc (10 ms),
// the worker that runs a step must have used than any other worker before
// the host names it.
const burnTicks = 10

// ranIn runs a step of tenant that computes until one worker process,
// with its zygote and their children, has used burnTicks of CPU time more
// since the step began than any other worker has, as the kernel counts it
// (/proc/PID/stat), and returns that worker: the process that ran the
// step, identified from the host. What other workers do meanwhile (one
// that has just started may still be preparing its warm runtimes) is
// bounded, so the step's worker gets there. The pool's own view (the
// worker busy with the run) must agree.
func ranIn(t *testing.T, e *sandbox.Engine, pl placement, tenant string) sandbox.WorkerProcess {
	t.Helper()
	var (
		before map[int]int64 // worker pid → CPU ticks, when the step began
		busy   []sandbox.WorkerProcess
		procs  map[int]sandbox.WorkerProcess
		ran    *sandbox.WorkerProcess
	)
	handler := func(context.Context, string, json.RawMessage) (any, error) {
		wh := workersOf(e, pl.language)
		if before == nil {
			// Let a worker that a bind retired be replaced first, so that
			// no start competes for the CPU while the step computes.
			testenv.WaitFor(t, "every worker slot up, the standby unbound", func() bool {
				wh = workersOf(e, pl.language)
				return settled(wh)
			})
			procs = map[int]sandbox.WorkerProcess{}
			for _, p := range wh.Processes {
				procs[p.PID] = p
				if p.Busy {
					busy = append(busy, p)
				}
			}
			before = workerTicks(t, wh.Processes)
			return true, nil
		}
		// The workers up when the step began: a worker started since
		// cannot be the step's.
		now := workerTicks(t, wh.Processes)
		best, grew, next := 0, int64(-1), int64(0)
		for pid, ticks := range now {
			b, ok := before[pid]
			switch d := ticks - b; {
			case !ok:
			case d > grew:
				best, grew, next = pid, d, max(grew, 0)
			case d > next:
				next = d
			}
		}
		if grew-next < burnTicks {
			return true, nil
		}
		p := procs[best]
		ran = &p
		return false, nil
	}
	_, res, err := run(t, e, sandbox.Request{Language: pl.language, Code: pl.burn, Tenant: tenant}, handler)
	if err != nil {
		t.Fatalf("run of %q: %v", tenant, err)
	}
	if string(res.Value) != "true" || ran == nil {
		t.Fatalf("run of %q: %s, no process named", tenant, res.Value)
	}
	if len(busy) != 1 || busy[0].PID != ran.PID {
		t.Fatalf("run of %q: its CPU time grew in worker %d, but the pool had %+v busy with it", tenant, ran.PID, busy)
	}
	if pl.language == sandbox.Python && ran.ZygotePID == 0 {
		t.Fatalf("run of %q: Python ran in worker %d, which has no zygote", tenant, ran.PID)
	}
	return *ran
}

// workerTicks returns the CPU time (user and system, clock ticks) that
// each worker has used with its zygote and every live or reaped
// descendant of either.
func workerTicks(t *testing.T, workers []sandbox.WorkerProcess) map[int]int64 {
	t.Helper()
	type stat struct {
		ppid  int
		ticks int64
	}
	all := map[int]stat{}
	children := map[int][]int{}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue // it exited
		}
		// pid (comm) state ppid ... utime stime cutime cstime: fields
		// 4 and 14 to 17, counted after the command's closing parenthesis.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 15 {
			t.Fatalf("/proc/%d/stat: %q", pid, b)
		}
		var s stat
		s.ppid, _ = strconv.Atoi(f[1])
		for _, v := range f[11:15] {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.ticks += n
		}
		all[pid] = s
		children[s.ppid] = append(children[s.ppid], pid)
	}
	var tree func(pid int) int64
	tree = func(pid int) int64 {
		if pid == 0 {
			return 0
		}
		n := all[pid].ticks
		for _, c := range children[pid] {
			n += tree(c)
		}
		return n
	}
	out := map[int]int64{}
	for _, w := range workers {
		if _, up := all[w.PID]; up {
			out[w.PID] = tree(w.PID) + tree(w.ZygotePID)
		}
	}
	return out
}

// TestWorkersTenant is the default policy's promise: with one slot, runs
// of tenants a, b, a never run in one process, in JavaScript or in
// Python; a tenant's next run keeps its worker.
func TestWorkersTenant(t *testing.T) {
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			e := workersEngine(t, pl, sandbox.Workers{})
			a1 := ranIn(t, e, pl, "a")
			b := ranIn(t, e, pl, "b")
			a2 := ranIn(t, e, pl, "a")
			if b.PID == a1.PID || b.PID == a2.PID {
				t.Fatalf("a ran in %d and %d, b in %d: b shared a's process", a1.PID, a2.PID, b.PID)
			}
			if z := b.ZygotePID; z != 0 && (z == a1.ZygotePID || z == a2.ZygotePID) {
				t.Fatalf("b's Python ran in a's zygote %d", z)
			}
			if a3 := ranIn(t, e, pl, "a"); a3.PID != a2.PID {
				t.Errorf("a's next run ran in %d, not in a's worker %d", a3.PID, a2.PID)
			}
			if wh := workersOf(e, pl.language); wh.Standby != sandbox.DefaultStandby(1) || wh.Retired < 2 {
				t.Errorf("standby %d, retired %d: want the default standby (%d), and a's and b's first workers retired",
					wh.Standby, wh.Retired, sandbox.DefaultStandby(1))
			}
		})
	}
}

// TestWorkersRun: with scope run, no two runs share a process, even of
// one tenant.
func TestWorkersRun(t *testing.T) {
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			e := workersEngine(t, pl, sandbox.Workers{Scope: sandbox.ScopeRun})
			seen := map[int]bool{}
			for i := range 3 {
				p := ranIn(t, e, pl, "a")
				if seen[p.PID] {
					t.Fatalf("run %d ran in process %d again", i, p.PID)
				}
				seen[p.PID] = true
			}
		})
	}
}

// TestWorkersShared: with scope shared, today's pool: tenants a and b run
// in one process (and one zygote).
func TestWorkersShared(t *testing.T) {
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			e := workersEngine(t, pl, sandbox.Workers{Scope: sandbox.ScopeShared})
			a := ranIn(t, e, pl, "a")
			b := ranIn(t, e, pl, "b")
			if a.PID != b.PID || a.ZygotePID != b.ZygotePID {
				t.Fatalf("a ran in %d (zygote %d), b in %d (zygote %d): want one process", a.PID, a.ZygotePID, b.PID, b.ZygotePID)
			}
			if wh := workersOf(e, pl.language); wh.Standby != 0 || wh.Retired != 0 {
				t.Errorf("standby %d, retired %d: want neither", wh.Standby, wh.Retired)
			}
		})
	}
}

// TestWorkersGroup: with scope group, the tenants of one group share a
// process; a tenant in no group has its own.
func TestWorkersGroup(t *testing.T) {
	for _, pl := range placements {
		t.Run(pl.name, func(t *testing.T) {
			e := workersEngine(t, pl, sandbox.Workers{Scope: sandbox.ScopeGroup, Groups: map[string]string{"a": "paid", "b": "paid"}})
			a := ranIn(t, e, pl, "a")
			b := ranIn(t, e, pl, "b")
			if a.PID != b.PID {
				t.Fatalf("a ran in %d, b in %d: the tenants of one group did not share", a.PID, b.PID)
			}
			// A tenant named like the group is not in it.
			for _, tenant := range []string{"c", "paid"} {
				if c := ranIn(t, e, pl, tenant); c.PID == a.PID {
					t.Fatalf("%s, in no group, ran in the group's process %d", tenant, c.PID)
				}
			}
		})
	}
}

// TestWorkersRetireAfterLimit: by default a worker whose run crossed a
// time limit serves no other run; RetireAfterLimit false keeps it.
func TestWorkersRetireAfterLimit(t *testing.T) {
	pl := placements[0]
	no := false
	for _, c := range []struct {
		name   string
		w      sandbox.Workers
		retire bool
	}{{"default", sandbox.Workers{}, true}, {"false", sandbox.Workers{RetireAfterLimit: &no}, false}} {
		t.Run(c.name, func(t *testing.T) {
			e := workersEngine(t, pl, c.w)
			before := ranIn(t, e, pl, "a")
			// The wall-clock limit, on a step that waits: a CPU limit
			// on a loop can end in an overrun (the engine polls its
			// interrupt every few thousand instructions, which under
			// -race on a loaded machine can be past the 2 ms a stopped
			// VM is given), and an overrun ends the worker whatever
			// RetireAfterLimit says.
			_, _, err := run(t, e, sandbox.Request{Code: "await new Promise(r => setTimeout(r, 1e9))", Tenant: "a", Limits: sandbox.Limits{WallMs: 200}}, nil)
			if !errors.Is(err, sandbox.ErrTimeout) {
				t.Fatalf("want TIMEOUT, got %v", err)
			}
			if after := ranIn(t, e, pl, "a"); (after.PID != before.PID) != c.retire {
				t.Fatalf("ran in %d, then in %d after a TIMEOUT: want retired=%v", before.PID, after.PID, c.retire)
			}
		})
	}
}

// TestWorkersHostIDs: as root, every worker (and its zygote) runs under a
// host uid and gid of its own, from DefaultHostUID up.
func TestWorkersHostIDs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("workers get host ids of their own only when the host is root")
	}
	for _, pl := range placements[1:] {
		t.Run(pl.name, func(t *testing.T) {
			e := workersEngine(t, pl, sandbox.Workers{})
			a := ranIn(t, e, pl, "a") // starts a's zygote
			wh := workersOf(e, pl.language)
			testenv.WaitFor(t, "every worker slot up", func() bool {
				wh = workersOf(e, pl.language)
				return settled(wh)
			})
			if len(wh.Processes) < 2 {
				t.Fatalf("%d workers, want 2", len(wh.Processes))
			}
			seen := map[int]int{}
			for _, p := range wh.Processes {
				uid, gid := hostIDs(t, p.PID)
				if uid < sandbox.DefaultHostUID || gid != uid {
					t.Errorf("worker %d runs as uid %d gid %d, want one id from %d", p.PID, uid, gid, sandbox.DefaultHostUID)
				}
				if other, dup := seen[uid]; dup {
					t.Errorf("workers %d and %d both run as uid %d", other, p.PID, uid)
				}
				seen[uid] = p.PID
				if p.PID == a.PID {
					if zu, zg := hostIDs(t, a.ZygotePID); zu != uid || zg != gid {
						t.Errorf("zygote %d of worker %d runs as %d:%d, the worker as %d:%d", a.ZygotePID, p.PID, zu, zg, uid, gid)
					}
				}
			}
		})
	}
}

// hostIDs returns the real uid and gid of process pid.
func hostIDs(t *testing.T, pid int) (uid, gid int) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	uid, gid = -1, -1
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "Uid:":
			uid, _ = strconv.Atoi(f[1])
		case "Gid:":
			gid, _ = strconv.Atoi(f[1])
		}
	}
	return uid, gid
}

// TestWorkersConfig crosses every check of the Workers policy: New
// reports each problem, naming its field, all together.
func TestWorkersConfig(t *testing.T) {
	for _, c := range []struct {
		name string
		w    sandbox.Workers
		want []string
	}{
		{"scope", sandbox.Workers{Scope: "process"}, []string{`workers.scope: "process" is not "tenant", "group", "run" or "shared"`}},
		{"groups without scope group", sandbox.Workers{Groups: map[string]string{"a": "g"}},
			[]string{`workers.groups: set, but scope is "tenant": groups apply only to scope "group"`}},
		{"scope group without groups", sandbox.Workers{Scope: sandbox.ScopeGroup},
			[]string{`workers.groups: none, with scope "group": every tenant would be a group of its own, which is scope "tenant"`}},
		{"empty group name", sandbox.Workers{Scope: sandbox.ScopeGroup, Groups: map[string]string{"a": "g", "b": ""}},
			[]string{`workers.groups["b"]: empty group name`}},
		{"maxRuns with scope run", sandbox.Workers{Scope: sandbox.ScopeRun, MaxRuns: 2},
			[]string{`workers.maxRuns: 2, but scope "run" is one run per worker`}},
		{"negative first id", sandbox.Workers{HostIDs: sandbox.IDRange{First: -1}}, []string{"workers.hostIDs.first: -1 is negative"}},
		{"count without first", sandbox.Workers{HostIDs: sandbox.IDRange{Count: 4}},
			[]string{"workers.hostIDs.first: not set, with count 4: give the first uid of the range"}},
		{"count too small", sandbox.Workers{Standby: 2, HostIDs: sandbox.IDRange{First: 2_000_000_000, Count: 2}},
			[]string{"workers.hostIDs.count: 2 does not cover the 3 worker slots (poolSize 1 + standby 2)"}},
		{"past the largest uid", sandbox.Workers{HostIDs: sandbox.IDRange{First: 4_294_967_293}},
			[]string{"workers.hostIDs: 4294967293+2 goes past the largest uid (4294967293)"}},
		{"all together", sandbox.Workers{Scope: sandbox.ScopeRun, MaxRuns: 5, Groups: map[string]string{"a": ""}},
			[]string{`workers.groups: set, but scope is "run"`, `workers.groups["a"]: empty group name`, `workers.maxRuns: 5, but scope "run"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := sandbox.New(sandbox.Config{PoolSize: 1, Workers: c.w})
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), "stepbox: invalid config: ") {
				t.Errorf("not a config error: %v", err)
			}
			for _, want := range c.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("no %q in:\n%v", want, err)
				}
			}
			if got := strings.Count(err.Error(), "workers."); got != len(c.want) {
				t.Errorf("%d problems, want %d:\n%v", got, len(c.want), err)
			}
			if verr := c.w.Validate(1); verr == nil || !strings.Contains(err.Error(), verr.Error()) {
				t.Errorf("Validate: %v", verr)
			}
		})
	}
	// What is valid: every scope, and the ways to turn things off.
	no := false
	for _, w := range []sandbox.Workers{
		{Scope: sandbox.ScopeTenant, Standby: -1, MaxRuns: -1, MaxAge: -1, RetireAfterLimit: &no, HostIDs: sandbox.IDRange{Count: -1}},
		{Scope: sandbox.ScopeGroup, Groups: map[string]string{"a": "g", "": "g"}},
		{Scope: sandbox.ScopeRun, MaxRuns: 1, HostIDs: sandbox.IDRange{First: 2_000_000_000}},
		{Scope: sandbox.ScopeShared, HostIDs: sandbox.IDRange{First: 2_000_000_000, Count: 8}},
	} {
		if err := w.Validate(1); err != nil {
			t.Errorf("%+v: %v", w, err)
		}
	}
}

// TestWorkersIDMap: a range the process's user namespace does not map is
// refused, as in a container whose root has 65536 ids.
func TestWorkersIDMap(t *testing.T) {
	const container = "         0     100000      65536\n"
	for _, c := range []struct {
		first, count int64
		want         bool
	}{{0, 65536, true}, {1000, 3, true}, {65534, 3, false}, {1_900_000_000, 3, false}} {
		if got := sandbox.InMap(container, c.first, c.count); got != c.want {
			t.Errorf("%d+%d in %q: %v, want %v", c.first, c.count, container, got, c.want)
		}
	}
	if got := sandbox.InMap("0 0 4294967295\n", 1_900_000_000, 3); !got {
		t.Errorf("the initial namespace's map does not hold the default range")
	}
}
