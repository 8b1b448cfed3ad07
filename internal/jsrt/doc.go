// Package jsrt runs JavaScript steps in QuickJS (modernc.org/quickjs).
//
// A Runtime keeps Config.Warm VMs created and bootstrapped ahead of demand;
// Run takes one, runs one step in it and closes it. A VM never serves two
// runs.
//
// The bootstrap (bootstrap.js, compiled to bytecode once per process)
// captures the built-ins it relies on, installs the guest API and removes
// the raw host entry point from the global object; it evaluates to the
// dispatch function through which the host starts the step, delivers data
// replies and fires timers. The step itself is compiled by the
// AsyncFunction constructor; its stack frames are told from the
// bootstrap's by file name. (Code that closes the constructor's braces
// runs at compile time in the same VM and under the same limits; what it
// throws is reported as RUNTIME.)
//
// Run's event loop runs on the caller's goroutine: it drains the job queue,
// then waits for a timer, a data reply or a stop. Limits are enforced here:
// wall time by a timer and the engine's own eval deadline, CPU time on the
// thread clock of each call into JavaScript, memory by QuickJS's malloc
// limit, event counts by ipc.Budget. A limit crossed inside a host function
// panics with stopPanic, which the engine turns into an uncatchable
// exception: no catch or finally block of the step runs after it.
package jsrt
