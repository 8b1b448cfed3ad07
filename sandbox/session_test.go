package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

func TestDataBridge(t *testing.T) {
	calls := 0
	evs, res, err := run(t, engine(t), sandbox.Request{Code: `
reportStatus({stage: "start"});
const user = await dataProxy.request("getUser", {id: 7});
let failed;
try { await dataProxy.request("fail", null) } catch (e) { failed = e instanceof Error && e.message }
const [a, b] = await Promise.all([dataProxy.request("n", 1), dataProxy.request("n", 2)]);
console.log("user", user.name);
return {user, failed, sum: a + b};
`}, func(_ context.Context, method string, params json.RawMessage) (any, error) {
		calls++
		switch method {
		case "getUser":
			return map[string]any{"name": "Ada", "params": params}, nil
		case "fail":
			return nil, errors.New("not found")
		}
		return params, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Value); got != `{"user":{"name":"Ada","params":{"id":7}},"failed":"not found","sum":3}` {
		t.Fatalf("result %s", got)
	}
	if got := strings.Join(kinds(evs), ","); got != "status,data_request,data_request,data_request,data_request,console,result" {
		t.Fatalf("events %s", got)
	}
	st := res.Stats
	if st.DataRequests != 4 || st.DataBytes == 0 || st.ConsoleEvents != 1 || st.StatusEvents != 1 || st.WallMs <= 0 || st.CPUMs <= 0 || st.CodeMs <= 0 || st.HeapMB <= 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestBridgeArgumentsAreCopiedOnce(t *testing.T) {
	_, res, err := run(t, engine(t), sandbox.Request{Code: `
let reads = 0;
const params = { get v() { reads++; return reads } };
const got = await dataProxy.request("echo", params);
return [got, reads];
`}, echo)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `[{"v":1},1]` {
		t.Fatalf("got %s", res.Value)
	}
}

func TestRunsAreIsolated(t *testing.T) {
	e := newEngine(t, sandbox.Config{PoolSize: 1, Warm: 2})
	// A pending timer is dropped when the step returns; the next run must
	// see none of it either.
	_, _, err := run(t, e, sandbox.Request{Code: `
globalThis.leak = 42; Array.prototype.polluted = 1; Object.prototype.evil = true;
JSON.stringify = () => "hijacked"; setTimeout(() => { globalThis.late = 1 }, 10);
return 1`}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		_, res, err := run(t, e, sandbox.Request{Code: `await new Promise(r => setTimeout(r, 20)); return [typeof leak, typeof late, [].polluted, ({}).evil, JSON.stringify({a: 1})]`}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(res.Value); got != `["undefined","undefined",null,null,"{\"a\":1}"]` {
			t.Fatalf("run %d saw state of an earlier run: %s", i, got)
		}
	}
}

func TestAbort(t *testing.T) {
	s, err := engine(t).Submit(context.Background(), sandbox.Request{Code: "reportStatus(1); while (true) {}"})
	if err != nil {
		t.Fatal(err)
	}
	<-s.Events() // the status event: the step is running
	s.Abort()
	_, err = s.Wait()
	if !errors.Is(err, sandbox.ErrAborted) || errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	n := 0
	for range s.Events() {
		n++
	}
	if n != 1 {
		t.Fatalf("%d events after abort; want the terminal one", n)
	}
}

func TestContextCancelAborts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := engine(t).Submit(ctx, sandbox.Request{Code: "await dataProxy.request('x')"})
	if err != nil {
		t.Fatal(err)
	}
	<-s.Events()
	cancel()
	_, err = s.Wait()
	if !errors.Is(err, sandbox.ErrAborted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestCloseAbortsRunsInFlight(t *testing.T) {
	// The runs never end by themselves: only Close ends them.
	e, err := sandbox.New(sandbox.Config{Isolation: isolation, PoolSize: 2, Caps: testCaps, Grace: testGrace, Plans: map[string]sandbox.Limits{"default": testPlan}})
	if err != nil {
		t.Fatal(err)
	}
	var sessions []*sandbox.Session
	for i := 0; i < 4; i++ { // two run, two wait in the queue
		s, err := e.Submit(context.Background(), sandbox.Request{Code: "reportStatus(1); while (true) {}"})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
		if i == 1 {
			<-sessions[0].Events()
			<-sessions[1].Events()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := e.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v", err)
	}
	for i, s := range sessions {
		_, err := s.Wait()
		if !errors.Is(err, sandbox.ErrAborted) || !errors.Is(err, sandbox.ErrClosed) {
			t.Errorf("run %d: %v", i, err)
		}
	}
	if _, err := e.Submit(context.Background(), sandbox.Request{Code: "1"}); !errors.Is(err, sandbox.ErrUnavailable) || !errors.Is(err, sandbox.ErrClosed) {
		t.Fatalf("Submit after Close: %v", err)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCloseWaitsForRunsToFinish(t *testing.T) {
	e, err := sandbox.New(sandbox.Config{Isolation: isolation, Caps: testCaps, Grace: testGrace, Plans: map[string]sandbox.Limits{"default": testPlan}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.Submit(context.Background(), sandbox.Request{Code: "await new Promise(r => setTimeout(r, 50)); return 'finished'"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := s.Wait()
	if err != nil || string(res.Value) != `"finished"` {
		t.Fatalf("%s %v", res.Value, err)
	}
}

func TestSlowReaderSlowsOnlyItsOwnRun(t *testing.T) {
	const buffer = 4
	// No stall limit (see TestStallTimeout): a run blocked on its reader
	// waits until its wall limit.
	e := newEngine(t, sandbox.Config{PoolSize: 2, EventBuffer: buffer, StallTimeout: -1})
	stuck, err := e.Submit(context.Background(), sandbox.Request{Code: chatty})
	if err != nil {
		t.Fatal(err)
	}
	// The events channel is the buffer: once it is full, the run is
	// blocked on its reader.
	testenv.WaitFor(t, "the unread run to fill its event buffer", func() bool { return len(stuck.Events()) == buffer })
	// Another run completes while the first is blocked on its reader.
	_, res, err := run(t, e, sandbox.Request{Code: "return 'other'"}, nil)
	if err != nil || string(res.Value) != `"other"` {
		t.Fatalf("other run: %s %v", res.Value, err)
	}
	stuck.Abort()
	if _, err := stuck.Wait(); !errors.Is(err, sandbox.ErrAborted) {
		t.Fatalf("blocked run: %v, want ABORTED", err)
	}
	expectUnread(t, stuck, buffer, sandbox.CodeAborted)

	// A run that is never read ends at its wall limit, with the events it
	// buffered before it, in order.
	stuck, err = e.Submit(context.Background(), sandbox.Request{Code: chatty, Limits: sandbox.Limits{WallMs: 300}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stuck.Wait()
	if se := asError(t, err); se.Code != sandbox.CodeTimeout || se.Limit != "wallMs" {
		t.Fatalf("unread run: %v", err)
	}
	expectUnread(t, stuck, -1, sandbox.CodeTimeout)
}

// expectUnread reads the events of a run that nobody read while it ran:
// its first console lines, in order, then its terminal event with code.
// lines is how many lines the buffer held, or -1 for any number up to the
// engine's buffer: a machine slow enough may reach the limit before the
// step has filled it.
func expectUnread(t *testing.T, s *sandbox.Session, lines int, code sandbox.Code) {
	t.Helper()
	var got []string
	var last sandbox.Event
	for ev := range s.Events() {
		last = ev
		if ev.Console != nil {
			got = append(got, ev.Console.Text)
		} else if !ev.Terminal() {
			t.Errorf("unexpected %s event", ev.Kind)
		}
	}
	if !last.Terminal() || last.Error == nil || last.Error.Code != code {
		t.Fatalf("the last event is %+v, want a %s error", last, code)
	}
	for i, text := range got {
		if text != fmt.Sprint(i) {
			t.Fatalf("console lines %q: want 0, 1, ... in order", got)
		}
	}
	if lines >= 0 && len(got) != lines || len(got) > cap(s.Events()) {
		t.Fatalf("got %d console lines, want the %d buffered (the buffer holds %d)", len(got), lines, cap(s.Events()))
	}
}

func TestQueueFull(t *testing.T) {
	e := newEngine(t, sandbox.Config{PoolSize: 1, QueueSize: 1})
	var sessions []*sandbox.Session
	for i := 0; i < 2; i++ { // one runs, one waits: each until its data request is answered
		s, err := e.Submit(context.Background(), sandbox.Request{Code: "return await dataProxy.request('go')"})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	_, err := e.Submit(context.Background(), sandbox.Request{Code: "return 1"})
	if !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("third run: %v, want UNAVAILABLE at once", err)
	}
	for _, s := range sessions {
		for ev := range s.Events() {
			if dr := ev.DataRequest; dr != nil {
				_ = s.Respond(dr.ID, 1)
			}
		}
		if _, err := s.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	_, res, err := run(t, e, sandbox.Request{Code: "return 1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.QueueMs < 0 {
		t.Fatal(res.Stats)
	}
}

func TestQueueIsFairAcrossTenants(t *testing.T) {
	e := newEngine(t, sandbox.Config{PoolSize: 1, QueueSize: 100})
	blocker, err := e.Submit(context.Background(), sandbox.Request{Code: "reportStatus(0); await dataProxy.request('go')"})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-blocker.Events() // the only slot is taken
	var order []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	var sessions []*sandbox.Session
	// Runs hold the only slot until their data request is answered, so the
	// requests arrive in the order the slot was granted.
	submit := func(tenant string) {
		s, err := e.Submit(context.Background(), sandbox.Request{Code: "await dataProxy.request('turn')", Tenant: tenant})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range s.Events() {
				if dr := ev.DataRequest; dr != nil {
					mu.Lock()
					order = append(order, tenant)
					mu.Unlock()
					_ = s.Respond(dr.ID, nil)
				}
			}
		}()
	}
	for i := 0; i < 5; i++ {
		submit("greedy")
	}
	submit("polite")
	_ = ev
	dr := <-blocker.Events()
	_ = blocker.Respond(dr.DataRequest.ID, nil)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if pos := slices.Index(order, "polite"); pos != 1 {
		t.Fatalf("order %v: the second tenant waited behind the first one's burst", order)
	}
}

func TestRespondChecksIDs(t *testing.T) {
	s, err := engine(t).Submit(context.Background(), sandbox.Request{Code: "return await dataProxy.request('m')"})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-s.Events()
	if err := s.Respond(ev.DataRequest.ID+1, 1); err == nil {
		t.Fatal("answering an unknown id succeeded")
	}
	if err := s.Respond(ev.DataRequest.ID, json.RawMessage(`{`)); err == nil {
		t.Fatal("invalid JSON accepted")
	}
	if err := s.Respond(ev.DataRequest.ID, "ok"); err != nil {
		t.Fatal(err)
	}
	if err := s.Respond(ev.DataRequest.ID, "twice"); err == nil {
		t.Fatal("answering twice succeeded")
	}
	res, err := s.Wait()
	if err != nil || string(res.Value) != `"ok"` {
		t.Fatal(res, err)
	}
}

func TestMeter(t *testing.T) {
	records := make(chan sandbox.Usage, 10)
	e := newEngine(t, sandbox.Config{Meter: sandbox.MeterFunc(func(u sandbox.Usage) { records <- u })})
	_, _, _ = run(t, e, sandbox.Request{Code: "return 1", Tenant: "acme", Metadata: map[string]string{"workflow": "w1"}}, nil)
	_, _, _ = run(t, e, sandbox.Request{Code: "throw 1", Tenant: "acme"}, nil)
	// A run's record comes just after its terminal event: wait for it.
	got := []sandbox.Usage{<-records, <-records}
	// A refusal's record comes before Submit returns.
	_, _ = e.Submit(context.Background(), sandbox.Request{Code: "1", Plan: "nope", Tenant: "acme"})
	select {
	case u := <-records:
		got = append(got, u)
	default:
		t.Fatal("no record of the refusal when Submit returned")
	}
	select {
	case u := <-records:
		t.Fatalf("a fourth record: %+v", u)
	default:
	}
	byOutcome := map[string]sandbox.Usage{}
	for _, u := range got {
		byOutcome[u.Outcome] = u
	}
	ok := byOutcome["ok"]
	if ok.Tenant != "acme" || ok.Plan != "default" || ok.Language != sandbox.JavaScript || ok.Metadata["workflow"] != "w1" || ok.Stats.WallMs <= 0 {
		t.Errorf("ok record: %+v", ok)
	}
	if _, ok := byOutcome["RUNTIME"]; !ok {
		t.Errorf("no RUNTIME record in %+v", got)
	}
	if got[2].Outcome != "VALIDATION" {
		t.Errorf("the refusal's record is %+v", got[2])
	}
}

func TestRunHelper(t *testing.T) {
	res, err := engine(t).Run(context.Background(), sandbox.Request{Code: "const a = await dataProxy.request('add', [2, 3]); return a * 10"},
		func(_ context.Context, method string, params json.RawMessage) (any, error) {
			var xs []int
			if err := json.Unmarshal(params, &xs); err != nil {
				return nil, err
			}
			return xs[0] + xs[1], nil
		})
	if err != nil || string(res.Value) != "50" {
		t.Fatal(string(res.Value), err)
	}
	_, err = engine(t).Run(context.Background(), sandbox.Request{Code: "return await dataProxy.request('x')"}, nil)
	if se := asError(t, err); se.Code != sandbox.CodeRuntime || !strings.Contains(se.Message, "no data handler") {
		t.Fatal(err)
	}
	// A handler's error, and an answer that is not JSON, reject the await
	// the step can catch; neither leaves it waiting.
	res, err = engine(t).Run(context.Background(), sandbox.Request{Code: `const out = [];
for (const m of ["fails", "func"]) {
  try { await dataProxy.request(m); } catch (e) { out.push(e.message); }
}
return out`}, func(_ context.Context, method string, _ json.RawMessage) (any, error) {
		if method == "fails" {
			return nil, errors.New("no such order")
		}
		return func() {}, nil
	})
	var msgs []string
	if err != nil || json.Unmarshal(res.Value, &msgs) != nil || len(msgs) != 2 ||
		msgs[0] != "no such order" || !strings.Contains(msgs[1], "unsupported type: func()") {
		t.Fatalf("%s %v", res.Value, err)
	}
}

func TestConcurrentRuns(t *testing.T) {
	e := newEngine(t, sandbox.Config{PoolSize: 4})
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Run(context.Background(), sandbox.Request{Code: fmt.Sprintf("await null; return %d", i)}, nil)
			if err != nil || string(res.Value) != fmt.Sprint(i) {
				errs <- fmt.Errorf("run %d: %s %v", i, res.Value, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestConfigErrorsReportEveryField(t *testing.T) {
	_, err := sandbox.New(sandbox.Config{PoolSize: -1, Plans: map[string]sandbox.Limits{"a": {WallMs: -5}}, DefaultPlan: "b"})
	if err == nil {
		t.Fatal("bad config accepted")
	}
	for _, want := range []string{"poolSize=-1", "plans.a.wallMs=-5", `defaultPlan="b"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %q", err, want)
		}
	}
}
