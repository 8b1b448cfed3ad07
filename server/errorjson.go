package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
)

// maxErrorBody is the most of a refusal's body readableErrors holds to
// rewrite; Connect's error bodies are far smaller. A larger one passes as
// it is.
const maxErrorBody = 1 << 20

// readableErrors makes the refusal of a unary call over HTTP+JSON readable
// without protobuf: Connect writes the contract's Error as a detail, base64
// protobuf ({"code", "message", "details": [{"type": "stepbox.v1.Error",
// "value": "…"}]}), which connect-go offers no hook to change. This adds
// the same Error as plain JSON in a top-level "error" member, the shape of
// RunResponse.error:
//
//	{"code": "invalid_argument", "message": "…", "details": […],
//	 "error": {"code": "VALIDATION", "message": "…", "limit": "…"}}
//
// A Connect client (one that sends the protocol's Connect-Protocol-Version
// header, as connect-go, connect-es and the other Connect libraries do)
// keeps Connect's members, details included, and reads the detail. A plain
// HTTP client (curl, fetch, a script) gets the Error once, without the
// base64 detail nobody can read:
//
//	{"code": "invalid_argument", "message": "…", "error": {…}}
//
// A body that is not a valid request fails before the server could attach
// an Error: its INVALID_ARGUMENT gets {"code": "VALIDATION", "message"}.
// Streams (application/connect+json), gRPC and successful calls pass
// untouched.
func readableErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !isJSON(r.Header.Get("Content-Type")) {
			next.ServeHTTP(w, r)
			return
		}
		ew := &errorWriter{ResponseWriter: w, plain: r.Header.Get("Connect-Protocol-Version") == ""}
		next.ServeHTTP(ew, r)
		ew.finish()
	})
}

func isJSON(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && t == "application/json"
}

// errorWriter holds back the body of a non-200 JSON answer to rewrite it;
// anything else goes through.
type errorWriter struct {
	http.ResponseWriter
	plain   bool // the caller is no Connect client: Connect's details go
	status  int  // held back: the answer's status
	holding bool // the body is being held in buf
	passed  bool // the header went through
	buf     bytes.Buffer
}

func (w *errorWriter) WriteHeader(code int) {
	if w.holding || w.passed {
		return
	}
	if code != http.StatusOK && isJSON(w.Header().Get("Content-Type")) {
		w.status, w.holding = code, true
		return
	}
	w.passed = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *errorWriter) Write(b []byte) (int, error) {
	if !w.holding && !w.passed {
		w.WriteHeader(http.StatusOK)
	}
	if !w.holding {
		return w.ResponseWriter.Write(b)
	}
	if w.buf.Len()+len(b) > maxErrorBody {
		w.release(w.buf.Bytes())
		return w.ResponseWriter.Write(b)
	}
	return w.buf.Write(b)
}

// Flush does nothing while the body is held: finish writes it whole.
func (w *errorWriter) Flush() {
	if !w.holding {
		_ = http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *errorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// release sends the held status and body as they are.
func (w *errorWriter) release(body []byte) {
	w.holding, w.passed = false, true
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(body)
}

func (w *errorWriter) finish() {
	if w.holding {
		w.release(withReadableError(w.buf.Bytes(), w.plain))
	}
}

// plainDecodeMessage drops what the libraries add to the message of a
// body that does not decode: Connect's "unmarshal message: " before the
// codec's words (strictJSON), and protobuf's "proto: " (with a space or a
// no-break space, which protobuf picks per build) before the position:
// "the body is not a valid RunRequest: (line 1:39): invalid value for
// int32 field wallMs: \"fast\"".
func plainDecodeMessage(m string) string {
	m = strings.TrimPrefix(m, "unmarshal message: ")
	for _, p := range []string{": proto: ", ": proto:\u00a0"} {
		m = strings.Replace(m, p, ": ", 1)
	}
	return m
}

// withReadableError returns Connect's JSON error body with the "error"
// member added, and for a plain caller without Connect's "details", or
// body as it is when it is not one.
func withReadableError(body []byte, plain bool) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	var code, message string
	_ = json.Unmarshal(m["code"], &code)
	_ = json.Unmarshal(m["message"], &message)
	var details []struct{ Type, Value string }
	_ = json.Unmarshal(m["details"], &details)
	var e *pb.Error
	for _, d := range details {
		if d.Type != string((&pb.Error{}).ProtoReflect().Descriptor().FullName()) {
			continue
		}
		b, err := base64.RawStdEncoding.DecodeString(d.Value)
		if err != nil {
			b, err = base64.StdEncoding.DecodeString(d.Value)
		}
		if err != nil {
			continue
		}
		var x pb.Error
		if proto.Unmarshal(b, &x) == nil {
			e = &x
			break
		}
	}
	if e == nil && code == "invalid_argument" {
		// The body did not decode: the libraries' words go.
		message = plainDecodeMessage(message)
		if b, err := json.Marshal(message); err == nil {
			m["message"] = b
		}
		e = &pb.Error{Code: "VALIDATION", Message: message}
	}
	if e == nil {
		return body
	}
	j, err := protojson.Marshal(e)
	if err != nil {
		return body
	}
	var compact bytes.Buffer
	if json.Compact(&compact, j) != nil {
		return body
	}
	m["error"] = compact.Bytes()
	if plain {
		delete(m, "details")
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(m) != nil {
		return body
	}
	return out.Bytes()
}
