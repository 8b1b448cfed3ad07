package ipc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// frameCases are one well-formed frame of every type.
var frameCases = []struct {
	name  string
	frame Frame
}{
	{"hello host", Frame{Type: FrameHello, Hello: &Hello{Protocol: ProtocolVersion, MaxFrameBytes: 1 << 20, Warm: 2}}},
	{"hello worker", Frame{Type: FrameHello, Hello: &Hello{Protocol: ProtocolVersion, PID: 42}}},
	{"hello bootstrap", Frame{Type: FrameHello, Hello: &Hello{Protocol: ProtocolVersion, Bootstrap: &Bootstrap{ID: "x", Code: []byte{0, 1, 2}}}}},
	{"execute", Frame{Type: FrameExecute, RunID: 7, Execute: &Execute{Code: "return input.a <b> & 'c'", Input: json.RawMessage(`{"a":"<&>"}`),
		Limits: Limits{MemoryMB: 64, WallMs: 1000, MaxDataRequests: 3}}}},
	{"execute no input", Frame{Type: FrameExecute, RunID: 8, Execute: &Execute{Code: "return 1"}}},
	{"execute modules", Frame{Type: FrameExecute, RunID: 9, Execute: &Execute{Code: `import * as p from "p"`, Modules: []string{"duckdb", "glpk"},
		Packages: []Package{{Name: "p", Version: "1.0.0", Source: "(function () { return {\"x\": 1} })()"}}}}},
	{"started", Frame{Type: FrameStarted, RunID: 7}},
	{"status", Frame{Type: FrameEvent, RunID: 7, Event: &Event{Kind: KindStatus, Status: json.RawMessage(`{"pct":50}`)}}},
	{"status null", Frame{Type: FrameEvent, RunID: 7, Event: &Event{Kind: KindStatus, Status: json.RawMessage(`null`)}}},
	{"console", Frame{Type: FrameEvent, RunID: 7, Event: &Event{Kind: KindConsole, Console: &Console{Level: "log", Text: "héllo\u2028<x>"}}}},
	{"data request", Frame{Type: FrameEvent, RunID: 7, Event: &Event{Kind: KindDataRequest,
		DataRequest: &DataRequest{ID: 1, Method: "get", Params: json.RawMessage(`["a",{"b":null}]`)}}}},
	{"fetch request", Frame{Type: FrameEvent, RunID: 7, Event: &Event{Kind: KindFetchRequest,
		FetchRequest: &FetchRequest{ID: 2, Request: json.RawMessage(`{"url":"https://example.com/"}`)}}}},
	{"reply limit", Frame{Type: FrameReply, RunID: 7, Reply: &Reply{ID: 2, Error: "too many fetches", Limit: LimitFetchRequests}}},
	{"reply", Frame{Type: FrameReply, RunID: 7, Reply: &Reply{ID: 1, Value: json.RawMessage(`{"rows":[1,2]}`)}}},
	{"reply error", Frame{Type: FrameReply, RunID: 7, Reply: &Reply{ID: 2, Error: "nope"}}},
	{"abort", Frame{Type: FrameAbort, RunID: 7}},
	{"abort reason", Frame{Type: FrameAbort, RunID: 7, Abort: &Abort{Reason: "aborted by the caller"}}},
	{"result", Frame{Type: FrameTerminal, RunID: 7, Event: &Event{Kind: KindResult,
		Result: &Result{Value: json.RawMessage(`[1,"<a>"]`), Stats: Stats{WallMs: 1.5, ConsoleEvents: 2}}}}},
	{"error", Frame{Type: FrameTerminal, RunID: 7, Event: &Event{Kind: KindError,
		Error: &Failure{Code: CodeRuntime, Message: "boom", Name: "TypeError", Position: &Position{Line: 1, Column: 7}}}}},
	{"error exiting", Frame{Type: FrameTerminal, RunID: 7, Exiting: true, Event: &Event{Kind: KindError,
		Error: &Failure{Code: CodeTimeout, Limit: LimitCPU, Message: "the step exceeded its CPU time limit (cpuMs=100)"}}}},
	{"ping", Frame{Type: FramePing, Seq: 3}},
	{"pong", Frame{Type: FramePong, Seq: 3}},
	{"execute python", Frame{Type: FrameExecute, RunID: 10, Execute: &Execute{Language: LanguagePython, Code: "return 1", Modules: []string{"duckdb"}}}},
	{"zygote", Frame{Type: FrameZygote, Zygote: &Zygote{VSZ: 30 << 20, RSS: 9 << 20, MaxMemoryMB: 1024, MaxProcs: 16, MaxOpenFiles: 64,
		MaxFileSizeBytes: 8 << 20, StartTimeoutMs: 15000}}},
	{"result retire", Frame{Type: FrameTerminal, RunID: 10, Retire: "the Python zygote is not clean: /tmp", Event: &Event{Kind: KindResult,
		Result: &Result{Value: json.RawMessage(`1`)}}}},
}

func TestFrameRoundTrip(t *testing.T) {
	for _, c := range frameCases {
		t.Run(c.name, func(t *testing.T) {
			b, err := EncodeFrame(&c.frame, 0)
			if err != nil {
				t.Fatal(err)
			}
			if n := binary.BigEndian.Uint32(b); int(n) != len(b)-4 {
				t.Fatalf("length prefix %d, body %d bytes", n, len(b)-4)
			}
			got, err := NewFrameReader(bytes.NewReader(b), 0).Read()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, c.frame) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", *got, c.frame)
			}
		})
	}
}

// TestFrameNoEscaping checks that raw JSON is not made longer on the wire:
// the host recounts bytes the worker counted.
func TestFrameNoEscaping(t *testing.T) {
	params := json.RawMessage(`"<&>"`)
	b, err := EncodeFrame(&Frame{Type: FrameEvent, RunID: 1, Event: &Event{Kind: KindDataRequest,
		DataRequest: &DataRequest{ID: 1, Method: "m", Params: params}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := DecodeFrame(b[4:])
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Event.DataRequest.Params; !bytes.Equal(got, params) {
		t.Fatalf("params %s, want %s", got, params)
	}
}

func TestFrameStream(t *testing.T) {
	var buf bytes.Buffer
	w := NewFrameWriter(&buf, 0)
	for _, c := range frameCases {
		if err := w.Write(&c.frame); err != nil {
			t.Fatal(err)
		}
	}
	r := NewFrameReader(&buf, 0)
	for _, c := range frameCases {
		f, err := r.Read()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if f.Type != c.frame.Type {
			t.Fatalf("%s: type %s", c.name, f.Type)
		}
	}
	if _, err := r.Read(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

// TestFrameWriterConcurrent checks that concurrent writers never
// interleave the bytes of two frames.
func TestFrameWriterConcurrent(t *testing.T) {
	pr, pw := io.Pipe()
	w := NewFrameWriter(pw, 0)
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1) // Done when this writer has written its frames.
		go func() {
			defer wg.Done()
			text := strings.Repeat(string(rune('a'+i)), 5000)
			for range each {
				if err := w.Write(&Frame{Type: FrameEvent, RunID: uint64(i + 1), Event: &Event{Kind: KindConsole,
					Console: &Console{Level: "log", Text: text}}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); pw.Close() }()
	r := NewFrameReader(pr, 0)
	n := 0
	for {
		f, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Repeat(string(rune('a'+f.RunID-1)), 5000); f.Event.Console.Text != want {
			t.Fatalf("frame %d of run %d is mixed", n, f.RunID)
		}
		n++
	}
	if n != writers*each {
		t.Fatalf("read %d frames, want %d", n, writers*each)
	}
}

func TestFrameTooLarge(t *testing.T) {
	t.Run("encode", func(t *testing.T) {
		f := &Frame{Type: FrameEvent, RunID: 1, Event: &Event{Kind: KindConsole, Console: &Console{Level: "log", Text: strings.Repeat("x", 2000)}}}
		if _, err := EncodeFrame(f, 1000); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("EncodeFrame: %v, want ErrFrameTooLarge", err)
		}
		if _, err := EncodeFrame(f, 3000); err != nil {
			t.Fatal(err)
		}
	})
	// The length prefix alone must not make the reader allocate: a liar
	// claiming a huge frame costs nothing.
	t.Run("refused before allocation", func(t *testing.T) {
		for _, n := range []uint32{DefaultMaxFrameBytes + 1, 1<<32 - 1} {
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], n)
			allocated := allocatedBytes(func() {
				_, err := NewFrameReader(bytes.NewReader(hdr[:]), 0).Read()
				if !errors.Is(err, ErrFrameTooLarge) {
					t.Errorf("length %d: %v, want ErrFrameTooLarge", n, err)
				}
			})
			if allocated > 64<<10 {
				t.Errorf("length %d: the reader allocated %d bytes before refusing", n, allocated)
			}
		}
	})
	// A length within the limit but with no data behind it allocates at
	// most one growth step, not the claimed size.
	t.Run("claimed but absent", func(t *testing.T) {
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], 60<<20)
		allocated := allocatedBytes(func() {
			_, err := NewFrameReader(io.MultiReader(bytes.NewReader(hdr[:]), strings.NewReader(`{"type":`)), 0).Read()
			if err != io.ErrUnexpectedEOF {
				t.Errorf("%v, want io.ErrUnexpectedEOF", err)
			}
		})
		if allocated > 2*growStep {
			t.Errorf("the reader allocated %d bytes for a frame that never came", allocated)
		}
	})
	t.Run("custom limit", func(t *testing.T) {
		b, err := EncodeFrame(&Frame{Type: FramePing, Seq: 1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewFrameReader(bytes.NewReader(b), len(b)-5).Read(); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("%v, want ErrFrameTooLarge", err)
		}
		if _, err := NewFrameReader(bytes.NewReader(b), len(b)-4).Read(); err != nil {
			t.Fatal(err)
		}
	})
}

func allocatedBytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestFrameTruncated(t *testing.T) {
	b, err := EncodeFrame(&frameCases[2].frame, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 4, 5, len(b) - 1} {
		_, err := NewFrameReader(bytes.NewReader(b[:n]), 0).Read()
		if err != io.ErrUnexpectedEOF {
			t.Errorf("%d of %d bytes: %v, want io.ErrUnexpectedEOF", n, len(b), err)
		}
	}
	if _, err := NewFrameReader(bytes.NewReader(nil), 0).Read(); err != io.EOF {
		t.Errorf("empty stream: %v, want io.EOF", err)
	}
}

func TestFrameInvalid(t *testing.T) {
	deep := `{"type":"event","runId":1,"event":{"kind":"status","status":` + strings.Repeat("[", MaxFrameDepth) +
		strings.Repeat("]", MaxFrameDepth) + `}}`
	deepOK := `{"type":"event","runId":1,"event":{"kind":"status","status":` + strings.Repeat("[", MaxJSONDepth) +
		strings.Repeat("]", MaxJSONDepth) + `}}`
	cases := []struct{ name, body, want string }{
		{"empty", ``, "empty frame"},
		{"not json", `hello`, "invalid character"},
		{"not an object", `[1]`, "cannot unmarshal"},
		{"null", `null`, `unknown frame type ""`},
		{"unknown type", `{"type":"shell","runId":1}`, `unknown frame type "shell"`},
		{"unknown field", `{"type":"ping","seq":1,"cmd":"rm"}`, `unknown field "cmd"`},
		{"unknown nested field", `{"type":"event","runId":1,"event":{"kind":"console","console":{"level":"log","text":"x","color":1}}}`, `unknown field "color"`},
		{"two values", `{"type":"ping","seq":1}{"type":"ping","seq":2}`, "data after"},
		{"trailing garbage", `{"type":"ping","seq":1} x`, "data after"},
		{"too deep", deep, "nested too deeply"},
		{"missing payload", `{"type":"execute","runId":1}`, "fields do not match"},
		{"extra payload", `{"type":"ping","seq":1,"reply":{"id":1}}`, "fields do not match"},
		{"no run id", `{"type":"reply","reply":{"id":1,"value":1}}`, "fields do not match"},
		{"terminal as event", `{"type":"event","runId":1,"event":{"kind":"result","result":{"value":1,"stats":{}}}}`, "is terminal"},
		{"event as terminal", `{"type":"terminal","runId":1,"event":{"kind":"console","console":{"level":"log","text":""}}}`, "is not terminal"},
		{"unknown kind", `{"type":"event","runId":1,"event":{"kind":"exec"}}`, `unknown event kind "exec"`},
		{"kind without payload", `{"type":"event","runId":1,"event":{"kind":"console"}}`, "do not match the kind"},
		{"kind with two payloads", `{"type":"event","runId":1,"event":{"kind":"status","status":1,"fetch":{}}}`, "do not match the kind"},
		{"fetch request without request", `{"type":"event","runId":1,"event":{"kind":"fetch_request","fetchRequest":{"id":1}}}`, "without a request"},
		{"result without value", `{"type":"terminal","runId":1,"event":{"kind":"result","result":{"stats":{}}}}`, "without a value"},
		{"unknown code", `{"type":"terminal","runId":1,"event":{"kind":"error","error":{"code":"OK","message":""}}}`, "unknown code"},
		{"bad hello", `{"type":"hello","hello":{"protocol":0}}`, "protocol 0"},
		{"bootstrap without code", `{"type":"hello","hello":{"protocol":6,"bootstrap":{"id":"x","code":""}}}`, "without its ID or code"},
		{"exiting event", `{"type":"event","runId":1,"exiting":true,"event":{"kind":"console","console":{"level":"log","text":""}}}`, "frame marked exiting"},
		{"wrong type of field", `{"type":"ping","seq":"1"}`, "cannot unmarshal"},
		{"negative run id", `{"type":"abort","runId":-1}`, "cannot unmarshal"},
		{"unknown language", `{"type":"execute","runId":1,"execute":{"language":"ruby","code":"","limits":{}}}`, `language "ruby"`},
		{"zygote without info", `{"type":"zygote"}`, "fields do not match"},
		{"zygote with a run", `{"type":"zygote","runId":1,"zygote":{"vsz":1,"rss":1,"maxMemoryMb":1,"maxProcs":1,"maxOpenFiles":1,"maxFileSizeBytes":1,"startTimeoutMs":1}}`, "fields do not match"},
		{"zygote without a size", `{"type":"zygote","zygote":{"vsz":0,"rss":1,"maxMemoryMb":1,"maxProcs":1,"maxOpenFiles":1,"maxFileSizeBytes":1,"startTimeoutMs":1}}`, "zygote {"},
		{"retire on an event", `{"type":"event","runId":1,"retire":"x","event":{"kind":"status","status":1}}`, "fields do not match"},
		{"retire too long", `{"type":"terminal","runId":1,"retire":"` + strings.Repeat("x", 1025) + `","event":{"kind":"error","error":{"code":"RUNTIME","message":""}}}`, "retire reason of 1025 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := headerOnly(c.body)
			if c.body == "" {
				body = nil // a zero length prefix
			}
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], uint32(len(body)))
			_, err := NewFrameReader(bytes.NewReader(append(hdr[:], body...)), 0).Read()
			if !errors.Is(err, ErrFrameInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want ErrFrameInvalid containing %q", err, c.want)
			}
		})
	}
	if _, err := DecodeFrame(headerOnly(deepOK)); err != nil {
		t.Fatalf("a status nested to MaxJSONDepth: %v", err)
	}

	// The payload after the header.
	withPayload := func(header, payload string) []byte { return append(headerOnly(header), payload...) }
	deepPayload := strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1)
	for _, c := range []struct {
		name string
		body []byte
		want string
	}{
		{"no header length", []byte{0, 0}, "no header length"},
		{"header length past the body", []byte{0, 0, 1, 0, '{', '}'}, "header length 256"},
		{"payload on a type without one", withPayload(`{"type":"ping","seq":1}`, `1`), "a ping frame with a payload"},
		{"payload not JSON", withPayload(`{"type":"reply","runId":1,"reply":{"id":1}}`, `{bad`), "not valid JSON"},
		{"two payload values", withPayload(`{"type":"reply","runId":1,"reply":{"id":1}}`, `1 2`), "not valid JSON"},
		{"payload too deep", withPayload(`{"type":"reply","runId":1,"reply":{"id":1}}`, deepPayload), "nested"},
		{"payload in the header too", withPayload(`{"type":"reply","runId":1,"reply":{"id":1,"value":2}}`, `1`), "in the header too"},
	} {
		if _, err := DecodeFrame(c.body); !errors.Is(err, ErrFrameInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrFrameInvalid containing %q", c.name, err, c.want)
		}
	}
	f, err := DecodeFrame(withPayload(`{"type":"execute","runId":1,"execute":{"code":"return input","limits":{}}}`, `{"a": [1, 2]}`))
	if err != nil || string(f.Execute.Input) != `{"a": [1, 2]}` {
		t.Fatalf("execute with its input as payload: %+v %v", f, err)
	}
}

// headerOnly returns the body of a frame whose header is the JSON text h
// and which has no payload.
func headerOnly(h string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(h)))
	return append(b, h...)
}

func TestEncodeChecks(t *testing.T) {
	if _, err := EncodeFrame(&Frame{Type: "bogus"}, 0); !errors.Is(err, ErrFrameInvalid) {
		t.Fatalf("unknown type: %v", err)
	}
	if _, err := EncodeFrame(&Frame{Type: FrameEvent, RunID: 1, Event: &Event{Kind: KindStatus, Status: json.RawMessage(`{bad`)}}, 0); err == nil {
		t.Fatal("invalid raw JSON was encoded")
	}
}

// FuzzFrameDecode feeds arbitrary bytes to the reader. Whatever it accepts
// must be a checked frame that encodes and decodes to itself.
func FuzzFrameDecode(f *testing.F) {
	for _, c := range frameCases {
		b, err := EncodeFrame(&c.frame, 0)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewFrameReader(bytes.NewReader(data), 1<<20)
		for {
			fr, err := r.Read()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) &&
					!errors.Is(err, ErrFrameInvalid) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error class: %v", err)
				}
				return
			}
			if err := fr.Check(); err != nil {
				t.Fatalf("accepted an unchecked frame: %v", err)
			}
			b, err := EncodeFrame(fr, 1<<21)
			if err != nil {
				t.Fatalf("re-encode %+v: %v", fr, err)
			}
			again, err := DecodeFrame(b[4:])
			if err != nil {
				t.Fatalf("decode of re-encoded %s: %v", b[4:], err)
			}
			b2, err := EncodeFrame(again, 1<<21)
			if err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("not stable:\n%s\n%s (%v)", b[4:], b2[4:], err)
			}
		}
	})
}
