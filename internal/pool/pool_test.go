package pool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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
)

// testLimits has time limits no run reaches: a test that crosses one sets
// it, for a step that never ends by itself.
var testLimits = ipc.Limits{
	MemoryMB: 64, CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs, MaxCodeBytes: 1 << 20, MaxResultBytes: 1 << 20,
	MaxDataRequests: 10, MaxDataBytes: 1 << 20, MaxStatusEvents: 10, MaxConsoleEvents: 10,
	MaxConsoleBytes: 4096, MaxFetchRequests: 1, MaxFetchBytes: 1 << 20,
}

func limits(f func(*ipc.Limits)) ipc.Limits {
	l := testLimits
	f(&l)
	return l
}

// testCommand re-executes the test binary (the default command) with the
// race detector's exit delay off, plus env.
func testCommand(env ...string) func() (*exec.Cmd, error) {
	return func() (*exec.Cmd, error) {
		cmd, err := pool.DefaultCommand()
		if err != nil {
			return nil, err
		}
		cmd.Env = append([]string{"GORACE=atexit_sleep_ms=0"}, env...)
		return cmd, nil
	}
}

// startTimeout is the pools' StartTimeout: the default 10 s is for a
// production binary, and a worker of this test binary, built with -race
// on a loaded machine, may take longer to say hello.
func startTimeout() time.Duration { return testenv.ScaleDuration(10 * time.Second) }

type testWriter struct {
	mu sync.Mutex
	t  *testing.T
	on bool
}

func (w *testWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.on {
		w.t.Log(strings.TrimSpace(string(b)))
	}
	return len(b), nil
}

// newPool starts a pool for the test, waits until its workers are up and
// closes it at the end of the test.
func newPool(t testing.TB, cfg pool.Config) *pool.Pool {
	t.Helper()
	if cfg.Command == nil {
		cfg.Command = testCommand()
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = startTimeout()
	}
	if cfg.Grace == 0 {
		// A test that means the pool to kill a worker after Grace sets
		// a short one; elsewhere it is not meant to be crossed.
		cfg.Grace = testenv.ScaleDuration(time.Second)
	}
	if tt, ok := t.(*testing.T); ok && cfg.Logger == nil {
		tw := &testWriter{t: tt, on: true}
		cfg.Logger = slog.New(slog.NewTextHandler(tw, &slog.HandlerOptions{Level: slog.LevelDebug}))
		t.Cleanup(func() { tw.mu.Lock(); tw.on = false; tw.mu.Unlock() })
	}
	p, err := pool.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(10*time.Second))
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ready(t, p)
	return p
}

func ready(t testing.TB, p *pool.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(15*time.Second))
	defer cancel()
	if err := p.Ready(ctx); err != nil {
		t.Fatalf("Ready: %v (%+v)", err, p.Health())
	}
}

// recorder is a Host that keeps every event and answers data requests.
type recorder struct {
	mu      sync.Mutex
	events  []*ipc.Event
	replies chan ipc.Reply
	answer  func(*ipc.DataRequest) *ipc.Reply
	fetch   func(*ipc.FetchRequest) *ipc.Reply
	first   chan struct{} // closed at the first event
	once    sync.Once
}

func newRecorder() *recorder {
	return &recorder{replies: make(chan ipc.Reply, 100), first: make(chan struct{})}
}

func (h *recorder) Emit(ctx context.Context, ev *ipc.Event) error {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
	h.once.Do(func() { close(h.first) })
	if ev.DataRequest != nil && h.answer != nil {
		if rep := h.answer(ev.DataRequest); rep != nil {
			h.replies <- *rep
		}
	}
	if ev.FetchRequest != nil && h.fetch != nil {
		if rep := h.fetch(ev.FetchRequest); rep != nil {
			h.replies <- *rep
		}
	}
	return nil
}

func (h *recorder) list() []*ipc.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*ipc.Event(nil), h.events...)
}

func runStep(p *pool.Pool, ctx context.Context, code string, lim ipc.Limits, h *recorder) *ipc.Event {
	if h == nil {
		h = newRecorder()
	}
	return p.Run(ctx, jsrt.Job{Code: code, Input: json.RawMessage(`{"n":2}`), Limits: lim, Host: h, Replies: h.replies})
}

func expectResult(t *testing.T, ev *ipc.Event, want string) {
	t.Helper()
	if ev.Error != nil {
		t.Fatalf("want result %s, got error %+v", want, ev.Error)
	}
	if got := string(ev.Result.Value); got != want {
		t.Fatalf("result %s, want %s", got, want)
	}
}

func expectError(t *testing.T, ev *ipc.Event, code ipc.Code, limit string) *ipc.Failure {
	t.Helper()
	if ev.Error == nil {
		t.Fatalf("want %s, got result %s", code, ev.Result.Value)
	}
	if ev.Error.Code != code || ev.Error.Limit != limit {
		t.Fatalf("want %s (limit %q), got %+v", code, limit, ev.Error)
	}
	return ev.Error
}

func TestRunEndToEnd(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	h := newRecorder()
	h.answer = func(d *ipc.DataRequest) *ipc.Reply {
		return &ipc.Reply{ID: d.ID, Value: json.RawMessage(`{ "rows" : [` + strconv.Itoa(int(d.ID)) + `] }`)}
	}
	h.fetch = func(f *ipc.FetchRequest) *ipc.Reply { return &ipc.Reply{ID: f.ID, Error: "no network here"} }
	ev := runStep(p, context.Background(), `
		console.log("one");
		reportStatus({step: 1});
		const r = await dataProxy.request("query", {q: input.n});
		console.info("two", r.rows[0]);
		console.error("three");
		let f;
		try { await fetch("https://example.com/") } catch (e) { f = e.message }
		return {rows: r.rows, n: input.n, f};`, testLimits, h)
	expectResult(t, ev, `{"rows":[1],"n":2,"f":"fetch failed: no network here"}`)
	var got []string
	for _, e := range h.list() {
		switch e.Kind {
		case ipc.KindConsole:
			got = append(got, e.Console.Level+":"+e.Console.Text)
		case ipc.KindStatus:
			got = append(got, "status:"+string(e.Status))
		case ipc.KindDataRequest:
			got = append(got, fmt.Sprintf("request:%d:%s:%s", e.DataRequest.ID, e.DataRequest.Method, e.DataRequest.Params))
		case ipc.KindFetchRequest:
			got = append(got, fmt.Sprintf("fetch:%d", e.FetchRequest.ID))
		default:
			t.Fatalf("unexpected event %+v", e)
		}
	}
	want := []string{"log:one", `status:{"step":1}`, `request:1:query:{"q":2}`, "info:two 1", "error:three", "fetch:2"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	st := ev.Result.Stats
	// The host's own counts: 3 lines, 1 status (10 bytes), 1 request,
	// its params (7 bytes) and the compacted reply (12 bytes), 1 fetch.
	if st.ConsoleEvents != 3 || st.StatusEvents != 1 || st.DataRequests != 1 || st.DataBytes != 10+7+12 || st.FetchRequests != 1 {
		t.Fatalf("stats %+v", st)
	}
	if st.WallMs <= 0 || st.CPUMs < 0 || st.CPUMs > st.WallMs {
		t.Fatalf("times %+v", st)
	}
	// The worker is reused.
	expectResult(t, runStep(p, context.Background(), "return 1 + 1", testLimits, nil), "2")
	if hl := p.Health(); hl.Up != 1 || hl.Restarts != 0 || hl.Workers[0].Runs != 2 {
		t.Fatalf("health %+v", hl)
	}
}

// TestParity runs the same steps in-process and through the pool: the
// terminal events must agree (stats apart).
func TestParity(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	rt, err := jsrt.New(jsrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	cpu := limits(func(l *ipc.Limits) { l.CPUMs = 200 })
	wall := limits(func(l *ipc.Limits) { l.WallMs = 300 })
	cases := []struct {
		name, code string
		lim        ipc.Limits
	}{
		{"return", "return [input.n, 'x', {a: null}]", testLimits},
		{"undefined", "let x = 1", testLimits},
		{"throw", "throw new TypeError('bad')", testLimits},
		{"syntax", "return 1 +", testLimits},
		{"never", "await new Promise(() => {})", testLimits},
		{"cpu", "while (true) {}", cpu},
		{"wall", "await new Promise(r => setTimeout(r, 5000))", wall},
		{"oom", "const a = []; while (true) a.push('x'.repeat(1 << 20) + a.length)", limits(func(l *ipc.Limits) { l.MemoryMB = 16 })},
		{"status limit", "for (let i = 0; i < 11; i++) reportStatus(i)", testLimits},
		{"console limit", "for (let i = 0; i < 20; i++) console.log(i); return 'ok'", testLimits},
		{"console bytes", "console.log('x'.repeat(5000)); console.log('y'); return 'ok'", testLimits},
		{"data limit", "for (let i = 0; i < 11; i++) dataProxy.request('m', i)", testLimits},
		{"result limit", "return 'x'.repeat(2 << 20)", testLimits},
		{"code limit", "return 1", limits(func(l *ipc.Limits) { l.MaxCodeBytes = 3 })},
		{"deep result", "let a = []; for (let i = 0; i < 1000; i++) a = [a]; return a", testLimits},
		{"lone surrogate", `console.log("\uD800"); return "\uD800"`, testLimits},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h1, h2 := newRecorder(), newRecorder()
			want := rt.Run(context.Background(), jsrt.Job{Code: c.code, Input: json.RawMessage(`{"n":2}`), Limits: c.lim, Host: h1, Replies: h1.replies})
			got := runStep(p, context.Background(), c.code, c.lim, h2)
			strip := func(ev *ipc.Event) string {
				cp := *ev
				if cp.Result != nil {
					r := *cp.Result
					r.Stats = ipc.Stats{}
					cp.Result = &r
				}
				if cp.Error != nil {
					f := *cp.Error
					f.Stats = ipc.Stats{}
					cp.Error = &f
				}
				b, _ := json.Marshal(cp)
				return string(b)
			}
			if strip(got) != strip(want) {
				t.Fatalf("pool:\n%s\nin-process:\n%s", strip(got), strip(want))
			}
			if len(h1.list()) != len(h2.list()) {
				t.Fatalf("pool: %d events, in-process %d", len(h2.list()), len(h1.list()))
			}
			ws, gs := stats(want), stats(got)
			if ws.ConsoleEvents != gs.ConsoleEvents || ws.StatusEvents != gs.StatusEvents || ws.DataRequests != gs.DataRequests ||
				ws.DataBytes != gs.DataBytes || ws.ConsoleDropped != gs.ConsoleDropped {
				t.Fatalf("counters: pool %+v, in-process %+v", gs, ws)
			}
		})
	}
}

func stats(ev *ipc.Event) ipc.Stats {
	if ev.Result != nil {
		return ev.Result.Stats
	}
	return ev.Error.Stats
}

// TestKilledMidRun kills one worker while it runs a step: that run alone
// fails, and the pool is back to full size afterwards.
func TestKilledMidRun(t *testing.T) {
	p := newPool(t, pool.Config{Size: 2})
	h := newRecorder()
	done := make(chan *ipc.Event, 1)
	go func() {
		done <- runStep(p, context.Background(), "console.log('started'); while (true) {}", testLimits, h)
	}()
	<-h.first
	hl := p.Health()
	victim := 0
	for _, w := range hl.Workers {
		if w.Busy {
			victim = w.PID
		}
	}
	if victim == 0 {
		t.Fatalf("no busy worker: %+v", hl)
	}
	h2 := newRecorder()
	other := make(chan *ipc.Event, 1)
	go func() {
		other <- runStep(p, context.Background(), "console.log('b'); await new Promise(r => setTimeout(r, 300)); return 'b'", testLimits, h2)
	}()
	<-h2.first
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	f := expectError(t, <-done, ipc.CodeCrashed, "")
	if !strings.Contains(f.Message, "signal: killed") {
		t.Fatalf("message %q does not name the signal", f.Message)
	}
	expectResult(t, <-other, `"b"`)
	// Ready alone could return before the slot lets go of the dead
	// worker; the replacement is counted when it takes the slot.
	testenv.WaitFor(t, "the killed worker's replacement", func() bool { return p.Health().Restarts >= 1 })
	ready(t, p)
	if hl := p.Health(); hl.Up != 2 || hl.Restarts < 1 {
		t.Fatalf("health after the kill %+v", hl)
	}
	for _, w := range p.Health().Workers {
		if w.PID == victim {
			t.Fatalf("the killed worker %d is still listed", victim)
		}
	}
	expectResult(t, runStep(p, context.Background(), "return 3", testLimits, nil), "3")
}

func TestWorkerCrash(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	for _, c := range []struct{ fault, status string }{
		{"exit", "exit status 3"},
		{"segv", "exit status 2"},
	} {
		t.Run(c.fault, func(t *testing.T) {
			f := expectError(t, runStep(p, context.Background(), "//fault:"+c.fault, testLimits, nil), ipc.CodeCrashed, "")
			if !strings.Contains(f.Message, c.status) {
				t.Fatalf("message %q, want the exit status %q", f.Message, c.status)
			}
			expectResult(t, runStep(p, context.Background(), "return 1", testLimits, nil), "1")
		})
	}
}

// TestGraceKill: a worker that does not answer by wall + grace is killed.
func TestGraceKill(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1, Grace: 200 * time.Millisecond})
	lim := limits(func(l *ipc.Limits) { l.WallMs = 200 })
	f := expectError(t, runStep(p, context.Background(), "//fault:hang", lim, nil), ipc.CodeLimitExceeded, ipc.LimitTime)
	if f.Stats.WallMs < 400 {
		t.Fatalf("killed after %.0f ms, before wall + grace", f.Stats.WallMs)
	}
	expectResult(t, runStep(p, context.Background(), "return 'next'", testLimits, nil), `"next"`)
	if hl := p.Health(); hl.Restarts != 1 {
		t.Fatalf("health %+v", hl)
	}
}

// TestProtocolViolations: a worker that breaks the rules is killed and
// replaced, and its run fails with CRASHED.
func TestProtocolViolations(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	for _, c := range []struct{ fault, why string }{
		{"garbage", "bad frame"},
		{"oversize", "frame too large"},
		{"unknown", `unknown frame type "shell"`},
		{"foreign", "of run 4611686018427387904"},
		{"flood", "maxStatusEvents=10"},
		{"console-flood", "maxConsoleEvents=10"},
		{"bigresult", "maxResultBytes"},
		{"deepresult", "nested too deeply"},
		{"fetch", "fetch event"},
		{"fetch-flood", "maxFetchRequests=1"},
	} {
		t.Run(c.fault, func(t *testing.T) {
			before := p.Health().Restarts
			f := expectError(t, runStep(p, context.Background(), "//fault:"+c.fault, testLimits, nil), ipc.CodeCrashed, "")
			if !strings.Contains(f.Message, "broke the protocol") || !strings.Contains(f.Message, c.why) {
				t.Fatalf("message %q, want it to say %q", f.Message, c.why)
			}
			expectResult(t, runStep(p, context.Background(), "return 2", testLimits, nil), "2")
			if after := p.Health().Restarts; after != before+1 {
				t.Fatalf("restarts %d -> %d", before, after)
			}
		})
	}
}

// TestIdleViolation: a frame from an idle worker gets it killed and
// replaced; no run pays for it.
func TestIdleViolation(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	expectResult(t, runStep(p, context.Background(), "//fault:idle-junk", testLimits, nil), "1")
	testenv.WaitFor(t, "the worker to be replaced", func() bool { return p.Health().Restarts > 0 })
	ready(t, p)
	expectResult(t, runStep(p, context.Background(), "return 5", testLimits, nil), "5")
}

func TestAbort(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1, Grace: 200 * time.Millisecond})
	t.Run("mid-run", func(t *testing.T) {
		h := newRecorder()
		ctx, cancel := context.WithCancelCause(context.Background())
		go func() { <-h.first; cancel(errors.New("the user pressed stop")) }()
		f := expectError(t, runStep(p, ctx, "console.log('go'); while (true) {}", testLimits, h), ipc.CodeAborted, "")
		if f.Message != "the run was aborted: the user pressed stop" {
			t.Fatalf("message %q", f.Message)
		}
	})
	t.Run("canceled", func(t *testing.T) {
		h := newRecorder()
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-h.first; cancel() }()
		f := expectError(t, runStep(p, ctx, "console.log('go'); await new Promise(r => setTimeout(r, 60000))", testLimits, h), ipc.CodeAborted, "")
		if f.Message != "the run was aborted" {
			t.Fatalf("message %q", f.Message)
		}
	})
	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		expectError(t, runStep(p, ctx, "return 1", testLimits, nil), ipc.CodeAborted, "")
	})
	t.Run("ignored", func(t *testing.T) {
		// The worker reports a status, then ignores the abort: the pool
		// kills it Grace after the abort.
		h := newRecorder()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-h.first:
			case <-ctx.Done():
			}
			cancel()
		}()
		expectError(t, runStep(p, ctx, "//fault:hang", testLimits, h), ipc.CodeAborted, "")
		if len(h.list()) == 0 {
			t.Fatal("the run ended before it started")
		}
	})
	expectResult(t, runStep(p, context.Background(), "return 'after'", testLimits, nil), `"after"`)
}

// blockingHost never takes an event: Emit waits for ctx.
type blockingHost struct{}

func (blockingHost) Emit(ctx context.Context, ev *ipc.Event) error {
	<-ctx.Done()
	return ctx.Err()
}

// failingHost refuses every event.
type failingHost struct{}

func (failingHost) Emit(ctx context.Context, ev *ipc.Event) error { return errors.New("consumer gone") }

// signalHost never takes an event, like blockingHost, and closes blocked
// when the first Emit waits.
type signalHost struct{ blocked chan struct{} }

func (h signalHost) Emit(ctx context.Context, ev *ipc.Event) error {
	select {
	case <-h.blocked:
	default:
		close(h.blocked)
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestAbortBeforeEventsTaken: the caller aborts while the host waits for
// it to take an event, and the worker has already finished the step into
// the pipe. The run ends ABORTED, as in-process, where the step would be
// blocked delivering that event; the result the caller never got does not
// win.
func TestAbortBeforeEventsTaken(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	h := signalHost{blocked: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-h.blocked; cancel() }()
	ev := p.Run(ctx, jsrt.Job{Code: "//fault:burst", Limits: testLimits, Host: h})
	expectError(t, ev, ipc.CodeAborted, "")
}

// TestHostBackpressure: a caller that stops taking events holds its run
// back; the run still ends at its wall limit, as in-process.
func TestHostBackpressure(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	chatty := limits(func(l *ipc.Limits) { l.MaxConsoleEvents = 1 << 20; l.MaxConsoleBytes = 1 << 30 })
	lim := chatty
	lim.WallMs = 300
	code := `for (let i = 0; ; i++) console.log("x".repeat(100))`
	ev := p.Run(context.Background(), jsrt.Job{Code: code, Limits: lim, Host: blockingHost{}})
	expectError(t, ev, ipc.CodeTimeout, ipc.LimitWall)
	// No wall limit to race: the first event ends the run.
	ev = p.Run(context.Background(), jsrt.Job{Code: code, Limits: chatty, Host: failingHost{}})
	f := expectError(t, ev, ipc.CodeAborted, "")
	if f.Message != "the host stopped taking events: consumer gone" {
		t.Fatalf("message %q", f.Message)
	}
	expectResult(t, runStep(p, context.Background(), "return 7", testLimits, nil), "7")
}

func TestReplies(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	h := newRecorder()
	h.answer = func(d *ipc.DataRequest) *ipc.Reply {
		switch d.Method {
		case "bad":
			return &ipc.Reply{ID: d.ID, Value: json.RawMessage(`{nope`)}
		case "err":
			return &ipc.Reply{ID: d.ID, Error: "denied"}
		}
		return &ipc.Reply{ID: d.ID}
	}
	ev := runStep(p, context.Background(), `
		const out = [];
		for (const m of ["bad", "err", "empty"]) {
			try { out.push(await dataProxy.request(m)) } catch (e) { out.push(e.message) }
		}
		return out`, testLimits, h)
	expectResult(t, ev, `["the reply is not valid JSON","denied",null]`)
}

func TestUnavailable(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		p := newPool(t, pool.Config{Size: 1})
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		expectError(t, runStep(p, context.Background(), "return 1", testLimits, nil), ipc.CodeUnavailable, "")
		if err := p.Ready(context.Background()); !errors.Is(err, pool.ErrClosed) {
			t.Fatalf("Ready after Close: %v", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		p := newPool(t, pool.Config{Size: 1, MaxFrameBytes: 64 << 10})
		ev := p.Run(context.Background(), jsrt.Job{Code: "return 1", Input: json.RawMessage(`"` + strings.Repeat("x", 70<<10) + `"`), Limits: testLimits})
		expectError(t, ev, ipc.CodeValidation, ipc.LimitFrameBytes)
		ev = p.Run(context.Background(), jsrt.Job{Code: "return 'x'.repeat(70 << 10)", Limits: testLimits})
		expectError(t, ev, ipc.CodeLimitExceeded, ipc.LimitFrameBytes)
		expectResult(t, runStep(p, context.Background(), "return 1", testLimits, nil), "1")
	})
}

func TestConfig(t *testing.T) {
	_, err := pool.New(pool.Config{Size: -1, Grace: -1, MaxFrameBytes: 10})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"Size=-1", "Grace=-1", "MaxFrameBytes=10"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

// TestCrashLoop: workers that die at start are retried with exponential
// backoff, reported in Health, and runs are refused rather than left
// waiting.
func TestCrashLoop(t *testing.T) {
	base := children(t)
	p, err := pool.New(pool.Config{Size: 1, Command: testCommand(envFault + "=exit-at-start")})
	if err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, "the slot to be reported failing", func() bool { return p.Health().Failing > 0 })
	h := p.Health()
	if h.Up != 0 || h.Restarts < 2 || !strings.Contains(h.LastError, "exited before its hello") || !strings.Contains(h.LastError, "exit status 3") {
		t.Fatalf("health %+v", h)
	}
	// No spinning: the slot has failed at least 3 times, so after the
	// start that may be under way now each retry waits at least 400 ms,
	// then 800 ms: three more starts take 1.2 s at the very least, on a
	// machine of any speed.
	start := time.Now()
	testenv.WaitFor(t, "three more starts", func() bool { return p.Health().Restarts >= h.Restarts+3 })
	if took := time.Since(start); took < 1200*time.Millisecond {
		t.Fatalf("three restarts in %v of backoff", took)
	}
	ev := runStep(p, context.Background(), "return 1", testLimits, nil)
	f := expectError(t, ev, ipc.CodeUnavailable, "")
	if !strings.Contains(f.Message, "no worker process could be started") {
		t.Fatalf("message %q", f.Message)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	expectChildren(t, base)
}

// TestClose: runs in flight when Close's ctx ends are aborted, each with
// exactly one terminal event; no process is left behind.
func TestClose(t *testing.T) {
	base := children(t)
	p, err := pool.New(pool.Config{Size: 2, StartTimeout: startTimeout(), Command: testCommand()})
	if err != nil {
		t.Fatal(err)
	}
	ready(t, p)
	var wg sync.WaitGroup
	results := make(chan *ipc.Event, 3)
	started := make(chan struct{}, 3)
	for _, code := range []string{
		"console.log('a'); await new Promise(r => setTimeout(r, 60000))",
		"console.log('b'); while (true) {}",
	} {
		wg.Add(1) // Done when the run returns.
		go func() {
			defer wg.Done()
			h := newRecorder()
			go func() { <-h.first; started <- struct{}{} }()
			results <- runStep(p, context.Background(), code, testLimits, h)
		}()
	}
	<-started
	<-started
	// A third run finishes before Close returns: Close lets it.
	wg.Add(1) // Done when the run returns.
	go func() {
		defer wg.Done()
		results <- runStep(p, context.Background(), "return 'late'", testLimits, nil)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()
	close(results)
	var codes []string
	for ev := range results {
		if ev.Error != nil {
			codes = append(codes, string(ev.Error.Code))
		} else {
			codes = append(codes, string(ev.Result.Value))
		}
	}
	if len(codes) != 3 || strings.Count(strings.Join(codes, " "), "ABORTED") < 2 {
		t.Fatalf("terminals %q", codes)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	expectChildren(t, base)
	if h := p.Health(); h.Up != 0 {
		t.Fatalf("health after Close %+v", h)
	}
}

// TestPing: idle workers answer pings and stay.
func TestPing(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1, PingInterval: 20 * time.Millisecond})
	// A worker replaced for a missed ping would start counting again.
	testenv.WaitFor(t, "ten pings answered", func() bool { return pool.LastPong(p) >= 10 })
	if h := p.Health(); h.Restarts != 0 || h.Up != 1 {
		t.Fatalf("health %+v", h)
	}
	expectResult(t, runStep(p, context.Background(), "return 1", testLimits, nil), "1")
}

// TestHammer: many mixed runs through a pool of 2; every run ends with
// exactly one terminal event of the expected kind, and goroutines,
// descriptors and child processes are back to their baseline afterwards.
func TestHammer(t *testing.T) {
	n := 500
	if testing.Short() {
		n = 100
	}
	baseG, baseFD, baseKids := runtime.NumGoroutine(), openFDs(t), children(t)
	p, err := pool.New(pool.Config{Size: 2, Grace: testenv.ScaleDuration(2 * time.Second), StartTimeout: startTimeout(), Command: testCommand()})
	if err != nil {
		t.Fatal(err)
	}
	ready(t, p)
	type kind struct {
		name string
		code string
		lim  ipc.Limits
		want []string
	}
	short := limits(func(l *ipc.Limits) { l.WallMs = 50 })
	kinds := []kind{
		{"ok", "console.log(input.n); return input.n * 2", testLimits, []string{"4"}},
		{"throw", "throw new Error('x')", testLimits, []string{"RUNTIME"}},
		{"timeout", "while (true) {}", short, []string{"TIMEOUT"}},
		{"abort", "while (true) {}", testLimits, []string{"ABORTED"}},
		{"killed", "//fault:exit", testLimits, []string{"CRASHED"}},
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	sem := make(chan struct{}, 6)
	for i := range n {
		k := kinds[i%len(kinds)]
		if k.name == "killed" && i%4 != 0 {
			k = kinds[0] // kill a worker every 20 runs
		}
		wg.Add(1) // Done when the run returns.
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ctx := context.Background()
			if k.name == "abort" {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(i%7)*5*time.Millisecond)
				defer cancel()
			}
			h := newRecorder()
			ev := runStep(p, ctx, k.code, k.lim, h)
			got := ""
			switch {
			case ev == nil || !ev.Terminal():
				t.Errorf("run %d (%s): not a terminal event: %+v", i, k.name, ev)
				return
			case ev.Error != nil:
				got = string(ev.Error.Code)
			default:
				got = string(ev.Result.Value)
			}
			for _, e := range h.list() {
				if e.Terminal() {
					t.Errorf("run %d: a terminal event was emitted", i)
				}
			}
			ok := false
			for _, w := range k.want {
				ok = ok || w == got
			}
			// Known jsrt issue, not the pool's: when QuickJS's own eval
			// deadline fires before jsrt's wall timer (a loaded machine),
			// the step sees "interrupted" as a rejection and the run ends
			// RUNTIME instead of TIMEOUT. It happens in-process too.
			if k.name == "timeout" && got == "RUNTIME" && ev.Error.Message == "InternalError: interrupted" {
				ok = true
			}
			if !ok {
				t.Errorf("run %d (%s): got %s (%+v), want %v", i, k.name, got, ev.Error, k.want)
			}
			mu.Lock()
			counts[k.name]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("runs: %v; health %+v", counts, p.Health())
	ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(10*time.Second))
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	expectChildren(t, baseKids)
	var g, fds int
	settled := false
	defer func() {
		if !settled {
			buf := make([]byte, 1<<20)
			t.Logf("goroutines %d (baseline %d), descriptors %d (baseline %d)\n%s", g, baseG, fds, baseFD, buf[:runtime.Stack(buf, true)])
		}
	}()
	testenv.WaitFor(t, "goroutines and descriptors back to their baseline", func() bool {
		g, fds = runtime.NumGoroutine(), openFDs(t)
		settled = g <= baseG && fds <= baseFD
		return settled
	})
}

func openFDs(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// children lists this process's child processes, zombies included, as
// "pid state" strings.
func children(t testing.TB) []string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may contain anything but ends at the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 2 && f[1] == me {
			out = append(out, e.Name()+" "+f[0])
		}
	}
	return out
}

// expectChildren waits until this process's children are those in base.
func expectChildren(t testing.TB, base []string) {
	t.Helper()
	var extra []string
	defer func() {
		if len(extra) > 0 {
			t.Logf("child processes left behind (pid state): %v", extra)
		}
	}()
	testenv.WaitFor(t, "the child processes to be gone", func() bool {
		extra = extra[:0]
		for _, k := range children(t) {
			if !slices.Contains(base, k) {
				extra = append(extra, k)
			}
		}
		return len(extra) == 0
	})
}

// TestIdleWorkerKilled: a run handed a worker that was killed while idle,
// before the host saw it die, goes to another worker instead of failing:
// the step never started.
func TestIdleWorkerKilled(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	for i := range 20 {
		ready(t, p)
		hl := p.Health()
		if len(hl.Workers) != 1 {
			t.Fatalf("health %+v", hl)
		}
		if err := syscall.Kill(hl.Workers[0].PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		expectResult(t, runStep(p, context.Background(), "return "+strconv.Itoa(i), testLimits, nil), strconv.Itoa(i))
	}
}

// TestOverrunReplacesWorker: a step stuck forever in one native call is
// ended at its CPU limit by its worker, which then exits: the run is
// TIMEOUT cpuMs (not LIMIT_EXCEEDED "time" at wall + Grace, as before, nor
// CRASHED), within the CPU margin, and the worker is replaced.
func TestOverrunReplacesWorker(t *testing.T) {
	p := newPool(t, pool.Config{Size: 1})
	lim := limits(func(l *ipc.Limits) { l.CPUMs = 100 })
	f := expectError(t, runStep(p, context.Background(), "return Array.prototype.indexOf.call({length: 2 ** 53 - 1}, 1)", lim, nil), ipc.CodeTimeout, ipc.LimitCPU)
	bound := 120.0 // 10% and 10 ms
	if testenv.Race {
		bound = 200 // the watchdog's timers run late under the race detector
	}
	if f.Stats.CPUMs < 100 || f.Stats.CPUMs > bound {
		t.Errorf("the run used %.1f ms of CPU; want 100 to %.0f", f.Stats.CPUMs, bound)
	}
	testenv.WaitFor(t, "the worker's replacement", func() bool { return p.Health().Restarts >= 1 })
	ready(t, p)
	expectResult(t, runStep(p, context.Background(), "return 'next'", testLimits, nil), `"next"`)
	if hl := p.Health(); hl.Restarts != 1 || hl.LastError != "" {
		t.Fatalf("health %+v", hl)
	}
}
