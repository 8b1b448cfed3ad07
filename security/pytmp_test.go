package security_test

import (
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// pyLeftovers are Python steps of one tenant that try to leave something
// in the jail of their zygote for whoever runs on it next: trees the old
// /tmp cleaner (absolute paths, recursion, errors swallowed) could not
// remove, each with a marker; /tmp filled for good; /tmp's own mode,
// times and extended attributes; a socket and a file that only the
// kernel's garbage collector frees; System V IPC and message queues. Each
// row runs on an engine with one slot, so one Python zygote, between two
// runs of another tenant's pyProbe: the second must find what the first
// found.
var pyLeftovers = []attack{
	{"deeper than PATH_MAX", `import os
os.chdir("/tmp")
for i in range(20):  # 20 * 250 bytes: past PATH_MAX (4096)
    os.mkdir("p%02d" % i + "x" * 247)
    os.chdir("p%02d" % i + "x" * 247)
open("marker", "w").write("tenant A's secret")
return "left"`, nil0, returns(`"left"`)},
	{"1,010 levels", `import os
for i in range(1010):  # deeper than Python's recursion limit; /tmp has 1,024 inodes
    os.mkdir("d")
    os.chdir("d")
open("marker", "w").write("tenant A's secret")
return "left"`, nil0, returns(`"left"`)},
	{"modes 0000 and 0500", `import os
for name, mode in (("/tmp/locked", 0), ("/tmp/readonly", 0o500), ("/tmp/run/locked", 0)):
    os.mkdir(name)
    open(name + "/marker", "w").write("tenant A's secret")
    os.chmod(name, mode)
return "left"`, nil0, returns(`"left"`)},
	{"/tmp itself", `import os, errno
open("/tmp/marker", "w").write("tenant A's secret")
os.symlink("/usr", "/tmp/usr")
out = []
for fn in (lambda: os.setxattr("/tmp", "user.leak", b"secret"), lambda: os.setxattr("/tmp/marker", "user.leak", b"secret")):
    try:
        fn()
        out.append("set")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
os.utime("/tmp", ns=(123456789, 987654321))
os.chmod("/tmp", 0o500)
return out`, nil0, returns(`["ENOSYS","ENOSYS"]`)},
	{"fills /tmp", `import os, errno
os.chdir("/tmp")
for i in range(20):
    os.mkdir("f%02d" % i + "x" * 247)
    os.chdir("f%02d" % i + "x" * 247)
ends, n = [], 0
try:
    while True:
        with open("blob%d" % n, "wb") as f:
            n += 1
            for _ in range(4):  # under RLIMIT_FSIZE
                f.write(b"x" * (1 << 20))
except OSError as e:
    ends.append(errno.errorcode[e.errno])
try:
    while True:
        open("i%d" % n, "w").close()
        n += 1
except OSError as e:
    ends.append(errno.errorcode[e.errno])
return ends`, nil0, returns(`["ENOSPC","ENOSPC"]`)},
	{"in flight", `import os, socket
l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
l.bind(b"\0stepbox-leak")
l.listen(8)
f = open("/tmp/run/blob", "wb+")
f.write(b"x" * (4 << 20))
f.flush()
os.unlink("/tmp/run/blob")
a, b = socket.socketpair()
socket.send_fds(b, [b"x"], [a.fileno(), l.fileno(), f.fileno()])
return "left"`, nil0, returns(`"left"`)},
	{"System V IPC and message queues", `import ctypes, errno, platform
libc = ctypes.CDLL(None, use_errno=True)
nrs = {"x86_64": (29, 64, 68, 240), "aarch64": (194, 190, 186, 180)}[platform.machine()]
out = []
for nr, args in zip(nrs, ((0, 4096, 0o1666), (0, 1, 0o1666), (0, 0o1666), (b"leak", 0o102, 0o666, None))):
    r = libc.syscall(nr, *args)
    out.append("created" if r != -1 else errno.errorcode[ctypes.get_errno()])
return out`, nil0, returns(`["ENOSYS","ENOSYS","ENOSYS","ENOSYS"]`)},
}

// pyProbe is what a tenant finds of earlier runs: /tmp's mode, owner,
// free blocks and inodes and extended attributes, every entry under /tmp
// however deep and whatever its mode (it has the same uid: it can chmod),
// what any marker says, whether the leaked socket answers; and then
// whether it has the room a run may expect (a few MB, a hundred files).
const pyProbe = `import os, socket, stat
st = os.stat("/tmp")
v = os.statvfs("/tmp")
out = {"mode": oct(st.st_mode), "owner": [st.st_uid, st.st_gid], "free": [v.f_bfree, v.f_ffree],
       "xattrs": os.listxattr("/tmp"), "cwd": os.listdir(".")}
found = []
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
        found.append(name[:20])
    try:
        if not stat.S_ISDIR(os.lstat(name).st_mode):
            if name == "marker":
                found.append(open(name).read())
            continue
        os.chmod(name, 0o700)
        os.chdir(name)
    except OSError as e:
        found.append(e.strerror)
        continue
    todo.append(os.listdir("."))
out["found"] = found[:5] + ["... %d in all" % len(found)] if found else []
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(b"\0stepbox-leak")
    out["socket"] = "connected"
except OSError as e:
    out["socket"] = type(e).__name__
try:
    with open("/tmp/run/big", "wb") as f:
        f.write(b"y" * (6 << 20))
    for i in range(100):
        open("/tmp/run/small%d" % i, "w").write("z")
    out["room"] = "ok"
except OSError as e:
    out["room"] = e.strerror
return out`

// pythonLeftovers runs each row as tenant A, between two probes as tenant
// B, on a new one-slot engine per row (so that a row that fails does not
// fail the rows after it) and per isolation (Python runs in its jailed
// zygote in both).
func pythonLeftovers(t *testing.T, iso isolation) {
	for _, a := range pyLeftovers {
		t.Run(a.name, func(t *testing.T) {
			tg := newTarget(t, iso, sandbox.Config{PoolSize: 1})
			defer tg.finish(t)
			probe := func(t *testing.T) *outcome {
				t.Helper()
				o := tg.run(t, sandbox.Request{Language: sandbox.Python, Tenant: "tenant-b", Code: pyProbe})
				if o != nil && o.err != nil {
					if o.err.Code == sandbox.CodeUnavailable && !testenv.RequireJail() {
						t.Skipf("Python is unavailable here: %v", o.err)
					}
					t.Fatalf("the probe failed: %v", o.err)
				}
				return o
			}
			base := probe(t)
			if base == nil {
				return
			}
			o := tg.run(t, sandbox.Request{Language: sandbox.Python, Tenant: "tenant-a", Code: a.code, Limits: a.limits})
			if o == nil {
				return
			}
			assertOutcome(t, a.want, o)
			if o = probe(t); o != nil {
				assertOutcome(t, returns(string(base.res.Value)), o)
			}
		})
	}
}
