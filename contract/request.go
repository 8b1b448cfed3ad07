package contract

import (
	"context"
	"encoding/json"
)

// Language is the language a step is written in.
type Language string

// The languages of the run contract.
const (
	JavaScript Language = "javascript"
	TypeScript Language = "typescript"
	Python     Language = "python"
)

// Request asks for one run of a step.
type Request struct {
	// Language of Code. Empty means JavaScript.
	Language Language `json:"language,omitempty"`
	// Code is the step: the body of an async function, which may return a
	// value and await at top level. For TypeScript, Code may be the
	// source (compiled on the fly, cached by content) or empty when
	// Compiled is set.
	Code string `json:"code,omitempty"`
	// Compiled is a TypeScript step compiled earlier (sandbox's
	// CompileTypeScript, or the client's); when set, Code is not compiled
	// again.
	Compiled *Compiled `json:"compiled,omitempty"`
	// Input is visible to the step as the global `input`. Empty means null.
	Input json.RawMessage `json:"input,omitempty"`
	// Plan names the plan whose limits apply. Empty means the engine's
	// default plan (sandbox.Config.DefaultPlan).
	Plan string `json:"plan,omitempty"`
	// Limits may lower the plan's limits, field by field; zero fields keep
	// the plan's value. Raising a limit is a VALIDATION error.
	Limits Limits `json:"limits,omitempty"`
	// Tenant identifies who the run is for, in metering, fairness and
	// isolation: the queue takes turns across tenants, no tenant's runs
	// hold more than the engine's tenant slots at once
	// (sandbox.Config.TenantSlots), and a worker process serves the runs
	// of one tenant only (sandbox.Config.Workers). Empty is a tenant too.
	Tenant string `json:"tenant,omitempty"`
	// Modules lists the modules the step wants: built-in ones ("duckdb",
	// "glpk"), which become globals of that name in this run only, and
	// packages of the engine's catalogue (sandbox.Config.Packages, which a
	// step gets by importing them anyway). An unknown name, or one the
	// plan does not allow (sandbox.Config.PlanModules), is a VALIDATION
	// error. Python steps get the built-in modules too (duckdb, glpk, with
	// the same calls in snake_case), not packages.
	Modules []string `json:"modules,omitempty"`
	// Egress narrows the engine's (and the plan's) egress policy for this
	// run. It can never widen it.
	Egress *EgressPolicy `json:"egress,omitempty"`
	// Secrets are credentials for this run's fetches (e.g. the tenant's
	// token for an API), added by the FetchProxy; the step never sees them.
	Secrets []Secret `json:"secrets,omitempty"`
	// TimeZone is the run's time zone, an IANA name ("Europe/Paris"): the
	// local time of JavaScript's Date and the default zone of its Intl,
	// and Python's local time (time.localtime, datetime.astimezone).
	// Empty means the plan's, else the engine's default
	// (sandbox.Config.Defaults), else "UTC". An unknown zone is a
	// VALIDATION error.
	TimeZone string `json:"timeZone,omitempty"`
	// Locale is the run's default locale, a BCP 47 tag ("de-DE"): what
	// JavaScript's Intl and toLocaleString use when the step names none.
	// Empty means the plan's, else the engine's default, else "en-US". A
	// tag that is not well-formed is a VALIDATION error; one the engine
	// has no data for resolves as Intl resolves any locale (to its
	// parent, else en-US). Python steps have no Intl: it does not apply.
	Locale string `json:"locale,omitempty"`
	// Metadata is passed through to the engine's Meter untouched.
	Metadata map[string]string `json:"metadata,omitempty"`
	// StepName is the file name the step's frames carry in stack traces:
	// "report.ts" makes them "at total (report.ts:3:5)" (Python: File
	// "report.py", line 3). Empty means step.js, step.ts or step.py, by
	// Language. It is a name for people, never opened: at most 255 bytes
	// of UTF-8 without control characters. The CLI sets it to the step's
	// file.
	StepName string `json:"stepName,omitempty"`
}

// Result is a successful run's outcome.
type Result struct {
	// Value is the step's return value as JSON; undefined becomes null.
	Value json.RawMessage `json:"value"`
	// Stats describe the run.
	Stats Stats `json:"stats"`
}

// DataHandler answers a step's dataProxy.request(method, params), for the
// Run of a local engine and of the client alike. Its result is sent to the
// step as JSON (a json.RawMessage is sent as is); an error rejects the
// step's promise with the error's text, and so does a result that cannot
// be marshalled. Each request is handled on its own goroutine; ctx ends
// when the run does.
type DataHandler func(ctx context.Context, method string, params json.RawMessage) (any, error)
