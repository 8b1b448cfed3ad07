package sandbox

import "github.com/stepbox/stepbox/contract"

// The run contract's types live in package contract, which the Go client
// of a server shares without linking the engine; they are re-exported here
// under the same names, so sandbox.Request and contract.Request are one
// type. See each type's documentation in package contract.
type (
	// Request asks for one run of a step: see contract.Request.
	Request = contract.Request
	// Language is the language a step is written in.
	Language = contract.Language
	// Limits are the per-run limits of the run contract: see
	// contract.Limits.
	Limits = contract.Limits
	// Result is a successful run's outcome.
	Result = contract.Result
	// Stats describe a finished run: see contract.Stats.
	Stats = contract.Stats
	// DataHandler answers a step's data requests in Engine.Run: see
	// contract.DataHandler.
	DataHandler = contract.DataHandler
	// Event is one message of a run to its caller: see contract.Event.
	Event = contract.Event
	// EventKind names an event.
	EventKind = contract.EventKind
	// ConsoleLine is one console call.
	ConsoleLine = contract.ConsoleLine
	// DataRequest is a step asking the host for data.
	DataRequest = contract.DataRequest
	// Error is how every run fails: see contract.Error.
	Error = contract.Error
	// Code classifies how a run failed.
	Code = contract.Code
	// Position is a 1-based line and column in the user's source.
	Position = contract.Position
	// Compiled is a TypeScript step compiled to JavaScript: see
	// contract.Compiled and CompileTypeScript.
	Compiled = contract.Compiled
	// Diagnostic is one problem found compiling a TypeScript step.
	Diagnostic = contract.Diagnostic
	// EgressPolicy decides which requests a step may make: see
	// contract.EgressPolicy.
	EgressPolicy = contract.EgressPolicy
	// Secret is a credential the step never sees: see contract.Secret.
	Secret = contract.Secret
)

// The languages of the run contract.
const (
	JavaScript = contract.JavaScript
	TypeScript = contract.TypeScript
	Python     = contract.Python
)

// Event kinds: see contract.EventStatus.
const (
	EventStatus      = contract.EventStatus
	EventConsole     = contract.EventConsole
	EventDataRequest = contract.EventDataRequest
	EventFetch       = contract.EventFetch
	EventResult      = contract.EventResult
	EventError       = contract.EventError
)

// The error codes of the run contract: see contract.CodeValidation.
const (
	CodeValidation    = contract.CodeValidation
	CodeRuntime       = contract.CodeRuntime
	CodeTimeout       = contract.CodeTimeout
	CodeOOM           = contract.CodeOOM
	CodeLimitExceeded = contract.CodeLimitExceeded
	CodeAborted       = contract.CodeAborted
	CodeCrashed       = contract.CodeCrashed
	CodeUnavailable   = contract.CodeUnavailable
)

// Sentinels, one per code, for errors.Is: the same values as contract's.
var (
	ErrValidation    = contract.ErrValidation
	ErrRuntime       = contract.ErrRuntime
	ErrTimeout       = contract.ErrTimeout
	ErrOOM           = contract.ErrOOM
	ErrLimitExceeded = contract.ErrLimitExceeded
	ErrAborted       = contract.ErrAborted
	ErrCrashed       = contract.ErrCrashed
	ErrUnavailable   = contract.ErrUnavailable
)
