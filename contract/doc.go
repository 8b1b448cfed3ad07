// Package contract is the run contract of Stepbox (DESIGN.md §4): the
// request that asks for a run of a step, its limits, the events a run sends
// its caller, the result, the error with its codes, and the stats. It is
// shared by the local engine (package sandbox, which re-exports every type
// here under the same name) and the Go client of a server (package
// server/client), so that the same values travel both ways and code reads
// alike against either:
//
//	res, err := eng.Run(ctx, req, handler)    // a local *sandbox.Engine
//	res, err := c.Run(ctx, req, handler)      // a *client.Client of a server
//
//	var e *contract.Error // or *sandbox.Error: the same type
//	if errors.As(err, &e) && e.Code == contract.CodeTimeout { ... }
//
// The package holds data and the few methods that belong to it; it links
// nothing of the engine (no runtime, no jail, no cgo), so a program that
// only calls a Stepbox server builds without a C toolchain.
package contract
