package pyrt

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
)

// ModuleHost opens the module session of a Python run that was granted
// built-in modules (Job.Modules: "duckdb", "glpk"). The run's CPython
// process cannot load DuckDB or GLPK — they are Go and cgo in this binary —
// so it sends each module call to the worker that hosts it, which passes
// it to the session: its own JavaScript runtime's (jsrt.Runtime's
// OpenModules), which runs the calls exactly as a JavaScript run's, under
// the run's limits, until deadline (the run's wall-clock limit) or ctx's
// end. The rows of a query never leave the worker's jail but as the
// step's own results.
//
// A run opens its session at its first module call, so that a run that
// makes none costs nothing, and closes it when it ends. ModuleHost must
// not block.
type ModuleHost func(ctx context.Context, lim ipc.Limits, modules []string, deadline time.Time) ModuleSession

// ModuleSession executes the module calls of one run (see ModuleHost).
type ModuleSession interface {
	// Call starts a call. It does not block; the outcome comes on
	// Replies with the call's ID. The run keeps at most
	// jsrt.MaxModuleCalls calls without a reply.
	Call(c ipc.ModuleCall)
	// Replies delivers every call's outcome.
	Replies() <-chan ipc.ModuleReply
	// Close ends the session (the call in progress is interrupted, the
	// database closed) and waits for what it held to be released.
	Close()
}

// checkModules checks a job's modules: known names, and a host to run
// them.
func checkModules(modules []string, host ModuleHost) *ipc.Failure {
	for _, m := range modules {
		if !slices.Contains(jsrt.BuiltinModules, m) {
			return &ipc.Failure{Code: ipc.CodeValidation, Message: fmt.Sprintf("unknown module %q", m)}
		}
	}
	if len(modules) > 0 && host == nil {
		return &ipc.Failure{Code: ipc.CodeUnavailable, Message: fmt.Sprintf("the modules %q are not available to this Python runner", modules)}
	}
	return nil
}
