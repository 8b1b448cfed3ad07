package jsrt

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/testenv"
)

// testLimits are the limits of steps that do not mean to cross a time
// limit: no machine reaches these.
var testLimits = ipc.Limits{
	MemoryMB: 64, CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs, MaxCodeBytes: 1 << 20, MaxResultBytes: 1 << 20,
	MaxDataRequests: 10, MaxDataBytes: 1 << 20, MaxStatusEvents: 10, MaxConsoleEvents: 10,
	MaxConsoleBytes: 4096, MaxFetchRequests: 1, MaxFetchBytes: 1 << 20,
}

// recorder is a Host that keeps every event and answers data requests
// through answer, if set.
type recorder struct {
	mu      sync.Mutex
	events  []*ipc.Event
	replies chan ipc.Reply
	answer  func(*ipc.DataRequest) *ipc.Reply
}

func (h *recorder) Emit(ctx context.Context, ev *ipc.Event) error {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
	if ev.DataRequest != nil && h.answer != nil {
		if rep := h.answer(ev.DataRequest); rep != nil {
			h.replies <- *rep
		}
	}
	return nil
}

func runStep(t *testing.T, rt *Runtime, code string, lim ipc.Limits, h *recorder) *ipc.Event {
	t.Helper()
	if h == nil {
		h = &recorder{}
	}
	h.replies = make(chan ipc.Reply, 100)
	return rt.Run(context.Background(), Job{Code: code, Input: json.RawMessage(`{"n":2}`), Limits: lim, Host: h, Replies: h.replies})
}

func newRT(t *testing.T) *Runtime {
	rt, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return rt
}

func TestBasics(t *testing.T) {
	rt := newRT(t)
	cases := []struct {
		name, code, want, code2 string
	}{
		{name: "return", code: "return 1 + input.n", want: "3"},
		{name: "undefined", code: "let x = 1", want: "null"},
		{name: "await", code: "await null; return [1,'a',{b:true}]", want: `[1,"a",{"b":true}]`},
		{name: "timer", code: "await new Promise(r => setTimeout(r, 5)); return 'ok'", want: `"ok"`},
		{name: "throw", code: "throw new TypeError('bad')", code2: "RUNTIME"},
		{name: "syntax", code: "return 1 +", code2: "VALIDATION"},
		{name: "cycle", code: "const a = {}; a.a = a; return a", code2: "RUNTIME"},
		{name: "bigint", code: "return [1n, 2n ** 64n]", want: "[1,18446744073709551616]"},
		{name: "bigint in a cycle", code: "const a = [1n]; a.push(a); return a", code2: "RUNTIME"},
		{name: "function", code: "return () => 1", code2: "RUNTIME"},
		{name: "never", code: "await new Promise(() => {})", code2: "RUNTIME"},
		{name: "loop", code: "while (true) {}", code2: "TIMEOUT"},
		{name: "oom", code: "const a = []; while (true) a.push('x'.repeat(1000) + a.length)", code2: "OOM"},
		{name: "recursion", code: "function f() { return f() + 1 } return f()", code2: "RUNTIME"},
		{name: "awaitloop", code: "while (true) { await null }", code2: "TIMEOUT"},
		{name: "deep", code: "let a = []; for (let i = 0; i < 100000; i++) a = [a]; return a", code2: "RUNTIME"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := testLimits
			if tc.code2 == "TIMEOUT" {
				l.CPUMs, l.WallMs = 200, 400 // crossed on purpose: no need to wait long
			}
			ev := runStep(t, rt, tc.code, l, nil)
			if tc.code2 != "" {
				if ev.Error == nil || string(ev.Error.Code) != tc.code2 {
					t.Fatalf("got %+v %+v, want %s", ev.Result, ev.Error, tc.code2)
				}
				t.Logf("%+v", ev.Error)
				return
			}
			if ev.Result == nil {
				t.Fatalf("error %+v", ev.Error)
			}
			if got := string(ev.Result.Value); got != tc.want {
				t.Fatalf("got %s want %s", got, tc.want)
			}
		})
	}
}

func TestDataRequest(t *testing.T) {
	rt := newRT(t)
	h := &recorder{answer: func(r *ipc.DataRequest) *ipc.Reply {
		if r.Method == "fail" {
			return &ipc.Reply{ID: r.ID, Error: "nope"}
		}
		return &ipc.Reply{ID: r.ID, Value: json.RawMessage(`{"got":` + string(r.Params) + `}`)}
	}}
	ev := runStep(t, rt, `const a = await dataProxy.request("get", {x: 1});
let e; try { await dataProxy.request("fail") } catch (err) { e = err.message }
console.log("hi", {a: 1}, [1, 2]); reportStatus({p: 50});
return [a, e]`, testLimits, h)
	if ev.Result == nil {
		t.Fatalf("%+v", ev.Error)
	}
	if got := string(ev.Result.Value); got != `[{"got":{"x":1}},"nope"]` {
		t.Fatal(got)
	}
	var kinds []string
	for _, e := range h.events {
		kinds = append(kinds, string(e.Kind))
	}
	if strings.Join(kinds, ",") != "data_request,data_request,console,status" {
		t.Fatal(kinds)
	}
	if c := h.events[2].Console.Text; c != `hi { a: 1 } [ 1, 2 ]` {
		t.Fatalf("console %q", c)
	}
	t.Logf("stats %+v", ev.Result.Stats)
}

func TestUnansweredTimesOut(t *testing.T) {
	rt := newRT(t)
	lim := testLimits
	lim.WallMs = 100
	t0 := time.Now()
	ev := runStep(t, rt, `await dataProxy.request("never")`, lim, nil)
	if ev.Error == nil || ev.Error.Code != ipc.CodeTimeout || ev.Error.Limit != ipc.LimitWall {
		t.Fatalf("%+v", ev.Error)
	}
	t.Log(time.Since(t0))
}
