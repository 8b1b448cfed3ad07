//go:build linux

package pyrt_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// tmpProbe describes what a run finds of earlier runs in the jail's
// writable places: /tmp's mode, owner, access time, free blocks and inodes
// and extended attributes (taken before anything else looks at /tmp), and
// every entry under /tmp, however deep and whatever its mode (a later
// tenant runs as the same user, so it can chmod what it finds), besides
// the run's own empty directory.
const tmpProbe = `import os, stat
st = os.stat("/tmp")
v = os.statvfs("/tmp")
out = {"mode": oct(st.st_mode), "owner": [st.st_uid, st.st_gid], "atime": st.st_atime_ns,
       "free": [v.f_bfree, v.f_ffree], "xattrs": os.listxattr("/tmp"), "run": os.listdir(".")}
found, secrets = [], []
os.chmod("/tmp", 0o700)
os.chdir("/tmp")
todo = [os.listdir(".")]
while todo:
    if not todo[-1]:
        todo.pop()
        if todo:
            os.chdir("..")
        continue
    name = todo[-1].pop()
    if not (len(todo) == 1 and name == "run"):
        found.append(name[:40])
    try:
        mode = os.lstat(name).st_mode
    except OSError as e:
        found.append("lstat %s: %s" % (name[:20], e.strerror))
        continue
    if not stat.S_ISDIR(mode):
        if name.startswith("marker"):
            try:
                secrets.append(open(name).read())
            except OSError as e:
                secrets.append("%s: %s" % (name, e.strerror))
        continue
    try:
        os.chmod(name, 0o700)
        os.chdir(name)
    except OSError as e:
        found.append("enter %s: %s" % (name[:20], e.strerror))
        continue
    try:
        todo.append(os.listdir("."))
    except OSError as e:
        found.append("list %s: %s" % (name[:20], e.strerror))
        todo.append([])
out["found"] = found[:10]
out["entries"] = len(found)
out["secrets"] = secrets
return out`

// tmpState is tmpProbe's result.
type tmpState struct {
	Mode    string   `json:"mode"`
	Owner   []int    `json:"owner"`
	Atime   int64    `json:"atime"`
	Free    []int64  `json:"free"`
	Xattrs  []string `json:"xattrs"`
	Run     []string `json:"run"`
	Found   []string `json:"found"`
	Entries int      `json:"entries"`
	Secrets []string `json:"secrets"`

	zygote int // the pid of the zygote the probe ran on
}

func probeTmp(t *testing.T, rt *runtime) tmpState {
	t.Helper()
	ev := runStep(t, rt, tmpProbe, testLimits, nil)
	if ev.Kind != ipc.KindResult {
		t.Fatalf("the probe: %s", describe(ev))
	}
	var st tmpState
	if err := json.Unmarshal(ev.Result.Value, &st); err != nil {
		t.Fatalf("the probe: %v: %s", err, ev.Result.Value)
	}
	st.zygote = rt.zygotePID()
	return st
}

// expectPristine fails unless got is the state of a zygote that no run
// has touched: base's, if it is the same zygote (a new one has a new
// /tmp, with its own times).
func expectPristine(t *testing.T, got, base tmpState) {
	t.Helper()
	if got.zygote != base.zygote {
		base.Atime = got.Atime
	}
	if got.Entries != 0 || len(got.Run) != 0 || len(got.Secrets) != 0 {
		t.Errorf("a later run finds %d entries under /tmp (%q, markers %q) and %q in its own directory; want none",
			got.Entries, got.Found, got.Secrets, got.Run)
	}
	if got.Mode != base.Mode || fmtInts(got.Owner) != fmtInts(base.Owner) || got.Atime != base.Atime {
		t.Errorf("/tmp is mode %s owner %v atime %d; at the start it was %s %v %d", got.Mode, got.Owner, got.Atime, base.Mode, base.Owner, base.Atime)
	}
	if fmtInts64(got.Free) != fmtInts64(base.Free) {
		t.Errorf("/tmp has %v free blocks and inodes; at the start it had %v", got.Free, base.Free)
	}
	if len(got.Xattrs) != 0 {
		t.Errorf("/tmp has extended attributes %q", got.Xattrs)
	}
}

func fmtInts(v []int) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func fmtInts64(v []int64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// leavers build, from /tmp, what the old cleaner (which walked absolute
// paths, recursively, and swallowed its errors) could not remove, each
// with a marker for a later run to find.
var leavers = []struct{ name, code, want string }{
	{"deeper than PATH_MAX", `import os
os.chdir("/tmp")
for i in range(20):  # 20 * 250 bytes: past PATH_MAX (4096)
    name = "p%02d" % i + "x" * 247
    os.mkdir(name)
    os.chdir(name)
open("marker-pathmax", "w").write("tenant A's secret")
return "left"`, `"left"`},
	{"2,000 levels", `import os
for i in range(2000):
    os.mkdir("d")
    os.chdir("d")
open("marker-2000", "w").write("tenant A's secret")
return "left"`, `"left"`},
	{"modes 0000 and 0500", `import os
os.chdir("/tmp")
os.mkdir("locked")
open("locked/marker-0000", "w").write("tenant A's secret")
os.chmod("locked", 0)
os.mkdir("readonly")
open("readonly/marker-0500", "w").write("tenant A's secret")
os.chmod("readonly", 0o500)
return "left"`, `"left"`},
	{"/tmp itself", `import os, errno
open("/tmp/marker-top", "w").write("tenant A's secret")
os.symlink("/usr", "/tmp/usr-link")
os.symlink("/tmp/marker-top", "/tmp/run/marker-link")
xattrs = {}
for name, fn in (("/tmp", lambda: os.setxattr("/tmp", "user.leak", b"secret")),
                 ("file", lambda: os.setxattr("/tmp/marker-top", "user.leak", b"secret")),
                 ("remove", lambda: os.removexattr("/tmp", "user.leak"))):
    try:
        fn()
        xattrs[name] = "ok"
    except OSError as e:
        xattrs[name] = errno.errorcode.get(e.errno, str(e.errno))
os.utime("/tmp", ns=(123456789, 987654321))
os.chmod("/tmp", 0o500)
return xattrs`, `{"/tmp":"ENOSYS","file":"ENOSYS","remove":"ENOSYS"}`},
}

// TestTmpLeftovers is issue 14's cross-tenant leak: whatever a run builds
// in /tmp, however deep and whatever its modes, a later run on the same
// zygote finds nothing of it, and /tmp is as it was when the zygote
// started; the cleaning does not cost the zygote either.
func TestTmpLeftovers(t *testing.T) {
	rt := newRuntime(t, pyrt.Config{TmpfsInodes: 4096})
	base := probeTmp(t, rt)
	for _, l := range leavers {
		t.Run(l.name, func(t *testing.T) {
			pid := rt.zygotePID()
			expectResult(t, runStep(t, rt, l.code, testLimits, nil), l.want)
			expectPristine(t, probeTmp(t, rt), base)
			if got := rt.zygotePID(); got != pid {
				t.Errorf("the zygote was replaced (pid %d, then %d): cleaning up after the run should not cost it", pid, got)
			}
		})
	}
	if n, why := rt.retired(); n != 0 {
		t.Errorf("%d zygotes retired (%s); want none", n, why)
	}
}

// fillTmp fills /tmp, blocks and then inodes, from a tree deeper than
// PATH_MAX.
const fillTmp = `import os, errno
os.chdir("/tmp/run")
for i in range(20):
    name = "f%02d" % i + "x" * 247
    os.mkdir(name)
    os.chdir(name)
ends = []
n = 0
try:
    while True:
        with open("blob%d" % n, "wb") as f:
            n += 1
            for _ in range(4):  # under RLIMIT_FSIZE
                f.write(b"x" * (1 << 20))
except OSError as e:
    ends.append(errno.errorcode.get(e.errno, str(e.errno)))
try:
    while True:
        open("i%d" % n, "w").close()
        n += 1
except OSError as e:
    ends.append(errno.errorcode.get(e.errno, str(e.errno)))
return ends`

// needsTmp needs a few MB and a hundred files of /tmp.
const needsTmp = `with open("/tmp/run/big", "wb") as f:
    f.write(b"y" * (6 << 20))
for i in range(100):
    open("/tmp/run/small%d" % i, "w").write("z")
return "written"`

// TestTmpFull: a run that fills /tmp for good is the next run's problem no
// longer.
func TestTmpFull(t *testing.T) {
	rt := newRuntime(t, pyrt.Config{})
	base := probeTmp(t, rt)
	expectResult(t, runStep(t, rt, fillTmp, testLimits, nil), `["ENOSPC","ENOSPC"]`)
	expectResult(t, runStep(t, rt, needsTmp, testLimits, nil), `"written"`)
	expectPristine(t, probeTmp(t, rt), base)
}

// TestTmpProofFails makes the cleaner leave a file behind (a test hook:
// no way to make it fail is known); its proof must see it, and the zygote
// must serve no other run: the run itself keeps its outcome, the next one
// runs on a new zygote and finds nothing.
func TestTmpProofFails(t *testing.T) {
	rt := startRuntime(t, pyrt.Config{}, "kept")
	t.Cleanup(rt.Close)
	pid := rt.zygotePID()
	expectResult(t, runStep(t, rt, `open("/tmp/kept", "w").write("tenant A's secret")
return "mine"`, testLimits, nil), `"mine"`)
	n, why := rt.retired()
	if n != 1 || !strings.Contains(why, "/tmp") {
		t.Errorf("retired %d zygotes (%q); want 1, because of /tmp", n, why)
	}
	expectResult(t, runStep(t, rt, `import os
return sorted(os.listdir("/tmp"))`, testLimits, nil), `["run"]`)
	if got := rt.zygotePID(); got == pid || got == 0 {
		t.Errorf("the second run ran on zygote %d; the first ran on %d", got, pid)
	}
	// A run that leaves nothing behind keeps its zygote.
	pid = rt.zygotePID()
	expectResult(t, runStep(t, rt, "return 1", testLimits, nil), "1")
	if got := rt.zygotePID(); got != pid {
		t.Errorf("a clean run cost the zygote (pid %d, then %d)", pid, got)
	}
	if n, _ := rt.retired(); n != 1 {
		t.Errorf("retired %d zygotes; want 1", n)
	}
}

// inFlight leaves an abstract unix socket, listening, and a file of /tmp,
// open, where no process holds them: in a descriptor passed over a socket
// that is itself in flight. The kernel's garbage collector frees such
// cycles, some time after the last process is gone.
const inFlight = `import os, socket
l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
l.bind(b"\0stepbox-leak")
l.listen(8)
f = open("/tmp/run/blob", "wb+")
f.write(b"x" * (4 << 20))
f.flush()
a, b = socket.socketpair()
socket.send_fds(b, [b"x"], [a.fileno(), l.fileno(), f.fileno()])
os.unlink("/tmp/run/blob")
return "left"`

const connectLeak = `import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(b"\0stepbox-leak")
    return "connected"
except OSError as e:
    return type(e).__name__`

// TestInFlightLeftovers: what a run leaves in the kernel's unix socket
// garbage is gone for the next run, or the zygote is replaced.
func TestInFlightLeftovers(t *testing.T) {
	rt := newRuntime(t, pyrt.Config{})
	base := probeTmp(t, rt)
	for i := 0; i < 5; i++ {
		expectResult(t, runStep(t, rt, inFlight, testLimits, nil), `"left"`)
		expectResult(t, runStep(t, rt, connectLeak, testLimits, nil), `"ConnectionRefusedError"`)
		expectPristine(t, probeTmp(t, rt), base)
	}
	n, why := rt.retired()
	t.Logf("%d of 5 zygotes retired (%s)", n, why)
}

// unreachable tries every other way we know of to leave something in the
// zygote's jail that outlives a run: System V IPC and POSIX message queues
// (the IPC namespace is the zygote's), extended attributes, a new owner
// for /tmp, FIFOs and device nodes, the host name (the UTS namespace is
// the zygote's). Raw system calls, so that no libc fallback hides them.
const unreachable = `import ctypes, errno, os, platform
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
nrs = {"x86_64": {"shmget": 29, "semget": 64, "msgget": 68, "mq_open": 240, "setxattr": 188, "lsetxattr": 189,
                  "fsetxattr": 190, "removexattr": 197, "fchownat": 260, "mknodat": 259, "sethostname": 170},
       "aarch64": {"shmget": 194, "semget": 190, "msgget": 186, "mq_open": 180, "setxattr": 5, "lsetxattr": 6,
                   "fsetxattr": 7, "removexattr": 14, "fchownat": 54, "mknodat": 33, "sethostname": 161}}[platform.machine()]
tmp = os.open("/tmp", os.O_RDONLY | os.O_DIRECTORY)
AT_FDCWD = -100
calls = {
    "shmget": (0, 4096, 0o1666), "semget": (0, 1, 0o1666), "msgget": (0, 0o1666),
    "mq_open": (b"leak", os.O_CREAT | os.O_RDWR, 0o666, None),
    "setxattr": (b"/tmp", b"user.leak", b"x", 1, 0), "lsetxattr": (b"/tmp", b"user.leak", b"x", 1, 0),
    "fsetxattr": (tmp, b"user.leak", b"x", 1, 0), "removexattr": (b"/tmp", b"user.leak"),
    "fchownat": (AT_FDCWD, b"/tmp", os.getuid(), os.getgid(), 0),
    "mknodat": (AT_FDCWD, b"/tmp/run/fifo", 0o10666, 0),
    "sethostname": (b"leak", 4),
}
out = {}
for name, args in calls.items():
    r = libc.syscall(ctypes.c_long(nrs[name]), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    out[name] = "ok" if r != -1 else errno.errorcode.get(ctypes.get_errno(), "?")
return out`

// TestUnreachableLeftovers shows that nothing else a run could leave in
// the jail is reachable: every such call fails before it does anything.
func TestUnreachableLeftovers(t *testing.T) {
	rt := shared(t)
	want := `{"shmget":"ENOSYS","semget":"ENOSYS","msgget":"ENOSYS","mq_open":"ENOSYS","setxattr":"ENOSYS",` +
		`"lsetxattr":"ENOSYS","fsetxattr":"ENOSYS","removexattr":"ENOSYS","fchownat":"ENOSYS","mknodat":"ENOSYS","sethostname":"EPERM"}`
	expectResult(t, runStep(t, rt, unreachable, testLimits, nil), want)
}

// TestSocketsSeenFromHost: the host's check of the zygote's unix sockets
// sees what a run binds (it reads the right namespace), and a socket that
// dies with its run does not cost the zygote.
func TestSocketsSeenFromHost(t *testing.T) {
	rt := newRuntime(t, pyrt.Config{})
	pid := rt.zygotePID()
	list := rt.socketLister()
	var seen []string
	var seenErr error
	h := &recorder{answer: func(ev *ipc.Event) *ipc.Reply {
		seen, seenErr = list()
		return &ipc.Reply{ID: ev.DataRequest.ID, Value: json.RawMessage(`1`)}
	}}
	expectResult(t, runStep(t, rt, `import socket
l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
l.bind(b"\0stepbox-held\n0000000000000000: 00000002 00000000 00010000 0001 01 1")
l.listen(1)
await data_proxy.request("m", None)
return "done"`, testLimits, h), `"done"`)
	if seenErr != nil || !slices.Contains(seen, "@stepbox-held") {
		t.Errorf("while the run held it, the host saw sockets %q (%v); want @stepbox-held", seen, seenErr)
	}
	if n, why := rt.retired(); n != 0 || rt.zygotePID() != pid {
		t.Errorf("retired %d zygotes (%s); want none", n, why)
	}
}

func TestNamedUnixSockets(t *testing.T) {
	const text = "Num       RefCount Protocol Flags    Type St Inode Path\n" +
		"0000000000000000: 00000002 00000000 00000000 0001 03 1001\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 1002 @abstract name\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 1003 @\n" +
		"0000000000000000: 00000002 00000000 00000000 0001 03 1004\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 1005 /tmp/run/sock\n"
	got, err := pyrt.NamedUnixSockets(text)
	if err != nil || strings.Join(got, "|") != "@abstract name|@|/tmp/run/sock" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := pyrt.NamedUnixSockets("garbage"); err == nil {
		t.Error("no error for a text without the header")
	}
}
