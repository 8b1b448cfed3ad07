package pyrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/stepbox/stepbox/internal/ipc"
)

// Grace periods of the end of a run.
const (
	// terminalGrace is how long a run's process may take to exit on its
	// own after its terminal frame before the zygote is asked to kill it.
	terminalGrace = 100 * time.Millisecond
	// exitGrace is how long the zygote may take to report the end of a
	// run (after it was asked to kill it, or after the run's process
	// exited) before it is killed itself.
	exitGrace = 2 * time.Second
)

// asSlack is address space a run's process may use beyond the zygote's
// and its memory limit: what it set up while it was a spare.
const asSlack = 8 << 20

// run is the worker's side of one execution. All its fields are touched only
// by the goroutine of Run, except where marked.
type run struct {
	r      *Runner
	z      *zygote
	id     int64      // the spare's id, in the zygote's messages
	files  []*os.File // the spare's pipes: job and replies, events, raw output
	job    Job
	input  json.RawMessage
	ctx    context.Context // the caller's
	budget *ipc.Budget
	start  time.Time
	wall   time.Time

	// stopCtx ends at the wall deadline, when ctx or the runtime ends, or
	// at the first stop; Emit watches it.
	stopCtx    context.Context
	stopCancel context.CancelFunc

	frames  chan frameOrError // from the event pipe; closed at its end
	replies *lineQueue        // lines for the writer; closed at the end
	output  *tail             // the run's raw standard output and error
	wg      sync.WaitGroup

	pending map[int64]ipc.Kind // requests awaiting a Reply, and module calls
	nextID  int64

	// The run's built-in modules (modules_linux.go): the session is opened
	// by the first module call.
	modHost    ModuleHost
	mods       ModuleSession
	modPending int          // module calls without a reply
	modQueued  atomic.Int64 // module replies the writer has not taken yet; also the writer's

	final     *ipc.Event // the outcome, once known; the first one wins
	fromChild bool       // final came from the step's own terminal frame
	killSent  bool
	exit      *zmsg   // the zygote's report of the run's end
	eof       bool    // the event pipe is closed: every run process is gone
	codeMs    float64 // the step's own account of its time (untrusted; clamped)
	started   bool    // the run's process took the job
	cpuBase   float64 // CPU its process spent as a spare (untrusted; clamped)

	// zygoteBroken asks Run to stop the zygote: it died or could not be
	// made to end the run.
	zygoteBroken bool
}

type frameOrError struct {
	line []byte
	err  error
}

func newRun(ctx context.Context, r *Runner, spare *zmsg, job Job, input json.RawMessage) *run {
	start := time.Now()
	rn := &run{
		r: r, z: r.z, modHost: r.modules, id: spare.ID, files: spare.files, job: job, input: input, ctx: ctx,
		budget:  ipc.NewBudget(job.Limits),
		start:   start,
		wall:    start.Add(time.Duration(job.Limits.WallMs) * time.Millisecond),
		frames:  make(chan frameOrError, 16),
		replies: newLineQueue(),
		output:  newTail(4 << 10),
		pending: make(map[int64]ipc.Kind),
	}
	return rn
}

// memoryLimitMB is the run's memory limit, capped by the runtime's.
func (rn *run) memoryLimitMB() int { return min(rn.job.Limits.MemoryMB, rn.r.info.MaxMemoryMB) }

func (rn *run) execute() *ipc.Event {
	rn.stopCtx, rn.stopCancel = context.WithDeadline(rn.ctx, rn.wall)
	stopClose := context.AfterFunc(rn.r.closeCtx, rn.stopCancel)
	defer stopClose()
	defer rn.stopCancel()

	inW, evR, outR := rn.files[0], rn.files[1], rn.files[2]
	job, err := json.Marshal(struct {
		Code    string          `json:"code"`
		Input   json.RawMessage `json:"input"`
		Limits  ipc.Limits      `json:"limits"`
		Rlimits *runRlimits     `json:"rlimits"`
		Modules *jobModules     `json:"modules,omitempty"`
		Zone    string          `json:"timeZone,omitempty"`
	}{rn.job.Code, rn.input, rn.job.Limits, rn.rlimits(), rn.jobModules(), rn.job.TimeZone})
	if err != nil { // the input was checked: cannot happen
		job = []byte(`{}`)
	}
	rn.replies.push(outLine{b: append(job, '\n')})
	rn.wg.Add(3) // Done when the writer and both readers return, after the loop closes their files.
	go rn.writer(inW)
	go rn.readFrames(evR)
	go rn.readOutput(outR)

	rn.loop()
	if rn.mods != nil {
		// Ends the calls in progress (stopCtx has ended) and waits for the
		// worker's runtime, to close the run's database.
		rn.mods.Close()
	}

	rn.replies.close()
	inW.Close()
	evR.Close()
	outR.Close()
	for range rn.frames { // unblock the reader if the loop left early
	}
	rn.wg.Wait()
	return rn.finish()
}

// rlimits are the run's limits as its process sets them on itself.
func (rn *run) rlimits() *runRlimits {
	cpu := rn.job.Limits.CPUMs
	return &runRlimits{
		// The spare's event loop and console came after the zygote's
		// baseline: asSlack covers them.
		AS:     rn.r.info.VSZ + asSlack + int64(rn.memoryLimitMB())<<20,
		CPUMs:  cpu,
		CPUSec: (cpu+999)/1000 + 1,
		NoFile: rn.r.info.MaxOpenFiles,
		FSize:  rn.r.info.MaxFileSizeBytes,
		NProc:  rn.r.info.MaxProcs + 1, // the zygote is a task of the same user
	}
}

// loop runs until the run's processes are all gone (the zygote reported
// the end and the event pipe closed), or the zygote dies.
func (rn *run) loop() {
	stopped := rn.stopCtx.Done()
	replies := rn.job.Replies
	var modReplies <-chan ipc.ModuleReply // set by the first module call
	frames := rn.frames
	msgs := rn.z.msgs
	var grace <-chan time.Time
	var graceTimer *time.Timer
	defer func() {
		if graceTimer != nil {
			graceTimer.Stop()
		}
	}()
	armGrace := func(d time.Duration) {
		if graceTimer != nil {
			graceTimer.Stop()
		}
		graceTimer = time.NewTimer(d)
		grace = graceTimer.C
	}
	for rn.exit == nil || !rn.eof {
		select {
		case f, ok := <-frames:
			if !ok {
				rn.eof = true
				frames = nil
				break
			}
			if rn.final == nil {
				rn.handle(f)
			}
		case m := <-msgs:
			// After this run's exit comes the next spare: leave it for the
			// next run.
			if m.Op == "exit" && m.ID == rn.id {
				msgs = nil
				rn.exit = &m
				if grace == nil {
					armGrace(exitGrace) // the event pipe closes right behind it
				}
			}
			closeFiles(m.files)
		case <-rn.z.dead:
			if rn.final == nil {
				rn.final = ipc.Failed(&ipc.Failure{Code: ipc.CodeCrashed, Message: errZygoteDied.Error()}, ipc.Stats{})
			}
			rn.zygoteBroken = true
			return
		case rep := <-replies:
			rn.deliver(rep)
		case rep := <-modReplies:
			rn.deliverModule(rep)
		case <-stopped:
			rn.stop(rn.stopReason())
		case <-grace:
			if !rn.killSent {
				rn.kill()
				armGrace(exitGrace)
				break
			}
			// The zygote does not answer: it is broken.
			rn.zygoteBroken = true
			rn.z.stop()
			if rn.final == nil {
				rn.final = ipc.Failed(&ipc.Failure{Code: ipc.CodeCrashed,
					Message: "the Python zygote did not end the run"}, ipc.Stats{})
			}
			return
		}
		if rn.mods != nil && rn.final == nil && modReplies == nil {
			modReplies = rn.mods.Replies()
		}
		if rn.final != nil {
			stopped, replies, modReplies = nil, nil, nil
			if !rn.fromChild && !rn.killSent {
				rn.kill()
			}
			if grace == nil {
				if rn.killSent {
					armGrace(exitGrace)
				} else {
					armGrace(terminalGrace)
				}
			}
		}
	}
}

// stopReason says why stopCtx ended.
func (rn *run) stopReason() *ipc.Failure {
	switch {
	case rn.ctx.Err() != nil:
		return ipc.Aborted(rn.ctx)
	case rn.r.closeCtx.Err() != nil:
		return ipc.AbortedBecause("the Python runtime is closing")
	default:
		return rn.timeout(ipc.LimitWall)
	}
}

func (rn *run) timeout(limit string) *ipc.Failure {
	l, what := rn.job.Limits.WallMs, "wall-clock"
	if limit == ipc.LimitCPU {
		l, what = rn.job.Limits.CPUMs, "CPU"
	}
	return &ipc.Failure{Code: ipc.CodeTimeout, Limit: limit,
		Message: fmt.Sprintf("the step exceeded its %s time limit (%s=%d)", what, limit, l)}
}

// stop ends the run with f unless its outcome is already known; the loop
// then has the zygote kill the run's processes.
func (rn *run) stop(f *ipc.Failure) {
	if rn.final != nil {
		return
	}
	rn.final = ipc.Failed(f, ipc.Stats{})
	rn.stopCancel()
}

// watchCPU has the zygote watch the run's CPU clock from now on (the step
// starts: its process sends "start" once it has its job, before the step's
// code runs), and kill the run at its CPU limit. The process's own CPU
// timer (ITIMER_PROF: SIGPROF at the limit, whose default action ends the
// process even inside native code) ends most steps just as well; the
// zygote is what ends a step that ignores, handles or cancels it and then
// sits in one long native call (sorted(), str() of a huge int, a regular
// expression that backtracks), where no Python-level handler runs, long
// before RLIMIT_CPU (whole seconds) would. The step cannot reach the
// zygote. Killing the run costs nothing that reaching the limit does not
// cost anyway, so the zygote kills at the limit itself: all of the margin
// (10% and 10 ms) is left for its polling and for being scheduled. The CPU counts from base, the process's own reading
// of its CPU clock as it took the job (the prelude, before any of the
// step's code): what it spent as a spare (its rehearsal, which may still
// run when the job is written) is not the step's, and the time this
// message takes is. The zygote never takes a base later than its own
// reading when the message arrives, so a forged start frame can only
// shorten the step's time.
func (rn *run) watchCPU(base int64) {
	if err := rn.z.send(zmsg{Op: "watch", ID: rn.id, CPUMs: float64(rn.job.Limits.CPUMs), BaseNs: base}); err != nil {
		rn.z.stop() // the loop sees the zygote die
	}
}

// kill asks the zygote to kill every process of the run.
func (rn *run) kill() {
	rn.killSent = true
	if err := rn.z.send(zmsg{Op: "kill", ID: rn.id}); err != nil {
		rn.z.stop()
	}
}

// emit delivers an event to the host, or stops the run if the host does
// not take it.
func (rn *run) emit(ev *ipc.Event) {
	if err := rn.job.Host.Emit(rn.stopCtx, ev); err != nil {
		if rn.stopCtx.Err() != nil {
			rn.stop(rn.stopReason())
			return
		}
		rn.stop(&ipc.Failure{Code: ipc.CodeAborted, Message: "the host stopped taking events: " + err.Error()})
	}
}

// deliver passes a Reply to the step.
func (rn *run) deliver(rep ipc.Reply) {
	kind, ok := rn.pending[rep.ID]
	if !ok {
		return // the host checks ids; a stray reply is ignored
	}
	delete(rn.pending, rep.ID)
	if rep.Limit != "" {
		rn.stop(&ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: rep.Limit, Message: rep.Error})
		return
	}
	var line []byte
	if rep.Error == "" {
		payload := []byte(rep.Value)
		if len(bytes.TrimSpace(payload)) == 0 {
			payload = []byte("null")
		}
		if kind == ipc.KindDataRequest {
			if err := rn.budget.DataBytes(len(payload)); err != nil {
				rn.stop(ipc.LimitFailure(err))
				return
			}
		}
		var compact bytes.Buffer
		what := "data_proxy.request"
		if kind == ipc.KindFetchRequest {
			what = "fetch"
		}
		if err := ipc.CheckJSONDepth(payload, ipc.MaxJSONDepth); err != nil {
			line = replyError(rep.ID, what+": the reply is "+err.Error())
		} else if err := json.Compact(&compact, payload); err != nil {
			line = replyError(rep.ID, what+": the reply is not valid JSON")
		} else {
			line = fmt.Appendf(nil, `{"id":%d,"ok":true,"value":%s}`+"\n", rep.ID, compact.Bytes())
		}
	} else {
		line = replyError(rep.ID, rep.Error)
	}
	rn.replies.push(outLine{b: line})
}

// outLine is a line for the run's process: the job, or a reply.
type outLine struct {
	b      []byte
	module bool // a module call's reply, counted in modQueued
}

func replyError(id int64, msg string) []byte {
	b, _ := json.Marshal(struct {
		ID    int64  `json:"id"`
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}{id, false, msg})
	return append(b, '\n')
}

// writer writes the job and then the replies to the run's process.
func (rn *run) writer(f *os.File) {
	defer rn.wg.Done()
	broken := false
	for {
		lines, ok := rn.replies.take()
		if !ok {
			return
		}
		for _, line := range lines {
			if line.module {
				// Before the write: the step may read the line, and send its
				// next call, before Write returns.
				rn.modQueued.Add(-1)
			}
			if broken {
				continue // the process is gone: drop the rest until close
			}
			if _, err := f.Write(line.b); err != nil {
				broken = true
			}
		}
	}
}

// maxFrame is the longest line the run's process may send: its largest
// legitimate message plus room for escaping and the envelope.
func (rn *run) maxFrame() int {
	l := rn.job.Limits
	n := max(l.MaxResultBytes, l.MaxDataBytes, 2*l.MaxFetchBytes, 6*l.MaxConsoleBytes, 1<<20)
	if len(rn.job.Modules) > 0 {
		n = max(n, rn.moduleBytes())
	}
	return n + 64<<10
}

var errFrameTooLarge = errors.New("message too large")

// readFrames splits the event pipe into lines, each at most maxFrame bytes.
// After a bad frame it reports the error once and discards the rest, so
// that the run's process never blocks on a full pipe.
func (rn *run) readFrames(f *os.File) {
	defer rn.wg.Done()
	defer close(rn.frames)
	limit := rn.maxFrame()
	buf := make([]byte, 64<<10)
	var line []byte
	broken := false
	for {
		n, err := f.Read(buf)
		data := buf[:n]
		for len(data) > 0 && !broken {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				line = append(line, data...)
				data = nil
			} else {
				line = append(line, data[:i]...)
				data = data[i+1:]
			}
			if len(line) > limit {
				rn.frames <- frameOrError{err: fmt.Errorf("%w (more than %d bytes)", errFrameTooLarge, limit)}
				broken, line = true, nil
				break
			}
			if i >= 0 {
				rn.frames <- frameOrError{line: line}
				line = nil
			}
		}
		if err != nil {
			return
		}
	}
}

// readOutput keeps the tail of the run's raw standard output and error.
func (rn *run) readOutput(f *os.File) {
	defer rn.wg.Done()
	buf := make([]byte, 16<<10)
	for {
		n, err := f.Read(buf)
		rn.output.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// frame is one message from the run's process.
type frame struct {
	K       string          `json:"k"`
	Level   string          `json:"level"`
	Text    string          `json:"text"`
	V       json.RawMessage `json:"v"`
	ID      int64           `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Request json.RawMessage `json:"request"`
	Value   json.RawMessage `json:"value"`
	Limit   string          `json:"limit"`
	Bytes   int             `json:"bytes"`
	Name    string          `json:"name"`
	Message string          `json:"message"`
	Stack   string          `json:"stack"`
	Line    int             `json:"line"`
	Col     int             `json:"col"`
	Syntax  bool            `json:"syntax"`
	CodeMs  float64         `json:"codeMs"`
	CPUBase float64         `json:"cpuBase"`
	CPUNs   int64           `json:"cpuNs"` // start: the process's CPU clock
	// ConsoleDropped counts the lines the step's process did not send
	// because the console limits were reached.
	ConsoleDropped int `json:"consoleDropped"`
	// A module call's (Params above carries db.query's parameters).
	Op       string          `json:"op"`
	Handle   int64           `json:"handle"`
	Table    string          `json:"table"`
	SQL      string          `json:"sql"`
	Rows     json.RawMessage `json:"rows"`
	RowsText *string         `json:"rowsText"`
	Model    json.RawMessage `json:"model"`
	Options  json.RawMessage `json:"options"`
}

// Most bytes of the descriptive fields of an error frame that are kept.
const (
	maxErrorName    = 200
	maxErrorMessage = 8 << 10
	maxErrorStack   = 32 << 10
)

var consoleLevels = map[string]bool{"log": true, "info": true, "warn": true, "error": true, "debug": true}

// handle checks and acts on one frame from the run's process. Nothing in it
// is trusted: the budget is recounted here.
func (rn *run) handle(fe frameOrError) {
	if fe.err != nil {
		rn.stop(rn.protocol(fe.err.Error()))
		return
	}
	line := fe.line
	if !utf8.Valid(line) {
		rn.stop(rn.protocol("a message is not UTF-8"))
		return
	}
	// A module call's arguments are checked one by one after decoding,
	// so that one nested too deeply is the step's exception, as in
	// JavaScript; anything deeper than Python's json can write is not.
	module := bytes.HasPrefix(line, moduleFrame)
	depth := ipc.MaxJSONDepth + 1
	if module {
		depth = maxModuleFrameDepth
	}
	if err := ipc.CheckJSONDepth(line, depth); err != nil {
		rn.stop(rn.tooDeep(line, err))
		return
	}
	var f frame
	if err := json.Unmarshal(line, &f); err != nil {
		rn.stop(rn.protocol("undecodable message: " + err.Error()))
		return
	}
	if module != (f.K == "module") {
		rn.stop(rn.protocol("a message of two kinds"))
		return
	}
	switch f.K {
	case "module":
		rn.moduleCall(&f)
	case "start":
		if rn.started {
			rn.stop(rn.protocol("started twice"))
			return
		}
		rn.started, rn.cpuBase = true, f.CPUBase
		rn.watchCPU(f.CPUNs)
	case "console":
		level := f.Level
		if !consoleLevels[level] {
			level = "log"
		}
		out, ok, notice := rn.budget.Console(f.Text)
		if ok {
			rn.emit(&ipc.Event{Kind: ipc.KindConsole, Console: &ipc.Console{Level: level, Text: out}})
		} else if notice {
			rn.emit(&ipc.Event{Kind: ipc.KindConsole, Console: &ipc.Console{Level: "warn",
				Text: fmt.Sprintf("[stepbox] console limit reached (maxConsoleEvents=%d, maxConsoleBytes=%d): further output is dropped",
					rn.job.Limits.MaxConsoleEvents, rn.job.Limits.MaxConsoleBytes)}})
		}
	case "status":
		if len(f.V) == 0 {
			rn.stop(rn.protocol("status without a payload"))
			return
		}
		if err := rn.budget.Status(); err != nil {
			rn.stop(ipc.LimitFailure(err))
			return
		}
		if err := rn.budget.DataBytes(len(f.V)); err != nil {
			rn.stop(ipc.LimitFailure(err))
			return
		}
		rn.emit(&ipc.Event{Kind: ipc.KindStatus, Status: f.V})
	case "request":
		if f.ID != rn.nextID+1 {
			rn.stop(rn.protocol("request id out of sequence"))
			return
		}
		if len(f.Method) == 0 || len(f.Method) > 256 {
			rn.stop(rn.protocol("data request method of bad length"))
			return
		}
		params := f.Params
		if len(params) == 0 {
			params = json.RawMessage("null")
		}
		if err := rn.budget.DataRequest(len(params)); err != nil {
			rn.stop(ipc.LimitFailure(err))
			return
		}
		rn.nextID++
		rn.pending[f.ID] = ipc.KindDataRequest
		rn.emit(&ipc.Event{Kind: ipc.KindDataRequest, DataRequest: &ipc.DataRequest{ID: f.ID, Method: f.Method, Params: params}})
	case "fetch":
		if f.ID != rn.nextID+1 {
			rn.stop(rn.protocol("request id out of sequence"))
			return
		}
		if len(f.Request) == 0 {
			rn.stop(rn.protocol("fetch without a request"))
			return
		}
		if err := rn.budget.Fetch(); err != nil {
			rn.stop(ipc.LimitFailure(err))
			return
		}
		rn.nextID++
		rn.pending[f.ID] = ipc.KindFetchRequest
		rn.emit(&ipc.Event{Kind: ipc.KindFetchRequest, FetchRequest: &ipc.FetchRequest{ID: f.ID, Request: f.Request}})
	case "result":
		rn.childStats(&f)
		rn.fromChild = true
		value := f.Value
		if len(value) == 0 {
			value = json.RawMessage("null")
		}
		if len(value) > rn.job.Limits.MaxResultBytes {
			rn.final = ipc.Failed(&ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: ipc.LimitResult,
				Message: fmt.Sprintf("the result is %d bytes, more than maxResultBytes=%d", len(value), rn.job.Limits.MaxResultBytes)}, ipc.Stats{})
			return
		}
		rn.final = &ipc.Event{Kind: ipc.KindResult, Result: &ipc.Result{Value: value}}
	case "error":
		rn.childStats(&f)
		rn.fromChild = true
		rn.final = ipc.Failed(rn.thrown(&f), ipc.Stats{})
	case "oom":
		rn.fromChild = true
		rn.final = ipc.Failed(rn.oom(), ipc.Stats{})
	case "limit":
		rn.fromChild = true
		rn.final = ipc.Failed(rn.childLimit(&f), ipc.Stats{})
	default:
		rn.stop(rn.protocol(fmt.Sprintf("unknown message kind %q", cut(f.K, 40))))
	}
}

// childStats keeps what the step's process says about its own costs. They
// are only statistics, clamped where they are used.
func (rn *run) childStats(f *frame) {
	rn.codeMs = f.CodeMs
	// Lines dropped in the process were never sent; the host saw one (the
	// first) if any.
	if rn.budget.Stats.ConsoleDropped > 0 && f.ConsoleDropped > rn.budget.Stats.ConsoleDropped {
		rn.budget.Stats.ConsoleDropped = min(f.ConsoleDropped, 1<<30)
	}
}

// protocol is the outcome of a run whose process broke the bridge
// protocol: only the step's own code can have done that.
func (rn *run) protocol(what string) *ipc.Failure {
	return &ipc.Failure{Code: ipc.CodeRuntime, Message: "the step broke the bridge protocol: " + what}
}

// tooDeep is the outcome of a message nested more than MaxJSONDepth deep.
func (rn *run) tooDeep(line []byte, err error) *ipc.Failure {
	what := map[string]string{
		"result":  "the result is ",
		"status":  "report_status: the payload is ",
		"request": "data_proxy.request: params are ",
		"fetch":   "fetch: the request is ",
	}
	for kind, prefix := range what {
		if bytes.HasPrefix(line, []byte(`{"k":"`+kind+`"`)) {
			return &ipc.Failure{Code: ipc.CodeRuntime, Limit: ipc.LimitJSONDepth, Message: prefix + err.Error()}
		}
	}
	return rn.protocol(err.Error())
}

func (rn *run) oom() *ipc.Failure {
	return &ipc.Failure{Code: ipc.CodeOOM, Limit: ipc.LimitMemory,
		Message: fmt.Sprintf("the step ran out of memory (memoryMb=%d)", rn.memoryLimitMB())}
}

// childLimit is the outcome of a limit the run's process says it crossed
// (it counts too, so that the step stops at the call that crossed it).
func (rn *run) childLimit(f *frame) *ipc.Failure {
	l := rn.job.Limits
	max := map[string]int{
		ipc.LimitStatusEvents: l.MaxStatusEvents, ipc.LimitDataRequests: l.MaxDataRequests,
		ipc.LimitDataBytes: l.MaxDataBytes, ipc.LimitFetchRequests: l.MaxFetchRequests,
		ipc.LimitResult: l.MaxResultBytes,
	}
	m, ok := max[f.Limit]
	if !ok {
		return rn.protocol(fmt.Sprintf("unknown limit %q", cut(f.Limit, 40)))
	}
	if f.Limit == ipc.LimitResult && f.Bytes > m {
		return &ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: f.Limit,
			Message: fmt.Sprintf("the result is %d bytes, more than maxResultBytes=%d", f.Bytes, m)}
	}
	return ipc.LimitFailure(&ipc.LimitError{Limit: f.Limit, Max: m})
}

// thrown turns the description of an exception into a failure.
func (rn *run) thrown(f *frame) *ipc.Failure {
	code := ipc.CodeRuntime
	if f.Syntax {
		code = ipc.CodeValidation
	}
	name := cut(f.Name, maxErrorName)
	msg := cut(f.Message, maxErrorMessage)
	out := &ipc.Failure{Code: code, Name: name, Message: msg, Stack: cut(f.Stack, maxErrorStack)}
	if name != "" {
		out.Message = name
		if msg != "" {
			out.Message += ": " + msg
		}
	}
	switch f.Limit {
	case ipc.LimitStackDepth, ipc.LimitJSONDepth:
		out.Limit = f.Limit
	}
	if f.Line > 0 {
		out.Position = &ipc.Position{Line: f.Line, Column: max(f.Col, 0)}
	}
	return out
}

// finish builds the terminal event once every process of the run is gone.
func (rn *run) finish() *ipc.Event {
	ev := rn.final
	if ev == nil {
		ev = ipc.Failed(rn.classifyExit(), ipc.Stats{})
	}
	st := rn.budget.Stats
	st.WallMs = ipc.Ms(time.Since(rn.start))
	if rn.exit != nil {
		st.CPUMs = rn.exit.CPUMs - min(max(rn.cpuBase, 0), rn.exit.CPUMs)
		st.HeapMB = max(0, rn.exit.MaxRssKb*1024-float64(rn.r.info.RSS)) / (1 << 20)
	}
	st.CodeMs = st.CPUMs
	if rn.codeMs > 0 {
		st.CodeMs = min(rn.codeMs, st.WallMs)
	}
	*ev.TerminalStats() = st
	return ev
}

// classifyExit explains the end of a run whose process exited without a
// terminal frame.
func (rn *run) classifyExit() *ipc.Failure {
	m := rn.exit
	if m == nil {
		return &ipc.Failure{Code: ipc.CodeCrashed, Message: "the Python zygote did not report the end of the run"}
	}
	out := strings.TrimSpace(rn.output.String())
	memory := strings.Contains(out, "MemoryError") || strings.Contains(out, "Cannot allocate memory") ||
		strings.Contains(out, "out of memory")
	sig := syscall.Signal(m.Signal)
	switch {
	case m.CPUKilled:
		return rn.timeout(ipc.LimitCPU) // the zygote's watch
	case sig == syscall.SIGPROF || sig == syscall.SIGXCPU:
		return rn.timeout(ipc.LimitCPU)
	case sig == syscall.SIGKILL && m.CPUMs >= float64(rn.job.Limits.CPUMs):
		return rn.timeout(ipc.LimitCPU) // RLIMIT_CPU's hard limit
	case sig == syscall.SIGKILL && (memory || m.MaxRssKb*1024 >= float64(int64(rn.memoryLimitMB())<<19)):
		return rn.oom() // the memory cgroup's OOM killer
	case sig != 0 && memory:
		return rn.oom()
	case sig != 0:
		return &ipc.Failure{Code: ipc.CodeRuntime, Message: fmt.Sprintf("the step's Python process was killed by signal %s", signalName(sig)), Stack: out}
	case memory:
		return rn.oom()
	default:
		return &ipc.Failure{Code: ipc.CodeRuntime, Message: fmt.Sprintf("the step's Python process exited (status %d) before the step finished", m.Status), Stack: out}
	}
}

func signalName(s syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT", syscall.SIGKILL: "SIGKILL",
		syscall.SIGBUS: "SIGBUS", syscall.SIGILL: "SIGILL", syscall.SIGFPE: "SIGFPE", syscall.SIGTERM: "SIGTERM",
		syscall.SIGALRM: "SIGALRM", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS", syscall.SIGPIPE: "SIGPIPE"}
	if n, ok := names[s]; ok {
		return n
	}
	return strconv.Itoa(int(s)) + " (" + s.String() + ")"
}

// cut returns at most n bytes of s without splitting a character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
