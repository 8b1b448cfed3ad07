// Package ipc is the run vocabulary (Limits, Event, Reply, Failure, Stats,
// Budget) and the frame codec that carries it between the host and its
// worker processes.
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
// The worker reads frames on descriptor 3 and writes them on descriptor 4
// (see package worker). The host is trusted; the worker is not, so the host
// checks every frame it receives against the run it belongs to.
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
//	    │── execute {runId, code, input, limits, ─────────▶│ one run at a time
//	    │            modules, packages}                    │
//	    │◀────────────────────────────── started {runId} ──│ before the step runs
//	    │◀───────────── event {runId, status|console} ─────│ host recounts each
//	    │◀──── event {runId, data_request|fetch_request} ──│ against the limits
//	    │── reply {runId, id, value|error|limit} ─────────▶│ same id
//	    │                       ...                        │
//	    │── abort {runId, reason}  (ctx ended) ───────────▶│ cancels the run
//	    │◀─────────── terminal {runId, result|error} ──────│ exactly one per run
//	    │                                                  │ idle again (or, marked
//	    │                                                  │ exiting, it exits: it
//	    │                                                  │ could not stop the VM)
//	    │── execute {runId+1, ...} ───────────────────────▶│
//	    │                       ...                        │
//	    │── modules {runId, limits, modules, deadlineMs} ─▶│ a module session: the
//	    │── call {runId, id, op, args} ───────────────────▶│ duckdb/glpk calls of a
//	    │◀──────── return {runId, id, value|error|failure} │ Python run, held by the
//	    │                       ...                        │ worker until the host
//	    │── abort {runId} (the Python run is over) ───────▶│ ends it; its database
//	    │◀──────────────────── terminal {runId, result} ───│ is then closed
//	    │                       ...                        │
//	    ╳ host closes descriptor 3 (or dies) ─────────────▶│ EOF: the worker exits
//
// What ends a run on the host side, besides its terminal frame:
//
//	a terminal marked exiting        SIGKILL the worker (it exits anyway); the run keeps its outcome
//	no terminal by wallMs + Grace    SIGKILL the worker; LIMIT_EXCEEDED, limit "time"
//	no terminal by abort + Grace     SIGKILL the worker; ABORTED
//	the worker exits or is killed    CRASHED with the exit status or signal
//	a frame that breaks the rules    SIGKILL the worker; CRASHED
//	  (malformed, too large, unknown type, another run's id, out of order,
//	   an event while idle, more events than the run's limits allow; in a
//	   module session: an event, a return for a call not in flight, a
//	   terminal before the host's abort)
//
// In every case the worker is replaced and only its own run fails.
package ipc
