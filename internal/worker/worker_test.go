package worker

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// testLimits has time limits no run reaches: a test that crosses one sets
// it, for a step that never ends by itself.
var testLimits = ipc.Limits{
	MemoryMB: 64, CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs, MaxCodeBytes: 1 << 20, MaxResultBytes: 1 << 20,
	MaxDataRequests: 10, MaxDataBytes: 1 << 20, MaxStatusEvents: 10, MaxConsoleEvents: 10,
	MaxConsoleBytes: 4096, MaxFetchRequests: 1, MaxFetchBytes: 1 << 20,
}

// host is the test's side of an in-process worker: the real protocol
// loop over real pipes, driven frame by frame.
type host struct {
	t    *testing.T
	w    *ipc.FrameWriter
	r    *ipc.FrameReader
	in   *os.File // our read end
	out  *os.File // our write end
	exit chan int // Main's status
}

// startWorker runs Main in-process and returns the host side, with the
// host's hello sent (unless hello is nil).
func startWorker(t *testing.T, hello *ipc.Hello) *host {
	t.Helper()
	return startWorkerConfig(t, hello, Config{})
}

func startWorkerConfig(t *testing.T, hello *ipc.Hello, cfg Config) *host {
	t.Helper()
	toWorker, fromHost, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromWorker, toHost, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &host{t: t, w: ipc.NewFrameWriter(fromHost, 0), r: ipc.NewFrameReader(fromWorker, 0), in: fromWorker, out: fromHost, exit: make(chan int, 1)}
	cfg.In, cfg.Out = toWorker, toHost
	go func() { h.exit <- Main(cfg) }()
	t.Cleanup(func() {
		h.out.Close()
		h.in.Close()
		<-h.exit
	})
	if hello != nil {
		h.send(&ipc.Frame{Type: ipc.FrameHello, Hello: hello})
		f := h.read()
		if f.Type != ipc.FrameHello || f.Hello.Protocol != ipc.ProtocolVersion || f.Hello.PID != os.Getpid() {
			t.Fatalf("worker hello: %+v", f.Hello)
		}
	}
	return h
}

func (h *host) send(f *ipc.Frame) {
	h.t.Helper()
	if err := h.w.Write(f); err != nil {
		h.t.Fatal(err)
	}
}

func (h *host) read() *ipc.Frame {
	h.t.Helper()
	f, err := h.r.Read()
	if err != nil {
		h.t.Fatal(err)
	}
	return f
}

func (h *host) execute(id uint64, code string, lim ipc.Limits) {
	h.t.Helper()
	h.send(&ipc.Frame{Type: ipc.FrameExecute, RunID: id, Execute: &ipc.Execute{Code: code, Input: json.RawMessage(`{"n":2}`), Limits: lim}})
	// The worker acknowledges the run before the step starts.
	if f := h.read(); f.Type != ipc.FrameStarted || f.RunID != id {
		h.t.Fatalf("want a started frame for run %d first, got %+v", id, f)
	}
}

// until reads frames of run id until its terminal, returning the events
// before it and the terminal.
func (h *host) until(id uint64) (events []*ipc.Event, term *ipc.Event) {
	h.t.Helper()
	for {
		f := h.read()
		if f.RunID != id {
			h.t.Fatalf("frame for run %d while running %d: %+v", f.RunID, id, f)
		}
		switch f.Type {
		case ipc.FrameEvent:
			events = append(events, f.Event)
		case ipc.FrameTerminal:
			return events, f.Event
		default:
			h.t.Fatalf("unexpected %s frame", f.Type)
		}
	}
}

func TestWorkerRuns(t *testing.T) {
	h := startWorker(t, &ipc.Hello{Protocol: ipc.ProtocolVersion, Warm: 1})
	h.execute(1, "return 1 + input.n", testLimits)
	if _, term := h.until(1); term.Result == nil || string(term.Result.Value) != "3" {
		t.Fatalf("terminal %+v", term)
	}
	// The same worker serves the next run.
	h.execute(2, `console.log("a"); reportStatus({p: 1}); const v = await dataProxy.request("get", [1]); console.warn("b", v); return v.x`, testLimits)
	f := h.read()
	if f.Type != ipc.FrameEvent || f.Event.Console == nil || f.Event.Console.Text != "a" {
		t.Fatalf("first event %+v", f.Event)
	}
	if f = h.read(); f.Event.Kind != ipc.KindStatus || string(f.Event.Status) != `{"p":1}` {
		t.Fatalf("second event %+v", f.Event)
	}
	f = h.read()
	dr := f.Event.DataRequest
	if dr == nil || dr.Method != "get" || string(dr.Params) != "[1]" {
		t.Fatalf("third event %+v", f.Event)
	}
	h.send(&ipc.Frame{Type: ipc.FrameReply, RunID: 2, Reply: &ipc.Reply{ID: dr.ID, Value: json.RawMessage(`{"x":"y"}`)}})
	events, term := h.until(2)
	if len(events) != 1 || events[0].Console.Text != `b { x: "y" }` || events[0].Console.Level != "warn" {
		t.Fatalf("events after the reply: %+v", events)
	}
	if term.Result == nil || string(term.Result.Value) != `"y"` {
		t.Fatalf("terminal %+v", term)
	}
	if st := term.Result.Stats; st.ConsoleEvents != 2 || st.StatusEvents != 1 || st.DataRequests != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestWorkerAbort(t *testing.T) {
	h := startWorker(t, &ipc.Hello{Protocol: ipc.ProtocolVersion})
	h.execute(5, "console.log('started'); while (true) {}", testLimits)
	if f := h.read(); f.Event == nil || f.Event.Kind != ipc.KindConsole {
		t.Fatalf("%+v", f)
	}
	// An abort or reply for another run is ignored.
	h.send(&ipc.Frame{Type: ipc.FrameAbort, RunID: 4})
	h.send(&ipc.Frame{Type: ipc.FrameReply, RunID: 4, Reply: &ipc.Reply{ID: 1}})
	h.send(&ipc.Frame{Type: ipc.FrameAbort, RunID: 5, Abort: &ipc.Abort{Reason: "the caller left"}})
	_, term := h.until(5)
	if term.Error == nil || term.Error.Code != ipc.CodeAborted || term.Error.Message != "the run was aborted: the caller left" {
		t.Fatalf("terminal %+v", term.Error)
	}
	h.execute(6, "return 'again'", testLimits)
	if _, term := h.until(6); term.Result == nil {
		t.Fatalf("after an abort: %+v", term.Error)
	}
}

func TestWorkerPing(t *testing.T) {
	h := startWorker(t, &ipc.Hello{Protocol: ipc.ProtocolVersion})
	h.send(&ipc.Frame{Type: ipc.FramePing, Seq: 9})
	if f := h.read(); f.Type != ipc.FramePong || f.Seq != 9 {
		t.Fatalf("%+v", f)
	}
}

func TestWorkerExitsAtEOF(t *testing.T) {
	h := startWorker(t, &ipc.Hello{Protocol: ipc.ProtocolVersion})
	h.execute(1, "await new Promise(r => setTimeout(r, 60000))", testLimits)
	h.out.Close() // the host is gone, mid-run
	if code := <-h.exit; code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
	h.exit <- 0 // for the cleanup
}

func TestWorkerRefusesBadHost(t *testing.T) {
	cases := []struct {
		name  string
		frame ipc.Frame
	}{
		{"other protocol", ipc.Frame{Type: ipc.FrameHello, Hello: &ipc.Hello{Protocol: ipc.ProtocolVersion + 1}}},
		{"no hello", ipc.Frame{Type: ipc.FramePing, Seq: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := startWorker(t, nil)
			h.send(&c.frame)
			if code := <-h.exit; code != 1 {
				t.Fatalf("exit status %d, want 1", code)
			}
			h.exit <- 1
		})
	}
	t.Run("execute while busy", func(t *testing.T) {
		h := startWorker(t, &ipc.Hello{Protocol: ipc.ProtocolVersion})
		h.execute(1, "while (true) {}", testLimits)
		h.send(&ipc.Frame{Type: ipc.FrameExecute, RunID: 2, Execute: &ipc.Execute{Code: "return 1", Limits: testLimits}})
		if code := <-h.exit; code != 1 {
			t.Fatalf("exit status %d, want 1", code)
		}
		h.exit <- 1
	})
}

// TestWorkerEnter: the jail hook runs first; if it fails the worker serves
// nothing at all.
func TestWorkerEnter(t *testing.T) {
	entered := false
	h := startWorkerConfig(t, &ipc.Hello{Protocol: ipc.ProtocolVersion}, Config{Enter: func() error { entered = true; return nil }})
	h.execute(1, "return 1", testLimits)
	if _, term := h.until(1); term.Result == nil || !entered {
		t.Fatalf("entered %t, terminal %+v", entered, term)
	}

	h = startWorkerConfig(t, nil, Config{Enter: func() error { return errors.New("no namespaces") }})
	if code := <-h.exit; code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	h.exit <- 1
	if f, err := h.r.Read(); err != io.EOF {
		t.Fatalf("a worker that could not enter its jail wrote %+v (%v)", f, err)
	}
}

func TestWorkerFrameLimit(t *testing.T) {
	h := startWorker(t, &ipc.Hello{Protocol: ipc.ProtocolVersion, MaxFrameBytes: 4096})
	h.execute(1, "reportStatus('x'.repeat(10000)); return 1", testLimits)
	_, term := h.until(1)
	if term.Error == nil || term.Error.Code != ipc.CodeLimitExceeded || term.Error.Limit != ipc.LimitFrameBytes {
		t.Fatalf("status too large: %+v", term)
	}
	h.execute(2, "return 'x'.repeat(10000)", testLimits)
	_, term = h.until(2)
	if term.Error == nil || term.Error.Code != ipc.CodeLimitExceeded || term.Error.Limit != ipc.LimitFrameBytes {
		t.Fatalf("result too large: %+v", term)
	}
}

// TestWorkerSanitizes checks that a lone surrogate reaches the host as
// valid UTF-8 no longer than what the worker counted.
func TestWorkerSanitizes(t *testing.T) {
	h := startWorker(t, &ipc.Hello{Protocol: ipc.ProtocolVersion})
	h.execute(1, `console.log("a\uD800b"); throw new Error("x\uDC00")`, testLimits)
	events, term := h.until(1)
	if len(events) != 1 || !utf8.ValidString(events[0].Console.Text) || len(events[0].Console.Text) > len("a\xed\xa0\x80b") {
		t.Fatalf("console %q", events[0].Console.Text)
	}
	if term.Error == nil || !utf8.ValidString(term.Error.Message) {
		t.Fatalf("terminal %+v", term.Error)
	}
}

func TestWorkerNeedsDescriptors(t *testing.T) {
	t.Setenv(EnvSwitch, "999")
	err := serve(Config{})
	if err == nil || !strings.Contains(err.Error(), "protocol") {
		t.Fatalf("%v", err)
	}
	if !Enabled() {
		t.Fatal("Enabled is false with the switch set")
	}
}

func TestValidUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"ok":            "ok",
		"a\xed\xa0\x80": "a\uFFFD",
		"\xff":          "?",
		"\xff\xfe\xfd":  "\uFFFD",
	} {
		if got := validUTF8(in); got != want {
			t.Errorf("validUTF8(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWorkerRehearsalUnseen: the step a worker rehearses before its hello
// runs in a VM of its own: the first run finds none of its globals.
func TestWorkerRehearsalUnseen(t *testing.T) {
	h := startWorker(t, &ipc.Hello{Protocol: ipc.ProtocolVersion, Warm: 1})
	h.execute(1, "return typeof globalThis.__stepboxRehearsal", testLimits)
	if _, term := h.until(1); term.Result == nil || string(term.Result.Value) != `"undefined"` {
		t.Fatalf("the first run after the rehearsal: %+v %+v", term.Result, term.Error)
	}
}
