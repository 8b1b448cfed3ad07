package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/net/bpf"
)

// Defaults for the zero values of Config.
const (
	DefaultTmpfsSizeBytes   = 16 << 20
	DefaultTmpfsInodes      = 1024
	DefaultMemoryBytes      = 512 << 20
	DefaultMaxProcs         = 64
	DefaultMaxOpenFiles     = 256
	DefaultMaxFileSizeBytes = 16 << 20
	// DefaultID is the uid and gid the worker runs as inside the jail, and the
	// host uid and gid they map to when the host runs as root ("nobody").
	DefaultID = 65534
)

// ExePath is where the worker's own executable appears inside the jail. Enter
// re-executes it from there.
const ExePath = "/stepbox/exe"

// Hostname is the host name the worker sees (its own UTS namespace).
const Hostname = "stepbox"

// EnvConfig is the environment variable through which Prepare hands the
// ChildConfig (JSON) to the child. Prepare refuses a cmd.Env that already
// sets it; Enter removes it from the environment before returning.
const EnvConfig = "STEPBOX_JAIL"

// testHookNoCgroups makes Prepare use the rlimit fallback (export_test.go).
var testHookNoCgroups bool

// envStage marks the second execution of the child (after the jail was built).
const envStage = "STEPBOX_JAIL_STAGE"

// Config is the host's description of one worker's jail. It is plain data: the
// zero value of every field means the documented default.
type Config struct {
	// ReadOnlyBinds lists host paths (absolute and clean) that appear at the
	// same path inside the jail, bind-mounted read-only, nosuid and nodev
	// (submounts included). A path that is a symbolic link is recreated as
	// the same link instead (merged-/usr systems: /lib64 -> usr/lib64).
	// Sources must exist and be readable by the mapped host user. The
	// executable itself is always bound, at ExePath; list here only what the
	// worker loads after Enter (for Python: /usr, /lib, /lib64, ...).
	// Not allowed: "/", anything under /proc, /sys, /dev, /tmp or /stepbox.
	// Default: none.
	ReadOnlyBinds []string

	// TmpfsSizeBytes caps the writable /tmp, in bytes; a write past it fails
	// with ENOSPC. Its pages count against MemoryBytes when the memory cgroup
	// is in force (not against RLIMIT_AS). Zero means DefaultTmpfsSizeBytes
	// (16 MiB).
	TmpfsSizeBytes int64

	// TmpfsInodes caps the number of files and directories in /tmp. Zero
	// means DefaultTmpfsInodes (1024).
	TmpfsInodes int

	// MemoryBytes is the worker's memory ceiling, in bytes, for the worker
	// and everything it starts. With a memory cgroup (v2 memory.max with swap
	// off and oom.group, or v1 memory.limit_in_bytes and memsw) the kernel
	// OOM-kills the worker (SIGKILL) past it. Without one it becomes
	// RLIMIT_AS = address space in use at Enter + MemoryBytes: allocations
	// past it fail with ENOMEM (a Go worker then dies with "fatal error:
	// out of memory", exit status 2). Zero means DefaultMemoryBytes (512 MiB).
	MemoryBytes int64

	// MaxProcs caps the tasks (processes and threads: a Go program has
	// several) of the worker. A pids cgroup (pids.max) enforces it when
	// granted; RLIMIT_NPROC always does too. Caveat: RLIMIT_NPROC counts the
	// tasks of the worker's uid in its user namespace (Linux >= 5.14); on
	// older kernels it counts every task of the mapped host uid, so workers
	// sharing a host uid share the limit. Zero means DefaultMaxProcs (64).
	MaxProcs int

	// MaxOpenFiles is RLIMIT_NOFILE (soft and hard). Zero means
	// DefaultMaxOpenFiles (256).
	MaxOpenFiles int

	// MaxFileSizeBytes is RLIMIT_FSIZE, in bytes: a write past it fails with
	// EFBIG (Go ignores SIGXFSZ). Zero means DefaultMaxFileSizeBytes (16 MiB).
	MaxFileSizeBytes int64

	// UID and GID are the unprivileged ids the worker runs as inside its user
	// namespace. Zero means DefaultID (65534); root (0) inside is not
	// possible.
	UID, GID int

	// HostUID and HostGID are the host ids that UID and GID map to when the
	// host runs as root. Zero means DefaultID (65534, "nobody"). Ignored when
	// the host is unprivileged: the kernel then only allows mapping the
	// host's own ids.
	HostUID, HostGID int

	// CgroupParent is the cgroup, relative to each hierarchy's root (for
	// example "/stepbox.slice"), under which per-worker cgroups are made.
	// Empty means the host process's own cgroup. On cgroup v2 the parent
	// must have (or be able to enable) the memory and pids controllers in
	// cgroup.subtree_control, which in practice means a delegated cgroup
	// with no processes of its own.
	CgroupParent string

	// UnsafeMountProc mounts a read-only proc filesystem at /proc. It shows
	// only the worker's own pid namespace but exposes more kernel interfaces
	// (and host-wide facts such as /proc/meminfo). Default: no /proc.
	UnsafeMountProc bool

	// Syscalls are extra seccomp rules composed over the base policy (see
	// NewFilter): evaluated after its fixed denials and before its allowlist.
	// Default: none.
	Syscalls []Rule
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	if c.TmpfsSizeBytes == 0 {
		c.TmpfsSizeBytes = DefaultTmpfsSizeBytes
	}
	if c.TmpfsInodes == 0 {
		c.TmpfsInodes = DefaultTmpfsInodes
	}
	if c.MemoryBytes == 0 {
		c.MemoryBytes = DefaultMemoryBytes
	}
	if c.MaxProcs == 0 {
		c.MaxProcs = DefaultMaxProcs
	}
	if c.MaxOpenFiles == 0 {
		c.MaxOpenFiles = DefaultMaxOpenFiles
	}
	if c.MaxFileSizeBytes == 0 {
		c.MaxFileSizeBytes = DefaultMaxFileSizeBytes
	}
	if c.UID == 0 {
		c.UID = DefaultID
	}
	if c.GID == 0 {
		c.GID = DefaultID
	}
	if c.HostUID == 0 {
		c.HostUID = DefaultID
	}
	if c.HostGID == 0 {
		c.HostGID = DefaultID
	}
	return c
}

// validate reports every problem of c (after defaults) together.
func (c Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("jail: config: "+format, args...))
	}
	if c.TmpfsSizeBytes < 0 {
		bad("TmpfsSizeBytes %d is negative", c.TmpfsSizeBytes)
	}
	if c.TmpfsInodes < 0 {
		bad("TmpfsInodes %d is negative", c.TmpfsInodes)
	}
	if c.MemoryBytes < 0 {
		bad("MemoryBytes %d is negative", c.MemoryBytes)
	}
	if c.MaxProcs < 0 {
		bad("MaxProcs %d is negative", c.MaxProcs)
	}
	if c.MaxOpenFiles < 0 {
		bad("MaxOpenFiles %d is negative", c.MaxOpenFiles)
	}
	if c.MaxFileSizeBytes < 0 {
		bad("MaxFileSizeBytes %d is negative", c.MaxFileSizeBytes)
	}
	for _, id := range []struct {
		name string
		v    int
	}{{"UID", c.UID}, {"GID", c.GID}, {"HostUID", c.HostUID}, {"HostGID", c.HostGID}} {
		if id.v < 0 || id.v >= 1<<32-1 {
			bad("%s %d is out of range", id.name, id.v)
		}
	}
	if c.CgroupParent != "" && (!filepath.IsAbs(c.CgroupParent) || filepath.Clean(c.CgroupParent) != c.CgroupParent ||
		strings.Contains(c.CgroupParent, "..")) {
		bad("CgroupParent %q is not an absolute, clean cgroup path", c.CgroupParent)
	}
	for _, p := range c.ReadOnlyBinds {
		if err := checkBind(p); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := assembled(c.Syscalls); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// assembledProgram is the outcome of assembling one policy.
type assembledProgram struct {
	raw []bpf.RawInstruction // shared: never modified
	err error
}

var (
	assembledMu sync.Mutex
	// assembledCache holds the assembled filter (or its error) of each set
	// of extra rules seen, keyed by their JSON: a host starts workers with
	// one or two policies, and assembling one costs about a millisecond
	// and a few hundred kilobytes of garbage. Guarded by assembledMu.
	assembledCache = map[string]assembledProgram{}
)

// maxAssembledCache bounds assembledCache; past it the cache is emptied.
const maxAssembledCache = 64

// assembled returns NewFilter(extra...).Assemble(), computed once per
// distinct extra. The caller must not modify the result.
func assembled(extra []Rule) ([]bpf.RawInstruction, error) {
	key, err := json.Marshal(extra)
	if err != nil { // a Rule is plain data: cannot happen
		return NewFilter(extra...).Assemble()
	}
	assembledMu.Lock()
	defer assembledMu.Unlock()
	if a, ok := assembledCache[string(key)]; ok {
		return a.raw, a.err
	}
	raw, err := NewFilter(extra...).Assemble()
	if len(assembledCache) >= maxAssembledCache {
		clear(assembledCache)
	}
	assembledCache[string(key)] = assembledProgram{raw: raw, err: err}
	return raw, err
}

// reservedPrefixes are paths the jail builds itself; binds may not touch them.
var reservedPrefixes = []string{"/proc", "/sys", "/dev", "/tmp", "/stepbox"}

func checkBind(p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("jail: config: bind %q is not an absolute, clean path", p)
	}
	if p == "/" {
		return fmt.Errorf("jail: config: bind %q would expose the whole host", p)
	}
	for _, r := range reservedPrefixes {
		if p == r || strings.HasPrefix(p, r+"/") {
			return fmt.Errorf("jail: config: bind %q is under %s, which the jail provides itself", p, r)
		}
	}
	if _, err := os.Lstat(p); err != nil {
		return fmt.Errorf("jail: config: bind: %w", err)
	}
	return nil
}

// libraryPaths are where a dynamically linked executable's loader, its
// cache and its libraries live on common distributions.
var libraryPaths = []string{"/lib", "/lib64", "/lib32", "/libx32", "/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/libx32", "/etc/ld.so.cache"}

// SystemLibraryBinds returns the host's shared-library locations that exist
// (/lib, /lib64, /usr/lib, /usr/lib64, /etc/ld.so.cache, ...): what a
// dynamically linked worker (cgo, or built with -race) needs in
// Config.ReadOnlyBinds. Prepare refuses a dynamically linked executable
// whose ELF interpreter is not under one of the binds.
func SystemLibraryBinds() []string {
	var binds []string
	for _, p := range libraryPaths {
		if _, err := os.Lstat(p); err == nil {
			binds = append(binds, p)
		}
	}
	return binds
}

// covered reports whether path is one of binds or under one.
func covered(path string, binds []string) bool {
	for _, b := range binds {
		if path == b || strings.HasPrefix(path, b+"/") {
			return true
		}
	}
	return false
}

// ChildConfig is what the child needs to finish its jail. Prepare builds it
// from a Config and passes it in the EnvConfig environment variable; the
// child reads it with ChildConfigFromEnv and passes it to Enter.
type ChildConfig struct {
	ReadOnlyBinds    []string `json:"binds,omitempty"`
	TmpfsSizeBytes   int64    `json:"tmpfsSize"`
	TmpfsInodes      int      `json:"tmpfsInodes"`
	UID              int      `json:"uid"`
	GID              int      `json:"gid"`
	MaxProcs         int      `json:"maxProcs"`
	MaxOpenFiles     int      `json:"maxOpenFiles"`
	MaxFileSizeBytes int64    `json:"maxFileSize"`
	// AddressSpaceBytes, when positive, is added to the address space in use
	// at Enter to make RLIMIT_AS (no memory cgroup). Zero: no RLIMIT_AS.
	AddressSpaceBytes int64  `json:"addressSpace,omitempty"`
	MountProc         bool   `json:"mountProc,omitempty"`
	Syscalls          []Rule `json:"syscalls,omitempty"`
	// Program is the seccomp filter, NewFilter(Syscalls...) as the host
	// assembled it (packed by packProgram), so that the worker need not
	// assemble it again. Empty: the child assembles Syscalls itself.
	Program string `json:"program,omitempty"`
	// SyncFD is the child's end of the pipe on which the host releases it
	// (Handle.Started). KeepFDs is the number of low descriptors (0, 1, 2
	// and the caller's ExtraFiles) that survive Enter; all others are closed.
	SyncFD  int `json:"syncFD"`
	KeepFDs int `json:"keepFDs"`
	// Probe makes Enter report success or the failing layer as JSON on
	// standard output and exit (used by Probe).
	Probe bool `json:"probe,omitempty"`
}

// ChildConfigFromEnv reads the ChildConfig that Prepare put in the
// environment. ok is false when the process was not started by Prepare.
//
//	if cfg, ok, err := jail.ChildConfigFromEnv(); ok {
//		if err == nil {
//			err = jail.Enter(cfg)
//		}
//		if err != nil { /* print it, exit non-zero: never serve unjailed */ }
//	}
func ChildConfigFromEnv() (cfg ChildConfig, ok bool, err error) {
	v, ok := os.LookupEnv(EnvConfig)
	if !ok {
		return cfg, false, nil
	}
	if err := json.Unmarshal([]byte(v), &cfg); err != nil {
		return cfg, true, fmt.Errorf("jail: %s: %w", EnvConfig, err)
	}
	return cfg, true, nil
}

// Layer names one isolation layer, as it appears in error messages.
type Layer string

// The layers, in the order the jail puts them in force.
const (
	LayerOS         Layer = "operating system"
	LayerUserNS     Layer = "user namespaces"
	LayerPIDNS      Layer = "pid namespace"
	LayerNetNS      Layer = "network namespace"
	LayerMountNS    Layer = "mount namespace"
	LayerIPCNS      Layer = "ipc namespace"
	LayerUTSNS      Layer = "uts namespace"
	LayerCgroupNS   Layer = "cgroup namespace"
	LayerCgroup     Layer = "cgroup"
	LayerMount      Layer = "mount"
	LayerPivotRoot  Layer = "pivot_root"
	LayerRlimit     Layer = "rlimit"
	LayerCaps       Layer = "capabilities"
	LayerNoNewPrivs Layer = "no_new_privs"
	LayerSeccomp    Layer = "seccomp"
	LayerProbe      Layer = "probe"
)

// LayerError reports a layer that could not be put in force. When the kernel
// refused it (Unsupported), errors.Is(err, errors.ErrUnsupported) is true.
type LayerError struct {
	Layer       Layer
	Err         error
	Unsupported bool
}

func (e *LayerError) Error() string { return "jail: " + string(e.Layer) + ": " + e.Err.Error() }

// Unwrap returns the cause, and errors.ErrUnsupported when the kernel refused.
func (e *LayerError) Unwrap() []error {
	if e.Unsupported {
		return []error{errors.ErrUnsupported, e.Err}
	}
	return []error{e.Err}
}

// Enforcement says how a resource ceiling is enforced.
type Enforcement string

// The ways a ceiling can be enforced, strongest first.
const (
	EnforcedByCgroup2 Enforcement = "cgroup v2"
	EnforcedByCgroup1 Enforcement = "cgroup v1"
	EnforcedByRlimit  Enforcement = "rlimit"
)

// Capabilities reports which layers the kernel grants to this process.
type Capabilities struct {
	OS string `json:"os"`
	// Namespaces created at clone time.
	UserNS   bool `json:"userNS"`
	PIDNS    bool `json:"pidNS"`
	NetNS    bool `json:"netNS"`
	MountNS  bool `json:"mountNS"`
	IPCNS    bool `json:"ipcNS"`
	UTSNS    bool `json:"utsNS"`
	CgroupNS bool `json:"cgroupNS"` // optional: used when granted
	// Layers the child builds in Enter, verified end to end by a probe child.
	Mounts     bool `json:"mounts"` // tmpfs root, read-only binds
	PivotRoot  bool `json:"pivotRoot"`
	Caps       bool `json:"caps"` // dropping every capability, bounding and ambient sets
	NoNewPrivs bool `json:"noNewPrivs"`
	Seccomp    bool `json:"seccomp"` // filter mode with TSYNC and KILL_PROCESS
	// How MemoryBytes and MaxProcs are enforced (cgroups are optional).
	Memory Enforcement `json:"memory"`
	Procs  Enforcement `json:"procs"`
	// Refused lists the mandatory layers that are not available.
	Refused []*LayerError `json:"-"`
}

// Err returns nil when every mandatory layer is granted, else the refusals
// joined; each wraps errors.ErrUnsupported.
func (c Capabilities) Err() error {
	errs := make([]error, len(c.Refused))
	for i, e := range c.Refused {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// String summarizes c on one line, for logs.
func (c Capabilities) String() string {
	if err := c.Err(); err != nil {
		return "jail unavailable: " + strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	var b strings.Builder
	b.WriteString("jail: namespaces user,pid,net,mount,ipc,uts")
	if c.CgroupNS {
		b.WriteString(",cgroup")
	}
	fmt.Fprintf(&b, "; pivot_root; caps dropped; no_new_privs; seccomp; memory by %s; processes by %s", c.Memory, c.Procs)
	return b.String()
}
