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
// # Time zone
//
// A Job's TimeZone is its run's local time; QuickJS's Date reads local
// time from the C library, for the whole process (UTC in a worker). A run
// whose zone is not the process's gets zone.js (zone.go) before its step
// and packages: a Date whose local-time methods compute from the UTC ones
// and the zone's offsets, and Intl's default zone is the run's too.
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
// # The web platform's globals
//
// WinterTC's minimum common API (URL, TextEncoder, crypto, Event, Blob,
// ...) is most of the guest's code and most steps use none of it, so it is
// in parts: sources compiled to bytecode once per process with the
// bootstrap, which a VM evaluates the first time its step reads one of
// their globals (bootstrap.js, __sbx_lazy), or another part needs them.
// What a first use costs is reading and running its parts' bytecode, and
// later freeing it, in proportion to their size (about 100 instructions a
// byte); so each part holds a few globals, the fewest a first use needs,
// and one part loads another only when a value needs it:
//
//   - text.js: atob, btoa, TextEncoder, TextDecoder and the UTF-8 codec;
//     bytes.js, a BufferSource's bytes (for TextDecoder, crypto.subtle, a
//     Blob of bytes);
//   - dom.js: DOMException, loaded when one is made;
//   - events.js: Event, EventTarget; abort.js: AbortController, AbortSignal;
//     performance.js;
//   - blob.js: Blob, File (text.js only for text that is not ASCII);
//     form.js: FormData;
//   - clone.js: structuredClone;
//   - url.js: URL; urlcore.js, the parser of the URLs steps mostly write
//     (for URL and Request); urlparse.js, the WHATWG parser in full, for
//     the others and for URL's setters; params.js: URLSearchParams;
//   - crypto.js: crypto, Crypto; subtle.js: crypto.subtle, SubtleCrypto,
//     digest; keys.js: CryptoKey, the methods of keys (HMAC, AES-GCM);
//   - headers.js: Headers; request.js: Request; fetch.js: fetch, Response
//     (bridge code, bootstrap.js's header).
//
// BenchmarkWebFirstUse measures each first use, scripts/firstuse counts
// its instructions; RATIONALE.md says why the parts are this small, and
// why URL has two parsers.
//
// The parts but headers.js, request.js and fetch.js are library code the
// step uses, not the bridge: they may load
// after the step replaced built-ins, and then see its replacements, as any
// library would. What they must not do is let a step break another global
// or the bridge: they keep nothing of the bridge's but what bridge hands
// them (the boot's own captured built-ins), give none of it away, and make
// their host calls through bridge.host. What fetch reads of their values
// (an AbortSignal's state, a Blob's bytes) follows the bridge's rules
// (bootstrap.js's header).
//
// # Intl
//
// Intl is, like the web globals, a part of the bootstrap that a VM
// evaluates the first time its step reads Intl or calls a locale method
// (bootstrap.js, loadPart). Intl's part (intl.js) is the ECMA-402 surface over host
// functions (intl.go) that format with package intl: CLDR tables generated
// into Go for the locales of Config.Locales (IntlLocales lists what the
// binary has), one implementation for every locale. A VM's Intl setup, its
// offered locales, default locale (en-US) and time zone (UTC), is the
// machine's intl.Env, which the run that takes the VM sets from its Job
// (TimeZone, Locale). RATIONALE.md, "Why is Intl Go-backed", says why and
// what it costs.
//
// A Job's Packages are npm bundles (package npm). Their bytecode is
// compiled once per process (packages.go); the step's imports of them are
// rewritten before it compiles (imports.go: the AsyncFunction constructor
// refuses import declarations), and each is evaluated in the run's VM
// before the step starts, or already was, in a VM the Runtime prepared
// after an earlier run with the same packages.
package jsrt
