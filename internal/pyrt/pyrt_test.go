//go:build linux

package pyrt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/pool"
	"github.com/stepbox/stepbox/internal/pyrt"
	"github.com/stepbox/stepbox/internal/testenv"
)

// testLimits has time limits no run reaches: a test that crosses one sets
// it, for a step that never ends by itself.
var testLimits = ipc.Limits{
	MemoryMB: 64, CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs, MaxCodeBytes: 1 << 20, MaxResultBytes: 1 << 20,
	MaxDataRequests: 10, MaxDataBytes: 1 << 20, MaxStatusEvents: 10, MaxConsoleEvents: 10,
	MaxConsoleBytes: 4096, MaxFetchRequests: 2, MaxFetchBytes: 1 << 20,
}

// requirePython skips when Python cannot run jailed here, unless it is
// required (testenv.RequireJail: as root, as CI runs).
func requirePython(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if testenv.RequireJail() || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Python is unavailable: %v", err)
	}
	t.Skipf("Python is unavailable here: %v", err)
}

// runtime runs Python steps the way the engine does: through a pool of one
// jailed worker, which the pool gives a zygote of its own at its first
// Python run; module calls run in that worker.
type runtime struct {
	p *pool.Pool
	l *pyrt.Launcher
}

// Run runs job as Python.
func (r *runtime) Run(ctx context.Context, job pyrt.Job) *ipc.Event {
	job.Language = ipc.LanguagePython
	return r.p.Run(ctx, job)
}

// Close aborts the runs in progress and stops the worker and its zygote.
func (r *runtime) Close() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = r.p.Close(ctx)
}

// zygotePID returns the host pid of the worker's zygote, or 0 before its
// first Python run.
func (r *runtime) zygotePID() int {
	for _, w := range r.p.Health().Workers {
		if w.Zygote != nil && w.Zygote.Up {
			return w.Zygote.PID
		}
	}
	return 0
}

// retired returns how many workers (and their zygotes) were replaced
// because they must serve no other run, and why the last one was.
func (r *runtime) retired() (int, string) {
	h := r.p.Health()
	return h.Retired, h.LastRetired
}

var (
	sharedMu sync.Mutex
	sharedRT *runtime
)

// shared returns the runtime most tests use (runs take turns anyway).
func shared(t testing.TB) *runtime {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedRT == nil {
		sharedRT = startRuntime(t, pyrt.Config{}, "")
	}
	return sharedRT
}

func closeShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if sharedRT != nil {
		sharedRT.Close()
		sharedRT = nil
	}
}

// withTestDefaults gives cfg a StartTimeout for this test binary: the
// default (15 s) is for a production binary, and a zygote launched from a
// -race test binary on a loaded machine may take longer.
func withTestDefaults(cfg pyrt.Config) pyrt.Config {
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = testenv.ScaleDuration(pyrt.DefaultStartTimeout)
	}
	return cfg
}

func newRuntime(t testing.TB, cfg pyrt.Config) *runtime {
	t.Helper()
	rt := startRuntime(t, cfg, "")
	t.Cleanup(rt.Close)
	return rt
}

// startRuntime starts a pool of one jailed worker with a launcher for
// cfg; leaky, if set, is a name in /tmp that its zygotes' cleaner leaves
// alone (pyrt.NewLeakyLauncher).
func startRuntime(t testing.TB, cfg pyrt.Config, leaky string) *runtime {
	t.Helper()
	var l *pyrt.Launcher
	var err error
	if leaky != "" {
		l, err = pyrt.NewLeakyLauncher(withTestDefaults(cfg), leaky)
	} else {
		l, err = pyrt.NewLauncher(withTestDefaults(cfg))
	}
	requirePython(t, err)
	rt := poolFor(t, l)
	// The worker starts its zygote at its first Python run: tests look at
	// the zygote from the start.
	h := &recorder{replies: make(chan ipc.Reply, 1)}
	if ev := rt.Run(context.Background(), pyrt.Job{Code: "return None", Limits: testLimits, Host: h, Replies: h.replies}); ev.Kind != ipc.KindResult {
		rt.Close()
		if ev.Error.Code == ipc.CodeUnavailable && !testenv.RequireJail() {
			t.Skipf("Python is unavailable here: %s", ev.Error.Message)
		}
		t.Fatalf("the first run: %s", describe(ev))
	}
	return rt
}

// poolFor starts a pool of one jailed worker whose zygotes l starts.
func poolFor(t testing.TB, l *pyrt.Launcher) *runtime {
	t.Helper()
	jc := jail.Config{ReadOnlyBinds: jail.SystemLibraryBinds(), MemoryBytes: 2 << 30}
	p, err := pool.New(pool.Config{
		Size: 1, Warm: -1,
		StartTimeout: testenv.ScaleDuration(pool.DefaultStartTimeout),
		Grace:        testenv.ScaleDuration(pool.DefaultGrace),
		Python:       func() (*pyrt.Launcher, error) { return l, nil },
		Prepare: func(cmd *exec.Cmd, _ pool.HostID) (pool.Handle, error) {
			h, err := jail.Prepare(cmd, jc)
			if err != nil {
				return nil, err
			}
			return h, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &runtime{p: p, l: l}
}

// socketLister returns a function that lists the named unix sockets in
// the network namespace of the runtime's current zygote, as the host's
// check after each run does; it may be called while a run is in progress.
func (r *runtime) socketLister() func() ([]string, error) {
	path := "/proc/" + strconv.Itoa(r.zygotePID()) + "/net/unix"
	return func() ([]string, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return pyrt.NamedUnixSockets(string(data))
	}
}

// recorder is a Host that keeps every event and answers requests through
// answer, if set. onFirst, if set, is called at the first event: the step
// is running.
type recorder struct {
	mu      sync.Mutex
	events  []*ipc.Event
	replies chan ipc.Reply
	answer  func(*ipc.Event) *ipc.Reply
	onFirst func()
	once    sync.Once
}

func (h *recorder) Emit(ctx context.Context, ev *ipc.Event) error {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
	if h.onFirst != nil {
		h.once.Do(h.onFirst)
	}
	if h.answer != nil && (ev.DataRequest != nil || ev.FetchRequest != nil) {
		if rep := h.answer(ev); rep != nil {
			h.replies <- *rep
		}
	}
	return nil
}

func (h *recorder) kinds() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, ev := range h.events {
		s := string(ev.Kind)
		switch {
		case ev.Console != nil:
			s += ":" + ev.Console.Level + ":" + ev.Console.Text
		case ev.Status != nil:
			s += ":" + string(ev.Status)
		}
		out = append(out, s)
	}
	return strings.Join(out, "|")
}

func runStep(t testing.TB, rt *runtime, code string, lim ipc.Limits, h *recorder) *ipc.Event {
	t.Helper()
	return runStepCtx(context.Background(), t, rt, code, lim, h)
}

func runStepCtx(ctx context.Context, t testing.TB, rt *runtime, code string, lim ipc.Limits, h *recorder) *ipc.Event {
	t.Helper()
	if h == nil {
		h = &recorder{}
	}
	h.replies = make(chan ipc.Reply, 100)
	ev := rt.Run(ctx, pyrt.Job{Code: code, Input: json.RawMessage(`{"n":2}`), Limits: lim, Host: h, Replies: h.replies})
	if ev == nil || !ev.Terminal() {
		t.Fatalf("Run returned %+v, not a terminal event", ev)
	}
	return ev
}

func describe(ev *ipc.Event) string {
	b, _ := json.Marshal(ev)
	return string(b)
}

func expectResult(t *testing.T, ev *ipc.Event, want string) {
	t.Helper()
	if ev.Kind != ipc.KindResult {
		t.Fatalf("got %s, want result %s", describe(ev), want)
	}
	if got := string(ev.Result.Value); got != want {
		t.Fatalf("result %s, want %s", got, want)
	}
}

func expectError(t *testing.T, ev *ipc.Event, code ipc.Code, limit string) *ipc.Failure {
	t.Helper()
	if ev.Kind != ipc.KindError || ev.Error.Code != code || ev.Error.Limit != limit {
		t.Fatalf("got %s, want error %s (limit %q)", describe(ev), code, limit)
	}
	return ev.Error
}

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

// checkNoLeftovers fails unless the zygote's only process besides itself
// is, once it has forked it, the spare for the next run: whatever a run
// started is gone.
func checkNoLeftovers(t *testing.T, rt *runtime) {
	t.Helper()
	z := rt.zygotePID()
	var d []int
	testenv.WaitFor(t, "the zygote's spare and nothing else", func() bool {
		d = descendants(z)
		return len(d) == 1
	})
}

func TestBasics(t *testing.T) {
	rt := shared(t)
	cases := []struct {
		name, code, want string
		code2            ipc.Code
		limit            string
	}{
		{name: "return", code: "return 1 + input['n']", want: "3"},
		{name: "none", code: "x = 1", want: "null"},
		{name: "value", code: "return [1, 'a', {'b': True, 'c': None}, 2.5]", want: `[1,"a",{"b":true,"c":null},2.5]`},
		{name: "unicode", code: "return 'héllo ✓'", want: `"héllo ✓"`},
		{name: "await", code: "import asyncio\nawait asyncio.sleep(0.01)\nreturn 'ok'", want: `"ok"`},
		{name: "gather", code: "import asyncio\nasync def f(x):\n    await asyncio.sleep(0.001)\n    return x * 2\nreturn await asyncio.gather(f(1), f(2))", want: "[2,4]"},
		{name: "closure", code: "k = 3\ndef f(x):\n    return x * k\nreturn [f(i) for i in range(3)]", want: "[0,3,6]"},
		{name: "recursive function", code: "def fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\nreturn fact(10)", want: "3628800"},
		{name: "class", code: "class P:\n    def __init__(self, x):\n        self.x = x\nreturn P(4).x", want: "4"},
		{name: "global", code: "global g\ng = 5\ndef f():\n    return g\nreturn f()", want: "5"},
		{name: "import star", code: "from math import *\ndef f():\n    return floor(2.5)\nreturn f() + floor(1.5)", want: "3"},
		{name: "future", code: "from __future__ import annotations\ndef f(x: Undefined) -> int:\n    return x\nreturn f(1)", want: "1"},
		{name: "preloaded", code: "import json, re, datetime, decimal, statistics, math, collections, itertools, functools\nreturn statistics.mean([1, 2, 3])", want: "2"},
		{name: "tmp", code: "import tempfile, os\nwith tempfile.NamedTemporaryFile('w', delete=False) as f:\n    f.write('x')\nreturn os.path.getsize(f.name)", want: "1"},
		{name: "random", code: "import random\nreturn 0 <= random.random() < 1", want: "true"},
		{name: "throw", code: "raise ValueError('bad')", code2: ipc.CodeRuntime},
		{name: "syntax", code: "return 1 +", code2: ipc.CodeValidation},
		{name: "indentation", code: "if True:\nreturn 1", code2: ipc.CodeValidation},
		{name: "yield", code: "yield 1", code2: ipc.CodeValidation},
		{name: "future unknown", code: "from __future__ import nope", code2: ipc.CodeValidation},
		{name: "not json", code: "return {1, 2}", code2: ipc.CodeRuntime},
		{name: "nan", code: "return float('nan')", code2: ipc.CodeRuntime},
		{name: "cycle", code: "a = []\na.append(a)\nreturn a", code2: ipc.CodeRuntime},
		{name: "deep", code: "a = []\nfor i in range(100000):\n    a = [a]\nreturn a", code2: ipc.CodeRuntime, limit: ipc.LimitJSONDepth},
		{name: "depth 600", code: "a = []\nfor i in range(600):\n    a = [a]\nreturn a", code2: ipc.CodeRuntime, limit: ipc.LimitJSONDepth},
		{name: "recursion", code: "def f():\n    return f() + 1\nreturn f()", code2: ipc.CodeRuntime, limit: ipc.LimitStackDepth},
		{name: "never", code: "import asyncio\nawait asyncio.get_running_loop().create_future()", code2: ipc.CodeRuntime},
		{name: "exit", code: "import sys\nsys.exit(3)", code2: ipc.CodeRuntime},
		{name: "os exit", code: "import os\nos._exit(3)", code2: ipc.CodeRuntime},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := runStep(t, rt, c.code, testLimits, nil)
			if c.code2 == "" {
				expectResult(t, ev, c.want)
				return
			}
			expectError(t, ev, c.code2, c.limit)
		})
	}
}

func TestTraceback(t *testing.T) {
	rt := shared(t)
	code := "x = 1\n\ndef f(d):\n    return d['missing']\n\nreturn f({})\n"
	f := expectError(t, runStep(t, rt, code, testLimits, nil), ipc.CodeRuntime, "")
	if f.Message != "KeyError: 'missing'" || f.Name != "KeyError" {
		t.Errorf("message %q name %q", f.Message, f.Name)
	}
	if f.Position == nil || f.Position.Line != 4 || f.Position.Column != 12 {
		t.Errorf("position %+v, want 4:12", f.Position)
	}
	for _, want := range []string{`File "step.py", line 6, in <module>`, `File "step.py", line 4, in f`, "return d['missing']", "KeyError: 'missing'"} {
		if !strings.Contains(f.Stack, want) {
			t.Errorf("stack lacks %q:\n%s", want, f.Stack)
		}
	}
	if strings.Contains(f.Stack, "stepbox") || strings.Contains(f.Stack, "__step__") {
		t.Errorf("stack shows the prelude:\n%s", f.Stack)
	}

	// A library's frames stay; chained exceptions keep the step's lines.
	code = "import json\ntry:\n    json.loads('{')\nexcept ValueError as e:\n    raise RuntimeError('wrapped') from e\n"
	f = expectError(t, runStep(t, rt, code, testLimits, nil), ipc.CodeRuntime, "")
	if f.Message != "RuntimeError: wrapped" || f.Position == nil || f.Position.Line != 5 {
		t.Errorf("message %q position %+v", f.Message, f.Position)
	}
	for _, want := range []string{"json/decoder.py", `File "step.py", line 3, in <module>`, "json.decoder.JSONDecodeError", "direct cause"} {
		if !strings.Contains(f.Stack, want) {
			t.Errorf("stack lacks %q:\n%s", want, f.Stack)
		}
	}
}

func TestSyntaxError(t *testing.T) {
	rt := shared(t)
	cases := []struct {
		name, code string
		line, col  int
	}{
		{"unfinished", "x = 1\nreturn x +\n", 2, 11},
		{"unclosed", "x = (1,\ny = 2\n", 1, 5},
		{"return in class", "class A:\n    return 1\n", 2, 5},
		{"yield", "x = 1\ny = yield x\n", 2, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := expectError(t, runStep(t, rt, c.code, testLimits, nil), ipc.CodeValidation, "")
			if f.Position == nil || f.Position.Line != c.line || f.Position.Column != c.col {
				t.Errorf("position %+v, want %d:%d (%s)", f.Position, c.line, c.col, f.Message)
			}
			if !strings.HasPrefix(f.Message, "SyntaxError: ") {
				t.Errorf("message %q", f.Message)
			}
		})
	}
}

func TestEvents(t *testing.T) {
	rt := shared(t)
	h := &recorder{}
	code := `import logging, sys
print("one", 1)
report_status({"pct": 50})
print("part", end="")
logging.info("info %d", 2)
logging.warning("careful")
sys.stderr.write("oops\n")
logging.getLogger("x").error("bad")
print("multi\nline")
logging.debug("hidden")
report_status("done")
print("tail", end="")
return None`
	expectResult(t, runStep(t, rt, code, testLimits, h), "null")
	want := `console:log:one 1|status:{"pct":50}|console:log:part|console:info:info 2|console:warn:careful|` +
		`console:error:oops|console:error:bad|console:log:multi` + "\n" + `line|status:"done"|console:log:tail`
	if got := h.kinds(); got != want {
		t.Errorf("events\n%s\nwant\n%s", got, want)
	}
}

func TestDataRequest(t *testing.T) {
	rt := shared(t)
	h := &recorder{answer: func(ev *ipc.Event) *ipc.Reply {
		r := ev.DataRequest
		switch r.Method {
		case "fail":
			return &ipc.Reply{ID: r.ID, Error: "no such record"}
		case "echo":
			return &ipc.Reply{ID: r.ID, Value: json.RawMessage(fmt.Sprintf(`{"method":%q,"params":%s}`, r.Method, r.Params))}
		}
		return &ipc.Reply{ID: r.ID, Value: json.RawMessage(`[1, 2,
 3]`)}
	}}
	code := `import asyncio
a = await data_proxy.request("echo", {"q": "x"})
b, c = await asyncio.gather(data_proxy.request("list"), data_proxy.request("echo", [1]))
try:
    await data_proxy.request("fail", None)
except DataProxyError as e:
    err = str(e)
return [a, b, c, err]`
	ev := runStep(t, rt, code, testLimits, h)
	expectResult(t, ev, `[{"method":"echo","params":{"q":"x"}},[1,2,3],{"method":"echo","params":[1]},"no such record"]`)
	var ids []int64
	for _, e := range h.events {
		if e.DataRequest != nil {
			ids = append(ids, e.DataRequest.ID)
		}
	}
	if fmt.Sprint(ids) != "[1 2 3 4]" {
		t.Errorf("request ids %v", ids)
	}
	if st := ev.Result.Stats; st.DataRequests != 4 || st.DataBytes == 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestFetch(t *testing.T) {
	rt := shared(t)
	var got []json.RawMessage
	h := &recorder{answer: func(ev *ipc.Event) *ipc.Reply {
		r := ev.FetchRequest
		got = append(got, r.Request)
		if strings.Contains(string(r.Request), "denied.example") {
			return &ipc.Reply{ID: r.ID, Error: "egress: host denied.example is not allowed"}
		}
		return &ipc.Reply{ID: r.ID, Value: json.RawMessage(`{"status":201,"statusText":"Created",
			"headers":[["content-type","application/json"],["x-a","1"],["x-a","2"]],
			"body":"{\"ok\": true}","url":"https://api.example.com/items","redirected":false}`)}
	}}
	code := `r = await fetch("https://api.example.com/items", method="POST", headers={"X-Token": "t"}, json={"a": 1})
try:
    await fetch("https://denied.example/")
except FetchError as e:
    err = str(e)
return [r.status, r.ok, r.status_text, r.headers["Content-Type"], r.headers.get("x-a"), r.url, r.json(), r.text(), err]`
	expectResult(t, runStep(t, rt, code, testLimits, h),
		`[201,true,"Created","application/json","1, 2","https://api.example.com/items",{"ok":true},"{\"ok\": true}","fetch failed: egress: host denied.example is not allowed"]`)
	if len(got) != 2 {
		t.Fatalf("%d fetch requests", len(got))
	}
	want := `{"url":"https://api.example.com/items","method":"POST","headers":[["x-token","t"],["content-type","application/json"]],"body":"{\"a\":1}"}`
	if string(got[0]) != want {
		t.Errorf("request\n%s\nwant\n%s", got[0], want)
	}
	for _, ev := range h.events {
		if ev.Kind == ipc.KindFetchRequest && ev.FetchRequest.ID == 0 {
			t.Errorf("fetch request without an id")
		}
	}

	// The host's FetchProxy ends the run when a fetch crosses its limits.
	h = &recorder{answer: func(ev *ipc.Event) *ipc.Reply {
		return &ipc.Reply{ID: ev.FetchRequest.ID, Limit: ipc.LimitFetchBytes, Error: "limit exceeded: maxFetchBytes=10"}
	}}
	code = "try:\n    await fetch('https://api.example.com/big')\nexcept Exception:\n    return 'caught'"
	expectError(t, runStep(t, rt, code, testLimits, h), ipc.CodeLimitExceeded, ipc.LimitFetchBytes)

	// Binary bodies travel as base64 both ways.
	h = &recorder{answer: func(ev *ipc.Event) *ipc.Reply {
		var req struct{ Body, BodyEncoding string }
		json.Unmarshal(ev.FetchRequest.Request, &req)
		return &ipc.Reply{ID: ev.FetchRequest.ID, Value: json.RawMessage(fmt.Sprintf(
			`{"status":200,"headers":[],"body":%q,"bodyEncoding":%q,"url":"u"}`, req.Body, req.BodyEncoding))}
	}}
	expectResult(t, runStep(t, rt, "r = await fetch('https://x.example', method='PUT', body=bytes([0, 255, 1]))\nreturn list(r.content)", testLimits, h), "[0,255,1]")
}

func TestLimits(t *testing.T) {
	rt := shared(t)
	lim := testLimits
	answer := func(ev *ipc.Event) *ipc.Reply {
		if ev.DataRequest != nil {
			return &ipc.Reply{ID: ev.DataRequest.ID, Value: json.RawMessage(`"` + strings.Repeat("x", 600) + `"`)}
		}
		return &ipc.Reply{ID: ev.FetchRequest.ID, Value: json.RawMessage(`{"status":200,"headers":[],"body":"","url":"u"}`)}
	}

	t.Run("maxResultBytes", func(t *testing.T) {
		l := lim
		l.MaxResultBytes = 100
		expectError(t, runStep(t, rt, "return 'x' * 200", l, nil), ipc.CodeLimitExceeded, ipc.LimitResult)
		expectResult(t, runStep(t, rt, "return 'x' * 90", l, nil), `"`+strings.Repeat("x", 90)+`"`)
	})
	t.Run("maxDataRequests", func(t *testing.T) {
		l := lim
		l.MaxDataRequests = 3
		h := &recorder{answer: answer}
		code := "for i in range(10):\n    try:\n        await data_proxy.request('m', i)\n    except BaseException:\n        pass\nreturn 'not stopped'"
		f := expectError(t, runStep(t, rt, code, l, h), ipc.CodeLimitExceeded, ipc.LimitDataRequests)
		if f.Stats.DataRequests != 3 {
			t.Errorf("stats %+v", f.Stats)
		}
	})
	t.Run("maxDataBytes", func(t *testing.T) {
		l := lim
		l.MaxDataBytes = 1000
		h := &recorder{answer: answer}
		// The replies count: the second one crosses the limit.
		expectError(t, runStep(t, rt, "for i in range(5):\n    await data_proxy.request('m', i)\nreturn 1", l, h), ipc.CodeLimitExceeded, ipc.LimitDataBytes)
		// So do the parameters.
		expectError(t, runStep(t, rt, "await data_proxy.request('m', 'y' * 2000)", l, &recorder{answer: answer}), ipc.CodeLimitExceeded, ipc.LimitDataBytes)
		// And status payloads.
		expectError(t, runStep(t, rt, "report_status('z' * 2000)", l, nil), ipc.CodeLimitExceeded, ipc.LimitDataBytes)
	})
	t.Run("maxStatusEvents", func(t *testing.T) {
		l := lim
		l.MaxStatusEvents = 3
		h := &recorder{}
		code := "for i in range(10):\n    try:\n        report_status(i)\n    except BaseException:\n        pass\nreturn 'not stopped'"
		expectError(t, runStep(t, rt, code, l, h), ipc.CodeLimitExceeded, ipc.LimitStatusEvents)
		if got := h.kinds(); got != "status:0|status:1|status:2" {
			t.Errorf("events %s", got)
		}
	})
	t.Run("maxFetchRequests", func(t *testing.T) {
		l := lim
		l.MaxFetchRequests = 1
		h := &recorder{answer: answer}
		expectError(t, runStep(t, rt, "await fetch('https://a.example')\nawait fetch('https://b.example')", l, h), ipc.CodeLimitExceeded, ipc.LimitFetchRequests)
	})
	t.Run("console", func(t *testing.T) {
		l := lim
		l.MaxConsoleEvents = 3
		h := &recorder{}
		ev := runStep(t, rt, "for i in range(10):\n    print('line', i)\nreturn 1", l, h)
		expectResult(t, ev, "1")
		want := "console:log:line 0|console:log:line 1|console:log:line 2|console:warn:[stepbox] console limit reached (maxConsoleEvents=3, maxConsoleBytes=4096): further output is dropped"
		if got := h.kinds(); got != want {
			t.Errorf("events\n%s\nwant\n%s", got, want)
		}
		if st := ev.Result.Stats; st.ConsoleEvents != 3 || st.ConsoleDropped != 7 {
			t.Errorf("stats %+v", st)
		}

		l = lim
		l.MaxConsoleBytes = 10
		h = &recorder{}
		expectResult(t, runStep(t, rt, "print('é' * 8)\nprint('more')\nreturn 1", l, h), "1")
		want = "console:log:ééééé|console:warn:[stepbox] console limit reached (maxConsoleEvents=10, maxConsoleBytes=10): further output is dropped"
		if got := h.kinds(); got != want {
			t.Errorf("events\n%s\nwant\n%s", got, want)
		}
	})
}

// TestUntrustedProcess forges frames the way a step that owns its process
// can: the host recounts and checks everything.
func TestUntrustedProcess(t *testing.T) {
	rt := shared(t)
	l := testLimits
	l.MaxResultBytes = 100
	cases := []struct {
		name, frames string
		code         ipc.Code
		limit        string
	}{
		{"huge", `b"x" * (3 << 20)`, ipc.CodeRuntime, ""},
		{"not json", `b"not json\n"`, ipc.CodeRuntime, ""},
		{"not utf-8", `b'{"k":"console","level":"log","text":"\xff"}\n'`, ipc.CodeRuntime, ""},
		{"unknown kind", `b'{"k":"root"}\n'`, ipc.CodeRuntime, ""},
		{"request id", `b'{"k":"request","id":7,"method":"m","params":1}\n'`, ipc.CodeRuntime, ""},
		{"status flood", `b'{"k":"status","v":1}\n' * 20`, ipc.CodeLimitExceeded, ipc.LimitStatusEvents},
		{"big result", `b'{"k":"result","value":"' + b"x" * 200 + b'"}\n'`, ipc.CodeLimitExceeded, ipc.LimitResult},
		{"deep result", `b'{"k":"result","value":' + b"[" * 600 + b"]" * 600 + b'}\n'`, ipc.CodeRuntime, ipc.LimitJSONDepth},
		{"unknown limit", `b'{"k":"limit","limit":"everything"}\n'`, ipc.CodeRuntime, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code := "import os, time\ndata = " + c.frames + "\nwhile data:\n    data = data[os.write(4, data):]\ntime.sleep(100)"
			expectError(t, runStep(t, rt, code, l, nil), c.code, c.limit)
		})
	}
	// A forged result is just a result.
	expectResult(t, runStep(t, rt, `import os, time
os.write(4, b'{"k":"result","value":{"forged":true}}\n')
time.sleep(100)`, l, nil), `{"forged":true}`)
	checkNoLeftovers(t, rt)
}

func TestMemory(t *testing.T) {
	rt := shared(t)
	for _, code := range []string{
		"b = bytearray(200 * 1024 * 1024)\nreturn len(b)",
		"a = []\nwhile True:\n    a.append('x' * 100000)",
		"a = []\nwhile True:\n    a.append(list(range(1000)))",
	} {
		f := expectError(t, runStep(t, rt, code, testLimits, nil), ipc.CodeOOM, ipc.LimitMemory)
		if f.Message != "the step ran out of memory (memoryMb=64)" {
			t.Errorf("message %q", f.Message)
		}
	}
	// Within the limit, fine.
	expectResult(t, runStep(t, rt, "b = bytearray(32 * 1024 * 1024)\nreturn len(b)", testLimits, nil), strconv.Itoa(32<<20))
	checkNoLeftovers(t, rt)
}

func TestTimeouts(t *testing.T) {
	rt := shared(t)
	t.Run("cpu", func(t *testing.T) {
		l := testLimits
		l.CPUMs = 300
		start := time.Now()
		f := expectError(t, runStep(t, rt, "while True:\n    pass", l, nil), ipc.CodeTimeout, ipc.LimitCPU)
		if f.Stats.CPUMs < 250 || time.Since(start) > testenv.ScaleDuration(3*time.Second) {
			t.Errorf("stats %+v after %v", f.Stats, time.Since(start))
		}
		checkNoLeftovers(t, rt)
	})
	t.Run("cpu handler", func(t *testing.T) {
		// A step that catches the CPU timer's signal still meets its
		// limit: the zygote's watch (TestCPULimitInNativeCall).
		l := testLimits
		l.CPUMs = 300
		code := "import signal\nsignal.signal(signal.SIGPROF, signal.SIG_IGN)\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass"
		expectError(t, runStep(t, rt, code, l, nil), ipc.CodeTimeout, ipc.LimitCPU)
	})
	t.Run("wall", func(t *testing.T) {
		l := testLimits
		l.WallMs = 500
		start := time.Now()
		f := expectError(t, runStep(t, rt, "import time\ntime.sleep(100)", l, nil), ipc.CodeTimeout, ipc.LimitWall)
		if d := time.Since(start); d > testenv.ScaleDuration(3*time.Second) {
			t.Errorf("took %v", d)
		}
		if f.Message != "the step exceeded its wall-clock time limit (wallMs=500)" {
			t.Errorf("message %q", f.Message)
		}
		checkNoLeftovers(t, rt)
	})
	t.Run("wall with children", func(t *testing.T) {
		l := testLimits
		l.WallMs = 500
		code := "import os, time\nfor i in range(3):\n    if os.fork() == 0:\n        time.sleep(100)\ntime.sleep(100)"
		expectError(t, runStep(t, rt, code, l, nil), ipc.CodeTimeout, ipc.LimitWall)
		checkNoLeftovers(t, rt)
	})
	t.Run("abort", func(t *testing.T) {
		// Aborted once the step is running: its status says so.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h := &recorder{onFirst: cancel}
		f := expectError(t, runStepCtx(ctx, t, rt, "report_status('sleeping')\nimport time\ntime.sleep(100)", testLimits, h), ipc.CodeAborted, "")
		if f.Stats.WallMs > float64(testenv.Scale(2000)) || h.kinds() != `status:"sleeping"` {
			t.Errorf("stats %+v, events %s", f.Stats, h.kinds())
		}
		checkNoLeftovers(t, rt)
	})
}

func TestForkBomb(t *testing.T) {
	rt := shared(t)
	l := testLimits
	l.WallMs = 1000
	ev := runStep(t, rt, "import os\nwhile True:\n    os.fork()", l, nil)
	if ev.Kind != ipc.KindError || (ev.Error.Code != ipc.CodeRuntime && ev.Error.Code != ipc.CodeTimeout) {
		t.Fatalf("got %s", describe(ev))
	}
	checkNoLeftovers(t, rt)
	expectResult(t, runStep(t, rt, "return 'alive'", testLimits, nil), `"alive"`)
	// A process the step forks has no bridge: only the step reports.
	expectResult(t, runStep(t, rt, "import os\npid = os.fork()\nif pid:\n    os.waitpid(pid, 0)\nreturn 'parent' if pid else 'child'", testLimits, nil), `"parent"`)
}

func TestJailed(t *testing.T) {
	rt := shared(t)
	pid := rt.zygotePID()
	code := `import os, socket, subprocess, sys
out = {}
def attempt(name, fn):
    try:
        r = fn()
        out[name] = "ok" if r is None else r
    except Exception as e:
        out[name] = type(e).__name__
attempt("passwd", lambda: open("/etc/passwd").read())
attempt("socket", lambda: socket.socket())
attempt("socket6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
attempt("system", lambda: os.system("ls"))
attempt("subprocess", lambda: subprocess.run(["/bin/ls"]))
attempt("exec", lambda: os.execv(sys.executable, [sys.executable, "-c", "1"]))
attempt("proc", lambda: os.listdir("/proc"))
attempt("root", lambda: sorted(os.listdir("/")))
attempt("write usr", lambda: open("/usr/x", "w"))
attempt("uid", lambda: os.getuid())
attempt("pid1", lambda: os.kill(1, 9))
attempt("setuid", lambda: os.setuid(0))
attempt("unshare", lambda: os.unshare(os.CLONE_NEWUSER) if hasattr(os, "unshare") else None)
attempt("ctypes", lambda: __import__("ctypes").CDLL(None).unshare(0x10000000))
attempt("ipc", lambda: __import__("ctypes").CDLL(None).shmget(0, 4096, 0o1000))
attempt("hostname", lambda: socket.gethostname())
attempt("big file", lambda: open("f", "wb").write(b"x" * (32 << 20)))
return out`
	ev := runStep(t, rt, code, testLimits, nil)
	if ev.Kind != ipc.KindResult {
		t.Fatalf("got %s", describe(ev))
	}
	var out map[string]any
	json.Unmarshal(ev.Result.Value, &out)
	want := map[string]any{
		"passwd": "FileNotFoundError", "socket": "PermissionError", "socket6": "PermissionError",
		"subprocess": "PermissionError", "exec": "PermissionError", "proc": "FileNotFoundError",
		"write usr": "OSError", "uid": 65534.0, "pid1": "ok", "setuid": "PermissionError",
		"ctypes": -1.0, "ipc": -1.0, "hostname": "stepbox", "big file": "OSError",
	}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("%s: got %v, want %v", k, out[k], v)
		}
	}
	if s, ok := out["system"].(float64); !ok || s == 0 {
		t.Errorf("os.system: %v", out["system"])
	}
	if u := out["unshare"]; u != "PermissionError" && u != "ok" {
		t.Errorf("unshare: %v", u)
	}
	root := fmt.Sprint(out["root"])
	for _, bad := range []string{"home", "root", "etc/passwd", "proc", "sys", "var"} {
		if strings.Contains(root, "'"+bad+"'") || strings.Contains(root, " "+bad+" ") || strings.Contains(root, "["+bad+" ") {
			t.Errorf("/ shows %s: %s", bad, root)
		}
	}
	// The zygote survived the kill attempt.
	expectResult(t, runStep(t, rt, "return 1", testLimits, nil), "1")
	if rt.zygotePID() != pid {
		t.Error("the zygote was replaced: the step killed it")
	}
}

func TestIsolation(t *testing.T) {
	rt := shared(t)
	expectResult(t, runStep(t, rt, `import json, builtins
json.leak = 1
builtins.leak = 2
global g
g = 3
open("/tmp/run/leak", "w").write("x")
open("/tmp/leak2", "w").write("y")
return 1`, testLimits, nil), "1")
	expectResult(t, runStep(t, rt, `import json, builtins, os
return [hasattr(json, "leak"), hasattr(builtins, "leak"), "g" in globals(), sorted(os.listdir("/tmp")), os.listdir(".")]`, testLimits, nil),
		`[false,false,false,["run"],[]]`)
}

func TestManyRuns(t *testing.T) {
	rt := shared(t)
	for i := 0; i < 50; i++ {
		code := fmt.Sprintf("import os\nprint(%d)\nreturn %d * 2", i, i)
		h := &recorder{}
		expectResult(t, runStep(t, rt, code, testLimits, h), strconv.Itoa(i*2))
		if got := h.kinds(); got != fmt.Sprintf("console:log:%d", i) {
			t.Fatalf("run %d: events %s", i, got)
		}
	}
	checkNoLeftovers(t, rt)
}

func TestConcurrentRuns(t *testing.T) {
	rt := shared(t)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := &recorder{replies: make(chan ipc.Reply, 10)}
			ev := rt.Run(context.Background(), pyrt.Job{Code: fmt.Sprintf("return %d", i), Limits: testLimits, Host: h, Replies: h.replies})
			if ev.Kind != ipc.KindResult || string(ev.Result.Value) != strconv.Itoa(i) {
				errs <- describe(ev)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestHostStopsTakingEvents(t *testing.T) {
	rt := shared(t)
	h := &failingHost{}
	ev := rt.Run(context.Background(), pyrt.Job{Code: "print('x')\nreturn 1", Limits: testLimits, Host: h, Replies: make(chan ipc.Reply)})
	expectError(t, ev, ipc.CodeAborted, "")
	checkNoLeftovers(t, rt)
}

type failingHost struct{}

func (failingHost) Emit(ctx context.Context, ev *ipc.Event) error { return errors.New("gone") }

func TestZygoteRestart(t *testing.T) {
	rt := newRuntime(t, pyrt.Config{})
	pid := rt.zygotePID()
	// The zygote dies while the step runs: once it has reported.
	h := &recorder{onFirst: func() { syscall.Kill(pid, syscall.SIGKILL) }}
	f := expectError(t, runStep(t, rt, "report_status('sleeping')\nimport time\ntime.sleep(100)", testLimits, h), ipc.CodeCrashed, "")
	if !strings.Contains(f.Message, "signal: killed") {
		t.Errorf("message %q does not name the signal", f.Message)
	}
	expectResult(t, runStep(t, rt, "return 'again'", testLimits, nil), `"again"`)
	if rt.zygotePID() == pid {
		t.Error("the zygote was not replaced")
	}
}

func TestClose(t *testing.T) {
	rt := newRuntime(t, pyrt.Config{})
	pid := rt.zygotePID()
	done := make(chan *ipc.Event, 1)
	started := make(chan struct{})
	go func() {
		h := &recorder{replies: make(chan ipc.Reply), onFirst: func() { close(started) }}
		done <- rt.Run(context.Background(), pyrt.Job{Code: "report_status('sleeping')\nimport time\ntime.sleep(100)", Limits: testLimits, Host: h, Replies: h.replies})
	}()
	// Close while the step runs.
	select {
	case <-started:
	case ev := <-done:
		t.Fatalf("the run ended before Close: %s", describe(ev))
	}
	rt.Close()
	expectError(t, <-done, ipc.CodeAborted, "")
	expectError(t, runStep(t, rt, "return 1", testLimits, nil), ipc.CodeUnavailable, "")
	rt.Close()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the zygote (pid %d) is still there", pid)
	}
}

func TestConfig(t *testing.T) {
	shared(t) // skips where Python is unavailable
	_, err := pyrt.NewLauncher(pyrt.Config{Python: "/nonexistent/python3"})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("missing python: %v", err)
	}
	_, err = pyrt.NewLauncher(pyrt.Config{Preload: []string{"os; import x"}, SitePackages: []string{"relative"}, MaxProcs: -1})
	if err == nil || !strings.Contains(err.Error(), "Preload") || !strings.Contains(err.Error(), "SitePackages") || !strings.Contains(err.Error(), "MaxProcs") {
		t.Errorf("bad config: %v", err)
	}
	// A preload that fails shows when a worker starts its zygote: the run
	// is UNAVAILABLE and says why.
	l, err := pyrt.NewLauncher(withTestDefaults(pyrt.Config{Preload: []string{"no_such_module_here"}}))
	if err != nil {
		t.Fatal(err)
	}
	bad := poolFor(t, l)
	defer bad.Close()
	if f := expectError(t, runStep(t, bad, "return 1", testLimits, nil), ipc.CodeUnavailable, ""); !strings.Contains(f.Message, "no_such_module_here") {
		t.Errorf("bad preload: %s", f.Message)
	}
	// Extra site-packages are importable, read-only.
	// (Not under /tmp: the jail provides its own.)
	dir, err := os.MkdirTemp("/var/tmp", "pyrt-site-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "stepbox_extra.py"), []byte("VALUE = 42\n"), 0o644)
	rt := newRuntime(t, pyrt.Config{SitePackages: []string{dir}, Preload: []string{"stepbox_extra"}})
	expectResult(t, runStep(t, rt, "import stepbox_extra\nreturn stepbox_extra.VALUE", testLimits, nil), "42")
	if v := rt.l.Version(); !strings.HasPrefix(v, "3.") {
		t.Errorf("version %q", v)
	}
}
