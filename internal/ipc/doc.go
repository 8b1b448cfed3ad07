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
// # Protocol
//
// The worker reads frames on descriptor 3 and writes them on descriptor 4;
// on Linux, descriptor 5 is a unix socket on which the host passes it
// descriptors (see package worker). The host is trusted; the worker is
// not, so the host checks every frame it receives against the run it
// belongs to. ProtocolVersion is 6. The sequence of frames (handshake,
// runs, a worker's first Python run, ping, shutdown), the limits on frames
// and what the host does on each violation are described once, in
// docs/protocol.md.
package ipc
