package pool_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/pool"
	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/internal/worker"
)

// TestWorkerProcess checks what a worker inherits: an empty environment
// but for the switch and TZ=UTC (and what Command added), descriptors 0-5 only (the
// frame pipes and the descriptor-passing socket), and a process group of
// its own.
func TestWorkerProcess(t *testing.T) {
	// A descriptor without close-on-exec in the host, as a host may have
	// inherited from its own parent, passes through exec: the worker must
	// close it.
	leak, err := syscall.Open("/dev/null", syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(leak)
	p := newPool(t, pool.Config{Size: 1})
	pid := p.Health().Workers[0].PID
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(env), "\x00"), "\x00")
	// TZ=UTC: a worker's local time is UTC whatever the host's.
	want := []string{"GORACE=atexit_sleep_ms=0", "TZ=UTC", worker.EnvSwitch + "=" + worker.SwitchValue}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("worker environment %q, want %q", got, want)
	}
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		n, _ := strconv.Atoi(e.Name())
		dir := "/proc/" + strconv.Itoa(pid)
		target, _ := os.Readlink(dir + "/fd/" + e.Name())
		info, _ := os.ReadFile(dir + "/fdinfo/" + e.Name())
		switch {
		case n <= 1 && target == "/dev/null":
		case n >= 2 && n <= 4 && strings.HasPrefix(target, "pipe:"):
		case n == worker.PassFD && strings.HasPrefix(target, "socket:"):
		case n > 4 && cloexec(string(info)):
			// Opened by the worker itself (the Go runtime: epoll,
			// eventfd, cgroup files), not inherited.
		default:
			t.Errorf("worker descriptor %d -> %s was inherited", n, target)
		}
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if f[2] != strconv.Itoa(pid) {
		t.Errorf("worker process group %s, want its own (%d)", f[2], pid)
	}
}

// cloexec reports whether an fdinfo text has O_CLOEXEC in its flags.
func cloexec(fdinfo string) bool {
	for _, line := range strings.Split(fdinfo, "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&syscall.O_CLOEXEC != 0
		}
	}
	return false
}

// fakeJail records what the pool does with a Prepare hook.
type fakeJail struct {
	mu      sync.Mutex
	started []int
	cleaned int
}

func (j *fakeJail) Started(pid int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.started = append(j.started, pid)
	return nil
}

func (j *fakeJail) Cleanup() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.cleaned++
	return nil
}

func TestPrepare(t *testing.T) {
	t.Run("hooks", func(t *testing.T) {
		j := &fakeJail{}
		p, err := pool.New(pool.Config{Size: 2, StartTimeout: startTimeout(), Command: testCommand(), Prepare: func(cmd *exec.Cmd, _ pool.HostID) (pool.Handle, error) {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			return j, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		ready(t, p)
		var pids []int
		for _, w := range p.Health().Workers {
			pids = append(pids, w.PID)
			stat, err := os.ReadFile("/proc/" + strconv.Itoa(w.PID) + "/stat")
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			if f[3] != strconv.Itoa(w.PID) {
				t.Errorf("worker %d: session %s; Prepare's SysProcAttr was not used", w.PID, f[3])
			}
		}
		expectResult(t, runStep(p, context.Background(), "return 1", testLimits, nil), "1")
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		sort.Ints(pids)
		sort.Ints(j.started)
		if len(j.started) != 2 || j.started[0] != pids[0] || j.started[1] != pids[1] || j.cleaned != 2 {
			t.Fatalf("Started %v (workers %v), Cleanup %d times", j.started, pids, j.cleaned)
		}
	})
	t.Run("refused", func(t *testing.T) {
		p, err := pool.New(pool.Config{Size: 1, Command: testCommand(), Prepare: func(cmd *exec.Cmd, _ pool.HostID) (pool.Handle, error) {
			return nil, errors.New("namespaces are not available")
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		f := expectError(t, runStep(p, context.Background(), "return 1", testLimits, nil), ipc.CodeUnavailable, "")
		if !strings.Contains(f.Message, "namespaces are not available") {
			t.Fatalf("message %q", f.Message)
		}
	})
}

// TestPingKillsStoppedWorker: an idle worker that stops answering pings
// (here: SIGSTOPped) is killed and replaced.
func TestPingKillsStoppedWorker(t *testing.T) {
	// Grace is how long a ping may go unanswered: a second is ample for a
	// healthy worker however loaded the machine, and short enough for the
	// stopped one.
	p := newPool(t, pool.Config{Size: 1, PingInterval: 50 * time.Millisecond, Grace: time.Second})
	// Healthy workers answer and stay: a replacement would count again
	// from zero.
	testenv.WaitFor(t, "five pings answered", func() bool { return pool.LastPong(p) >= 5 })
	if h := p.Health(); h.Restarts != 0 {
		t.Fatalf("a healthy worker was replaced: %+v", h)
	}
	pid := p.Health().Workers[0].PID
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the stopped worker to be replaced", func() bool { return p.Health().Restarts > 0 })
	ready(t, p)
	expectResult(t, runStep(p, context.Background(), "return 1", testLimits, nil), "1")
}

func BenchmarkPoolTrivial(b *testing.B) {
	p := newPool(b, pool.Config{Size: 1})
	benchLatency(b, p.Run)
}

func BenchmarkInProcessTrivial(b *testing.B) {
	rt, err := jsrt.New(jsrt.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	benchLatency(b, rt.Run)
}

// benchLatency runs "return 1+1" b.N times, one at a time, and reports the
// median and 99th percentile of the Run call (submit to terminal).
func benchLatency(b *testing.B, run func(context.Context, jsrt.Job) *ipc.Event) {
	job := jsrt.Job{Code: "return 1+1", Limits: testLimits, Host: newRecorder()}
	for range 20 { // warm up: the first runs pay for warm VMs
		run(context.Background(), job)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		ev := run(context.Background(), job)
		lat = append(lat, time.Since(t0))
		if ev.Result == nil || string(ev.Result.Value) != "2" {
			b.Fatalf("%+v", ev.Error)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(f float64) float64 { return float64(lat[int(f*float64(len(lat)-1))]) / float64(time.Microsecond) }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}
