package ipc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// ProtocolVersion is the version of the worker protocol. Both sides send it
// in their hello frame and refuse a peer that speaks another one: a host and
// a worker are normally the same binary, but a binary replaced on disk
// between two re-executions is not. Version 2 added module sessions
// (modules, call and return frames); version 3 the started frame; version
// 4 the payload after the header (EncodeFrame); version 5 a terminal
// frame's Exiting; version 6 Python runs in the worker (execute's
// language, the zygote frame, terminal's retire), the hello's bootstrap,
// and dropped module sessions.
const ProtocolVersion = 6

// DefaultMaxFrameBytes is the largest frame body accepted when the reader is
// given no limit: 64 MiB. A frame carries one event, so a run's result, a
// data request's parameters or a reply must each fit in it with room for the
// envelope (a few hundred bytes).
const DefaultMaxFrameBytes = 64 << 20

// MaxFrameDepth is the deepest JSON nesting accepted in a frame body: the
// bridge's own limit (MaxJSONDepth) plus the envelope around a value
// (frame → event → result → value).
const MaxFrameDepth = MaxJSONDepth + 8

// frameHeaderBytes is the size of the length prefix.
const frameHeaderBytes = 4

// LimitFrameBytes is the Failure.Limit of a run that produced an event or a
// result too large for one frame (see DefaultMaxFrameBytes).
const LimitFrameBytes = "frameBytes"

// Errors of the frame codec. A reader returns io.EOF only at a frame
// boundary; a stream that ends inside a frame is io.ErrUnexpectedEOF.
var (
	// ErrFrameTooLarge reports a frame whose length prefix exceeds the
	// reader's limit, or a frame that would exceed the writer's.
	ErrFrameTooLarge = errors.New("ipc: frame too large")
	// ErrFrameInvalid reports a frame body that is not exactly one JSON
	// object of the protocol: bad JSON, nesting too deep, an unknown field
	// or frame type, or a payload that does not match the type.
	ErrFrameInvalid = errors.New("ipc: invalid frame")
)

// FrameType names a frame of the worker protocol. doc.go draws the sequence.
type FrameType string

// The frame types, with the side that sends each.
const (
	FrameHello    FrameType = "hello"    // both: protocol version; first frame each way
	FrameExecute  FrameType = "execute"  // host: start a run (Execute)
	FrameStarted  FrameType = "started"  // worker: the execute frame arrived; the step starts now
	FrameEvent    FrameType = "event"    // worker: one non-terminal Event of the run
	FrameReply    FrameType = "reply"    // host: answer to a data request (Reply)
	FrameAbort    FrameType = "abort"    // host: stop the run (Abort, optional)
	FrameTerminal FrameType = "terminal" // worker: the run's one terminal Event
	FramePing     FrameType = "ping"     // host: are you alive? (Seq)
	FramePong     FrameType = "pong"     // worker: answer to ping (same Seq)
	// FrameZygote hands the worker the control socket of a Python zygote
	// the host started for it (Zygote); the socket itself travels on the
	// worker's descriptor-passing socket just before the frame.
	FrameZygote FrameType = "zygote"
)

// Frame is one message of the worker protocol. Type says which of the
// other fields are set; Check enforces it.
type Frame struct {
	Type FrameType `json:"type"`
	// RunID names the run an execute, event, reply, abort or terminal
	// frame belongs to. The host assigns it; it is never zero.
	RunID uint64 `json:"runId,omitempty"`
	// Seq pairs a pong with its ping.
	Seq     uint64   `json:"seq,omitempty"`
	Hello   *Hello   `json:"hello,omitempty"`
	Execute *Execute `json:"execute,omitempty"`
	Event   *Event   `json:"event,omitempty"` // event and terminal frames
	Reply   *Reply   `json:"reply,omitempty"`
	Abort   *Abort   `json:"abort,omitempty"`
	Zygote  *Zygote  `json:"zygote,omitempty"`
	// Retire, on a terminal frame, asks the host to replace the worker
	// after this run, and says why (its zygote could not prove that what
	// the run left is gone, say). The run's outcome stands.
	Retire string `json:"retire,omitempty"`
	// Exiting, on a terminal frame only, says that the worker exits after
	// it: it could not stop the run's VM (a step stuck in one native call
	// past its CPU limit), so it ended the run itself and takes no other.
	// The host replaces it at once.
	Exiting bool `json:"exiting,omitempty"`
}

// Hello is the handshake. The host sends its hello first, with the
// settings the worker needs; the worker answers once it is ready to run.
type Hello struct {
	Protocol int `json:"protocol"`
	// PID is the worker's process id as the worker sees it (informational:
	// inside a pid namespace it is not the host's view).
	PID int `json:"pid,omitempty"`
	// MaxFrameBytes is the largest frame the host accepts and sends; the
	// worker uses it both ways. Host to worker only.
	MaxFrameBytes int `json:"maxFrameBytes,omitempty"`
	// Warm is jsrt.Config.Warm for the worker's runtime. Host to worker only.
	Warm int `json:"warm,omitempty"`
	// Locales is jsrt.Config.Locales for the worker's runtime: the locales
	// beyond English its Intl offers; absent means every one. Host to
	// worker only.
	Locales []string `json:"locales,omitempty"`
	// Bootstrap, if set, is the JavaScript bootstrap as the host compiled
	// it (jsrt.Bootstrap), so that the worker need not compile it again
	// (jsrt.UseBootstrap; a worker of another build ignores it). Host to
	// worker only.
	Bootstrap *Bootstrap `json:"bootstrap,omitempty"`
}

// Bootstrap is compiled JavaScript bootstrap code and the ID of its format.
type Bootstrap struct {
	ID   string `json:"id"`
	Code []byte `json:"code"`
}

// The languages of Execute.Language.
const (
	LanguageJavaScript = "javascript" // also the empty string; TypeScript arrives compiled
	LanguagePython     = "python"
)

// Execute starts a run: the fields of jsrt.Job that cross the boundary.
type Execute struct {
	// Language says which runtime runs the step: LanguageJavaScript (or
	// empty) or LanguagePython, which needs a zygote frame first.
	Language string          `json:"language,omitempty"`
	Code     string          `json:"code"`
	Input    json.RawMessage `json:"input,omitempty"` // JSON; empty means null
	Limits   Limits          `json:"limits"`
	// Modules are the built-in modules the run's guest gets ("duckdb",
	// "glpk"); the engine has checked them against the plan.
	Modules []string `json:"modules,omitempty"`
	// Packages are the npm packages the step imports, as bundles. They
	// travel with every run that imports them; the worker compiles each
	// bundle to bytecode once and keeps it.
	Packages []Package `json:"packages,omitempty"`
	// TimeZone is the run's IANA time zone, checked by the engine; empty
	// means UTC.
	TimeZone string `json:"timeZone,omitempty"`
	// Locale is the run's default BCP 47 locale, checked and made
	// canonical by the engine; empty means en-US.
	Locale string `json:"locale,omitempty"`
}

// Package is one npm package of the engine's catalogue, bundled: Source is
// a script (made by package npm with esbuild) whose completion value is
// the package's module namespace.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Source  string `json:"source"`
}

// Abort asks the worker to stop a run. Reason, if set, becomes the cause of
// the run's cancellation ("the run was aborted: <reason>").
type Abort struct {
	Reason string `json:"reason,omitempty"`
}

// Zygote describes the Python zygote whose control socket the host passes
// to the worker with a zygote frame, and the rlimits of its runs. The host
// measured its memory after its preloads: a run's RLIMIT_AS goes on top of
// its address space, and its reported peak is above its resident set.
type Zygote struct {
	VSZ              int64 `json:"vsz"`              // address space, bytes
	RSS              int64 `json:"rss"`              // resident set, bytes
	MaxMemoryMB      int   `json:"maxMemoryMb"`      // caps a run's memoryMb
	MaxProcs         int   `json:"maxProcs"`         // a run's processes and threads
	MaxOpenFiles     int   `json:"maxOpenFiles"`     // a run's RLIMIT_NOFILE
	MaxFileSizeBytes int64 `json:"maxFileSizeBytes"` // a run's RLIMIT_FSIZE
	StartTimeoutMs   int64 `json:"startTimeoutMs"`   // how long a spare may take
}

// Check reports whether z is well formed.
func (z *Zygote) Check() error {
	if z.VSZ <= 0 || z.RSS < 0 || z.MaxMemoryMB <= 0 || z.MaxProcs <= 0 || z.MaxOpenFiles <= 0 ||
		z.MaxFileSizeBytes <= 0 || z.StartTimeoutMs <= 0 {
		return fmt.Errorf("zygote %+v", *z)
	}
	return nil
}

// Check reports whether f is a well-formed frame: a known type with exactly
// the payload that type carries. It does not know which side sent f; the
// receiver checks that f is one it expects.
func (f *Frame) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s frame: %s", ErrFrameInvalid, f.Type, fmt.Sprintf(format, args...))
	}
	// set lists which optional parts are present, to compare with what the
	// type allows.
	type parts struct{ run, seq, hello, execute, event, reply, abort, zygote, retire bool }
	got := parts{f.RunID != 0, f.Seq != 0, f.Hello != nil, f.Execute != nil, f.Event != nil, f.Reply != nil, f.Abort != nil,
		f.Zygote != nil, f.Retire != ""}
	var want parts
	optionalAbort, optionalRetire := false, false
	switch f.Type {
	case FrameHello:
		want.hello = true
	case FrameExecute:
		want.run, want.execute = true, true
	case FrameStarted:
		want.run = true
	case FrameEvent:
		want.run, want.event = true, true
	case FrameTerminal:
		want.run, want.event = true, true
		optionalRetire = true
	case FrameReply:
		want.run, want.reply = true, true
	case FrameAbort:
		want.run = true
		optionalAbort = true
	case FramePing, FramePong:
		want.seq = true
	case FrameZygote:
		want.zygote = true
	default:
		if len(f.Type) > 32 {
			return fmt.Errorf("%w: unknown frame type %.32q (cut)", ErrFrameInvalid, f.Type)
		}
		return fmt.Errorf("%w: unknown frame type %q", ErrFrameInvalid, f.Type)
	}
	if optionalAbort {
		want.abort = got.abort
	}
	if optionalRetire {
		want.retire = got.retire
	}
	if f.Exiting && f.Type != FrameTerminal {
		return bad("%s frame marked exiting", f.Type)
	}
	if got != want {
		return bad("fields do not match the type (runId=%t seq=%t hello=%t execute=%t event=%t reply=%t abort=%t zygote=%t retire=%t)",
			got.run, got.seq, got.hello, got.execute, got.event, got.reply, got.abort, got.zygote, got.retire)
	}
	switch f.Type {
	case FrameHello:
		if f.Hello.Protocol <= 0 || f.Hello.MaxFrameBytes < 0 || f.Hello.PID < 0 {
			return bad("protocol %d, maxFrameBytes %d, pid %d", f.Hello.Protocol, f.Hello.MaxFrameBytes, f.Hello.PID)
		}
		if b := f.Hello.Bootstrap; b != nil && (b.ID == "" || len(b.Code) == 0) {
			return bad("a bootstrap without its ID or code")
		}
	case FrameEvent:
		if err := CheckEvent(f.Event); err != nil {
			return bad("%v", err)
		}
		if f.Event.Terminal() {
			return bad("a %s event is terminal", f.Event.Kind)
		}
	case FrameTerminal:
		if err := CheckEvent(f.Event); err != nil {
			return bad("%v", err)
		}
		if !f.Event.Terminal() {
			return bad("a %s event is not terminal", f.Event.Kind)
		}
	case FrameExecute:
		switch f.Execute.Language {
		case "", LanguageJavaScript, LanguagePython:
		default:
			return bad("language %.32q", f.Execute.Language)
		}
	case FrameZygote:
		if err := f.Zygote.Check(); err != nil {
			return bad("%v", err)
		}
	}
	if len(f.Retire) > maxRetireBytes {
		return bad("a retire reason of %d bytes", len(f.Retire))
	}
	return nil
}

// maxRetireBytes bounds Frame.Retire.
const maxRetireBytes = 1024

// knownCodes are the error codes a Failure may carry.
var knownCodes = map[Code]bool{
	CodeValidation: true, CodeRuntime: true, CodeTimeout: true, CodeOOM: true,
	CodeLimitExceeded: true, CodeAborted: true, CodeCrashed: true, CodeUnavailable: true,
}

// CheckEvent reports whether ev has exactly the payload its kind carries.
func CheckEvent(ev *Event) error {
	type parts struct{ status, console, dataRequest, fetch, fetchRequest, result, failure bool }
	got := parts{len(ev.Status) > 0, ev.Console != nil, ev.DataRequest != nil, len(ev.Fetch) > 0, ev.FetchRequest != nil,
		ev.Result != nil, ev.Error != nil}
	var want parts
	switch ev.Kind {
	case KindStatus:
		want.status = true
	case KindConsole:
		want.console = true
	case KindDataRequest:
		want.dataRequest = true
	case KindFetch:
		want.fetch = true
	case KindFetchRequest:
		want.fetchRequest = true
	case KindResult:
		want.result = true
	case KindError:
		want.failure = true
	default:
		if len(ev.Kind) > 32 {
			return fmt.Errorf("unknown event kind %.32q (cut)", ev.Kind)
		}
		return fmt.Errorf("unknown event kind %q", ev.Kind)
	}
	if got != want {
		return fmt.Errorf("%s event: fields do not match the kind", ev.Kind)
	}
	switch {
	case ev.Result != nil && len(ev.Result.Value) == 0:
		return errors.New("result event without a value")
	case ev.FetchRequest != nil && len(ev.FetchRequest.Request) == 0:
		return errors.New("fetch request event without a request")
	case ev.Error != nil && !knownCodes[ev.Error.Code]:
		return fmt.Errorf("error event with unknown code %.32q", ev.Error.Code)
	}
	return nil
}

// EncodeFrame checks f and returns it as a frame: the 4-byte big-endian
// length of the body followed by the body. The body is the 4-byte
// big-endian length of a JSON header, the header (f as JSON, without its
// payload), and the payload: the one large JSON value some frame types
// carry (execute: the input; terminal: the result's value; reply and
// return: the value), written as it is. The payload is neither re-encoded
// nor re-scanned when encoding, which made a 450 KB input cost 3 ms on the
// host and 5 ms in the worker; the receiver validates it once. It fails
// with ErrFrameTooLarge if the body is longer than max (max <= 0 means
// DefaultMaxFrameBytes).
//
// Strings and raw JSON are written as they are (no HTML escaping), so a
// raw JSON value is never longer on the wire than it was when counted.
func EncodeFrame(f *Frame, max int) ([]byte, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	if max <= 0 {
		max = DefaultMaxFrameBytes
	}
	header, payload := splitPayload(f)
	var buf bytes.Buffer
	buf.Grow(2*frameHeaderBytes + 256 + len(payload))
	buf.Write(make([]byte, 2*frameHeaderBytes))
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(header); err != nil {
		return nil, fmt.Errorf("ipc: encode %s frame: %w", f.Type, err)
	}
	buf.Truncate(buf.Len() - 1) // the Encoder's newline
	h := buf.Len() - 2*frameHeaderBytes
	buf.Write(payload)
	b := buf.Bytes()
	n := len(b) - frameHeaderBytes
	if n > max {
		return nil, fmt.Errorf("%w: %s frame of %d bytes, more than %d", ErrFrameTooLarge, f.Type, n, max)
	}
	binary.BigEndian.PutUint32(b, uint32(n))
	binary.BigEndian.PutUint32(b[frameHeaderBytes:], uint32(h))
	return b, nil
}

// payloadOf returns the field of f that travels as the frame's payload, or
// nil when f's type has none.
func payloadOf(f *Frame) *json.RawMessage {
	switch {
	case f.Type == FrameExecute && f.Execute != nil:
		return &f.Execute.Input
	case f.Type == FrameTerminal && f.Event != nil && f.Event.Result != nil:
		return &f.Event.Result.Value
	case f.Type == FrameReply && f.Reply != nil:
		return &f.Reply.Value
	}
	return nil
}

// splitPayload returns a copy of f without its payload, and the payload.
// f is not modified.
func splitPayload(f *Frame) (*Frame, []byte) {
	cp := *f
	switch {
	case cp.Type == FrameExecute && cp.Execute != nil:
		x := *cp.Execute
		cp.Execute = &x
	case cp.Type == FrameTerminal && cp.Event != nil && cp.Event.Result != nil:
		ev, r := *cp.Event, *cp.Event.Result
		ev.Result = &r
		cp.Event = &ev
	case cp.Type == FrameReply && cp.Reply != nil:
		r := *cp.Reply
		cp.Reply = &r
	default:
		return f, nil
	}
	p := payloadOf(&cp)
	payload := *p
	*p = nil
	return &cp, payload
}

// DecodeFrame decodes one frame body (without its length prefix; see
// EncodeFrame). It checks the header's nesting depth before decoding it,
// refuses unknown fields and anything after the header's one JSON object,
// checks that the payload is one valid JSON value nested no deeper than
// MaxJSONDepth (and that only types with a payload have one), and checks
// the result with Frame.Check. Every error wraps ErrFrameInvalid.
func DecodeFrame(body []byte) (*Frame, error) {
	if len(body) < frameHeaderBytes {
		return nil, fmt.Errorf("%w: a body of %d bytes has no header length", ErrFrameInvalid, len(body))
	}
	h := int64(binary.BigEndian.Uint32(body))
	if h > int64(len(body)-frameHeaderBytes) {
		return nil, fmt.Errorf("%w: header length %d in a body of %d bytes", ErrFrameInvalid, h, len(body))
	}
	header, payload := body[frameHeaderBytes:frameHeaderBytes+int(h)], body[frameHeaderBytes+int(h):]
	if err := CheckJSONDepth(header, MaxFrameDepth); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFrameInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(header))
	dec.DisallowUnknownFields()
	var f Frame
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFrameInvalid, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the frame's JSON object", ErrFrameInvalid)
	}
	if len(payload) > 0 {
		p := payloadOf(&f)
		switch {
		case p == nil:
			return nil, fmt.Errorf("%w: a %s frame with a payload", ErrFrameInvalid, f.Type)
		case len(*p) > 0 && string(*p) != "null":
			return nil, fmt.Errorf("%w: a %s frame with its payload in the header too", ErrFrameInvalid, f.Type)
		case !json.Valid(payload):
			return nil, fmt.Errorf("%w: the %s frame's payload is not valid JSON", ErrFrameInvalid, f.Type)
		}
		if err := CheckJSONDepth(payload, MaxJSONDepth); err != nil {
			return nil, fmt.Errorf("%w: the %s frame's payload %w", ErrFrameInvalid, f.Type, err)
		}
		// A copy: FrameReader reuses its buffer.
		*p = bytes.Clone(payload)
	}
	if err := f.Check(); err != nil {
		return nil, err
	}
	return &f, nil
}

// FrameReader reads frames from a stream. It is not safe for concurrent
// use: one goroutine owns each stream's reads.
type FrameReader struct {
	r   io.Reader
	max int
	hdr [frameHeaderBytes]byte
	buf []byte // reused body buffer; frames never alias it
}

// NewFrameReader returns a reader of frames from r whose bodies are at most
// max bytes (max <= 0 means DefaultMaxFrameBytes).
func NewFrameReader(r io.Reader, max int) *FrameReader {
	fr := &FrameReader{r: r}
	fr.SetMax(max)
	return fr
}

// SetMax changes the largest body accepted (max <= 0 means
// DefaultMaxFrameBytes).
func (fr *FrameReader) SetMax(max int) {
	if max <= 0 {
		max = DefaultMaxFrameBytes
	}
	fr.max = max
}

// reuseLimit is the largest body buffer kept between frames.
const reuseLimit = 1 << 20

// growStep bounds how much the body buffer grows ahead of the bytes that
// actually arrived: a length prefix alone never makes the reader allocate.
const growStep = 1 << 20

// Read reads the next frame. It returns io.EOF if the stream ends cleanly
// between frames, io.ErrUnexpectedEOF if it ends inside one, an error
// wrapping ErrFrameTooLarge if the length prefix exceeds the limit (nothing
// of the body is read or allocated), and an error wrapping ErrFrameInvalid
// for a body DecodeFrame refuses. Other errors come from the stream. After
// any error the stream is out of step and must be abandoned.
func (fr *FrameReader) Read() (*Frame, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return nil, err
	}
	n := int64(binary.BigEndian.Uint32(fr.hdr[:]))
	if n > int64(fr.max) {
		return nil, fmt.Errorf("%w: length prefix says %d bytes, more than %d", ErrFrameTooLarge, n, fr.max)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: empty frame", ErrFrameInvalid)
	}
	body, err := fr.readBody(int(n))
	if err != nil {
		return nil, err
	}
	return DecodeFrame(body)
}

// readBody reads exactly n bytes, growing its buffer only as data arrives.
func (fr *FrameReader) readBody(n int) ([]byte, error) {
	buf := fr.buf[:0]
	if cap(buf) < min(n, growStep) {
		buf = make([]byte, 0, min(n, growStep))
	}
	for len(buf) < n {
		if len(buf) == cap(buf) {
			next := make([]byte, len(buf), min(n, cap(buf)+max(cap(buf), growStep)))
			copy(next, buf)
			buf = next
		}
		m, err := io.ReadFull(fr.r, buf[len(buf):min(n, cap(buf))])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	if cap(buf) <= reuseLimit {
		fr.buf = buf
	} else {
		fr.buf = nil
	}
	return buf, nil
}

// FrameWriter writes frames to a stream. Writes are serialised by a mutex,
// so any goroutine may write; a frame is always written whole.
type FrameWriter struct {
	mu  sync.Mutex
	w   io.Writer // guarded by mu
	max int
}

// NewFrameWriter returns a writer of frames to w whose bodies are at most
// max bytes (max <= 0 means DefaultMaxFrameBytes).
func NewFrameWriter(w io.Writer, max int) *FrameWriter {
	if max <= 0 {
		max = DefaultMaxFrameBytes
	}
	return &FrameWriter{w: w, max: max}
}

// Max returns the largest body the writer sends.
func (fw *FrameWriter) Max() int { return fw.max }

// Write encodes f and writes it.
func (fw *FrameWriter) Write(f *Frame) error {
	b, err := EncodeFrame(f, fw.max)
	if err != nil {
		return err
	}
	return fw.WriteEncoded(b, time.Time{})
}

// WriteEncoded writes a frame made by EncodeFrame. If deadline is not zero
// and the stream has a SetWriteDeadline method (an *os.File pipe does), a
// write still blocked at deadline fails with os.ErrDeadlineExceeded; the
// stream is then out of step and must be abandoned.
func (fw *FrameWriter) WriteEncoded(b []byte, deadline time.Time) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if d, ok := fw.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		// A stream without deadline support says so; that is not an
		// error for a write with no deadline.
		if err := d.SetWriteDeadline(deadline); err != nil && !deadline.IsZero() {
			return err
		}
	}
	_, err := fw.w.Write(b)
	return err
}
