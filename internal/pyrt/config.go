package pyrt

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"time"

	"github.com/stepbox/stepbox/internal/jsrt"
)

// Job is one run's work and its line to the host; Python runs take the
// same Job as JavaScript runs, so that a worker can hold either runtime
// behind one interface.
type Job = jsrt.Job

// Host receives a run's non-terminal events (see jsrt.Host).
type Host = jsrt.Host

// ZygoteDied opens the message of a run that failed (CRASHED) because its
// zygote died: the host, which reaps the zygote, adds how it died.
const ZygoteDied = "the Python zygote died"

// Defaults for the zero values of Config.
const (
	// DefaultPython is the interpreter used when Config.Python is empty
	// and it exists; otherwise python3 is looked up on PATH.
	DefaultPython           = "/usr/bin/python3"
	DefaultMaxMemoryMB      = 1024
	DefaultMaxProcs         = 16
	DefaultMaxOpenFiles     = 64
	DefaultMaxFileSizeBytes = 8 << 20
	DefaultTmpfsSizeBytes   = 16 << 20
	DefaultTmpfsInodes      = 1024
	DefaultStartTimeout     = 15 * time.Second
)

// Values of Config.Packages.
const (
	// PackagesAuto: what is installed for the interpreter, the directories
	// of site.getsitepackages() that exist (Debian's dist-packages; a
	// virtualenv's site-packages, and the system's too when the venv
	// includes them), then Config.SitePackages.
	PackagesAuto = "auto"
	// PackagesNone: the standard library only.
	PackagesNone = "none"
	// PackagesDirs: Config.SitePackages only.
	PackagesDirs = "dirs"
)

// DefaultPreload are the modules the zygote imports once, so that a step's
// import of them costs nothing.
var DefaultPreload = []string{"json", "re", "datetime", "decimal", "statistics", "math", "collections", "itertools", "functools"}

// Config configures a Launcher (and so its zygotes). It is plain data: the zero value of every
// field means its documented default.
type Config struct {
	// Python is the path of the python3 interpreter (3.9 or later). Empty
	// means DefaultPython if it exists, else python3 from PATH. Symbolic
	// links and launcher shims are resolved by asking the interpreter for
	// its sys.executable. The interpreter, its standard library and its
	// shared libraries must be readable by the jail's host user ("nobody"
	// when the host is root): a pyenv under /root is not.
	Python string

	// Packages says which installed packages a step can import besides
	// the standard library: PackagesAuto, PackagesNone or PackagesDirs.
	// Empty means PackagesAuto, or PackagesDirs when SitePackages is set
	// (what SitePackages alone meant before there was Packages).
	Packages string

	// SitePackages are directories (absolute) appended to sys.path, after
	// the interpreter's own under PackagesAuto, and bound read-only into
	// the jail. Their .pth files are not processed. PackagesNone allows
	// none; PackagesDirs needs at least one.
	SitePackages []string

	// Preload lists the modules the zygote imports before it forks any
	// run. Nil means DefaultPreload; an empty, non-nil slice preloads
	// nothing beyond what the prelude itself needs.
	Preload []string

	// MaxMemoryMB caps the memoryMb limit of a run, in MiB (a run asking
	// for more gets this). The zygote's jail gets this plus its tmpfs
	// plus 256 MiB as its memory ceiling. Zero means DefaultMaxMemoryMB.
	MaxMemoryMB int

	// MaxProcs caps the processes and threads a run may have at once
	// (RLIMIT_NPROC in the run's process), its first process included.
	// Zero means DefaultMaxProcs.
	MaxProcs int

	// MaxOpenFiles is a run's RLIMIT_NOFILE. Zero means DefaultMaxOpenFiles.
	MaxOpenFiles int

	// MaxFileSizeBytes is a run's RLIMIT_FSIZE, in bytes. Zero means
	// DefaultMaxFileSizeBytes.
	MaxFileSizeBytes int64

	// TmpfsSizeBytes caps the jail's /tmp, in bytes; one run at a time
	// uses it, and it is emptied and proven back to its state at the
	// zygote's start after every run (or the zygote is replaced). Zero
	// means DefaultTmpfsSizeBytes.
	TmpfsSizeBytes int64

	// TmpfsInodes caps the files and directories in the jail's /tmp.
	// Zero means DefaultTmpfsInodes.
	TmpfsInodes int

	// CgroupParent is passed to the jail (see jail.Config.CgroupParent).
	CgroupParent string

	// StartTimeout bounds the start of the zygote, jail included. Zero
	// means DefaultStartTimeout.
	StartTimeout time.Duration
}

var moduleName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// IsModuleName reports whether s is a dotted Python module name
// ("numpy", "os.path"), as Config.Preload needs.
func IsModuleName(s string) bool { return moduleName.MatchString(s) }

// Validate reports every problem of c, without looking at the machine.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults returns c with defaults filled in, or every problem.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Preload == nil {
		c.Preload = DefaultPreload
	}
	c.Preload = append([]string(nil), c.Preload...)
	for _, m := range c.Preload {
		if !moduleName.MatchString(m) {
			errs = append(errs, fmt.Errorf("pyrt: config: Preload: %q is not a module name", m))
		}
	}
	switch c.Packages {
	case "":
		c.Packages = PackagesAuto
		if len(c.SitePackages) > 0 {
			c.Packages = PackagesDirs
		}
	case PackagesAuto:
	case PackagesNone:
		if len(c.SitePackages) > 0 {
			errs = append(errs, fmt.Errorf("pyrt: config: Packages %q (the standard library only), but SitePackages are set: use %q or %q", c.Packages, PackagesDirs, PackagesAuto))
		}
	case PackagesDirs:
		if len(c.SitePackages) == 0 {
			errs = append(errs, fmt.Errorf("pyrt: config: Packages %q, but no SitePackages are set", c.Packages))
		}
	default:
		errs = append(errs, fmt.Errorf("pyrt: config: Packages %q is not %q, %q or %q", c.Packages, PackagesAuto, PackagesNone, PackagesDirs))
	}
	sites := make([]string, 0, len(c.SitePackages))
	for _, p := range c.SitePackages {
		if !filepath.IsAbs(p) {
			errs = append(errs, fmt.Errorf("pyrt: config: SitePackages: %q is not absolute", p))
			continue
		}
		sites = append(sites, filepath.Clean(p))
	}
	c.SitePackages = sites
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"MaxMemoryMB", &c.MaxMemoryMB, DefaultMaxMemoryMB}, {"MaxProcs", &c.MaxProcs, DefaultMaxProcs},
		{"MaxOpenFiles", &c.MaxOpenFiles, DefaultMaxOpenFiles}, {"TmpfsInodes", &c.TmpfsInodes, DefaultTmpfsInodes}} {
		if *f.v < 0 {
			errs = append(errs, fmt.Errorf("pyrt: config: %s %d is negative", f.name, *f.v))
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if c.MaxOpenFiles < 16 {
		errs = append(errs, fmt.Errorf("pyrt: config: MaxOpenFiles %d is below 16", c.MaxOpenFiles))
	}
	if c.MaxFileSizeBytes < 0 || c.TmpfsSizeBytes < 0 || c.StartTimeout < 0 {
		errs = append(errs, errors.New("pyrt: config: MaxFileSizeBytes, TmpfsSizeBytes and StartTimeout must not be negative"))
	}
	if c.MaxFileSizeBytes == 0 {
		c.MaxFileSizeBytes = DefaultMaxFileSizeBytes
	}
	if c.TmpfsSizeBytes == 0 {
		c.TmpfsSizeBytes = DefaultTmpfsSizeBytes
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	return c, errors.Join(errs...)
}
