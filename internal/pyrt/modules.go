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
// process cannot load DuckDB or GLPK — they are Go and cgo in the host's
// binary — so it sends each module call to the host, which passes it to
// the session: a jailed worker process leased for the run (pool.Pool's
// OpenModules) or, with in-process isolation, the host's own runtime
// (jsrt.Runtime's OpenModules). Either runs the calls exactly as a
// JavaScript run's, under the run's limits, until deadline (the run's
// wall-clock limit) or ctx's end.
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
		return &ipc.Failure{Code: ipc.CodeUnavailable, Message: fmt.Sprintf("the modules %q are not available to this Python runtime", modules)}
	}
	return nil
}
