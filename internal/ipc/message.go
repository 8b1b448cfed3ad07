package ipc

import "encoding/json"

// Limits are the per-run limits of the run contract (DESIGN §4), in the
// contract's integer units. In a request a zero field means "inherit from the
// plan"; in the effective limits every field is positive.
//
// sandbox.Limits has the same fields in the same order, so the two convert
// with a plain type conversion.
type Limits struct {
	MemoryMB         int `json:"memoryMb,omitempty"`
	CPUMs            int `json:"cpuMs,omitempty"`
	WallMs           int `json:"wallMs,omitempty"`
	MaxCodeBytes     int `json:"maxCodeBytes,omitempty"`
	MaxResultBytes   int `json:"maxResultBytes,omitempty"`
	MaxDataRequests  int `json:"maxDataRequests,omitempty"`
	MaxDataBytes     int `json:"maxDataBytes,omitempty"`
	MaxStatusEvents  int `json:"maxStatusEvents,omitempty"`
	MaxConsoleEvents int `json:"maxConsoleEvents,omitempty"`
	MaxConsoleBytes  int `json:"maxConsoleBytes,omitempty"`
	MaxFetchRequests int `json:"maxFetchRequests,omitempty"`
	MaxFetchBytes    int `json:"maxFetchBytes,omitempty"`
}

// Stats are reported on every terminal event. Durations are milliseconds with
// a fractional part.
type Stats struct {
	WallMs         float64 `json:"wallMs"`
	CPUMs          float64 `json:"cpuMs"`
	CodeMs         float64 `json:"codeMs"`
	QueueMs        float64 `json:"queueMs"`
	HeapMB         float64 `json:"heapMb"`
	DataRequests   int     `json:"dataRequests"`
	DataBytes      int     `json:"dataBytes"`
	FetchRequests  int     `json:"fetchRequests"`
	FetchBytes     int     `json:"fetchBytes"`
	ConsoleEvents  int     `json:"consoleEvents"`
	ConsoleDropped int     `json:"consoleDropped,omitempty"`
	StatusEvents   int     `json:"statusEvents"`
}

// Code is an error code of the run contract.
type Code string

// The error codes of DESIGN §4.
const (
	CodeValidation    Code = "VALIDATION"
	CodeRuntime       Code = "RUNTIME"
	CodeTimeout       Code = "TIMEOUT"
	CodeOOM           Code = "OOM"
	CodeLimitExceeded Code = "LIMIT_EXCEEDED"
	CodeAborted       Code = "ABORTED"
	CodeCrashed       Code = "CRASHED"
	CodeUnavailable   Code = "UNAVAILABLE"
)

// Names of limits as they appear in Failure.Limit. They are the JSON names of
// the Limits fields, plus "time" for a worker killed after its grace period.
const (
	LimitMemory        = "memoryMb"
	LimitCPU           = "cpuMs"
	LimitWall          = "wallMs"
	LimitCode          = "maxCodeBytes"
	LimitResult        = "maxResultBytes"
	LimitDataRequests  = "maxDataRequests"
	LimitDataBytes     = "maxDataBytes"
	LimitStatusEvents  = "maxStatusEvents"
	LimitConsoleEvents = "maxConsoleEvents"
	LimitConsoleBytes  = "maxConsoleBytes"
	LimitFetchRequests = "maxFetchRequests"
	LimitFetchBytes    = "maxFetchBytes"
	LimitStackDepth    = "stackDepth"
	LimitJSONDepth     = "jsonDepth"
	LimitTime          = "time"
)

// Kind names an event.
type Kind string

// Event kinds. The first four are non-terminal; Result and Error are terminal
// and exactly one of them ends every accepted run.
const (
	KindStatus      Kind = "status"
	KindConsole     Kind = "console"
	KindDataRequest Kind = "data_request"
	KindFetch       Kind = "fetch"
	// KindFetchRequest is internal: a guest fetch for the host's FetchProxy
	// to perform and answer with a Reply. Callers see KindFetch audits.
	KindFetchRequest Kind = "fetch_request"
	KindResult       Kind = "result"
	KindError        Kind = "error"
)

// Event is one message from a run to its caller.
type Event struct {
	Kind         Kind            `json:"kind"`
	Status       json.RawMessage `json:"status,omitempty"`
	Console      *Console        `json:"console,omitempty"`
	DataRequest  *DataRequest    `json:"dataRequest,omitempty"`
	Fetch        json.RawMessage `json:"fetch,omitempty"`
	FetchRequest *FetchRequest   `json:"fetchRequest,omitempty"`
	Result       *Result         `json:"result,omitempty"`
	Error        *Failure        `json:"error,omitempty"`
}

// Terminal reports whether e ends its run.
func (e *Event) Terminal() bool { return e.Kind == KindResult || e.Kind == KindError }

// Console is one console.log/info/warn/error/debug call, formatted.
type Console struct {
	Level string `json:"level"`
	Text  string `json:"text"`
}

// DataRequest is a guest's dataProxy.request(method, params).
type DataRequest struct {
	ID     int64           `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// FetchRequest is a guest's fetch(url, init), as the JSON of an
// egress.Request.
type FetchRequest struct {
	ID      int64           `json:"id"`
	Request json.RawMessage `json:"request"`
}

// Reply answers a DataRequest or a FetchRequest by ID. Error != "" rejects
// the guest's promise; Limit != "" ends the run with LIMIT_EXCEEDED naming
// that limit (the host's FetchProxy counts fetch requests and bytes).
type Reply struct {
	ID    int64           `json:"id"`
	Value json.RawMessage `json:"value,omitempty"`
	Error string          `json:"error,omitempty"`
	Limit string          `json:"limit,omitempty"`
}

// Result is the successful terminal event.
type Result struct {
	Value json.RawMessage `json:"value"`
	Stats Stats           `json:"stats"`
}

// Position is a 1-based line and column in the user's source (JavaScript,
// TypeScript or Python, whichever the user wrote).
type Position struct {
	Line   int `json:"line"`
	Column int `json:"column,omitempty"`
}

// Failure is the error terminal event. Only these fields cross a process
// boundary; causes stay where they happened.
type Failure struct {
	Code     Code      `json:"code"`
	Limit    string    `json:"limit,omitempty"`
	Message  string    `json:"message"`
	Name     string    `json:"name,omitempty"`
	Stack    string    `json:"stack,omitempty"`
	Position *Position `json:"position,omitempty"`
	Stats    Stats     `json:"stats"`
}
