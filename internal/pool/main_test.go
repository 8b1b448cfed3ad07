package pool_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/forkserver"
	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jail"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/internal/worker"
)

// envFault is set by a test's Command to make every worker of that pool
// misbehave at start. Only this test binary reads it.
const envFault = "STEPBOX_POOLTEST_FAULT"

// TestMain turns the test binary into a worker when the pool starts it as
// one (worker.EnvSwitch set); the pool re-executes os.Args[0], this binary.
//
// The worker's runner is faultRunner: a jsrt.Runtime that misbehaves on
// request. The faults exist only in this test binary; a production binary
// has no code that could be asked to misbehave.
func TestMain(m *testing.M) {
	forkserver.MaybeServe() // the fork server of a test with jailed workers
	if worker.Enabled() {
		if os.Getenv(envFault) == "exit-at-start" {
			os.Exit(3)
		}
		os.Exit(worker.Main(worker.Config{NewRunner: newFaultRunner, Enter: func() error {
			// A test that jails its workers (groups_test.go: jailed).
			cfg, ok, err := jail.ChildConfigFromEnv()
			if !ok || err != nil {
				return err
			}
			return jail.Enter(cfg)
		}}))
	}
	if cfg, ok, err := jail.ChildConfigFromEnv(); ok {
		// The jail's capability probe (a test with jailed workers).
		if err == nil {
			err = jail.Enter(cfg) // a probe child ends inside Enter
		}
		fmt.Fprintf(os.Stderr, "jail child: %v\n", err)
		os.Exit(3)
	}
	testenv.Main(m)
}

// faultRunner runs steps with a jsrt.Runtime, except a step whose first
// line is "//fault:NAME", which makes the worker misbehave as named:
//
//	hang            report a status event, then never answer, ignore abort
//	exit            os.Exit(3) mid-run
//	segv            crash on a nil pointer dereference (SIGSEGV, exit status 2)
//	garbage         write bytes that are not a frame
//	oversize        write a length prefix of 4 GiB
//	unknown         write a well-formed frame of an unknown type
//	foreign         write an event frame of another run
//	flood           report more status events than maxStatusEvents
//	console-flood   report more console lines than maxConsoleEvents
//	bigresult       return a result larger than maxResultBytes
//	deepresult      return a result nested deeper than ipc.MaxJSONDepth
//	fetch           report a fetch (audit) event, which only the host makes
//	fetch-flood     report more fetch requests than maxFetchRequests
//	burst           write three console events and the terminal frame of
//	                run 1 (result 1) in one write, then wait: the step has
//	                finished before the host takes its first event (the
//	                pool must be fresh)
//	idle-junk       end run 1 with the result 1 by writing its terminal
//	                frame itself, followed in the same write by a frame
//	                sent while idle (the pool must be fresh: the run is its
//	                run 1)
type faultRunner struct{ rt *jsrt.Runtime }

func newFaultRunner(c jsrt.Config) (worker.Runner, error) {
	rt, err := jsrt.New(c)
	if err != nil {
		return nil, err
	}
	return &faultRunner{rt: rt}, nil
}

func (f *faultRunner) Close() { f.rt.Close() }

func (f *faultRunner) Run(ctx context.Context, job jsrt.Job) *ipc.Event {
	line, _, _ := strings.Cut(job.Code, "\n")
	name, ok := strings.CutPrefix(line, "//fault:")
	if !ok {
		return f.rt.Run(ctx, job)
	}
	ok1 := func(v string) *ipc.Event {
		return &ipc.Event{Kind: ipc.KindResult, Result: &ipc.Result{Value: json.RawMessage(v)}}
	}
	switch name {
	case "hang":
		// The status tells the test that the step is running.
		_ = job.Host.Emit(ctx, &ipc.Event{Kind: ipc.KindStatus, Status: json.RawMessage(`"hanging"`)})
		time.Sleep(time.Hour)
	case "exit":
		os.Exit(3)
	case "segv":
		var p *int
		go func() { *p = 1 }()
		time.Sleep(time.Hour)
	case "garbage":
		rawWrite([]byte("\x00\x00\x00\x05hello"))
		time.Sleep(time.Hour)
	case "oversize":
		rawWrite([]byte{0xff, 0xff, 0xff, 0xff})
		time.Sleep(time.Hour)
	case "unknown":
		rawFrame(`{"type":"shell","runId":1}`)
		time.Sleep(time.Hour)
	case "foreign":
		rawFrame(`{"type":"event","runId":4611686018427387904,"event":{"kind":"status","status":1}}`)
		time.Sleep(time.Hour)
	case "flood":
		for range job.Limits.MaxStatusEvents + 1 {
			if err := job.Host.Emit(ctx, &ipc.Event{Kind: ipc.KindStatus, Status: json.RawMessage(`1`)}); err != nil {
				break
			}
		}
		return ok1("1")
	case "console-flood":
		for range job.Limits.MaxConsoleEvents + 2 {
			if err := job.Host.Emit(ctx, &ipc.Event{Kind: ipc.KindConsole, Console: &ipc.Console{Level: "log", Text: "x"}}); err != nil {
				break
			}
		}
		return ok1("1")
	case "bigresult":
		return ok1(`"` + strings.Repeat("x", job.Limits.MaxResultBytes) + `"`)
	case "deepresult":
		return ok1(strings.Repeat("[", ipc.MaxJSONDepth+2) + strings.Repeat("]", ipc.MaxJSONDepth+2))
	case "fetch":
		_ = job.Host.Emit(ctx, &ipc.Event{Kind: ipc.KindFetch, Fetch: json.RawMessage(`{"url":"x"}`)})
		return ok1("1")
	case "fetch-flood":
		for i := range job.Limits.MaxFetchRequests + 1 {
			if err := job.Host.Emit(ctx, &ipc.Event{Kind: ipc.KindFetchRequest,
				FetchRequest: &ipc.FetchRequest{ID: int64(i + 1), Request: json.RawMessage(`{}`)}}); err != nil {
				break
			}
		}
		return ok1("1")
	case "burst":
		var b []byte
		for range 3 {
			b = append(b, frameBytes(`{"type":"event","runId":1,"event":{"kind":"console","console":{"level":"log","text":"x"}}}`)...)
		}
		rawWrite(append(b, frameBytes(`{"type":"terminal","runId":1,"event":{"kind":"result","result":{"value":1,"stats":{}}}}`)...))
		time.Sleep(time.Hour)
	case "idle-junk":
		// One write, so the junk follows the terminal frame in the pipe
		// whatever the scheduling: the host reads it once the worker is
		// idle. The worker's own loop never ends the run; the host kills
		// the worker first.
		rawWrite(append(frameBytes(`{"type":"terminal","runId":1,"event":{"kind":"result","result":{"value":1,"stats":{}}}}`),
			frameBytes(`{"type":"event","runId":1,"event":{"kind":"status","status":1}}`)...))
		time.Sleep(time.Hour)
	}
	return &ipc.Event{Kind: ipc.KindError, Error: &ipc.Failure{Code: ipc.CodeValidation, Message: "unknown fault " + name}}
}

// OpenModules holds a module session with the jsrt.Runtime, except for a
// session whose first module is "fault:NAME", which makes the worker
// misbehave as named (the pool must be fresh: the session is its run 1):
//
//	session-hang      never serve the session: ignore calls and abort
//	session-stray     reply to a call that was never made
//	session-terminal  end the session before the host does
//	session-event     send an event during the session
//	session-exit      os.Exit(3) during the session
func (f *faultRunner) OpenModules(ctx context.Context, lim ipc.Limits, modules []string, deadline time.Time) *jsrt.ModuleSession {
	name, _ := strings.CutPrefix(modules[0], "fault:")
	switch name {
	case "session-hang":
		time.Sleep(time.Hour)
	case "session-stray":
		rawFrame(`{"type":"return","runId":1,"return":{"id":99,"value":1}}`)
	case "session-terminal":
		rawFrame(`{"type":"terminal","runId":1,"event":{"kind":"result","result":{"value":null,"stats":{}}}}`)
	case "session-event":
		rawFrame(`{"type":"event","runId":1,"event":{"kind":"status","status":1}}`)
	case "session-exit":
		os.Exit(3)
	}
	return f.rt.OpenModules(ctx, lim, modules, deadline)
}

// rawWrite writes to the worker's output descriptor behind the protocol
// loop's back (through the descriptor number: an *os.File for it would
// close it when collected).
func rawWrite(b []byte) {
	for len(b) > 0 {
		n, err := syscall.Write(worker.OutFD, b)
		if err != nil {
			return
		}
		b = b[n:]
	}
}

// rawFrame writes a frame whose header is the JSON text header, with no
// payload (see ipc.EncodeFrame).
func rawFrame(header string) { rawWrite(frameBytes(header)) }

// frameBytes encodes a frame whose header is the JSON text header, with no
// payload.
func frameBytes(header string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(header)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(header)))
	return append(b, header...)
}
