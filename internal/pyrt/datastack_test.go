//go:build linux

package pyrt_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// Python's data stack: Debian's python3-numpy and python3-pandas, which
// scripts/test installs, imported by steps from the interpreter's own
// dist-packages (the default), preloaded in the zygote.

var (
	dataMu sync.Mutex
	dataRT *runtime
)

// dataStack returns a runtime whose zygotes preload numpy and pandas,
// shared by the tests below (runs take turns anyway).
func dataStack(t *testing.T) *runtime {
	t.Helper()
	for _, p := range []string{"numpy", "pandas"} {
		if _, err := os.Stat("/usr/lib/python3/dist-packages/" + p); err != nil {
			t.Fatalf("python3-%s is not installed (scripts/test installs it): %v", p, err)
		}
	}
	dataMu.Lock()
	defer dataMu.Unlock()
	if dataRT == nil {
		dataRT = startRuntime(t, pyrt.Config{Preload: []string{"numpy", "pandas"}}, "")
	}
	return dataRT
}

func closeDataStack() {
	dataMu.Lock()
	defer dataMu.Unlock()
	if dataRT != nil {
		dataRT.Close()
		dataRT = nil
	}
}

// groupByStep groups 10,000 rows by region with pandas and returns the
// five regions of the largest totals.
const groupByStep = `import pandas as pd
rows = [{"id": i, "region": "r%d" % (i % 20), "amount": i % 997} for i in range(10000)]
df = pd.DataFrame(rows)
g = df.groupby("region").agg(n=("id", "count"), total=("amount", "sum"), mean=("amount", "mean"))
g = g.sort_values(["total", "region"], ascending=[False, True]).head(5)
return [{"region": r, "n": int(x["n"]), "total": int(x["total"]), "mean": round(float(x["mean"]), 6)} for r, x in g.iterrows()]`

// groupByWant is groupByStep's answer, computed here.
func groupByWant() string {
	type agg struct {
		Region string  `json:"region"`
		N      int     `json:"n"`
		Total  int     `json:"total"`
		Mean   float64 `json:"mean"`
	}
	by := map[string]*agg{}
	for i := range 10000 {
		r := fmt.Sprintf("r%d", i%20)
		if by[r] == nil {
			by[r] = &agg{Region: r}
		}
		by[r].N++
		by[r].Total += i % 997
	}
	var all []agg
	for _, a := range by {
		a.Mean = float64(int64(float64(a.Total)/float64(a.N)*1e6+0.5)) / 1e6
		all = append(all, *a)
	}
	slices.SortFunc(all, func(a, b agg) int {
		if a.Total != b.Total {
			return b.Total - a.Total
		}
		return strings.Compare(a.Region, b.Region)
	})
	out, _ := json.Marshal(all[:5])
	return string(out)
}

func TestDataStackPandasGroupBy(t *testing.T) {
	rt := dataStack(t)
	expectResult(t, runStep(t, rt, groupByStep, testLimits, nil), groupByWant())
}

func TestDataStackNumpy(t *testing.T) {
	rt := dataStack(t)
	// A matrix product and a linear solve: BLAS and LAPACK, which Debian
	// resolves through /etc/alternatives.
	code := `import numpy as np
a = np.arange(1, 10001, dtype=np.float64).reshape(100, 100) % 17 + np.eye(100) * 50
b = a @ np.ones(100)
x = np.linalg.solve(a, b)
return {"sum": int(np.arange(1000000, dtype=np.int64).sum()), "solve": bool(np.allclose(x, 1.0)),
        "trace": float(np.trace(np.eye(3) * 2.5))}`
	expectResult(t, runStep(t, rt, code, testLimits, nil), `{"sum":499999500000,"solve":true,"trace":7.5}`)

	// The thread pools were told to run one thread before numpy loaded,
	// and a run has only its own thread.
	expectResult(t, runStep(t, rt, `import os, threading
return [os.environ.get(v) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")] + [threading.active_count()]`,
		testLimits, nil), `["1","1","1",1]`)
}

// An allocation past memoryMb ends the run OOM, and the zygote serves the
// next one.
func TestDataStackMemory(t *testing.T) {
	rt := dataStack(t)
	lim := testLimits
	lim.MemoryMB = 64
	for _, code := range []string{
		"import numpy as np\nreturn int(np.ones(128 << 20, dtype=np.uint8).sum())",
		"import numpy as np\nx = [np.ones(8 << 20, dtype=np.uint8) for _ in range(16)]\nreturn len(x)",
		"import pandas as pd\nreturn len(pd.DataFrame({'a': range(20_000_000)}))",
	} {
		if f := expectError(t, runStep(t, rt, code, lim, nil), ipc.CodeOOM, "memoryMb"); !strings.Contains(f.Message, "memoryMb=64") {
			t.Errorf("%q: %s", code, f.Message)
		}
	}
	expectResult(t, runStep(t, rt, "import numpy as np\nreturn int(np.ones(16 << 20, dtype=np.uint8).sum())", lim, nil), "16777216")
}

func TestDataStackZoneinfo(t *testing.T) {
	rt := dataStack(t)
	code := `import datetime, zoneinfo
import pandas as pd
paris = zoneinfo.ZoneInfo("Europe/Paris")
summer = datetime.datetime(2024, 7, 1, 12, tzinfo=paris).utcoffset().total_seconds()
winter = datetime.datetime(2024, 1, 1, 12, tzinfo=paris).utcoffset().total_seconds()
ts = pd.Timestamp("2024-07-01 12:00", tz="Europe/Paris").tz_convert("UTC").isoformat()
return [summer, winter, ts]`
	expectResult(t, runStep(t, rt, code, testLimits, nil), `[7200.0,3600.0,"2024-07-01T10:00:00+00:00"]`)
}

// A step can neither change the directories the data stack added to the
// jail nor reach through them (or their links) anything the jail does not
// hold.
func TestDataStackConfinement(t *testing.T) {
	rt := dataStack(t)
	binds := rt.l.Jail(0, 0).ReadOnlyBinds
	for _, want := range []string{"/usr/share/zoneinfo", "/etc/alternatives/libblas.so.3-x86_64-linux-gnu"} {
		if _, err := os.Lstat(want); err == nil && !slices.Contains(binds, want) {
			t.Errorf("%s is not among the binds %q", want, binds)
		}
	}
	// Writes: every one must fail, whatever the reason the kernel gives.
	code := `import os, errno
import numpy, pandas
targets = [os.path.dirname(numpy.__file__), os.path.dirname(pandas.__file__), "/usr/lib/python3/dist-packages",
           "/usr/share/zoneinfo", "/usr/share/zoneinfo/Europe", "/etc/alternatives", "/usr/lib/x86_64-linux-gnu/blas"]
out = {}
for d in targets:
    tries = {
        "create": lambda: open(os.path.join(d, "stepbox-was-here"), "w").close(),
        "mkdir": lambda: os.mkdir(os.path.join(d, "stepbox-dir")),
        "chmod": lambda: os.chmod(d, 0o777),
        "rename": lambda: os.rename(os.path.join(d, sorted(os.listdir(d))[0]), os.path.join(d, "stepbox-renamed")),
        "unlink": lambda: os.unlink(os.path.join(d, sorted(os.listdir(d))[0])),
        "symlink": lambda: os.symlink("/tmp", os.path.join(d, "stepbox-link")),
        "utime": lambda: os.utime(d, (0, 0)),
    }
    for name, f in tries.items():
        try:
            f()
            out[d + " " + name] = "done"
        except OSError as e:
            if e.errno not in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSYS):
                out[d + " " + name] = errno.errorcode.get(e.errno, str(e.errno))
# Writing through an open descriptor of a library.
try:
    fd = os.open(numpy.__file__, os.O_RDWR)
    out["open rw"] = "done"
except OSError as e:
    if e.errno not in (errno.EROFS, errno.EACCES):
        out["open rw"] = errno.errorcode.get(e.errno, str(e.errno))
return out`
	expectResult(t, runStep(t, rt, code, testLimits, nil), `{}`)

	// Reads: only the binds exist. The links of /etc/alternatives and of
	// the zone database lead to what the jail holds, or nowhere.
	var tops []string
	for _, b := range binds {
		tops = append(tops, strings.Split(b, "/")[1])
	}
	tops = append(tops, "dev", "tmp", "stepbox")
	slices.Sort(tops)
	tops = slices.Compact(tops)
	wantTops, _ := json.Marshal(tops)
	code = `import os
def reach(p):
    try:
        with open(p, "rb") as f:
            f.read(1)
        return "read"
    except IsADirectoryError:
        return "dir"
    except OSError as e:
        return type(e).__name__
escapes = {}
for d in ("/etc/alternatives", "/usr/share/zoneinfo"):
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            if os.path.islink(p):
                real = os.path.realpath(p)
                if os.path.exists(real) and not any(real == b or real.startswith(b + "/") for b in BINDS):
                    escapes[p] = real
return {"root": sorted(os.listdir("/")), "etc": sorted(os.listdir("/etc")) == sorted(ETC),
        "passwd": reach("/etc/passwd"), "shadow": reach("/etc/shadow"), "root_home": reach("/root/.profile"),
        "localtime": reach("/usr/share/zoneinfo/localtime"), "proc": os.path.exists("/proc/self"),
        "home": os.path.exists("/home"), "var": os.path.exists("/var"), "escapes": escapes}`
	var etc []string
	for _, b := range binds {
		if rest, ok := strings.CutPrefix(b, "/etc/"); ok {
			etc = append(etc, strings.Split(rest, "/")[0])
		}
	}
	slices.Sort(etc)
	etc = slices.Compact(etc)
	bindsJSON, _ := json.Marshal(binds)
	etcJSON, _ := json.Marshal(etc)
	code = "BINDS = " + string(bindsJSON) + "\nETC = " + string(etcJSON) + "\n" + code
	expectResult(t, runStep(t, rt, code, testLimits, nil), `{"root":`+string(wantTops)+`,"etc":true,"passwd":"FileNotFoundError",`+
		`"shadow":"FileNotFoundError","root_home":"FileNotFoundError","localtime":"FileNotFoundError","proc":false,`+
		`"home":false,"var":false,"escapes":{}}`)
}

// With the standard library only, numpy is not there, and says so.
func TestStdlibOnly(t *testing.T) {
	dataStack(t) // numpy is installed
	rt := newRuntime(t, pyrt.Config{Packages: pyrt.PackagesNone})
	f := expectError(t, runStep(t, rt, "import numpy", testLimits, nil), ipc.CodeRuntime, "")
	if f.Message != "ModuleNotFoundError: No module named 'numpy'" {
		t.Errorf("message %q", f.Message)
	}
	expectResult(t, runStep(t, rt, "import sys, json\nreturn [p for p in sys.path if 'packages' in p]", testLimits, nil), `[]`)
	// The standard library, its zoneinfo included, is all there.
	expectResult(t, runStep(t, rt, "import zoneinfo, datetime\nreturn datetime.datetime(2024, 1, 1, tzinfo=zoneinfo.ZoneInfo('Asia/Tokyo')).utcoffset().total_seconds()", testLimits, nil), `32400.0`)
}

// A virtualenv's python brings the venv's site-packages, not the
// system's; a site-packages directory reached through a symbolic link is
// bound at its real place, with the link recreated, and nothing else of
// the directories on the way shows.
func TestVirtualenvAndLinks(t *testing.T) {
	dataStack(t)
	base, err := os.MkdirTemp("/var/tmp", "pyrt-venv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(base, "venv")
	if out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v: %s", err, out)
	}
	site, err := filepath.Glob(filepath.Join(venv, "lib", "python3.*", "site-packages"))
	if err != nil || len(site) != 1 {
		t.Fatalf("the venv's site-packages: %q %v", site, err)
	}
	if err := os.WriteFile(filepath.Join(site[0], "stepbox_venv_mod.py"), []byte("WHERE = 'venv'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Extra packages through a link: base/extra -> real/pkgs.
	real := filepath.Join(base, "real", "pkgs")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(base, "real", "secret.txt"), []byte("not for steps"), 0o644)
	os.WriteFile(filepath.Join(real, "stepbox_linked_mod.py"), []byte("WHERE = 'linked'\n"), 0o644)
	if err := os.Symlink("real/pkgs", filepath.Join(base, "extra")); err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, pyrt.Config{Python: filepath.Join(venv, "bin", "python"), Packages: pyrt.PackagesAuto,
		SitePackages: []string{filepath.Join(base, "extra")}})
	code := fmt.Sprintf(`import os, stepbox_venv_mod, stepbox_linked_mod
try:
    import numpy
    numpy_ok = True
except ModuleNotFoundError:
    numpy_ok = False
base = %q
return {"venv": stepbox_venv_mod.WHERE, "linked": stepbox_linked_mod.WHERE, "numpy": numpy_ok,
        "base": sorted(os.listdir(base)), "real": sorted(os.listdir(base + "/real")),
        "link": os.readlink(base + "/extra")}`, base)
	expectResult(t, runStep(t, rt, code, testLimits, nil),
		`{"venv":"venv","linked":"linked","numpy":false,"base":["extra","real","venv"],"real":["pkgs"],"link":"real/pkgs"}`)
}

func TestPackagesConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  pyrt.Config
		want string
	}{
		{pyrt.Config{Packages: "everything"}, `Packages "everything" is not`},
		{pyrt.Config{Packages: pyrt.PackagesNone, SitePackages: []string{"/opt/x"}}, "but SitePackages are set"},
		{pyrt.Config{Packages: pyrt.PackagesDirs}, "no SitePackages"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	if err := (pyrt.Config{SitePackages: []string{"/opt/x"}}).Validate(); err != nil {
		t.Errorf("SitePackages alone: %v", err)
	}
	shared(t) // skips where Python is unavailable
	// A site-packages directory where the jail makes its own.
	if _, err := pyrt.NewLauncher(pyrt.Config{SitePackages: []string{"/tmp"}}); err == nil || !strings.Contains(err.Error(), "under /tmp") {
		t.Errorf("site-packages in /tmp: %v", err)
	}
	if _, err := pyrt.NewLauncher(pyrt.Config{SitePackages: []string{"/nonexistent/site"}}); err == nil || !strings.Contains(err.Error(), "/nonexistent/site") {
		t.Errorf("missing site-packages: %v", err)
	}
}
