package contract

import "encoding/json"

// EventKind names an event.
type EventKind string

// Event kinds, in the order a caller may meet them. Result and Error are
// terminal: exactly one of them ends every accepted run's stream.
const (
	EventStatus      EventKind = "status"
	EventConsole     EventKind = "console"
	EventDataRequest EventKind = "data_request"
	EventFetch       EventKind = "fetch"
	EventResult      EventKind = "result"
	EventError       EventKind = "error"
)

// Event is one message of a run to its caller. Kind says which field is set.
type Event struct {
	Kind EventKind `json:"kind"`
	// Status is the JSON payload of reportStatus(payload).
	Status json.RawMessage `json:"status,omitempty"`
	// Console is one console.log/info/warn/error/debug line.
	Console *ConsoleLine `json:"console,omitempty"`
	// DataRequest is a dataProxy.request(method, params) call to answer
	// with the session's Respond or RespondError.
	DataRequest *DataRequest `json:"dataRequest,omitempty"`
	// Fetch is the audit summary of one fetch attempt.
	Fetch json.RawMessage `json:"fetch,omitempty"`
	// Result ends a successful run.
	Result *Result `json:"result,omitempty"`
	// Error ends a failed run.
	Error *Error `json:"error,omitempty"`
}

// Terminal reports whether e is the run's last event.
func (e Event) Terminal() bool { return e.Kind == EventResult || e.Kind == EventError }

// ConsoleLine is one console call, its arguments formatted the way a
// JavaScript developer expects and joined by spaces.
type ConsoleLine struct {
	// Level is log, info, warn, error or debug.
	Level string `json:"level"`
	Text  string `json:"text"`
}

// DataRequest is a step asking the host for data.
type DataRequest struct {
	// ID identifies the request within its run; answer with it.
	ID int64 `json:"id"`
	// Method is the first argument of dataProxy.request.
	Method string `json:"method"`
	// Params is the second argument, as JSON (null when omitted).
	Params json.RawMessage `json:"params"`
}
