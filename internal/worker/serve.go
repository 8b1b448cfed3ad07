package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// parentPollEvery is how often the worker checks that its parent is alive.
const parentPollEvery = 500 * time.Millisecond

// exitWait bounds how long a worker that is shutting down waits for its
// run to notice the cancellation.
const exitWait = 2 * time.Second

// ExitOverrun is the exit status of a worker that ended a run it could not
// stop (see overrun).
const ExitOverrun = 3

// overrunWriteWait bounds how long a worker that ends an overrunning run
// waits for its terminal frame to be written before it exits anyway.
const overrunWriteWait = time.Second

// errOverrun ends the protocol loop of a worker that is not its own
// process (Config.In and Out set) after an overrun.
var errOverrun = errors.New("a run overran its CPU limit inside a native call: the worker ended it and takes no other")

// server is one worker's protocol loop. The main loop (serve) owns the
// reads, through a reader goroutine; the writer goroutine owns the writes.
type server struct {
	in, out     *os.File
	pass        *os.File     // descriptors from the host; nil if none
	python      *pyrt.Runner // the zygote the host gave this worker; nil until then
	newRunner   func(jsrt.Config) (Runner, error)
	runner      Runner
	watchParent bool
	ownProcess  bool          // the worker is this process: it exits after an overrun
	overran     chan struct{} // closed after an overrun's terminal frame, if not ownProcess
	max         int           // frame limit both ways, from the host's hello
	w           *ipc.FrameWriter

	outq       chan []byte   // encoded frames for the writer; unbuffered, so a send waits for the previous write
	pongs      chan uint64   // ping sequence numbers to answer
	writerDone chan struct{} // closed when the writer goroutine stops
	quit       chan struct{} // closed when serve returns
	wg         sync.WaitGroup

	mu  sync.Mutex
	cur *activeRun // guarded by mu: the run in progress, nil when idle
}

// activeRun is the worker's state of the run in progress.
type activeRun struct {
	id      uint64
	cancel  context.CancelCauseFunc
	overrun atomic.Bool // the run's terminal went out through overrun
	replies *replyQueue
}

func newServer(in, out *os.File, newRunner func(jsrt.Config) (Runner, error), watchParent, ownProcess bool) *server {
	return &server{
		in: in, out: out, newRunner: newRunner, watchParent: watchParent, ownProcess: ownProcess,
		overran:    make(chan struct{}),
		outq:       make(chan []byte),
		pongs:      make(chan uint64, 16),
		writerDone: make(chan struct{}),
		quit:       make(chan struct{}),
	}
}

type readResult struct {
	f   *ipc.Frame
	err error
}

func (s *server) serve() (err error) {
	defer s.in.Close()
	defer s.out.Close()
	r := ipc.NewFrameReader(s.in, 0)
	hello, err := r.Read()
	switch {
	case err != nil:
		return fmt.Errorf("read the host's hello: %w", err)
	case hello.Type != ipc.FrameHello:
		return fmt.Errorf("the host's first frame is %s, not hello", hello.Type)
	case hello.Hello.Protocol != ipc.ProtocolVersion:
		return fmt.Errorf("the host speaks protocol %d, this worker %d", hello.Hello.Protocol, ipc.ProtocolVersion)
	}
	s.max = hello.Hello.MaxFrameBytes
	if s.max <= 0 {
		s.max = ipc.DefaultMaxFrameBytes
	}
	r.SetMax(s.max)
	s.w = ipc.NewFrameWriter(s.out, s.max)
	if b := hello.Hello.Bootstrap; b != nil {
		jsrt.UseBootstrap(b.ID, b.Code) // ignored unless this build's
	}
	s.runner, err = s.newRunner(jsrt.Config{Warm: hello.Hello.Warm, Locales: hello.Hello.Locales})
	if err != nil {
		return fmt.Errorf("start the runtime: %w", err)
	}
	defer s.runner.Close()
	defer func() {
		if s.python != nil {
			s.python.Close()
		}
	}()

	s.wg.Add(1) // Done when the writer returns, after quit or a write error.
	go s.writeLoop()
	frames := make(chan readResult)
	s.wg.Add(1) // Done when the reader returns, at end of input or quit.
	go s.readLoop(r, frames)
	parentGone := make(chan struct{})
	if s.watchParent {
		s.wg.Add(1) // Done at quit or when the parent changed.
		go s.watchParentLoop(parentGone)
	}
	defer s.shutdown()
	s.rehearse()

	b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameHello, Hello: &ipc.Hello{Protocol: ipc.ProtocolVersion, PID: os.Getpid()}}, s.max)
	if err != nil {
		return err
	}
	if !s.send(b) {
		return errHostGone
	}
	for {
		select {
		case rr := <-frames:
			if rr.err != nil {
				if errors.Is(rr.err, io.EOF) {
					return nil // the host closed our input: time to go
				}
				return fmt.Errorf("read: %w", rr.err)
			}
			if err := s.handle(rr.f); err != nil {
				return err
			}
		case <-parentGone:
			return errors.New("the parent process is gone")
		case <-s.overran:
			return errOverrun
		case <-s.writerDone:
			return errHostGone
		}
	}
}

// shutdown cancels the run in progress, stops the goroutines and waits a
// little for the run to notice.
func (s *server) shutdown() {
	s.mu.Lock()
	if s.cur != nil {
		s.cur.cancel(errHostGone)
	}
	s.mu.Unlock()
	close(s.quit)
	// Unblock a reader or writer stuck on a pipe (pipes made by os.Pipe
	// are pollable; the inherited descriptors die with the process).
	s.in.Close()
	s.out.Close()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(exitWait):
	}
}

// begin makes the run that frame f starts current; a frame that starts one
// while another is in progress is the host's error.
func (s *server) begin(f *ipc.Frame) (context.Context, *activeRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		return nil, nil, fmt.Errorf("%s for run %d while run %d is in progress", f.Type, f.RunID, s.cur.id)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	ar := &activeRun{id: f.RunID, cancel: cancel, replies: newReplyQueue(ctx.Done())}
	s.cur = ar
	return ctx, ar, nil
}

func (s *server) handle(f *ipc.Frame) error {
	switch f.Type {
	case ipc.FrameExecute:
		ctx, ar, err := s.begin(f)
		if err != nil {
			return err
		}
		// Tell the host the run reached this worker before anything of the
		// step runs: a worker that dies before this frame is out never
		// started the step, and the host may give the run to another.
		b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameStarted, RunID: f.RunID}, s.max)
		if err != nil {
			panic(fmt.Sprintf("worker: encode a started frame: %v", err))
		}
		// Written, not just queued, before the step starts: the second
		// send is taken only when the writer is done with the first.
		s.send(b)
		s.send(nil)
		s.wg.Add(1) // Done when the run's terminal frame is handed to the writer.
		go s.execute(ctx, ar, f.Execute)
	case ipc.FrameZygote:
		if err := s.zygote(f.Zygote); err != nil {
			return err
		}
	case ipc.FrameReply:
		s.reply(f)
	case ipc.FrameAbort:
		if ar := s.current(f.RunID); ar != nil {
			var cause error
			if f.Abort != nil && f.Abort.Reason != "" {
				cause = errors.New(f.Abort.Reason)
			}
			ar.cancel(cause)
		}
	case ipc.FramePing:
		select {
		case s.pongs <- f.Seq:
		default: // pings faster than we can answer; the next one will do
		}
	default:
		return fmt.Errorf("unexpected %s frame from the host", f.Type)
	}
	return nil
}

// reply passes a reply frame to its run. Replies for a run that ended are
// dropped; a run's queue never blocks.
func (s *server) reply(f *ipc.Frame) {
	if ar := s.current(f.RunID); ar != nil {
		ar.replies.push(*f.Reply)
	}
}

// zygote takes the control socket of a Python zygote that the host
// started for this worker, from the descriptor-passing socket, and makes
// the runner of Python runs with it. It is the host's error to send a
// zygote frame without the socket before it, or while a run is in
// progress.
func (s *server) zygote(info *ipc.Zygote) error {
	if s.pass == nil {
		return errors.New("a zygote frame, but this worker has no descriptor-passing socket")
	}
	s.mu.Lock()
	busy := s.cur != nil
	s.mu.Unlock()
	if busy {
		return errors.New("a zygote frame during a run")
	}
	control, err := recvFile(s.pass)
	if err != nil {
		return fmt.Errorf("receive the zygote's control socket: %w", err)
	}
	r, err := pyrt.NewRunner(control, *info, s.moduleHost())
	if err != nil {
		return err
	}
	if s.python != nil {
		s.python.Close() // the host replaced a zygote that died
	}
	s.python = r
	return nil
}

// moduleHost is where the module calls of a Python run go: this worker's
// own JavaScript runtime, as a JavaScript run's do. None if the runner has
// no modules (a test's).
func (s *server) moduleHost() pyrt.ModuleHost {
	h, ok := s.runner.(interface {
		OpenModules(ctx context.Context, lim ipc.Limits, modules []string, deadline time.Time) *jsrt.ModuleSession
	})
	if !ok {
		return nil
	}
	return func(ctx context.Context, lim ipc.Limits, modules []string, deadline time.Time) pyrt.ModuleSession {
		return h.OpenModules(ctx, lim, modules, deadline)
	}
}

// current returns the run in progress if its id is id. Replies and aborts
// for a run that already ended are dropped.
func (s *server) current(id uint64) *activeRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.cur.id == id {
		return s.cur
	}
	return nil
}

func (s *server) execute(ctx context.Context, ar *activeRun, x *ipc.Execute) {
	defer s.wg.Done()
	em := &emitter{s: s, id: ar.id}
	job := jsrt.Job{Language: x.Language, Code: x.Code, Input: x.Input, Limits: x.Limits, Modules: x.Modules, Packages: x.Packages, TimeZone: x.TimeZone, Locale: x.Locale, Host: em, Replies: ar.replies.out}
	var ev *ipc.Event
	retire := ""
	switch {
	case x.Language != ipc.LanguagePython:
		job.Overrun = func(ev *ipc.Event) {
			ar.overrun.Store(true) // before Run can return: see below
			go s.overrun(ar, ev)
		}
		ev = s.runner.Run(ctx, job)
		if ar.overrun.Load() {
			return // the terminal went out; the worker is ending
		}
	case s.python == nil:
		ev = ipc.Failed(&ipc.Failure{Code: ipc.CodeUnavailable, Message: "this worker has no Python zygote"}, ipc.Stats{})
	default:
		ev, retire = s.python.Run(ctx, job)
	}
	if ev == nil || !ev.Terminal() {
		ev = &ipc.Event{Kind: ipc.KindError, Error: &ipc.Failure{Code: ipc.CodeCrashed, Message: "the runtime returned no terminal event"}}
	}
	if em.tooLarge != "" && ev.Error != nil && ev.Error.Code == ipc.CodeAborted && ctx.Err() == nil {
		// The run stopped because an event could not be sent; say why.
		ev = &ipc.Event{Kind: ipc.KindError, Error: &ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: ipc.LimitFrameBytes,
			Message: em.tooLarge, Stats: ev.Error.Stats}}
	}
	sanitize(ev)
	retire = validUTF8(cutRetire(retire))
	b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameTerminal, RunID: ar.id, Event: ev, Retire: retire}, s.max)
	if err != nil {
		f := &ipc.Failure{Code: ipc.CodeRuntime, Message: "the result could not be sent: " + err.Error()}
		if errors.Is(err, ipc.ErrFrameTooLarge) {
			f = &ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: ipc.LimitFrameBytes,
				Message: fmt.Sprintf("the result is larger than the worker bridge allows (%d bytes)", s.max)}
		}
		b, err = ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameTerminal, RunID: ar.id, Retire: retire,
			Event: ipc.Failed(f, *ev.TerminalStats())}, s.max)
		if err != nil {
			panic(fmt.Sprintf("worker: encode a failure: %v", err))
		}
	}
	s.end(ar, b)
}

// overrun ends a run whose VM the runtime could not stop (jsrt.Job.Overrun):
// the step is stuck inside one call into the engine, past its CPU limit,
// and its goroutine would keep a CPU busy until the call returns, if ever.
// The worker sends the run's terminal, marked Exiting, and exits (or, not
// being its own process, ends its protocol loop): the process is the only
// thing that can stop that goroutine. The host replaces it.
func (s *server) overrun(ar *activeRun, ev *ipc.Event) {
	sanitize(ev)
	b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameTerminal, RunID: ar.id, Event: ev, Exiting: true}, s.max)
	if err != nil {
		panic(fmt.Sprintf("worker: encode an overrun's terminal: %v", err))
	}
	// The worker stays busy: an execute frame now is the host's error.
	written := make(chan struct{})
	go func() {
		// The second send is taken only when the writer is done with the
		// first (see the started frame in handle).
		s.send(b)
		s.send(nil)
		close(written)
	}()
	select {
	case <-written:
	case <-time.After(overrunWriteWait):
	}
	if s.ownProcess {
		fmt.Fprintf(os.Stderr, "stepbox worker: %v\n", errOverrun)
		os.Exit(ExitOverrun)
	}
	close(s.overran)
}

// end makes the worker idle and sends the run's terminal frame. Idle
// before the host can hear of it, so that the next execute, which may
// follow the terminal at once, finds the worker free.
func (s *server) end(ar *activeRun, terminal []byte) {
	s.mu.Lock()
	s.cur = nil
	s.mu.Unlock()
	ar.cancel(nil)
	s.send(terminal)
}

// send hands an encoded frame to the writer. It reports false if the
// writer is gone.
func (s *server) send(b []byte) bool {
	select {
	case s.outq <- b:
		return true
	case <-s.writerDone:
	case <-s.quit:
	}
	return false
}

func (s *server) writeLoop() {
	defer s.wg.Done()
	defer close(s.writerDone)
	for {
		var b []byte
		select {
		case b = <-s.outq:
		case seq := <-s.pongs:
			var err error
			if b, err = ipc.EncodeFrame(&ipc.Frame{Type: ipc.FramePong, Seq: seq}, s.max); err != nil {
				panic(err)
			}
		case <-s.quit:
			return
		}
		if b == nil {
			continue // a barrier: see the started frame in handle
		}
		if err := s.w.WriteEncoded(b, time.Time{}); err != nil {
			return
		}
	}
}

func (s *server) readLoop(r *ipc.FrameReader, frames chan<- readResult) {
	defer s.wg.Done()
	for {
		f, err := r.Read()
		if err == nil && f.Type == ipc.FrameReply {
			// The hot path of the data bridge, handled here rather than
			// handed to the serve loop: one goroutine wake less per reply.
			// A reply answers a request of the current run, so the execute
			// frame before it has been handled.
			s.reply(f)
			continue
		}
		select {
		case frames <- readResult{f, err}:
		case <-s.quit:
			return
		}
		if err != nil {
			return
		}
	}
}

func (s *server) watchParentLoop(gone chan<- struct{}) {
	defer s.wg.Done()
	ppid := os.Getppid()
	t := time.NewTicker(parentPollEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if os.Getppid() != ppid {
				close(gone)
				return
			}
		case <-s.quit:
			return
		}
	}
}

// emitter is the jsrt.Host of one run: it sends each event as a frame.
type emitter struct {
	s        *server
	id       uint64
	tooLarge string // set (on the run's goroutine) when an event did not fit in a frame
}

// Emit sends ev to the host. It returns once the writer has taken the
// frame, which it does only after writing the previous one, so a host that
// stops reading holds the guest back (backpressure) until ctx ends.
func (e *emitter) Emit(ctx context.Context, ev *ipc.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cp := *ev
	sanitize(&cp)
	b, err := ipc.EncodeFrame(&ipc.Frame{Type: ipc.FrameEvent, RunID: e.id, Event: &cp}, e.s.max)
	if errors.Is(err, ipc.ErrFrameTooLarge) {
		e.tooLarge = fmt.Sprintf("a %s event is larger than the worker bridge allows (%d bytes)", ev.Kind, e.s.max)
		return errors.New(e.tooLarge)
	}
	if err != nil {
		return err
	}
	select {
	case e.s.outq <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-e.s.writerDone:
		return errHostGone
	}
}

// sanitize makes the strings of ev valid UTF-8, so that encoding them does
// not replace bytes. A JavaScript string with a lone surrogate reaches Go
// as bytes that are not UTF-8; JSON encoding would turn each such byte into
// a three-byte U+FFFD and the host, recounting, would see more console
// bytes than the worker counted. A run of bad bytes becomes one U+FFFD, or
// one '?' where that would make the string longer.
func sanitize(ev *ipc.Event) {
	if c := ev.Console; c != nil && !(utf8.ValidString(c.Level) && utf8.ValidString(c.Text)) {
		ev.Console = &ipc.Console{Level: validUTF8(c.Level), Text: validUTF8(c.Text)}
	}
	if d := ev.DataRequest; d != nil && !utf8.ValidString(d.Method) {
		cp := *d
		cp.Method = validUTF8(d.Method)
		ev.DataRequest = &cp
	}
	if f := ev.Error; f != nil {
		f.Message, f.Name, f.Stack = validUTF8(f.Message), validUTF8(f.Name), validUTF8(f.Stack)
	}
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	if v := strings.ToValidUTF8(s, "\uFFFD"); len(v) <= len(s) {
		return v
	}
	return strings.ToValidUTF8(s, "?")
}

// cutRetire bounds a retire reason to what a frame carries.
func cutRetire(s string) string {
	const max = 1000
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// rehearsal is the step a worker runs before its hello. It leaves a mark
// in its VM's globals that no run may ever see (the worker's tests look
// for it).
const rehearsal = `globalThis.__stepboxRehearsal = JSON.stringify({n: [1, "a"]}); return 1`

// rehearsalLimits bound the rehearsal; it needs a fraction of each.
var rehearsalLimits = ipc.Limits{
	MemoryMB: 16, CPUMs: 2000, WallMs: 5000, MaxCodeBytes: 1 << 10, MaxResultBytes: 1 << 10,
	MaxDataRequests: 1, MaxDataBytes: 1 << 10, MaxStatusEvents: 1, MaxConsoleEvents: 1,
	MaxConsoleBytes: 1 << 10, MaxFetchRequests: 1, MaxFetchBytes: 1 << 10,
}

// rehearse runs one trivial step in a VM of its own, before the worker
// says hello: a worker's first run otherwise pays for the first execution
// of every code path it takes (page faults on the binary, the engine's and
// the Go runtime's lazy set-up), which is what a run on a just-started
// standby worker measured. The VM is closed after it, as every run's is,
// so no run sees it. Its outcome does not matter: a runtime that cannot
// run it fails the first real run the same way, with the host listening.
func (s *server) rehearse() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rehearsalLimits.WallMs)*time.Millisecond)
	defer cancel()
	_ = s.runner.Run(ctx, jsrt.Job{Code: rehearsal, Input: json.RawMessage(`null`), Limits: rehearsalLimits, Host: noHost{}})
}

// noHost takes the rehearsal's events, of which it has none.
type noHost struct{}

func (noHost) Emit(context.Context, *ipc.Event) error { return nil }
