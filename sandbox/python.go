package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/pool"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// PythonConfig configures Python steps. Python runs in the machine's CPython,
// jailed (Linux namespaces, a read-only root, no network, seccomp,
// rlimits), forked per run from a warm zygote that belongs to one worker
// process. Where the jail cannot be set up, Python is UNAVAILABLE (wrapping
// errors.ErrUnsupported); it never runs unjailed.
//
// By default a step imports what is installed for the interpreter:
// Debian's python3-numpy and python3-pandas, for example, or a
// virtualenv's packages when Interpreter is the venv's python. The jail
// shows those directories read-only, with what the packages load at
// import time (the shared libraries, through /etc/alternatives where
// Debian chooses BLAS and LAPACK there; the time zone database), and
// numerical thread pools run one thread.
type PythonConfig struct {
	// Disabled turns Python off: Python requests are UNAVAILABLE.
	Disabled bool `json:"disabled,omitempty"`
	// Interpreter is the python3 to use: a path, or a name looked up on
	// PATH. Empty means /usr/bin/python3 if present, else python3 from
	// PATH. A virtualenv's python (e.g. /opt/venv/bin/python) brings the
	// venv's packages (PythonPackagesAuto).
	Interpreter string `json:"interpreter,omitempty"`
	// Packages says which installed packages steps can import besides the
	// standard library: PythonPackagesAuto ("auto"), PythonPackagesNone
	// ("none") or PythonPackagesDirs ("dirs"). Empty means "auto", or
	// "dirs" when SitePackages is set (what SitePackages alone meant
	// before there was Packages).
	Packages string `json:"packages,omitempty"`
	// SitePackages are directories (absolute) bound read-only and added to
	// sys.path after the interpreter's own under "auto", alone under
	// "dirs". Their .pth files are not processed.
	SitePackages []string `json:"sitePackages,omitempty"`
	// Preload lists modules each zygote imports once, before any run, so
	// that a step's import of them costs nothing (e.g. numpy, pandas: a
	// second or more of import, and 50 MB or more of address space, that a
	// run would otherwise pay within its memoryMb). It replaces the
	// default: nil means json, re, datetime, decimal, statistics, math,
	// collections, itertools, functools; an empty list, none of them.
	Preload []string `json:"preload,omitempty"`
}

// Values of PythonConfig.Packages.
const (
	// PythonPackagesAuto: what is installed for the interpreter, the
	// directories of its site.getsitepackages() that exist (Debian's
	// /usr/lib/python3/dist-packages and /usr/local/lib/python3.X/dist-packages;
	// a virtualenv's site-packages, and the system's when the venv
	// includes them), then SitePackages.
	PythonPackagesAuto = pyrt.PackagesAuto
	// PythonPackagesNone: the standard library only.
	PythonPackagesNone = pyrt.PackagesNone
	// PythonPackagesDirs: SitePackages only.
	PythonPackagesDirs = pyrt.PackagesDirs
)

// SetPackages sets Packages and SitePackages from the form the command
// line and the environment take: "auto", "none", or a comma-separated
// list of absolute directories, which may begin with "auto" to come after
// the interpreter's own ("auto,/opt/extra").
func (c *PythonConfig) SetPackages(s string) error {
	var dirs []string
	auto := false
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == PythonPackagesAuto && i == 0:
			auto = true
		case f == PythonPackagesNone && i == 0 && !strings.Contains(s, ","):
			c.Packages, c.SitePackages = PythonPackagesNone, nil
			return nil
		case f == "":
			return fmt.Errorf("%q: an empty entry (want auto, none, or a comma-separated list of absolute directories)", s)
		case !filepath.IsAbs(f):
			return fmt.Errorf("%q: %q is not an absolute directory (want auto, none, or a comma-separated list of absolute directories)", s, f)
		default:
			dirs = append(dirs, filepath.Clean(f))
		}
	}
	c.Packages, c.SitePackages = PythonPackagesDirs, dirs
	if auto {
		c.Packages = PythonPackagesAuto
	}
	return nil
}

// Validate reports every problem of c that shows without starting
// Python, each naming its field as the JSON (and YAML) configuration
// writes it ("packages: ..."). Whether the interpreter runs and the
// directories exist shows at the first Python run: the run is UNAVAILABLE
// and says why.
func (c PythonConfig) Validate() error {
	if c.Disabled {
		return nil
	}
	var errs []error
	switch c.Packages {
	case "", PythonPackagesAuto:
	case PythonPackagesNone:
		if len(c.SitePackages) > 0 {
			errs = append(errs, fmt.Errorf("packages: %q (the standard library only), but sitePackages are set: write %q for those alone, or %q for them after the interpreter's own", c.Packages, PythonPackagesDirs, PythonPackagesAuto))
		}
	case PythonPackagesDirs:
		if len(c.SitePackages) == 0 {
			errs = append(errs, fmt.Errorf("packages: %q, but no sitePackages are set", c.Packages))
		}
	default:
		errs = append(errs, fmt.Errorf("packages: %q is not %q, %q or %q", c.Packages, PythonPackagesAuto, PythonPackagesNone, PythonPackagesDirs))
	}
	for i, d := range c.SitePackages {
		if !filepath.IsAbs(d) {
			errs = append(errs, fmt.Errorf("sitePackages[%d]: %q is not an absolute path", i, d))
		}
	}
	for i, m := range c.Preload {
		if !pyrt.IsModuleName(m) {
			errs = append(errs, fmt.Errorf("preload[%d]: %q is not a module name", i, m))
		}
	}
	return errors.Join(errs...)
}

func (c PythonConfig) pyrt() pyrt.Config {
	return pyrt.Config{Python: c.Interpreter, Packages: c.Packages, SitePackages: c.SitePackages, Preload: c.Preload}
}

// python is the engine's Python: the launcher of the zygotes, found on the
// first Python run, and the workers that run Python steps — the engine's
// pool with process isolation, a pool of its own in-process (started on
// the first Python run), since a Python step always runs in a worker that
// owns its zygote, and its module calls run in that worker.
type python struct {
	launcher func() (*pyrt.Launcher, error) // once
	tried    atomic.Bool                    // launcher has been called

	mu     sync.Mutex
	pool   *pool.Pool // guarded by mu: in-process only, started on first use
	closed bool       // guarded by mu
}

func newPython(c PythonConfig) *python {
	cfg := c.pyrt()
	return &python{launcher: sync.OnceValues(func() (*pyrt.Launcher, error) {
		if c.Disabled {
			return nil, fmt.Errorf("disabled in this engine's configuration: %w", errors.ErrUnsupported)
		}
		return pyrt.NewLauncher(cfg)
	})}
}

// pythonPool returns the workers that run Python steps, or why there are
// none.
func (e *Engine) pythonPool() (*pool.Pool, error) {
	e.py.tried.Store(true)
	if _, err := e.py.launcher(); err != nil {
		return nil, err
	}
	if p, ok := e.js.(*pool.Pool); ok {
		return p, nil
	}
	py := e.py
	py.mu.Lock()
	defer py.mu.Unlock()
	if py.closed {
		return nil, ErrClosed
	}
	if py.pool == nil {
		p, err := newPool(e.cfg, py.launcher)
		if err != nil {
			return nil, err
		}
		py.pool = p
	}
	return py.pool, nil
}

// runPython runs a Python job on a worker of group (see Workers), or
// fails it UNAVAILABLE when Python cannot run here; err is then why.
func (e *Engine) runPython(ctx context.Context, group string, job jsrt.Job) (*ipc.Event, error) {
	p, err := e.pythonPool()
	if err != nil {
		return ipc.Failed(&ipc.Failure{Code: ipc.CodeUnavailable, Message: "Python is not available: " + err.Error()}, ipc.Stats{}), err
	}
	job.Language = ipc.LanguagePython
	return p.RunGroup(ctx, group, job), nil
}

// close stops the in-process engine's Python workers, letting runs finish
// until ctx ends.
func (py *python) close(ctx context.Context) {
	py.mu.Lock()
	py.closed = true
	p := py.pool
	py.mu.Unlock()
	if p != nil {
		_ = p.Close(ctx)
	}
}
