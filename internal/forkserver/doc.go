// Package forkserver starts processes that must be forked, not vforked,
// from a small helper process instead of from the host.
//
// A process started in a new user namespace cannot share its parent's
// memory while the parent writes its uid and gid maps, so Go forks it
// the old way: the kernel copies the parent's page tables and marks every
// page copy-on-write, and the parent then takes a fault on each page it
// writes afterwards. The cost grows with the parent's memory (with a
// 200 MB heap, about 22 ms of the host's CPU per start against 0.4 ms for
// a vfork on this project's 2-core test machine), and the fork holds the
// parent's memory map locked while it copies. A host that starts a jailed
// worker for every tenant switch would pay that on every switch.
//
// A Server is the host's own executable re-executed once (with EnvServe
// set, so that MaybeServe takes it over at init), holding no more memory
// than the Go runtime's own. Server.StartProcess sends it the command and
// the descriptors over a socket; it forks the process with CLONE_PARENT,
// so the new process is the host's child, not the server's: the host
// waits for it, reads its rusage and kills it exactly as if it had forked
// it itself, and its parent-death signal follows the host thread that
// started the server.
package forkserver
