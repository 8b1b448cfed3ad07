// Package jail confines a worker process (a re-execution of the host's own
// binary) so that the untrusted code it runs cannot touch the host's files,
// network, processes or privileges, and cannot exhaust its memory or process
// table. It is Linux only; on other systems, and wherever the kernel refuses
// a mandatory layer, every entry point fails closed with an error wrapping
// errors.ErrUnsupported ("jail: user namespaces: operation not permitted").
// Stepbox never runs a step unjailed instead.
//
// # Use
//
// Host (the pool):
//
//	caps := jail.Probe()              // once, at engine start
//	if err := caps.Err(); err != nil { /* Python unavailable: UNAVAILABLE wrapping ErrUnsupported */ }
//	cmd := exec.Command("/proc/self/exe")
//	cmd.Args, cmd.Env = []string{"stepbox", "worker"}, []string{}
//	cmd.Stdin, cmd.Stdout, cmd.ExtraFiles = ... // the IPC pipes
//	h, err := jail.Prepare(cmd, cfg)
//	defer h.Cleanup()                 // after cmd.Wait: removes the cgroups
//	err = cmd.Start()
//	err = h.Started(cmd.Process.Pid)  // into the cgroups, then released
//
// Worker, first thing in main (before reading any inherited descriptor):
//
//	if cfg, ok, err := jail.ChildConfigFromEnv(); ok {
//		if err == nil {
//			err = jail.Enter(cfg) // returns once, jailed
//		}
//		if err != nil { /* report on stderr, exit non-zero */ }
//	}
//
// # Threat model: what each layer stops
//
// The attacker controls the code a step runs inside the worker and may find a
// bug in the guest runtime (QuickJS, CPython) that gives arbitrary native
// code execution in the worker process. The layers below assume exactly that;
// each stops something the others do not.
//
//   - User namespace (clone): the worker's ids are one unprivileged uid and
//     gid (Config.UID, default 65534) mapped to an unprivileged host id
//     (nobody when the host is root, else the host's own user). Root inside
//     does not exist; an escape from every other layer lands as that host id.
//     Capabilities held inside (only during setup) mean nothing outside.
//   - PID namespace: the worker is pid 1 of its own namespace. It cannot see,
//     signal or ptrace any host process, and when it dies everything it
//     started dies with it.
//   - Network namespace: only a loopback interface, left down. No route to
//     anything, even before seccomp refuses the socket.
//   - Mount namespace, pivot_root and a read-only tmpfs root: the host's file
//     system is detached, not merely hidden (no chroot escape, no /proc/1/root
//     path back). Visible are only the executable, the configured read-only
//     binds (nosuid, nodev), /dev/null, /dev/zero, /dev/urandom, and a
//     size- and inode-capped /tmp (nosuid, nodev, noexec). No /sys, no /home,
//     no host /etc, no /proc unless Config.UnsafeMountProc.
//   - IPC and UTS namespaces: no System V IPC or POSIX message queues shared
//     with the host; the host name is "stepbox".
//   - Cgroup namespace (when granted): the host's cgroup paths stay hidden.
//   - Capabilities: the bounding, ambient, inheritable, permitted and
//     effective sets are empty on every thread and securebits are locked
//     (no root fixups), so nothing regains a privilege, even through exec.
//   - no_new_privs: execve cannot grant privileges (setuid bits, file
//     capabilities); required for an unprivileged seccomp filter.
//   - seccomp (NewFilter), on all threads: the kernel's attack surface is cut
//     to what a Go worker needs. Refused with EPERM: sockets other than
//     AF_UNIX, ptrace and process_vm_*, every mount call (old and new API),
//     chroot, unshare, setns, clone with namespace flags, bpf, io_uring,
//     keyrings, perf_event_open, userfaultfd, module and kexec loading,
//     reboot, swap, clock setting, identity changes, personality changes,
//     execve (unless added); clone3 fails with ENOSYS (libraries fall back to
//     clone, whose flags the filter can see); anything else not allowed
//     fails with ENOSYS. A call through another architecture's entry point
//     (i386 int 0x80) or the x32 ABI kills the process.
//   - Memory ceiling: a memory cgroup (v2 memory.max, no swap, oom.group; or
//     v1 memory.limit_in_bytes and memsw) OOM-kills the worker past
//     Config.MemoryBytes; without a writable cgroup, RLIMIT_AS bounds its
//     address space instead.
//   - Process ceiling: a pids cgroup and RLIMIT_NPROC stop fork and thread
//     bombs at Config.MaxProcs tasks.
//   - Other rlimits: open files, file size, no core dumps, no locked memory.
//   - PR_SET_DUMPABLE 0: no core dumps, and the worker's ptrace-protected
//     /proc files (mem, maps, environ, fd) are closed to everything in its
//     user namespace, its own children included.
//   - Parent-death signal and a new session: the worker is SIGKILLed when the
//     host (more exactly: the host thread that started it) dies, and shares
//     no terminal or process group with the host.
//   - Descriptors: only the caller's Stdin, Stdout, Stderr and ExtraFiles
//     survive; anything the host leaked without O_CLOEXEC is closed.
//
// Not covered here: CPU time (the pool's wall and CPU limits kill the
// worker), disk I/O bandwidth, and kernel side channels (timing, Spectre);
// seccomp leaves the kernel's remaining interfaces reachable, so kernel bugs
// in them remain the residual risk.
//
// # How Enter works
//
// The worker is a multithreaded Go program, and capabilities are per thread:
// dropping them on every thread would need AllThreadsSyscall, which cgo
// binaries cannot use. So the jail is built in two executions. Prepare
// clones the child with its namespaces and id maps, the target uid, and only
// CAP_SYS_ADMIN and CAP_SETPCAP as ambient capabilities. The first Enter
// builds the root and pivots into it, sets rlimits, drops every capability
// on its (locked) thread and re-executes the bound executable: execve leaves
// a single thread, without capabilities and with no_new_privs, from which
// the Go runtime clones every later thread. The second Enter verifies that,
// sets PR_SET_DUMPABLE 0 and installs the seccomp filter with
// SECCOMP_FILTER_FLAG_TSYNC. The host's Handle.Started releases the first
// Enter only after placing the child in its cgroups (v1), and passes it a
// descriptor of the executable opened inside the child's mount namespace,
// which the child could not open or bind itself.
package jail
