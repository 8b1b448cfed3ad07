// Package ipc is the run vocabulary (Limits, Event, Reply, Failure, Stats,
// Budget, ModuleCall) with the outcome helpers every runtime shares
// (Failed, Aborted, AbortedBecause, LimitFailure, Limits.CheckCode, Ms), and
// the frame codec that carries runs between the host and its worker
// processes, for JavaScript and Python steps alike.
//
// # Frames
//
// A frame is a 4-byte big-endian body length followed by the body: a 4-byte
// header length, the header (one JSON object, a Frame) and the frame's
// payload, the one possibly large JSON value of its type written as it is
// (see EncodeFrame). The reader checks the length against its limit before
// it reads or allocates anything of the body, checks the nesting depth
// before it decodes, validates the payload once, and refuses unknown
// fields, unknown frame types, parts that do not match the type, and
// anything after the header's one object. Both sides use
// the same codec; each keeps one goroutine (or a mutex) per pipe for writes
// and one goroutine for reads.
//
// # Sequence
//
// The worker reads frames on descriptor 3 and writes them on descriptor 4;
// on Linux, descriptor 5 is a unix socket on which the host passes it
// descriptors (see package worker). The host is trusted; the worker is
// not, so the host checks every frame it receives against the run it
// belongs to. ProtocolVersion is 6.
//
//	host (pool)                                        worker (child process)
//	    │                                                  │ start: Config.Enter (jail)
//	    │── hello {protocol, maxFrameBytes, warm} ────────▶│
//	    │                                                  │ load the runtime
//	    │◀──────────────────────── hello {protocol, pid} ──│
//	    │        (idle: the host may ping; nothing else)   │
//	    │── ping {seq} ───────────────────────────────────▶│
//	    │◀─────────────────────────────────── pong {seq} ──│
//	    │                                                  │
//	    │── execute {runId, language, code, input, ───────▶│ one run at a time
//	    │            limits, modules, packages}            │
//	    │◀────────────────────────────── started {runId} ──│ before the step runs
//	    │◀───────────── event {runId, status|console} ─────│ host recounts each
//	    │◀──── event {runId, data_request|fetch_request} ──│ against the limits
//	    │── reply {runId, id, value|error|limit} ─────────▶│ same id
//	    │                       ...                        │
//	    │── abort {runId, reason}  (ctx ended) ───────────▶│ cancels the run
//	    │◀──── terminal {runId, result|error, retire?} ────│ exactly one per run
//	    │                                                  │ idle again (or, marked
//	    │                                                  │ exiting, it exits: it
//	    │                                                  │ could not stop the VM)
//	    │                       ...                        │
//	    │   before the worker's first Python run:          │
//	    │══ descriptor 5: the zygote's control socket ════▶│ (SCM_RIGHTS)
//	    │── zygote {vsz, rss, maxMemoryMb, maxProcs, ─────▶│ takes the socket: its
//	    │           maxOpenFiles, maxFileSizeBytes,        │ pyrt.Runner
//	    │           startTimeoutMs}                        │
//	    │── execute {runId+1, language: "python", ...} ───▶│ a process forked by the
//	    │◀────────────────────────────── started {runId} ──│ zygote runs the step;
//	    │◀───────────────────────── event {runId, ...} ────│ the worker relays its
//	    │── reply {runId, ...} ───────────────────────────▶│ events and serves its
//	    │◀──── terminal {runId, result|error, retire?} ────│ duckdb/glpk calls
//	    │                       ...                        │
//	    ╳ host closes descriptor 3 (or dies) ─────────────▶│ EOF: the worker exits
//
// A terminal's retire asks the host to give the worker no other run (its
// zygote could not prove that what the run left is gone, or died); the
// run's outcome stands. A Python run's own process speaks JSON lines with
// the worker, never with the host (see package pyrt).
//
// What ends a run on the host side, besides its terminal frame:
//
//	a terminal marked exiting        SIGKILL the worker (it exits anyway); the run keeps its outcome
//	no terminal by wallMs + Grace    SIGKILL the worker; LIMIT_EXCEEDED, limit "time"
//	no terminal by abort + Grace     SIGKILL the worker; ABORTED
//	the worker exits or is killed    CRASHED with the exit status or signal
//	a frame that breaks the rules    SIGKILL the worker; CRASHED
//	  (malformed, too large, unknown type, another run's id, out of order,
//	   an event while idle, a zygote frame from the worker, more events
//	   than the run's limits allow)
//
// In every case the worker (with its zygote) is replaced and only its own
// run fails.
package ipc
