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
//
// The engine polls its interrupt between instructions only: a step inside
// one long native call (JSON of a deep value, a sort without a comparator,
// a join of a huge sparse array) runs on after a stop until the call
// returns. The CPU watchdog (cpuwatch.go) then ends the run for its caller
// without the VM, through Job.Overrun, once the run's CPU is past
// OverrunCPU of its limit; the caller gives up on the goroutine (a worker
// exits, in-process the runtime is abandoned).
//
// Memory: the engine's allocator calls go through allocWatch (heap.go),
// which keeps the exact peak and sees every allocation the limit refuses.
// That is what makes an out-of-memory failure OOM whatever the engine
// threw (near the limit it throws null, having no memory for its error),
// and a promise job whose allocation failed (the engine turns that into a
// rejection nothing may see) OOM rather than "never finished".
//
// # Modules
//
// A Job's Modules become globals of its run only (duckdb, glpk: the
// objects are built by the bootstrap, installed by the "modules" dispatch).
// Their calls are host operations that return a pending id, like data
// requests; the work runs on the run's module goroutine (modules.go), one
// call at a time, with the run's context and wall deadline, and its reply
// comes back through the event loop. So timers and limits keep working
// while DuckDB or GLPK computes, and the run's end interrupts them. The
// module goroutine ends with the run; its databases are closed in the
// background. Each Runtime keeps one DuckDB database ready (duckdb.Pool),
// made by its first run that opens one; a run granted duckdb opens its
// database while its input is built, before the step asks for it.
//
// # JSON values without JSON
//
// Two paths move large values between Go and the guest without the
// engine's JSON (issue #7). The run's input and the replies to data
// requests, fetches and module calls are built in the VM from Go
// (jsonvalue.go: the values JSON.parse would make, twice as fast), and
// db.load's array of plain objects is read out of the VM into
// duckdb.Rows (rows.go: ten times faster than JSON.stringify and a parse).
// Both give up on whatever they cannot do exactly as JSON.parse and
// JSON.stringify would, without running any of the step's code, and the
// engine's JSON then does it. Both reach into the wrapper's and the
// engine's structures (the VM's context, an object's shape, a fast
// array): found by reflection, checked against the engine's API on every
// shape and array read in place, and off (the JSON path) if they do not
// match; TestVMInternals fails then.
//
// # Parts loaded on first use
//
// The web globals and Intl are parts of the bootstrap that a VM evaluates
// the first time its step reads one of their globals (bootstrap.js,
// loadPart). Intl's part (intl.js) is the ECMA-402 surface over host
// functions (intl.go) that format with package intl: CLDR tables generated
// into Go for the locales of Config.Locales (IntlLocales lists what the
// binary has), one implementation for every locale. A VM's Intl setup, its
// offered locales, default locale (en-US) and time zone (UTC), is the
// machine's intl.Env, which the run that takes the VM sets. RATIONALE.md,
// "Why is Intl Go-backed", says why and what it costs.
//
// A Job's Packages are npm bundles (package npm). Their bytecode is
// compiled once per process (packages.go); the step's imports of them are
// rewritten before it compiles (imports.go: the AsyncFunction constructor
// refuses import declarations), and each is evaluated in the run's VM
// before the step starts, or already was, in a VM the Runtime prepared
// after an earlier run with the same packages.
package jsrt
