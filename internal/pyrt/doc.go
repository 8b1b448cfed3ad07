// Package pyrt runs Python steps in native CPython, jailed, each in a
// process forked from a warm zygote (DESIGN §3 decision 5). A zygote
// belongs to one worker process of package pool, and the package is split
// along that line:
//
//   - The host's side is Launcher (launcher_linux.go). It finds the
//     interpreter, checks that the jail can be built, and makes the command
//     and the jail.Config that start one zygote. Package pool starts,
//     reaps and kills zygotes with the code that starts workers, calls
//     Ready to complete a zygote's hello and measure it, hands its control
//     socket to the worker it is for, and after each of its runs calls
//     Zygote.ProveSockets.
//   - The worker's side is Runner (runner_linux.go, run_linux.go,
//     modules_linux.go, zygote_linux.go). The worker that holds a zygote's
//     control socket drives it: it runs each step in a process forked from
//     it, recounts what that process sends, relays its events as the run's
//     events, and serves its module calls from the worker's own
//     jsrt.Runtime.
//
// Nothing of a Python run executes in the host, whatever the engine's
// isolation: package sandbox runs Python steps through the pool.
//
//	l, err := pyrt.NewLauncher(pyrt.Config{})          // host; errors.Is(err, errors.ErrUnsupported): no Python here
//	cmd, control, err := l.Command()                    // the pool jails cmd with l.Jail(uid, gid) and starts it
//	z, err := l.Ready(control, pid)                     // the zygote said ready; measured
//	... control and z.Info go to the worker (descriptor 5, then a zygote frame) ...
//	r, err := pyrt.NewRunner(control, z.Info, modules)  // worker
//	ev, retire := r.Run(ctx, job)                       // Job and Host are jsrt's
//
// The binary must call MaybeZygote first thing in main (package worker's
// TakeOver does, from package sandbox's init) and let jail.Probe's child
// in, because the zygote is started by re-executing it.
//
// # Processes
//
//	host: pool ──starts, jails, kills, reaps──┬──▶ worker: jsrt.Runtime, Runner
//	                                          └──▶ zygote: python3, pid 1 of its namespaces
//	worker ──control socket (SOCK_SEQPACKET, JSON + SCM_RIGHTS)──▶ zygote
//	                                                                 │ os.fork(), one spare at a time
//	worker ◀──the spare's pipes (passed to the worker by the zygote)──▶ run process: one step, then _exit
//
// The pool starts a zygote at its worker's first Python run. Command's
// command re-executes the binary with EnvZygote set and the zygote's end
// of the control socket as descriptor 3; the pool jails it with Jail and
// the host ids of its worker (jail.Prepare: new user, pid, network,
// mount, IPC and UTS namespaces, and cgroups where granted) and starts it
// from its spawner thread. MaybeZygote calls jail.Enter, which builds the
// read-only root (the interpreter, its standard library, its
// site-packages (Config.Packages, Config.SitePackages), its time zone
// database, jail.SystemLibraryBinds and the /etc/alternatives links that
// lead into them, each path's symbolic links recreated; plus a small
// private /tmp), drops every capability, sets no_new_privs and installs the jail's
// seccomp filter, and then execveat()s python3 from a descriptor (the one
// exec the filter allows). The interpreter runs the embedded prelude.py: it
// stacks a second seccomp filter that refuses execve and execveat outright
// (and checks that it took), makes itself non-dumpable again, imports
// Config.Preload, freezes the garbage collector's view of the heap and says
// "ready" (after a warm-up of preloaded numpy and pandas: see _WARMUPS in
// prelude.py; the launcher's environment makes their thread pools run one
// thread). Ready reads that hello on the host's end of the control socket,
// within Config.StartTimeout, measures the zygote's address space and
// resident set (/proc/<pid>/statm: a run's RLIMIT_AS and its heap figure
// are counted from them) and opens /proc/<pid>/net/unix. The pool then
// passes the control socket to the worker, with an ipc.Zygote holding
// those figures and the Config's rlimits, and keeps no end of it: from
// then on only the worker talks to the zygote.
//
// The zygote keeps one spare: a forked process with its own three pipes
// (job and replies in; events out; raw output out), its event loop and
// console ready, which has rehearsed a run (so that the pages a run touches
// are copied before a job arrives) and blocks reading its job. The zygote
// sends the worker's ends of the pipes on the control socket ("spare"),
// waits for the spare to exit, or kills it when the worker asks ("kill"),
// then kills every other process of its pid namespace (kill(-1): it is
// init, so this spares only itself) and reaps them, empties /tmp and proves
// it back to its baseline (see "Shared by the runs of one zygote"), reports
// the exit status, CPU time and peak resident set ("exit"), and forks the
// next spare. A run (Runner.Run) is: take the newest live spare; write the
// job line (code, input, limits, rlimits, modules) into its pipe; relay its
// events; end with its terminal line or its death; wait for "exit". Run
// returns only after every process of the run is gone, so runs never
// overlap: a Runner runs one step at a time, and concurrent Runs take turns.
// The zygote exits when its control socket closes (Runner.Close, or the
// worker's death); the pool kills and reaps it in any case when its worker
// goes.
//
// # Bridge
//
// JSON lines between the worker and the run process. The run process sends
// "start", then console, status, request, fetch and module lines, then one
// terminal line: result, error (with the step's own line numbers), oom or
// limit. The worker writes the job line and then one reply line per data
// or fetch request or module call. The worker trusts none of it: every
// line is size-capped before it is read whole, must be UTF-8, is
// depth-checked (ipc.CheckJSONDepth) before it is decoded, request ids must
// come in sequence, and every limit is recounted on an ipc.Budget exactly
// as jsrt counts it (console truncation and its one notice, status events,
// data requests and bytes, fetch requests, result bytes). A line that
// breaks these rules ends the run RUNTIME ("the step broke the bridge
// protocol: ..."), not CRASHED: the run process is the step's own. The run
// process counts too, only so that a step stops at the call that crossed a
// limit, as in JavaScript. The statistics the process reports about itself
// (time in code, CPU spent while spare, console lines it dropped) are
// clamped; CPU time and peak memory come from the zygote's wait4.
//
// The worker sends the run's events to the host as event frames and its
// outcome as a terminal frame, the frames of a JavaScript run (package
// ipc), and the host checks and recounts them again, as it does a
// JavaScript run's (package pool): a worker that lets more through than the
// run's limits allow is killed, and its run is CRASHED. Replies and aborts
// come from the host the same way.
//
// # Guest API
//
// The step is the body of an async function (so return and await work at
// the top level; its line 1 is the user's line 1). Globals: input,
// data_proxy.request(method, params) (awaitable; DataProxyError on an error
// reply), report_status(payload), fetch(url, method=, headers=, body=,
// json=, timeout=, redirect=) (awaitable Response: status, status_text,
// ok, headers (case-insensitive mapping; get_all), url, redirected,
// content, text(), json(), raise_for_status(); FetchError when refused or
// failed), print, sys.stdout and sys.stderr (console "log" and "error", one
// event per line) and logging (console "debug", "info", "warn", "error";
// the root logger is at INFO). Requests are sent when called, as in
// JavaScript, so asyncio.gather runs them together.
//
// With Job.Modules, the globals duckdb and glpk mirror JavaScript's:
// duckdb.open() → Database with load(table, rows), query(sql, *params),
// exec(sql), close() (and async with); glpk.solve(model, options) and
// glpk.js's constants. Each call is an awaitable; a failed call raises
// DuckDBError or GLPKError (also duckdb.Error, glpk.Error, and globals only
// in runs that asked for the module) with JavaScript's message. The run
// process cannot load DuckDB or GLPK, so it sends each call to its worker
// as a module line ({"k":"module","id",…,"op","handle","table","sql",
// "rows"|"rowsText","params","model","options"}; ids share the requests'
// sequence); the worker checks it as jsrt checks a JavaScript run's (the
// op, a module the run was granted, each argument's JSON and nesting, at
// most jsrt.MaxModuleCalls in flight, the line at most
// jsrt.ModuleResultBytes(memoryMb)) and passes it to the run's
// ModuleSession, which the ModuleHost opens at the first call: the
// worker's own jsrt.Runtime (OpenModules), whose calls run with the code
// of a JavaScript run's calls. So DuckDB and GLPK run in the worker that
// drives the run, and a query's rows go from the worker to the run process
// only; they never cross the host. The call's reply becomes its reply
// line, or ends the run (OOM, a result cap, the wall limit: the same
// outcomes as in JavaScript). The session is closed, its database with it,
// when the run ends. The result must be JSON (json.dumps, allow_nan=False).
// "from m import *" and "from __future__ import ..." work at the top level;
// "yield" there is a syntax error.
//
// Outcomes: a SyntaxError is VALIDATION with the user's line and column;
// any other exception is RUNTIME, "Type: message", with a traceback of the
// user's frames and library frames (the prelude's are dropped) and the
// position of the innermost user frame (RecursionError has limit
// stackDepth; a result nested too deeply, jsonDepth); a step that awaits
// what nothing will complete is RUNTIME at once. MemoryError, or death by
// the memory cgroup, is OOM (memoryMb). SIGPROF from the CPU timer, SIGXCPU,
// the RLIMIT_CPU kill or the zygote's CPU kill is TIMEOUT (cpuMs). The wall
// limit, the host's abort and Close make the worker ask the zygote to kill
// the run: TIMEOUT (wallMs) or ABORTED. A run process that dies otherwise
// is RUNTIME, with the tail of its raw output as the stack. A zygote that
// dies is CRASHED for its run (ZygoteDied; the host adds how it ended),
// and the host retires the worker with it: the next Python run of the
// worker's group gets another worker and a new zygote.
//
// # What each layer stops
//
// On top of everything package jail does for the zygote (see its doc):
//
//   - The jail's seccomp policy plus the zygote's rules: one execveat, of
//     the interpreter's descriptor; seccomp(SET_MODE_FILTER) with no flags
//     (a filter only takes permissions away); reading extended attributes.
//     So a step gets EPERM for sockets other than AF_UNIX (no network, and
//     there is no route anyway), mounts, namespaces (no per-run pid
//     namespace is possible from inside either), ptrace, setuid and the
//     rest of the jail's denials; ENOSYS for System V IPC, POSIX message
//     queues, setsid and setpgid.
//   - The prelude's stacked filter: no exec of anything (os.system,
//     subprocess, os.exec*), even of binaries the read-only binds expose.
//   - The read-only root: the interpreter, its standard library, its
//     site-packages, the time zone database and the system's shared
//     libraries only; no /etc beyond ld.so.cache and the /etc/alternatives
//     links that lead into those (Debian's BLAS and LAPACK), no /proc, no
//     /home (TestDataStackConfinement); /tmp is the jail's own tmpfs
//     (Config.TmpfsSizeBytes, Config.TmpfsInodes), the only place a step
//     can write, emptied and proven clean after every run (below).
//   - Per-run rlimits, set by the run process on itself before the step
//     runs: RLIMIT_AS (the zygote's address space, a few MiB of slack, plus
//     memoryMb), ITIMER_PROF at cpuMs and RLIMIT_CPU one second past it,
//     RLIMIT_NPROC (fork and thread bombs), RLIMIT_NOFILE, RLIMIT_FSIZE. A
//     step may lower them, not raise them.
//   - The zygote's CPU watch: from the run's start (its "start" line, which
//     the worker passes on to the zygote as "watch") the zygote reads the
//     run process's CPU clock in its select loop and kills the run at cpuMs
//     ("cpuKilled" in its exit). SIGPROF's default action ends a step at
//     its limit even in native code, but a step can ignore the signal,
//     handle it in Python (the handler runs between bytecodes, never inside
//     sorted(), str() of a huge int or a backtracking re) or cancel the
//     timer; RLIMIT_CPU is whole seconds. The watch covers the run process,
//     all its threads; a process the step forks has RLIMIT_CPU of its own,
//     is one of RLIMIT_NPROC, and dies with the run.
//   - The zygote as init of the pid namespace: the step cannot kill or stop
//     it (init ignores signals it has no handler for; its only handler is a
//     no-op for SIGCHLD), and kill(-1) after every run leaves nothing behind,
//     whatever the step forked or however it regrouped its processes.
//   - One run at a time per zygote, and one worker per zygote: no run can
//     see, signal or wait for another; the spare for the next run is forked
//     only after everything of the previous one is dead, from the zygote,
//     not from the run. The worker serves the runs of one isolation group
//     only (package pool), so its zygote does too.
//   - A fresh fork per run: nothing a step does to modules, builtins or
//     globals survives it.
//   - The worker: wall time, abort and Close by asking the zygote to kill
//     the run; every limit recounted; lines capped, checked and decoded
//     defensively; a zygote that does not end a run within a grace period
//     is stopped (its control socket closed), and the worker asks to be
//     retired.
//   - The host: the worker and its zygote killed at the wall limit plus
//     the pool's grace; every count recounted once more; the zygote's
//     named unix sockets checked after every run (below).
//
// # Shared by the runs of one zygote
//
// In turn, and only by runs of its worker's isolation group (by default
// one tenant's; every tenant's only when the operator chooses shared
// workers): whatever a run can leave in the zygote's jail is either cleaned
// and proven gone before the next run, or out of the run's reach.
//
//   - /tmp, the one writable mount, run directory included. After every
//     run (every process of it dead) the zygote removes everything in it
//     by descriptor (Zygote.clean_tmp and _empty_dir in prelude.py:
//     openat and unlinkat from a descriptor of /tmp it keeps, no
//     recursion, a few descriptors whatever the depth, every directory
//     made 0700 first), so no depth, name or mode stops it. Then it
//     proves /tmp back to the baseline it recorded at start, before the
//     first spare: no entries, the same free blocks and free inodes, mode,
//     owner, atime and mtime (the times restored) and extended
//     attributes (a run cannot set any: the *setxattr calls are not in
//     the jail's allowlist).
//   - Unix socket names, in the zygote's network namespace. A socket dies
//     with its process, but one in flight (passed in a descriptor over a
//     socket that nothing holds) lives until the kernel's garbage
//     collector frees the cycle, and an abstract name could meanwhile be
//     found by the next run; so could a file of /tmp held that way (its
//     blocks stay in use, which the proof above sees). After each run the
//     host reads /proc/<zygote>/net/unix (Zygote.ProveSockets): no named
//     socket may be left.
//   - Out of reach (TestUnreachableLeftovers): System V IPC and POSIX
//     message queues of the IPC namespace (ENOSYS), the host name of the
//     UTS namespace (EPERM), a new owner for /tmp (chown is ENOSYS), FIFOs
//     and device nodes (mknod is ENOSYS), keyrings (EPERM). Processes and
//     their locks, mappings and timers die with kill(-1).
//
// If a proof fails, the zygote says why in its "exit" message, forks no
// other spare and waits to be stopped; Run returns the run's outcome with
// a retire reason, which the worker puts in the run's terminal frame, and
// the host retires the worker with its zygote and counts it (the run that
// left the trace keeps its outcome; the next run gets another worker). The
// host does the same when a run left a named socket. Also shared, and not
// cleaned: the jail's memory and pids cgroups; the zygote's hash seed (each
// run process reseeds random after the fork); and /tmp's inode numbers,
// which tmpfs hands out in sequence, so a run can tell roughly how many
// files earlier runs on its zygote made.
package pyrt
