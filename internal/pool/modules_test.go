package pool_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/pool"
	"github.com/stepbox/stepbox/internal/testenv"
)

// farDeadline is a module session deadline no test reaches.
func farDeadline() time.Time {
	return time.Now().Add(testenv.UnreachableWallMs * time.Millisecond)
}

// cpuTime returns the CPU time process pid has used, all threads.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid ...: utime and stime are fields 14 and 15,
	// in clock ticks of 1/100 s.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// call makes one module call and waits for its reply.
func call(t *testing.T, m *pool.Modules, c ipc.ModuleCall) ipc.ModuleReply {
	t.Helper()
	m.Call(c)
	select {
	case r := <-m.Replies():
		if r.ID != c.ID {
			t.Fatalf("reply %+v to call %d", r, c.ID)
		}
		return r
	case <-time.After(testenv.ScaleDuration(15 * time.Second)):
		t.Fatalf("no reply to %+v", c)
	}
	panic("unreachable")
}

func expectFailure(t *testing.T, r ipc.ModuleReply, code ipc.Code, limit, msg string) {
	t.Helper()
	if r.Failure == nil || r.Failure.Code != code || r.Failure.Limit != limit || !strings.Contains(r.Failure.Message, msg) {
		t.Fatalf("reply %+v (failure %+v), want %s (limit %q) saying %q", r, r.Failure, code, limit, msg)
	}
}

// TestModules holds the modules of a run in a worker: real DuckDB and GLPK,
// the run's database kept between calls and gone with the lease, and the
// worker free for the next run.
func TestModules(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	ctx := context.Background()
	m := p.OpenModules(ctx, testLimits, []string{"duckdb", "glpk"}, farDeadline())
	for _, c := range []struct {
		call ipc.ModuleCall
		want string
	}{
		{ipc.ModuleCall{ID: 1, Op: ipc.OpDuckDBOpen}, "1"},
		{ipc.ModuleCall{ID: 2, Op: ipc.OpDuckDBLoad, Handle: 1, Table: "t", Rows: []byte(`[{"a":1},{"a":2}]`)}, "null"},
		{ipc.ModuleCall{ID: 3, Op: ipc.OpDuckDBQuery, Handle: 1, SQL: "SELECT sum(a) + ? AS s FROM t", Params: []byte(`[10]`)}, `[{"s":13}]`},
		{ipc.ModuleCall{ID: 4, Op: ipc.OpGLPKSolve, Model: []byte(`{"name":"m","objective":{"direction":2,"name":"o","vars":[{"name":"x","coef":1}]},
			"subjectTo":[{"name":"c","vars":[{"name":"x","coef":1}],"bnds":{"type":3,"ub":4,"lb":0}}]}`)}, ""},
	} {
		r := call(t, m, c.call)
		if r.Error != "" || r.Failure != nil || (c.want != "" && string(r.Value) != c.want) {
			t.Fatalf("call %+v: %+v, want %s", c.call, r, c.want)
		}
	}
	if r := call(t, m, ipc.ModuleCall{ID: 5, Op: ipc.OpDuckDBQuery, Handle: 1, SQL: "SELECT * FROM nope"}); !strings.Contains(r.Error, "Table with name nope does not exist") {
		t.Fatalf("bad SQL: %+v", r)
	}
	if hl := p.Health(); hl.Busy != 1 {
		t.Fatalf("the worker is not leased: %+v", hl)
	}
	m.Close()
	m.Close()
	if hl := p.Health(); hl.Busy != 0 || hl.Restarts != 0 || hl.Workers[0].Runs != 1 {
		t.Fatalf("the worker was not released: %+v", hl)
	}
	// The next lease starts afresh, and so does a step.
	m = p.OpenModules(ctx, testLimits, []string{"duckdb"}, farDeadline())
	call(t, m, ipc.ModuleCall{ID: 1, Op: ipc.OpDuckDBOpen})
	if r := call(t, m, ipc.ModuleCall{ID: 2, Op: ipc.OpDuckDBQuery, Handle: 1, SQL: "SELECT * FROM t"}); r.Error == "" {
		t.Fatalf("the last run's table is still there: %+v", r)
	}
	if r := call(t, m, ipc.ModuleCall{ID: 3, Op: ipc.OpGLPKSolve, Model: []byte(`{}`)}); !strings.Contains(r.Error, `the module "glpk" was not requested`) {
		t.Fatalf("a module not granted: %+v", r)
	}
	m.Close()
	expectResult(t, runStep(p, ctx, "return 1", testLimits, nil), "1")
}

// TestModulesDeadline interrupts a query at the deadline, and ends the
// lease as soon as the run ends.
func TestModulesDeadline(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	// The deadline must fall during the query, after the open, which a
	// loaded machine may slow past it: it starts at 300 ms and doubles
	// while the open alone outlasts it.
	for d := 300 * time.Millisecond; ; d *= 2 {
		m := p.OpenModules(context.Background(), testLimits, []string{"duckdb"}, time.Now().Add(d))
		r := call(t, m, ipc.ModuleCall{ID: 1, Op: ipc.OpDuckDBOpen})
		if r.Failure != nil && r.Failure.Code == ipc.CodeTimeout && d < testenv.ScaleDuration(5*time.Second) {
			t.Logf("the open took longer than a deadline of %v: %s", d, r.Failure.Message)
			m.Close()
			continue
		}
		if r.Failure != nil || r.Error != "" {
			t.Fatalf("open: %+v (failure %+v)", r, r.Failure)
		}
		start := time.Now()
		r = call(t, m, ipc.ModuleCall{ID: 2, Op: ipc.OpDuckDBQuery, Handle: 1, SQL: "SELECT count(*) FROM range(1000000000) a, range(1000000) b"})
		expectFailure(t, r, ipc.CodeTimeout, ipc.LimitWall, "wall-clock")
		if took := time.Since(start); took > d+testenv.ScaleDuration(5*time.Second) {
			t.Errorf("took %v", took)
		}
		m.Close()
		break
	}

	ctx, cancel := context.WithCancel(context.Background())
	m := p.OpenModules(ctx, testLimits, []string{"duckdb"}, farDeadline())
	call(t, m, ipc.ModuleCall{ID: 1, Op: ipc.OpDuckDBOpen})
	pid := p.Health().Workers[0].PID
	before := cpuTime(t, pid)
	m.Call(ipc.ModuleCall{ID: 2, Op: ipc.OpDuckDBQuery, Handle: 1, SQL: "SELECT count(*) FROM range(1000000000) a, range(1000000) b"})
	// An idle worker uses next to no CPU: 300 ms of it
	// is DuckDB at work on the query.
	testenv.WaitFor(t, "the query to be running", func() bool { return cpuTime(t, pid)-before >= 300*time.Millisecond })
	cancel()
	start := time.Now()
	m.Close()
	if took := time.Since(start); took > testenv.ScaleDuration(5*time.Second) {
		t.Errorf("Close took %v", took)
	}
	if hl := p.Health(); hl.Restarts != 0 || hl.Busy != 0 {
		t.Fatalf("health %+v", hl)
	}
}

// TestModulesViolations: a worker that breaks the rules of a session is
// killed; the run's calls fail CRASHED.
func TestModulesViolations(t *testing.T) {
	for _, c := range []struct{ fault, why string }{
		{"session-stray", "module call 99, which is not in flight"},
		// The reader may see the worker's next frame, now that it is
		// idle, and kill it first ("sent a return frame while idle").
		{"session-terminal", "broke the protocol"},
		{"session-event", "sent a event frame during a module session"},
		{"session-exit", "died"},
	} {
		t.Run(c.fault, func(t *testing.T) {
			p := newPool(t, pool.Config{Size: 1})
			m := p.OpenModules(context.Background(), testLimits, []string{"fault:" + c.fault}, farDeadline())
			defer m.Close()
			expectFailure(t, call(t, m, ipc.ModuleCall{ID: 1, Op: ipc.OpDuckDBOpen}), ipc.CodeCrashed, "", c.why)
			// Later calls fail too, at once.
			expectFailure(t, call(t, m, ipc.ModuleCall{ID: 2, Op: ipc.OpDuckDBOpen}), ipc.CodeCrashed, "", c.why)
		})
	}
}

// TestModulesHang: a worker that does not serve its session is killed
// Grace after the deadline, or Grace after the lease ends.
func TestModulesHang(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1, Grace: 200 * time.Millisecond})
	start := time.Now()
	m := p.OpenModules(context.Background(), testLimits, []string{"fault:session-hang"}, time.Now().Add(200*time.Millisecond))
	expectFailure(t, call(t, m, ipc.ModuleCall{ID: 1, Op: ipc.OpDuckDBOpen}), ipc.CodeLimitExceeded, ipc.LimitTime, "its worker was killed")
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("killed after %v, before deadline + grace", took)
	}
	m.Close()
	ready(t, p)

	p2 := newPool(t, pool.Config{Size: 1, Grace: 200 * time.Millisecond})
	m = p2.OpenModules(context.Background(), testLimits, []string{"fault:session-hang"}, farDeadline())
	m.Call(ipc.ModuleCall{ID: 1, Op: ipc.OpDuckDBOpen})
	// Once the session holds the worker, Close has a session to end.
	testenv.WaitFor(t, "the session to lease the worker", func() bool { return p2.Health().Busy == 1 })
	start = time.Now()
	m.Close()
	if took := time.Since(start); took < 150*time.Millisecond || took > testenv.ScaleDuration(5*time.Second) {
		t.Errorf("Close took %v, want about Grace", took)
	}
	testenv.WaitFor(t, "the worker to be replaced", func() bool { return p2.Health().Restarts > 0 })
	ready(t, p2)
	expectResult(t, runStep(p2, context.Background(), "return 3", testLimits, nil), "3")
}

func TestModulesClosedPool(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := p.OpenModules(context.Background(), testLimits, []string{"duckdb"}, farDeadline())
	defer m.Close()
	expectFailure(t, call(t, m, ipc.ModuleCall{ID: 1, Op: ipc.OpDuckDBOpen}), ipc.CodeUnavailable, "", "closed")
}
