// Package pool is the host side of the process boundary: the one
// supervisor of every jailed process the engine runs steps in, JavaScript
// and Python alike. It starts worker processes by re-executing the host's
// own binary (see package worker), gives a worker a Python zygote of its
// own at its first Python run (see package pyrt), hands each run to a
// worker over the ipc frame protocol, recounts what the worker reports
// against the run's limits, keeps the run's deadline, and kills and
// replaces a worker that dies, hangs or misbehaves. Only the run on that
// worker fails.
//
//	p, err := pool.New(pool.Config{Size: 4, Standby: 1, Python: launcher})
//	...
//	ev := p.RunGroup(ctx, "tenant-a", jsrt.Job{Code: code, Limits: lim, Host: host, Replies: replies})
//	...
//	err = p.Close(ctx)
//
// (*Pool).Run and RunGroup have the semantics of (*jsrt.Runtime).Run, so a
// caller can use either: the pool is the process-isolated one. A job with
// Language ipc.LanguagePython runs in a process forked from the worker's
// zygote, driven by the worker; everything else runs in the worker's own
// jsrt.Runtime.
//
// # Processes
//
// Workers and zygotes are started, killed and reaped by the same code
// (process.go): the jail (Config.Prepare for workers, the pyrt.Launcher's
// jail for zygotes), a start from one dedicated OS thread (so that the
// parent-death signal follows the host, not a retired thread), a reaper
// goroutine, the tail of standard error, and a kill that records why. A
// worker gets its frames on descriptors 3 and 4 and, on Linux, a socket on
// descriptor 5 on which the pool passes it its zygote's control socket. A
// zygote is a sibling of its worker, not its child: the worker's jail
// cannot build another jail. The pool keeps the zygote's process and, after
// each of its runs, checks that it is alive and left no named unix socket;
// the worker keeps its control socket and drives it.
//
// # Slots and groups
//
// The pool has Size + Standby slots; a supervisor goroutine per slot keeps
// it filled with a started worker, pings the worker while it is idle,
// retires it at MaxAge, and starts another when it goes, with exponential
// backoff after failed starts. A worker's zygote is killed and reaped
// before its slot starts the next worker.
//
// A worker is bound to no group until its first run (RunGroup: by default
// the engine's group is the tenant), and from then on runs that group's
// steps only, with its zygote, until it is retired: runs of two groups
// never share a process. A run takes an idle worker of its group (the most
// recently used), else an unbound one, which it binds. The pool keeps
// Standby workers unbound so that a run whose group has no idle worker
// rarely waits for a process start: binding one retires the least recently
// used idle worker of another group, whose slot starts an unbound one. When
// a run finds neither and every slot has a worker, the least recently used
// idle worker of another group is retired for it, and the run waits for its
// slot's next worker. Run is RunGroup with the group "": one group for
// every run, as shared workers.
//
// A worker is retired, killed and replaced by a fresh unbound one after
// MaxRuns runs (1: a process per run), once older than MaxAge, after a run
// that crossed its memory or a time limit, crashed or was killed
// (RetireAfterLimit), when its terminal frame asks for it (its zygote could
// not prove a run's leftovers gone), when its zygote died, and when it is
// evicted for another group. With HostIDs, each slot's worker and its
// zygote run under a host uid and gid of the slot's own (when the host is
// root), which the slot reuses only once every process of its previous
// worker is reaped.
//
// Health reports the slots, the workers up, busy and unbound, their groups,
// runs and zygotes, restarts, failing slots and retirements.
//
// The host binary must let a worker and a zygote take over early; see
// worker.TakeOver.
package pool
