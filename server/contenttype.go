package server

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"

	"github.com/stepbox/stepbox/proto/stepbox/v1/stepboxv1connect"
)

// unaryProcedures are the paths of the service's unary calls, the ones a
// client may make with one POST of a JSON body.
var unaryProcedures = map[string]bool{
	stepboxv1connect.StepboxServiceRunProcedure:               true,
	stepboxv1connect.StepboxServiceCompileTypeScriptProcedure: true,
	stepboxv1connect.StepboxServiceHealthProcedure:            true,
}

// jsonByDefault reads a unary call's body as JSON when its Content-Type
// says nothing better: `curl -d '{...}' URL`, the shortest call there is,
// sends application/x-www-form-urlencoded, and some clients send no type
// at all, which Connect both refuses with an empty 415. A POST to a unary
// procedure with either type, or none, is served as if it said
// application/json: the same strict decoding, the same errors.
//
// Not from a browser, though (a request with an Origin or Sec-Fetch-Site
// header, which browsers send on every POST and curl never does). A web
// page may POST a form-encoded or untyped body to any address without
// asking first, whereas application/json needs a CORS preflight that the
// server does not grant; reading those bodies as JSON would let any page
// its user visits run steps on a server without authentication, such as
// a developer's on 127.0.0.1. RATIONALE.md has the whole argument.
//
// Every 415 of a unary call, these included, gets a JSON body (Connect's
// is empty) that says which Content-Type to send.
func jsonByDefault(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !unaryProcedures[r.URL.Path] {
			next.ServeHTTP(w, r)
			return
		}
		ct := r.Header.Get("Content-Type")
		if untyped(ct) && r.Header.Get("Origin") == "" && r.Header.Get("Sec-Fetch-Site") == "" {
			r = r.Clone(r.Context()) // a header of its own, the body shared
			r.Header.Set("Content-Type", "application/json")
		}
		rw := &mediaTypeWriter{ResponseWriter: w}
		next.ServeHTTP(rw, r)
		if rw.held {
			rw.refuse(ct)
		}
	})
}

// untyped reports whether a request's Content-Type says nothing of its
// body's format: none, or that of an HTML form, which curl -d sends.
func untyped(contentType string) bool {
	if contentType == "" {
		return true
	}
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && t == "application/x-www-form-urlencoded"
}

// mediaTypeWriter holds back a 415 answer without a body, for
// jsonByDefault to give it one; anything else goes through.
type mediaTypeWriter struct {
	http.ResponseWriter
	held bool // a 415 held back, no body yet
	sent bool // the header went through
}

func (w *mediaTypeWriter) WriteHeader(code int) {
	if w.held || w.sent {
		return
	}
	if code == http.StatusUnsupportedMediaType {
		w.held = true
		return
	}
	w.sent = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *mediaTypeWriter) Write(b []byte) (int, error) {
	if w.held { // a 415 with a body of its own: it goes as it is
		w.held, w.sent = false, true
		w.ResponseWriter.WriteHeader(http.StatusUnsupportedMediaType)
	}
	if !w.sent {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *mediaTypeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// refuse sends the held 415 with a body in the shape of every other
// refusal of a unary call over HTTP+JSON (readableErrors).
func (w *mediaTypeWriter) refuse(contentType string) {
	what := "no Content-Type"
	if contentType != "" {
		what = "Content-Type " + strconv.Quote(contentType)
	}
	msg := fmt.Sprintf("the request has %s, which the server does not read here: send Content-Type: application/json with a JSON body (or application/proto, or a gRPC or gRPC-Web type)", what)
	b, _ := json.Marshal(map[string]string{"code": "invalid_argument", "message": msg})
	body := withReadableError(b, true)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.ResponseWriter.WriteHeader(http.StatusUnsupportedMediaType)
	_, _ = w.ResponseWriter.Write(body)
}
