# Stepbox's Python side (see doc.go): the zygote, which runs this once and
# forks one process per run, and the run process, which runs one step and
# talks JSON lines with the host.
#
# The launcher execs python3 with "-c LOADER PRELUDE CONFIG"; LOADER
# compiles this text under the file name "<stepbox>", so that tracebacks can
# tell its frames from the step's ("step.py").
#
# Descriptors of a run process (the zygote made its pipes and passed the
# host's ends to the host):
#   0  /dev/null
#   1  the run's raw output pipe (also 2): native writes, fatal errors
#   3  from the host: the job line, then replies
#   4  to the host: events, then exactly one terminal frame
#
# Nothing here trusts the step, and the host trusts nothing from here: it
# recounts every limit. The counting here only makes a step stop at the
# same point as it would in JavaScript.

import builtins
import errno
import gc
import json
import os
import select
import signal
import socket
import stat
import sys
import resource
import time
import _thread

PROTOCOL = 1
STEP_FILE = "step.py"
TMP = "/tmp"
RUN_NAME = "run"
RUN_DIR = TMP + "/" + RUN_NAME
IN_FD, EVENT_FD = 3, 4
MAX_MESSAGE = 8 << 10  # bytes of an exception message sent to the host
MAX_STACK = 32 << 10  # bytes of a traceback sent to the host
MAX_NAME = 200

CONFIG = json.loads(sys.argv[2])
sys.argv = [""]


def _dumps(value):
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _guest_json(value):
    """A step's value (result, status payload, request params) as JSON:
    what json.dumps writes, and, as JavaScript writes a BigInt, a finite
    decimal.Decimal as the JSON number of its exact digits; a date or time
    is its ISO text, as JSON.stringify writes a Date. Only a value json
    refuses pays for the second pass."""
    try:
        return _dumps(value)
    except TypeError:
        pass
    import decimal
    import re
    mark = "\x00" + os.urandom(12).hex() + ":"

    def default(o):
        if isinstance(o, decimal.Decimal):
            if not o.is_finite():
                raise ValueError("Out of range decimal values are not JSON compliant: %s" % o)
            return mark + str(o)
        return _json_default(o)  # a date's ISO text, as for module calls
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=default)
    # The mark is 96 random bits made for this call: no string of the
    # step's can hold it.
    return re.sub(re.escape(json.dumps(mark)[:-1]) + '([-+.0-9Ee]+)"', lambda m: m.group(1), text)


def _utf8(text):
    # A lone surrogate becomes the JSON escape \udXXX: still valid JSON.
    return text.encode("utf-8", "backslashreplace")


def _clip(text, limit):
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return data.decode("utf-8")
    return data[:limit].decode("utf-8", "ignore")


# ---------------------------------------------------------------------------
# Lockdown: once, in the zygote, before anything else.


def _lockdown():
    """Stacks a second seccomp filter that refuses execve and execveat
    (the jail allowed one execveat, of the interpreter, to get here), and
    makes the process non-dumpable again (exec reset it)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    prog = bytes.fromhex(CONFIG["filter"])

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(prog, len(prog))
    fprog = SockFprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(ctypes.c_long(CONFIG["sysSeccomp"]), ctypes.c_long(1), ctypes.c_long(0), ctypes.byref(fprog))
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, "seccomp(SECCOMP_SET_MODE_FILTER): " + os.strerror(e))
    if libc.prctl(ctypes.c_int(4), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "prctl(PR_SET_DUMPABLE): " + os.strerror(e))
    # Fail closed: exec must now be refused, not merely miss its file.
    try:
        os.execv("/nonexistent/stepbox", ["stepbox"])
    except PermissionError:
        pass
    except OSError as e:
        raise RuntimeError("exec is not refused after lockdown: %s" % e)


# ---------------------------------------------------------------------------
# The zygote.


def _noop(signum, frame):
    pass


class Zygote:
    """The zygote keeps one spare child forked ahead of demand: a process
    that has its pipes, descriptors, event loop and console ready and
    waits for its job. The host gets the host's ends of the spare's pipes
    in a "spare" message and starts a run by writing the job; the zygote
    waits for the spare to exit (or kills it when asked), kills and reaps
    whatever it left, empties /tmp and proves it back to its baseline,
    reports "exit", and forks the next spare; or, if the proof fails,
    reports why in "exit" and serves no other run."""

    def __init__(self):
        self.ctl = socket.socket(fileno=3)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGCHLD, _noop)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        self.next_id = 0
        # /tmp as the jail made it: what every run must leave behind.
        self.tmp = os.open(TMP, _DIR_FLAGS)
        if os.listdir(self.tmp):
            raise RuntimeError("/tmp is not empty when the zygote starts")
        self.baseline = self.tmp_state()
        self.keep = CONFIG.get("testKeepTmp") or None  # tests only: a name the cleaner leaves
        try:
            self.ncpu = max(1, len(os.sched_getaffinity(0)))
        except OSError:
            self.ncpu = os.cpu_count() or 1

    def send(self, obj, fds=()):
        data = json.dumps(obj).encode()
        if fds:
            socket.send_fds(self.ctl, [data], list(fds))
        else:
            self.ctl.send(data)

    def recv(self):
        """The next message from the host; None when the host is gone."""
        try:
            data, anc, _, _ = self.ctl.recvmsg(1 << 16, socket.CMSG_SPACE(8 * 4))
        except OSError:
            return None
        for level, kind, payload in anc:  # the host never sends any
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                n = len(payload) - len(payload) % 4
                for i in range(0, n, 4):
                    os.close(int.from_bytes(payload[i:i + 4], sys.byteorder))
        if not data:
            return None
        try:
            return json.loads(data)
        except ValueError:
            return {}

    def serve(self):
        self.send({"op": "ready", "proto": PROTOCOL, "version": "%d.%d.%d" % sys.version_info[:3]})
        gc.collect()
        gc.freeze()  # children share these pages instead of copying them on collection
        while True:
            self.spare()

    def spare(self):
        """Forks a spare, hands its pipes to the host, and returns once it
        and everything it started are gone."""
        self.next_id += 1
        rid = self.next_id
        os.mkdir(RUN_NAME, 0o700, dir_fd=self.tmp)  # /tmp is proven empty
        in_r, in_w = os.pipe()
        ev_r, ev_w = os.pipe()
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                for fd in (in_w, ev_r, out_r):
                    os.close(fd)
                child(self, (in_r, ev_w, out_w))
            finally:
                os._exit(70)
        for fd in (in_r, ev_w, out_w):
            os.close(fd)
        try:
            self.send({"op": "spare", "id": rid}, (in_w, ev_r, out_r))
        except OSError:
            self.kill_all()
            os._exit(0)
        for fd in (in_w, ev_r, out_r):
            os.close(fd)
        status = rusage = None
        killed = cpu_killed = False
        watch = None  # the run's CPU clock at its start and the CPU it may use, in ns
        while status is None:
            timeout = None
            if watch is not None and not (killed or cpu_killed):
                now = _cpu_ns(pid)
                if now is not None:
                    used = now - watch[0]
                    if used >= watch[1]:
                        cpu_killed = True
                        self.kill_all(reap=False)
                    else:
                        # CPU time runs at most ncpu times faster than
                        # the wall clock (RLIMIT_NPROC bounds the threads
                        # too, but not below the CPUs): look again when
                        # the budget could be spent.
                        timeout = max((watch[1] - used) / self.ncpu / 1e9, 0.0005)
            try:
                ready, _, _ = select.select([self.ctl, self.wake_r], [], [], timeout)
            except InterruptedError:
                ready = []
            if self.wake_r in ready:
                try:
                    while os.read(self.wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
            if self.ctl in ready:
                m = self.recv()
                if m is None:
                    self.kill_all()
                    os._exit(0)
                if m.get("op") == "kill" and m.get("id") == rid:
                    killed = True
                    self.kill_all(reap=False)
                elif m.get("op") == "watch" and m.get("id") == rid and watch is None:
                    # The run's process has its job: from here on its CPU
                    # is the step's. A step can ignore or cancel
                    # its CPU timer (SIGPROF) and sit in one native call
                    # (sorted(), a big int's str(), a regular expression
                    # that backtracks) that no Python-level handler
                    # interrupts; RLIMIT_CPU is whole seconds. The zygote
                    # reads the run's CPU clock and kills the run past its
                    # limit, where the step cannot reach.
                    # The base is the process's own reading when it took
                    # its job, before the step ran (relayed by the host):
                    # the time this message took is the step's too. Never
                    # later than now.
                    now = _cpu_ns(pid)
                    limit, base = m.get("cpuMs"), m.get("baseNs")
                    if now is not None and isinstance(limit, (int, float)) and limit > 0:
                        if not isinstance(base, int) or not 0 < base < now:
                            base = now
                        watch = (base, int(limit * 1e6))
            while True:
                try:
                    p, st, ru = os.wait4(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if p == 0:
                    break
                if p == pid:
                    status, rusage = st, ru
        # Whatever the step started dies with it.
        self.kill_all()
        dirty = self.clean_tmp()
        out = {"op": "exit", "id": rid, "killed": killed, "cpuKilled": cpu_killed,
               "cpuMs": (rusage.ru_utime + rusage.ru_stime) * 1000.0, "maxRssKb": rusage.ru_maxrss}
        if os.WIFSIGNALED(status):
            out["signal"] = os.WTERMSIG(status)
        else:
            out["status"] = os.waitstatus_to_exitcode(status)
        if dirty:
            out["dirty"] = _clip(dirty, 1000)
        try:
            self.send(out)
        except OSError:
            os._exit(0)
        if dirty:
            # What the run left could not be proven gone: no other run may
            # see it. The host replaces this zygote; until it closes the
            # socket, nothing more is forked.
            while self.recv() is not None:
                pass
            self.kill_all()
            os._exit(0)

    def kill_all(self, reap=True):
        """Kills every other process of the pid namespace (the zygote is its
        init, so kill(-1) spares only itself) and reaps them all."""
        while True:
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if not reap:
                return
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                return
            except InterruptedError:
                pass

    def clean_tmp(self):
        """Empties /tmp and proves it is back to its baseline. Returns None,
        or what the proof found (the zygote must then serve no other run).
        Every process of the run is dead: nothing changes the tree while
        this runs."""
        problems = []
        try:
            os.fchmod(self.tmp, 0o700)
            _empty_dir(os.dup(self.tmp), self.keep)
        except Exception as e:  # the proof below decides; the zygote lives on
            problems.append("cleaning /tmp: %s: %s" % (type(e).__name__, e))
        try:
            left = os.listdir(self.tmp)
            if left:
                problems.append("/tmp still holds %d entries" % len(left))
            base = self.baseline
            os.fchmod(self.tmp, stat.S_IMODE(base["mode"]))
            os.utime(self.tmp, ns=(base["atime"], base["mtime"]))
            now = self.tmp_state()
            for key in sorted(base):
                if now[key] != base[key]:
                    problems.append("/tmp's %s is %r, %r at the start" % (key, now[key], base[key]))
        except Exception as e:
            problems.append("proving /tmp clean: %s: %s" % (type(e).__name__, e))
        return "; ".join(problems) or None

    def tmp_state(self):
        """What of /tmp itself a run could change and a later run see."""
        st = os.fstat(self.tmp)
        vfs = os.statvfs(self.tmp)
        return {"mode": st.st_mode, "uid": st.st_uid, "gid": st.st_gid, "inode": st.st_ino,
                "atime": st.st_atime_ns, "mtime": st.st_mtime_ns,
                "free blocks": vfs.f_bfree, "free inodes": vfs.f_ffree,
                "xattrs": {n: os.getxattr(self.tmp, n) for n in os.listxattr(self.tmp)}}


def _cpu_ns(pid):
    """The CPU time of process pid (all its threads), from its process CPU
    clock (MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)), readable for any
    process of the zygote's pid namespace; None once it is gone."""
    try:
        return time.clock_gettime_ns((~pid << 3) | 2)
    except OSError:
        return None


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _dir_entries(fd, keep=None):
    """The names in the directory open at fd, each with whether it is a
    directory itself (never following a symbolic link)."""
    with os.scandir(fd) as it:
        return [(e.name, e.is_dir(follow_symlinks=False)) for e in it if e.name != keep]


def _empty_dir(fd, keep=None):
    """Removes everything in the directory open at fd, and closes fd.

    By descriptor (openat, unlinkat: nothing is looked up by a path, so
    no depth is too deep), without recursion, and with three descriptors
    open at most whatever the depth (RLIMIT_NOFILE is no bound): it goes
    down by name and back up through "..", keeping on a stack, per level,
    the name of the directory it went into, the inode of the one it left
    (checked on the way back) and what is left to remove there. Each
    directory is made 0700 before it is entered: the zygote owns
    everything here (runs have its uid and cannot chown), so a mode of
    0000 or 0500 does not stop it. keep, at the top level only, is left
    alone (a test hook)."""
    stack = []
    try:
        todo = _dir_entries(fd, keep)
        while True:
            while todo:
                name, is_dir = todo.pop()
                if not is_dir:
                    os.unlink(name, dir_fd=fd)
                    continue
                try:
                    os.rmdir(name, dir_fd=fd)
                    continue
                except OSError as e:
                    if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                        raise
                # A directory (so said its entry: no symbolic link to follow).
                os.chmod(name, 0o700, dir_fd=fd)
                sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                stack.append((name, os.fstat(fd).st_ino, todo))
                os.close(fd)
                fd = sub
                todo = _dir_entries(fd)
            if not stack:
                return
            name, ino, todo = stack.pop()
            up = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = up
            if os.fstat(fd).st_ino != ino:
                raise RuntimeError("came back up to another directory than it went down from")
            os.rmdir(name, dir_fd=fd)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------
# The run child.


def child(zygote, fds):
    """Prepares a spare, waits for its job, runs it; never returns."""
    import fcntl

    # The control socket, the wake-up pipe and /tmp's descriptor are the
    # zygote's; their numbers are about to be reused.
    zygote.ctl.detach()
    os.close(zygote.tmp)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 16) for fd in fds]
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(high[2], 1)
    os.dup2(high[2], 2)
    os.dup2(high[0], IN_FD)
    os.dup2(high[1], EVENT_FD)
    os.closerange(EVENT_FD + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    os.chdir(RUN_DIR)
    os.environ["TMPDIR"] = RUN_DIR
    if "tempfile" in sys.modules:
        sys.modules["tempfile"].tempdir = RUN_DIR
    run = Run()
    run.prepare()
    job = run.read_job()
    lim = job.get("rlimits") or {}
    for name, value in (("RLIMIT_NOFILE", lim.get("nofile")), ("RLIMIT_FSIZE", lim.get("fsize")),
                        ("RLIMIT_NPROC", lim.get("nproc")), ("RLIMIT_CPU", lim.get("cpuSec"))):
        if value:
            resource.setrlimit(getattr(resource, name), (value, value))
    if lim.get("cpuMs"):
        signal.setitimer(signal.ITIMER_PROF, lim["cpuMs"] / 1000.0)
    run.started = time.perf_counter()
    # What the process spent as a spare is not the step's.
    ru = resource.getrusage(resource.RUSAGE_SELF)
    # cpuNs is the same, on the clock the zygote watches (see Zygote.spare).
    run.send(b'{"k":"start","cpuBase":%.3f,"cpuNs":%d}\n' % (
        (ru.ru_utime + ru.ru_stime) * 1000.0, time.clock_gettime_ns(time.CLOCK_PROCESS_CPUTIME_ID)))
    if lim.get("as"):
        resource.setrlimit(resource.RLIMIT_AS, (lim["as"], lim["as"]))
    run.main(job)


class FetchError(Exception):
    """A fetch that the host refused or that failed (network, policy)."""


class DataProxyError(Exception):
    """The host's answer to a data_proxy.request was an error."""


class _Deadlock(Exception):
    pass


_OOM_FRAME = b'{"k":"oom"}\n'
_LEVELS = {10: "debug", 20: "info", 30: "warn", 40: "error", 50: "error"}
CURRENT = None  # the Run of this child


class Run:
    def __init__(self):
        global CURRENT
        CURRENT = self
        self.pid = os.getpid()
        self.lock = _thread.allocate_lock()
        self.inbuf = []
        self.next_id = 0
        self.pending = {}
        self.console_events = self.console_bytes = self.console_dropped = 0
        self.status_events = self.data_requests = self.data_bytes = self.fetches = 0
        self.waited = 0.0
        self.limits = {}
        self.module_inflight = 0
        self.module_max_calls = self.module_max_bytes = 0
        self.loop = None
        self.started = time.perf_counter()

    # -- wire ---------------------------------------------------------------

    def send(self, data):
        if os.getpid() != self.pid:
            return  # a process the step forked has no bridge
        with self.lock:
            view = memoryview(data)
            while view:
                try:
                    n = os.write(EVENT_FD, view)
                except BrokenPipeError:
                    os._exit(0)  # the host stopped listening: the run is over
                view = view[n:]

    def end(self):
        """Leaves at once, without running any more of the step."""
        os._exit(0)

    def limit(self, name, nbytes=0):
        self.send(b'{"k":"limit","limit":"%s","bytes":%d}\n' % (name.encode(), nbytes))
        self.end()

    def oom(self):
        # Nothing to spare: no allocation, and no waiting on a lock that a
        # failed write of this thread may hold.
        if os.getpid() == self.pid:
            held = self.lock.acquire(timeout=0.2)
            try:
                os.write(EVENT_FD, _OOM_FRAME)
            except OSError:
                pass
            if held:
                self.lock.release()
        self.end()

    def read_job(self):
        chunks = []
        while True:
            chunk = os.read(IN_FD, 1 << 16)
            if not chunk:
                os._exit(0)
            i = chunk.find(b"\n")
            if i >= 0:
                chunks.append(chunk[:i])
                self.inbuf = [chunk[i + 1:]]
                return json.loads(b"".join(chunks))
            chunks.append(chunk)

    def on_readable(self):
        chunk = os.read(IN_FD, 1 << 16)
        if not chunk:
            os._exit(0)  # the host is gone
        if b"\n" not in chunk:
            self.inbuf.append(chunk)
            return
        data = b"".join(self.inbuf) + chunk
        *lines, rest = data.split(b"\n")
        self.inbuf = [rest]
        for line in lines:
            self.deliver(_ROWS_DECODER.decode(line.decode()) if line.startswith(b'{"rows":1,') else json.loads(line))

    def deliver(self, rep):
        entry = self.pending.pop(rep.get("id"), None)
        if entry is None:
            return
        fut, kind = entry
        module = _MODULE_ERRORS.get(kind.split(".")[0])
        if module is not None:
            self.module_inflight -= 1
        if fut.done():
            return
        if rep.get("ok"):
            value = rep.get("value")
            if kind == "fetch":
                try:
                    value = Response(value)
                except Exception as e:
                    fut.set_exception(FetchError("fetch failed: malformed response: %s" % e))
                    return
            else:
                make = _REPLY_TYPES.get(kind)
                if make is not None:
                    value = make(value)
            fut.set_result(value)
        elif kind == "fetch":
            fut.set_exception(FetchError("fetch failed: " + str(rep.get("error"))))
        elif module is not None:
            fut.set_exception(module(str(rep.get("error"))))
        else:
            fut.set_exception(DataProxyError(str(rep.get("error"))))

    # -- guest API ----------------------------------------------------------

    def console(self, level, text):
        left = self.limits["maxConsoleBytes"] - self.console_bytes
        if self.console_events >= self.limits["maxConsoleEvents"] or left <= 0:
            self.console_dropped += 1
            if self.console_dropped == 1:
                # The host drops it too, and tells the user once.
                self.send(b'{"k":"console","level":"log","text":""}\n')
            return
        text = _clip(text, left)
        self.console_events += 1
        self.console_bytes += len(text.encode("utf-8"))
        self.send(_utf8(_dumps({"k": "console", "level": level, "text": text})) + b"\n")

    def flush_console(self):
        for stream in (sys.stdout, sys.stderr):
            if isinstance(stream, Console):
                stream.flush()

    def report_status(self, payload):
        data = _utf8(_guest_json(payload))
        self.flush_console()
        if self.status_events >= self.limits["maxStatusEvents"]:
            self.limit("maxStatusEvents")
        self.status_events += 1
        self.data_bytes += len(data)
        if self.data_bytes > self.limits["maxDataBytes"]:
            self.limit("maxDataBytes")
        self.send(b'{"k":"status","v":' + data + b"}\n")

    def new_request(self, kind):
        self.next_id += 1
        fut = self.loop.create_future()
        self.pending[self.next_id] = (fut, kind)
        return self.next_id, fut

    def module_call(self, op, what, fields, raw=(), kind=None):
        """Sends a module call (see modules_linux.go) and returns its
        future. fields are small JSON values; raw are (name, JSON bytes)
        made by _module_json. kind names the object its value becomes
        (_REPLY_TYPES); by default the op's, if it has one."""
        module = op.split(".")[0]
        error = _MODULE_ERRORS[module]
        if self.module_inflight >= self.module_max_calls:
            raise error("%s: too many module calls in flight (the limit is %d); await them" % (op, self.module_max_calls))
        parts = [b'{"k":"module","id":%d,"op":"%s"' % (self.next_id + 1, op.encode())]
        for name, value in fields:
            parts.append(b',"%s":' % name.encode())
            parts.append(_utf8(_dumps(value)))
        for name, data in raw:
            parts.append(b',"%s":' % name.encode())
            parts.append(data)
        parts.append(b"}\n")
        line = b"".join(parts)
        if len(line) > self.module_max_bytes:
            raise error("%s: the call is %d bytes of JSON, more than one module call may carry (%d bytes)"
                        % (what, len(line), self.module_max_bytes))
        if kind is None:
            kind = op if op in _REPLY_TYPES else module
        _, fut = self.new_request(kind)
        self.module_inflight += 1
        self.send(line)
        return fut

    def request(self, method, params=None):
        if not isinstance(method, str) or not 1 <= len(method.encode("utf-8", "replace")) <= 256:
            raise ValueError("data_proxy.request: method must be a string of 1 to 256 bytes")
        data = _utf8(_guest_json(params))
        self.flush_console()
        if self.data_requests >= self.limits["maxDataRequests"]:
            self.limit("maxDataRequests")
        self.data_requests += 1
        self.data_bytes += len(data)
        if self.data_bytes > self.limits["maxDataBytes"]:
            self.limit("maxDataBytes")
        rid, fut = self.new_request("data")
        self.send(b'{"k":"request","id":%d,"method":%s,"params":%s}\n' % (rid, _utf8(_dumps(method)), data))
        return fut

    def fetch(self, url, *, method="GET", headers=None, body=None, json=None, timeout=None, redirect=None):
        req = {"url": str(url), "method": str(method)}
        pairs = []
        if headers is not None:
            items = headers.items() if hasattr(headers, "items") else headers
            for pair in items:
                k, v = pair
                pairs.append([str(k).lower(), str(v)])
        if json is not None:
            if body is not None:
                raise TypeError("fetch: give body or json, not both")
            body = _dumps(json)
            if not any(k == "content-type" for k, _ in pairs):
                pairs.append(["content-type", "application/json"])
        if pairs:
            req["headers"] = pairs
        if body is not None:
            if isinstance(body, str):
                req["body"] = body
            elif isinstance(body, (bytes, bytearray, memoryview)):
                import base64
                req["body"] = base64.b64encode(bytes(body)).decode("ascii")
                req["bodyEncoding"] = "base64"
            else:
                raise TypeError("fetch: body must be str or bytes (use json= for JSON)")
        if timeout is not None:
            req["timeoutMs"] = max(1, int(float(timeout) * 1000))
        if redirect is not None:
            req["redirect"] = str(redirect)
        data = _utf8(_dumps(req))
        self.flush_console()
        if self.fetches >= self.limits["maxFetchRequests"]:
            self.limit("maxFetchRequests")
        self.fetches += 1
        rid, fut = self.new_request("fetch")
        self.send(b'{"k":"fetch","id":%d,"request":%s}\n' % (rid, data))
        return fut

    # -- the step -----------------------------------------------------------

    def prepare(self):
        """Everything that does not depend on the job, done while spare."""
        import asyncio
        sys.stdout = Console(self, "log")
        sys.stderr = Console(self, "error")
        self.loop = asyncio.SelectorEventLoop(Selector(self))
        asyncio.set_event_loop(self.loop)
        self.loop.set_exception_handler(self.loop_exception)
        # Rehearse a run (read a job, compile a step, run it on the loop,
        # encode its result): the zygote's pages that a run touches are
        # copied now, not while the host waits. Unless it is waiting
        # already.
        if select.select([IN_FD], [], [], 0)[0]:
            return
        job = json.loads('{"code": "x = input", "input": {"a": [1, "b", 2.5, null, true]}, "limits": {}}')
        step = compile_step("x = input\nreturn [x, 1, 'a', {'b': 2.5}]", {"__builtins__": builtins, "input": job["input"]})
        _utf8(_dumps(self.loop.run_until_complete(step())))
        # The preloaded modules' warm-ups again: a run of numpy or pandas
        # writes to a thousand pages or more of the zygote's (reference
        # counts, allocator state), each a copy-on-write fault; copied
        # here, they cost the run nothing.
        def job_waiting():
            return bool(select.select([IN_FD], [], [], 0)[0])
        for name in CONFIG.get("preload") or ():
            if not _warm(name, job_waiting):
                return

    def set_zone(self, zone):
        """Makes zone (an IANA name the engine checked) the run's local
        time: time.localtime, datetime.now().astimezone(). The process
        started in UTC (TZ=UTC); glibc reads the zone's file from the
        zone database the jail carries read-only, the one zoneinfo reads.
        A zone the database lacks (the host's tzdata is older than Go's)
        fails the run rather than run it silently in UTC."""
        import zoneinfo
        for base in zoneinfo.TZPATH:
            if os.path.isfile(os.path.join(base, zone)):
                os.environ["TZ"] = zone
                time.tzset()
                return
        self.fail_message("ZoneInfoNotFoundError", "time zone %r is not in this machine's zone database "
                          "(%s): install or update tzdata" % (zone, ", ".join(zoneinfo.TZPATH) or "none"), "")

    def main(self, job):
        self.limits = job["limits"]
        if job.get("timeZone"):
            self.set_zone(job["timeZone"])
        self.loop.add_reader(IN_FD, self.on_readable)
        g = {
            "__name__": "__step__",
            "__builtins__": builtins,
            "input": job.get("input"),
            "data_proxy": DataProxy(self),
            "report_status": self.report_status,
            "fetch": self.fetch,
            "FetchError": FetchError,
            "DataProxyError": DataProxyError,
            "Response": Response,
            "Headers": Headers,
        }
        modules = job.get("modules")
        if modules:
            self.module_max_calls = modules["maxCalls"]
            self.module_max_bytes = modules["maxCallBytes"]
            for name in modules["names"]:
                if name == "duckdb":
                    g["duckdb"] = DuckDB()
                    g["DuckDBError"] = DuckDBError
                elif name == "glpk":
                    g["glpk"] = GLPK()
                    g["GLPKError"] = GLPKError
        code = job["code"]
        try:
            step = compile_step(code, g)
        except MemoryError:
            self.oom()
        except SyntaxError as e:
            self.syntax(e, code)
        except ValueError as e:  # null bytes, before Python 3.12
            self.syntax(SyntaxError(str(e)), code)
        except BaseException as e:
            self.fail(e, code)
        try:
            self.loop.run_until_complete(self.body(step, code))
        except MemoryError:
            self.oom()
        except _Deadlock:
            self.fail_message("RuntimeError", "the step never finished: it awaits something that nothing will complete", code)
        except BaseException as e:
            self.fail(e, code)
        self.end()

    async def body(self, step, code):
        try:
            value = await step()
        except MemoryError:
            self.oom()
        except BaseException as e:
            self.fail(e, code)
        self.finish(value, code)

    def loop_exception(self, loop, context):
        if isinstance(context.get("exception"), MemoryError):
            self.oom()
        loop.default_exception_handler(context)

    def code_ms(self):
        return max(0.0, (time.perf_counter() - self.started - self.waited) * 1000.0)

    def stats(self):
        """The step's own view of its costs (the host clamps them)."""
        return b'"codeMs":%.3f,"consoleDropped":%d' % (self.code_ms(), self.console_dropped)

    def finish(self, value, code):
        self.flush_console()
        try:
            data = _utf8(_guest_json(value))
        except MemoryError:
            self.oom()
        except RecursionError:
            self.fail_message("ValueError", "the result is nested too deeply to serialize as JSON", code, limit="jsonDepth")
        except (TypeError, ValueError) as e:
            self.fail_message(type(e).__name__, "the result is not JSON-serializable: %s" % e, code)
        if len(data) > self.limits["maxResultBytes"]:
            self.limit("maxResultBytes", len(data))
        self.send(b'{"k":"result",' + self.stats() + b',"value":' + data + b"}\n")
        self.end()

    def fail_message(self, name, message, code, limit=""):
        self.flush_console()
        self.send(_utf8(_dumps({"k": "error", "name": name, "message": _clip(message, MAX_MESSAGE),
                                "limit": limit, "codeMs": self.code_ms(),
                                "consoleDropped": self.console_dropped})) + b"\n")
        self.end()

    def syntax(self, e, code):
        import traceback
        self.flush_console()
        try:
            stack = "".join(traceback.format_exception_only(type(e), e))
        except Exception:
            stack = ""
        frame = {"k": "error", "syntax": True, "name": type(e).__name__, "message": _clip(str(e.msg), MAX_MESSAGE),
                 "stack": _clip(stack, MAX_STACK), "line": e.lineno or 0, "col": e.offset or 0,
                 "codeMs": self.code_ms()}
        self.send(_utf8(_dumps(frame)) + b"\n")
        self.end()

    def fail(self, e, code):
        if isinstance(e, MemoryError):
            self.oom()
        self.flush_console()
        try:
            frame = describe(e, code)
        except MemoryError:
            self.oom()
        except BaseException as inner:
            frame = {"name": type(e).__name__, "message": "(the exception could not be described: %s)" % type(inner).__name__}
        frame = {"k": "error", **frame, "codeMs": self.code_ms(), "consoleDropped": self.console_dropped}
        self.send(_utf8(_dumps(frame)) + b"\n")
        self.end()


class DataProxy:
    """data_proxy.request(method, params) asks the host for data; await the
    result."""

    __slots__ = ("_run",)

    def __init__(self, run):
        self._run = run

    def request(self, method, params=None):
        return self._run.request(method, params)


class Selector:
    """Wraps the event loop's selector: measures the time spent waiting (it
    is not the step's) and notices a step that waits for nothing."""

    def __init__(self, run):
        import selectors
        self._run = run
        self._sel = selectors.DefaultSelector()

    def __getattr__(self, name):
        return getattr(self._sel, name)

    def select(self, timeout=None):
        if timeout is None and not self._run.pending and len(self._sel.get_map()) <= 2:
            import threading
            if threading.active_count() <= 1:
                raise _Deadlock()
        t0 = time.perf_counter()
        try:
            return self._sel.select(timeout)
        finally:
            self._run.waited += time.perf_counter() - t0


class Console:
    """sys.stdout and sys.stderr of a run: one console event per line
    written (or per flush)."""

    encoding = "utf-8"
    errors = "replace"
    newlines = None
    closed = False

    def __init__(self, run, level):
        self._run = run
        self._level = level
        self._buf = []
        self._size = 0
        self._lock = _thread.allocate_lock()
        self.buffer = _ConsoleBytes(self)

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        with self._lock:
            self._buf.append(s)
            self._size += len(s)
            if not (s.endswith("\n") or self._size > 1 << 16):
                return len(s)
            text = "".join(self._buf)
            self._buf.clear()
            self._size = 0
        if text.endswith("\n"):
            text = text[:-1]
        self._run.console(self._level, text)
        return len(s)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        with self._lock:
            if not self._buf:
                return
            text = "".join(self._buf)
            self._buf.clear()
            self._size = 0
        self._run.console(self._level, text)

    def isatty(self):
        return False

    def writable(self):
        return True

    def readable(self):
        return False

    def seekable(self):
        return False

    def fileno(self):
        import io
        raise io.UnsupportedOperation("the step's console has no file descriptor")

    def close(self):
        pass


class _ConsoleBytes:
    def __init__(self, console):
        self._console = console

    def write(self, b):
        self._console.write(bytes(b).decode("utf-8", "replace"))
        return len(b)

    def flush(self):
        self._console.flush()


class DuckDBError(Exception):
    """A DuckDB call failed: an SQL error (SQL the sandbox refuses
    included), a closed database, or malformed arguments."""


class GLPKError(Exception):
    """glpk.solve refused the model or its options."""


_MODULE_ERRORS = {"duckdb": DuckDBError, "glpk": GLPKError}


def _json_default(o):
    """What JSON has no type for, as JavaScript's JSON.stringify would
    write it (a date as its ISO text), and a Decimal as its exact text."""
    import datetime
    import decimal
    if isinstance(o, (datetime.date, datetime.time)):
        return o.isoformat()
    if isinstance(o, decimal.Decimal):
        return str(o)
    raise TypeError("Object of type %s is not JSON serializable" % type(o).__name__)


def _module_json(value, what):
    try:
        return _utf8(json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_json_default))
    except RecursionError:
        raise TypeError(what + " is not JSON-serializable: nested too deeply") from None
    except (TypeError, ValueError) as e:
        raise TypeError("%s is not JSON-serializable: %s" % (what, e)) from None


_INT64 = 1 << 63


def _duckdb_number(text):
    """A number of a DuckDB result with a fraction or an exponent: a DOUBLE
    is written with a fraction (1.0, 1.5e+300), a DECIMAL as its unscaled
    integer and scale (1250e-2 is Decimal('12.50'))."""
    if "." in text:
        return float(text)
    import decimal
    return decimal.Decimal(text)


_ROWS_DECODER = json.JSONDecoder(parse_float=_duckdb_number)


def _big_ints(v):
    """Integers beyond 64 bits travel as their decimal text, as JavaScript's
    BigInt does: DuckDB casts it to the placeholder's type."""
    if type(v) is int:
        return v if -_INT64 <= v < _INT64 else str(v)
    if isinstance(v, (list, tuple)):
        return [_big_ints(x) for x in v]
    if isinstance(v, dict):
        return {k: _big_ints(x) for k, x in v.items()}
    return v


def _sql(sql, what):
    if not isinstance(sql, str):
        raise TypeError(what + ": the SQL must be a string")
    return sql


def _resolved(value):
    """An awaitable already done with value: what a call that needs no host
    (connect, prepare, a connection's close) returns, as JavaScript's
    returns a resolved promise."""
    fut = CURRENT.loop.create_future()
    fut.set_result(value)
    return fut


def _str(v, what):
    if not isinstance(v, str):
        raise TypeError(what + " must be a string")
    return v


class _Closing:
    """async with: the object, closed (awaited) at the block's end."""

    __slots__ = ()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close()


class Database(_Closing):
    """A DuckDB database of the run: duckdb.open() makes it; close() or the
    end of the run destroys it. Each method sends its call at once and
    returns an awaitable."""

    __slots__ = ("_h", "_files")

    def __init__(self, handle):
        self._h = handle
        self._files = {}  # register_file_text's texts, by name

    def load(self, table, rows):
        """Creates table from rows: a list of dicts, or their JSON text."""
        if not isinstance(table, str):
            raise TypeError("db.load: the table name must be a string")
        fields = [("handle", self._h), ("table", table)]
        if isinstance(rows, (bytes, bytearray)):
            rows = bytes(rows).decode("utf-8", "replace")
        if isinstance(rows, str):
            return CURRENT.module_call("duckdb.load", "db.load", fields + [("rowsText", rows)])
        if not isinstance(rows, (list, tuple)):
            raise TypeError("db.load: rows must be a list of dicts, or its JSON text")
        return CURRENT.module_call("duckdb.load", "db.load", fields, [("rows", _module_json(rows, "db.load rows"))])

    def query(self, sql, *params):
        """Runs sql with params bound to its placeholders (? or $1);
        returns its rows, a list of dicts."""
        _sql(sql, "db.query")
        raw = [("params", _module_json(_big_ints(list(params)), "db.query parameters"))] if params else []
        return CURRENT.module_call("duckdb.query", "db.query", [("handle", self._h), ("sql", sql)], raw)

    def _table(self, sql, params, what):
        """A query whose result is a Table, for connections."""
        _sql(sql, what)
        raw = [("params", _module_json(_big_ints(list(params)), what + " parameters"))] if params else []
        return CURRENT.module_call("duckdb.table", what, [("handle", self._h), ("sql", sql)], raw)

    def exec(self, sql):
        """Runs one or more statements and discards their results."""
        _sql(sql, "db.exec")
        return CURRENT.module_call("duckdb.exec", "db.exec", [("handle", self._h), ("sql", sql)])

    def close(self):
        """Destroys the database; later calls fail."""
        return CURRENT.module_call("duckdb.close", "db.close", [("handle", self._h)])

    def connect(self):
        """DuckDB-WASM's db.connect: a Connection to this database, whose
        close leaves the database open; await it."""
        return _resolved(Connection(self, False))

    def register_file_text(self, name, text):
        """DuckDB-WASM's db.registerFileText, for insert_json_from_path:
        the text stays in the run's memory; nothing is written anywhere."""
        _str(name, "db.register_file_text: the name")
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8", "replace")
        self._files[name] = _str(text, "db.register_file_text: the text")
        return _resolved(None)

    def __repr__(self):
        return "<duckdb.Database %r>" % (self._h,)


class Field:
    """A column of a Table's schema: its name, DuckDB's name for its type
    ("BIGINT", "DECIMAL(10,2)", "INTEGER[]") and nullable (always True: a
    query's columns may hold NULL)."""

    __slots__ = ("name", "type", "nullable")

    def __init__(self, name, type):
        self.name, self.type, self.nullable = name, type, True

    def __eq__(self, other):
        if not isinstance(other, Field):
            return NotImplemented
        return (self.name, self.type, self.nullable) == (other.name, other.type, other.nullable)

    __hash__ = None

    def __repr__(self):
        return "Field(%r, %r)" % (self.name, self.type)


class Schema:
    """A Table's columns, as pyarrow's Schema: fields, names, types,
    iteration over the fields, schema[i] or schema["name"]."""

    __slots__ = ("fields",)

    def __init__(self, fields):
        self.fields = fields  # a tuple of Field

    @property
    def names(self):
        return [f.name for f in self.fields]

    @property
    def types(self):
        return [f.type for f in self.fields]

    def field(self, key):
        """The field of a column, by name or index."""
        if isinstance(key, str):
            for f in self.fields:
                if f.name == key:
                    return f
            raise KeyError(_no_column(key, self.fields))
        return self.fields[key]

    __getitem__ = field

    def __len__(self):
        return len(self.fields)

    def __iter__(self):
        return iter(self.fields)

    def __repr__(self):
        return "\n".join("%s: %s" % (f.name, f.type) for f in self.fields)


def _no_column(name, fields):
    return "table.column: no column %s; the columns are %s" % (_dumps(name), ", ".join(f.name for f in fields) or "none")


class Table:
    """A query's result on a Connection, in pyarrow's shape: num_rows,
    num_columns, column_names, schema, to_pylist() (rows as dicts),
    to_pydict() (columns as lists), column(name), len() and iteration
    over the rows. Values are converted as db.query's rows are (an exact
    int for every integer type, decimal.Decimal, a str for a DATE); each
    call makes new lists and dicts."""

    __slots__ = ("_rows", "_names", "schema")

    def __init__(self, value):
        cols = value["columns"]
        self._names = [c["name"] for c in cols]
        self.schema = Schema(tuple(Field(c["name"], c["type"]) for c in cols))
        self._rows = value["rows"]  # a list per row, in column order

    @property
    def num_rows(self):
        return len(self._rows)

    @property
    def num_columns(self):
        return len(self._names)

    @property
    def shape(self):
        return (len(self._rows), len(self._names))

    @property
    def column_names(self):
        return list(self._names)

    def to_pylist(self):
        """The rows, each a dict of the columns in order."""
        names = self._names
        return [dict(zip(names, r)) for r in self._rows]

    def to_pydict(self):
        """The columns, each a list, by name."""
        return {n: [r[j] for r in self._rows] for j, n in enumerate(self._names)}

    def column(self, key):
        """A column's values, a list; key is its name or its index."""
        if isinstance(key, str):
            try:
                j = self._names.index(key)
            except ValueError:
                raise KeyError(_no_column(key, self.schema.fields)) from None
        elif isinstance(key, int) and not isinstance(key, bool):
            j = key
            if not -len(self._names) <= j < len(self._names):
                raise IndexError("table.column: no column %d; the table has %d" % (j, len(self._names)))
        else:
            raise TypeError("table.column: the column must be its name (a string) or its index")
        return [r[j] for r in self._rows]

    def __len__(self):
        return len(self._rows)

    def __iter__(self):
        names = self._names
        for r in self._rows:
            yield dict(zip(names, r))

    def __repr__(self):
        return "<Table of %d rows: %s>" % (len(self._rows), ", ".join(self._names))


class Connection(_Closing):
    """DuckDB-WASM's AsyncDuckDBConnection, for the part a step needs over
    in-memory data: query, prepare, insert_json_from_path, close. From
    duckdb.connect() it owns its database, and its close closes it; from
    db.connect() it leaves it open."""

    __slots__ = ("_db", "_owns", "_closed")

    def __init__(self, db, owns):
        self._db, self._owns, self._closed = db, owns, False

    def _check(self, what):
        if self._closed:
            raise DuckDBError(what + ": the connection is closed")

    def query(self, sql, *params):
        """Runs sql with params bound to its placeholders (? or $1); await
        its Table."""
        self._check("c.query")
        return self._db._table(sql, params, "c.query")

    def prepare(self, sql):
        """A PreparedStatement of sql; await it. The SQL is checked when it
        runs."""
        self._check("c.prepare")
        _sql(sql, "c.prepare")
        return _resolved(PreparedStatement(self, sql))

    def insert_json_from_path(self, path, options=None, *, name=None):
        """Creates the table name (or options["name"], DuckDB-WASM's form)
        from the JSON rows registered as path with db.register_file_text."""
        self._check("c.insert_json_from_path")
        _str(path, "c.insert_json_from_path: the path")
        if options is not None:
            if not isinstance(options, dict):
                raise TypeError("c.insert_json_from_path: options must be a dict, {\"name\": table}")
            if name is not None:
                raise TypeError("c.insert_json_from_path: give name= or options, not both")
            name = options.get("name")
        _str(name, "c.insert_json_from_path: the table name (name= or options[\"name\"])")
        text = self._db._files.get(path)
        if text is None:
            raise DuckDBError("c.insert_json_from_path: no file %s was registered with db.register_file_text (a step reads no files)" % _dumps(path))
        return self._db.load(name, text)

    def close(self):
        """Closes the connection, and duckdb.connect's database with it;
        later calls fail. Closing it again does nothing."""
        if self._closed:
            return _resolved(None)
        self._closed = True
        return self._db.close() if self._owns else _resolved(None)

    def __repr__(self):
        return "<duckdb.Connection %r%s>" % (self._db._h, " closed" if self._closed else "")


def _own_connection(handle):
    return Connection(Database(handle), True)


class PreparedStatement(_Closing):
    """DuckDB-WASM's prepared statement: query(*params) runs its SQL with
    params bound to its placeholders."""

    __slots__ = ("_c", "_sql", "_closed")

    def __init__(self, c, sql):
        self._c, self._sql, self._closed = c, sql, False

    def query(self, *params):
        """Runs the statement; await its Table."""
        if self._closed:
            raise DuckDBError("stmt.query: the statement is closed")
        self._c._check("stmt.query")
        return self._c._db._table(self._sql, params, "stmt.query")

    def close(self):
        self._closed = True
        return _resolved(None)

    def __repr__(self):
        return "<duckdb.PreparedStatement %s%s>" % (_dumps(self._sql[:60]), " closed" if self._closed else "")


# What a module call's value becomes, by the kind of its request.
_REPLY_TYPES = {"duckdb.open": Database, "duckdb.connect": _own_connection, "duckdb.table": Table}


class DuckDB:
    """The duckdb module: an in-memory database per run."""

    __slots__ = ()
    Error = DuckDBError
    Database = Database
    Connection = Connection
    PreparedStatement = PreparedStatement
    Table = Table

    def open(self):
        """Opens the run's database (one at a time); await it."""
        return CURRENT.module_call("duckdb.open", "duckdb.open", [])

    def connect(self):
        """Opens the run's database and returns a DuckDB-WASM-style
        Connection to it, whose close closes the database; await it."""
        return CURRENT.module_call("duckdb.open", "duckdb.connect", [], kind="duckdb.connect")

    def __repr__(self):
        return "<stepbox module duckdb>"


class GLPK:
    """The glpk module: linear and mixed-integer programmes in glpk.js's
    shape, with glpk.js's constants."""

    __slots__ = ()
    Error = GLPKError
    GLP_MIN, GLP_MAX = 1, 2
    GLP_FR, GLP_LO, GLP_UP, GLP_DB, GLP_FX = 1, 2, 3, 4, 5
    GLP_MSG_OFF, GLP_MSG_ERR, GLP_MSG_ON, GLP_MSG_ALL, GLP_MSG_DBG = 0, 1, 2, 3, 4
    GLP_UNDEF, GLP_FEAS, GLP_INFEAS, GLP_NOFEAS, GLP_OPT, GLP_UNBND = 1, 2, 3, 4, 5, 6

    version = CONFIG.get("glpkVersion", "")

    def solve(self, model, options=None):
        """Solves model (a dict in glpk.js's shape, or its JSON text); await
        the result: {"name", "time", "result": {"status", "z", "vars",
        "dual", "rows"}}. As in glpk.js, options are laid over
        model["options"]; options["cb"] = {"call": f, "each": n} calls f
        with each of an LP's progress reports before the result is
        returned."""
        if isinstance(model, (str, bytes)):
            model = json.loads(model)
        if not isinstance(model, dict):
            raise TypeError("glpk.solve: the model must be a dict or its JSON text")
        call = None
        if not (isinstance(options, int) and not isinstance(options, bool)):
            mo = model.get("options")
            merged = dict(mo) if isinstance(mo, dict) else {}
            if isinstance(options, dict):
                merged.update(options)
            cb = merged.get("cb")
            if isinstance(cb, dict) and callable(cb.get("call")):
                call = cb["call"]
                each = cb.get("each")
                each = each if isinstance(each, (int, float)) and not isinstance(each, bool) and each > 0 else 1
                options = dict(options) if isinstance(options, dict) else {}
                options["cb"] = {"call": True, "each": each}
            if isinstance(mo, dict) and isinstance(mo.get("cb"), dict) and "call" in mo["cb"]:
                # A function has no JSON form (JavaScript's JSON drops it).
                model = dict(model, options=dict(mo, cb={k: v for k, v in mo["cb"].items() if k != "call"}))
        raw = [("model", _module_json(model, "glpk.solve model"))]
        if options is not None:
            raw.append(("options", _module_json(options, "glpk.solve options")))
        fut = CURRENT.module_call("glpk.solve", "glpk.solve", [], raw)
        if call is None:
            return fut
        return self._with_progress(fut, call)

    def write(self, model, options=None):
        """The model (a dict or its JSON text) as GLPK writes it: CPLEX LP
        text, as glpk.js's write, or free MPS with {"format": "mps"};
        await the str."""
        if isinstance(model, (str, bytes)):
            model = json.loads(model)
        if not isinstance(model, dict):
            raise TypeError("glpk.write: the model must be a dict or its JSON text")
        raw = [("model", _module_json(model, "glpk.write model"))]
        if options is not None:
            raw.append(("options", _module_json(options, "glpk.write options")))
        return CURRENT.module_call("glpk.write", "glpk.write", [], raw)

    @staticmethod
    async def _with_progress(fut, call):
        r = await fut
        for s in r.pop("progress", None) or ():
            s.setdefault("rows", None)
            call(s)
        return r

    def __repr__(self):
        return "<stepbox module glpk>"


class Headers:
    """Response headers: a read-only, case-insensitive mapping; repeated
    headers read as one value joined by ", " (get_all lists them)."""

    def __init__(self, pairs=()):
        self._pairs = [(str(k).lower(), str(v)) for k, v in pairs]

    def get_all(self, name):
        name = str(name).lower()
        return [v for k, v in self._pairs if k == name]

    def __getitem__(self, name):
        values = self.get_all(name)
        if not values:
            raise KeyError(name)
        return ", ".join(values)

    def get(self, name, default=None):
        values = self.get_all(name)
        return ", ".join(values) if values else default

    def __contains__(self, name):
        return bool(self.get_all(name))

    def keys(self):
        return sorted({k for k, _ in self._pairs})

    def values(self):
        return [self[k] for k in self.keys()]

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def __repr__(self):
        return "Headers(%r)" % dict(self.items())


class Response:
    """What fetch resolves to. The body has arrived: text(), json() and
    content need no await."""

    def __init__(self, r):
        if not isinstance(r, dict):
            raise TypeError("not an object")
        self.status = int(r.get("status") or 0)
        self.status_text = str(r.get("statusText") or "")
        self.ok = 200 <= self.status < 300
        self.headers = Headers(r.get("headers") or [])
        self.url = str(r.get("url") or "")
        self.redirected = bool(r.get("redirected"))
        body = str(r.get("body") or "")
        if r.get("bodyEncoding") == "base64":
            import base64
            self.content = base64.b64decode(body)
            self._text = None
        else:
            self.content = body.encode("utf-8", "surrogatepass")
            self._text = body

    def text(self):
        if self._text is None:
            self._text = self.content.decode("utf-8", "replace")
        return self._text

    def json(self):
        return json.loads(self.text())

    def raise_for_status(self):
        if not self.ok:
            raise FetchError("HTTP %d %s for %s" % (self.status, self.status_text, self.url))

    def __repr__(self):
        return "<Response [%d]>" % self.status


# ---------------------------------------------------------------------------
# Compiling a step: its body becomes the body of "async def __step__()", so
# that it may return and await; its lines keep their numbers.


def _own_scope_nodes(body):
    """Walks the statements of the step's own scope (not nested functions,
    classes or lambdas)."""
    import ast
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _import_star(g):
    def star(module, level):
        mod = __import__(module, g, None, ["*"], level)
        names = getattr(mod, "__all__", None)
        if names is None:
            names = [n for n in dir(mod) if not n.startswith("_")]
        for n in names:
            g[n] = getattr(mod, n)
    return star


def compile_step(code, g):
    import ast
    import linecache
    import __future__
    linecache.cache[STEP_FILE] = (len(code), None, code.splitlines(True), STEP_FILE)
    tree = ast.parse(code, filename=STEP_FILE, mode="exec")
    lines = code.splitlines()
    body = tree.body
    flags = 0
    # "from __future__ import x" must open the file; inside a function it
    # is refused, so it becomes a compiler flag.
    i = 0
    while i < len(body):
        node = body[i]
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) and i == 0:
            i += 1
            continue
        if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            break
        for alias in node.names:
            feature = getattr(__future__, alias.name, None)
            if feature is None or not hasattr(feature, "compiler_flag"):
                line = lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""
                raise SyntaxError("future feature %s is not defined" % alias.name,
                                  (STEP_FILE, node.lineno, node.col_offset + 1, line))
            flags |= feature.compiler_flag
        del body[i]
    for node in _own_scope_nodes(body):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            line = lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""
            raise SyntaxError("'yield' outside function", (STEP_FILE, node.lineno, node.col_offset + 1, line))
    star = False

    class StarImports(ast.NodeTransformer):
        def visit_ImportFrom(self, node):
            nonlocal star
            if len(node.names) == 1 and node.names[0].name == "*":
                star = True
                call = ast.Call(func=ast.Name(id="__stepbox_import_star__", ctx=ast.Load()),
                                args=[ast.Constant(node.module or ""), ast.Constant(node.level)], keywords=[])
                return ast.copy_location(ast.Expr(value=call), node)
            return node

        def visit_FunctionDef(self, node):
            return node

        visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    body = [StarImports().visit(node) for node in body]
    fn = ast.parse("async def __step__():\n    pass\n").body[0]
    fn.body = body or [ast.Pass(lineno=1, col_offset=0, end_lineno=1, end_col_offset=0)]
    mod = ast.Module(body=[fn], type_ignores=[])
    ast.fix_missing_locations(mod)
    compiled = compile(mod, STEP_FILE, "exec", flags=flags, dont_inherit=True)
    if star:
        g["__stepbox_import_star__"] = _import_star(g)
    exec(compiled, g)
    return g.pop("__step__")


# ---------------------------------------------------------------------------
# Describing an exception with the step's own lines.


def _qualname(t):
    mod = getattr(t, "__module__", "")
    name = getattr(t, "__qualname__", None) or t.__name__
    if mod in ("builtins", "__main__", "", None):
        return name
    return mod + "." + name


def _strip(te, seen):
    """Drops the prelude's frames from te and the exceptions chained to it."""
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    keep = [fs for fs in te.stack if fs.filename != "<stepbox>"]
    for fs in keep:
        if fs.filename == STEP_FILE and fs.name == "__step__":
            fs.name = "<module>"
    te.stack[:] = keep
    _strip(te.__cause__, seen)
    _strip(te.__context__, seen)
    for sub in getattr(te, "exceptions", None) or ():
        _strip(sub, seen)


def describe(e, code):
    import traceback
    te = traceback.TracebackException(type(e), e, e.__traceback__, compact=True)
    _strip(te, set())
    stack = "".join(te.format())
    if len(stack) > MAX_STACK:
        stack = "...\n" + stack[-MAX_STACK:]
    line = col = 0
    lines = code.splitlines()
    for fs in te.stack:
        if fs.filename == STEP_FILE:
            line = fs.lineno or 0
            col = 0
            colno = getattr(fs, "colno", None)
            if colno is not None and 0 < line <= len(lines):
                col = len(lines[line - 1].encode("utf-8", "replace")[:colno].decode("utf-8", "ignore")) + 1
    try:
        message = str(e)
    except Exception:
        message = "(unprintable %s)" % type(e).__name__
    frame = {"name": _clip(_qualname(type(e)), MAX_NAME), "message": _clip(message, MAX_MESSAGE),
             "stack": stack, "line": line, "col": col}
    if isinstance(e, RecursionError):
        frame["limit"] = "stackDepth"
    if isinstance(e, SystemExit):
        frame["message"] = "the step called sys.exit(%s); end a step with return" % _clip(repr(e.code), 200)
    return frame


# ---------------------------------------------------------------------------
# logging: records become console events of the matching level.


def _install_logging():
    import logging

    class Handler(logging.Handler):
        def emit(self, record):
            run = CURRENT
            if run is None:
                return
            try:
                text = self.format(record)
            except Exception:
                self.handleError(record)
                return
            run.flush_console()
            level = "log"
            for threshold in (50, 40, 30, 20, 10):
                if record.levelno >= threshold:
                    level = _LEVELS[threshold]
                    break
            else:
                level = "debug"
            run.console(level, text)

    handler = Handler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)


# Warm-ups for preloaded modules whose first calls in a process cost far
# more than the next ones: caches filled, type dispatch resolved, CPython's
# adaptive bytecode specialised, and, in a forked run, a copy-on-write fault
# for each page of the zygote's that the calls write to (reference counts,
# allocator state; pandas' first group-by of 10,000 rows in a run: about
# 1,300 faults and 70 ms of CPU on a VM, the next one 6 ms). The zygote runs
# them once after the preload, so that runs start with warm caches and
# specialised code, and each spare runs them again while it waits for its
# job (stopping between chunks once the job is there), so that the pages
# are its own before the job arrives. Trusted code, ours; chunks share a
# namespace, and a failure only leaves the module colder.
_WARMUPS = {
    "numpy": [
        "import numpy as np\na = np.arange(1, 2001, dtype=np.float64).reshape(20, 100) % 7 + 1\nb = a @ a.T + np.eye(20)",
        "np.linalg.solve(b, np.ones(20)); np.linalg.inv(b); b.sum(); b.mean(axis=0); b.std(); b.max(); b.argmax()",
        "np.sort(a[0]); np.unique(np.arange(100) % 7); np.cumsum(a, axis=1); np.where(a > 3, a, 0); np.concatenate([a, a])",
        "np.arange(1000, dtype=np.int64).sum(); np.ones(10, dtype=np.uint8).sum(); np.zeros((3, 3)); np.allclose(a, a)",
        "np.round(a, 2).tolist(); float(np.trace(b)); int(np.int64(3)); repr(a[:2]); str(b[:1])",
    ],
    "pandas": [
        "import pandas as pd\n"
        "df2 = pd.DataFrame({'region': ['r%d' % (i % 7) for i in range(300)], 'amount': [i % 13 for i in range(300)]})\n"
        "g = df2.groupby('region')['amount'].agg(['sum', 'count', 'mean']).sort_values('sum', ascending=False).head(3)\n"
        "r = {k: [int(x['sum']), float(x['mean'])] for k, x in g.iterrows()}",
        "df = pd.DataFrame([{'id': i, 'region': 'r%d' % (i % 7), 'amount': i % 13, 'price': (i % 11) / 10} for i in range(300)])\n"
        "df.groupby('region').agg(n=('amount', 'count'), total=('amount', 'sum'), mean=('amount', 'mean')).reset_index().to_dict('records')",
        "df.groupby('region')['amount'].sum().items(); df.sort_values(['amount', 'region'], ascending=[False, True]).head(5).to_dict('records')",
        "d = df[df['amount'] > 3].copy()\nd['x'] = d['amount'] * d['price']\nd.merge(df2.drop_duplicates('region'), on='region').shape",
        "df.describe().to_dict(); df.pivot_table(index='region', values='amount', aggfunc='sum').to_dict()",
        "df.to_json(orient='records'); df.values.tolist(); df['region'].value_counts().to_dict(); df.isna().sum()",
        "pd.to_datetime(['2024-01-01', '2024-07-01']); pd.Timestamp('2024-07-01 12:00', tz='Europe/Paris').tz_convert('UTC').isoformat()",
        "pd.Series([1.5, None, 3]).fillna(0).tolist(); pd.concat([df2, df2]).shape",
    ],
}


def _warm(name, stop=None):
    """Runs the warm-up of module name, if it has one; stop, if given, is
    asked before each chunk whether to give up."""
    ns = {"__builtins__": builtins}
    for chunk in _WARMUPS.get(name, ()):
        if stop is not None and stop():
            return False
        try:
            exec(compile(chunk, "<stepbox warm-up>", "exec"), ns)
        except Exception:
            return True
    return True


def _zygote_main():
    _lockdown()
    for p in CONFIG.get("path") or ():
        if p not in sys.path:
            sys.path.append(p)
    failed = []
    for name in ["asyncio", "ast", "traceback", "linecache", "logging", "selectors", "threading",
                 "fcntl", "base64", "__future__", "tempfile"] + list(CONFIG.get("preload") or ()):
        try:
            __import__(name)
        except Exception as e:
            failed.append("%s (%s: %s)" % (name, type(e).__name__, e))
    if not failed:
        for name in CONFIG.get("preload") or ():
            _warm(name)
    if failed:
        sys.stderr.write("stepbox python: cannot preload " + "; ".join(failed) + "\n")
        sys.stderr.flush()
        os._exit(2)
    _install_logging()
    Zygote().serve()


_zygote_main()
