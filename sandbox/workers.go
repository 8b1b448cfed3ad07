package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Workers says which runs may share a worker process, and when a worker
// is replaced. A worker (with its Python zygote and its module sessions)
// keeps the heaps of QuickJS, CPython and the native libraries from run to
// run, so a step that broke out of its runtime (a memory-safety bug, which
// the jail contains but does not prevent) would see the code, input, data
// and results of the runs the process serves next. The policy says whose
// runs those may be.
//
//	cfg.Workers = sandbox.Workers{
//		Scope:  sandbox.ScopeGroup,
//		Groups: map[string]string{"acme": "paid", "globex": "paid"},
//	}
//
// The zero value is the default: a worker serves one tenant until it is
// retired, a standby of unbound workers absorbs switches between tenants,
// a worker is retired after DefaultMaxRuns runs, after DefaultMaxAge, and
// after a run that crossed a limit, and each worker has a host uid of its
// own when the host is root. The policy covers every worker process of
// the engine: with IsolationInProcess, those of Python steps.
type Workers struct {
	// Scope says which runs may share a worker: ScopeTenant (the default;
	// "" means it), ScopeGroup, ScopeRun or ScopeShared.
	Scope WorkerScope `json:"scope,omitempty"`
	// Groups maps tenant names (Request.Tenant) to group names for
	// ScopeGroup: the tenants of one group share workers. A tenant not
	// listed is a group of its own. An error with another scope.
	Groups map[string]string `json:"groups,omitempty"`
	// Standby is how many started workers beyond PoolSize are kept bound
	// to no group, so that a run whose group has no idle worker rarely
	// waits for a process start: the run binds one, and the least recently
	// used idle worker of another group is retired so that its slot starts
	// a fresh unbound one. Zero means DefaultStandby(PoolSize) (none with
	// ScopeShared, where no run waits for a group); negative means none.
	Standby int `json:"standby,omitempty"`
	// MaxRuns retires a worker after this many runs. Zero means
	// DefaultMaxRuns; negative means no limit. ScopeRun is one run per
	// worker, and more is an error.
	MaxRuns int `json:"maxRuns,omitempty"`
	// MaxAge retires a worker once it is this old: when idle, or at the
	// end of its run. Zero means DefaultMaxAge; negative means never.
	MaxAge time.Duration `json:"maxAge,omitempty"`
	// RetireAfterLimit retires a worker after a run that ended OOM,
	// TIMEOUT, CRASHED or LIMIT_EXCEEDED (limit "time"): whatever such a
	// run did to the process does not reach the next. Nil means true.
	RetireAfterLimit *bool `json:"retireAfterLimit,omitempty"`
	// HostIDs gives each worker slot (PoolSize + Standby of them) a host
	// uid and gid of its own, used by the worker and its zygote, so that
	// workers cannot signal or trace each other even past a pid-namespace
	// escape. It applies when the host runs as root with the jail, and is
	// ignored otherwise (an unprivileged host can map only its own uid;
	// UnsafeNoJail has no jail). Choose ids no user or container of the
	// host has.
	//
	// The zero value means PoolSize + Standby ids from DefaultHostUID,
	// and for each further engine of the process the ids after the last
	// engine's, so that no two engines share one; if the process's user
	// namespace does not map them (a container whose root has 65536 ids),
	// every worker runs as the jail's default (65534), and the engine logs
	// why (to Config.Logger) when it starts its workers. A First without a
	// Count means PoolSize + Standby ids. A Count must cover PoolSize +
	// Standby; a negative Count means no range: every worker runs as
	// 65534. A range set here that the user namespace does not map is an
	// error.
	HostIDs IDRange `json:"hostIDs,omitzero"`
}

// WorkerScope says which runs may share a worker process (Workers.Scope).
type WorkerScope string

const (
	// ScopeTenant, the default, gives a worker to one tenant
	// (Request.Tenant; "" is a tenant too) until it is retired.
	ScopeTenant WorkerScope = "tenant"
	// ScopeGroup gives a worker to one group of tenants (Workers.Groups),
	// for tenants of equal trust; a tenant in no group is a group of its
	// own.
	ScopeGroup WorkerScope = "group"
	// ScopeRun starts a fresh worker for every run: the most distrustful
	// policy, at the cost of a process start per run (the standby
	// absorbs it while runs come no faster than workers start).
	ScopeRun WorkerScope = "run"
	// ScopeShared lets any run use any worker, whatever its tenant: a
	// worker then serves every tenant in turn. Only for an engine whose
	// tenants trust each other.
	ScopeShared WorkerScope = "shared"
)

// IDRange is a range of host uids, and the same gids: First, First+1, ...,
// First+Count-1.
type IDRange struct {
	First int `json:"first,omitempty"`
	Count int `json:"count,omitempty"`
}

// Defaults of the Workers policy.
const (
	// DefaultMaxRuns bounds the runs of one worker when Workers.MaxRuns is
	// zero: leaks and whatever a run could corrupt cannot accumulate past
	// it, and at that many runs a worker start costs well under 0.1% of
	// the work.
	DefaultMaxRuns = 10_000
	// DefaultMaxAge bounds a worker's life when Workers.MaxAge is zero,
	// however few runs it serves.
	DefaultMaxAge = time.Hour
	// DefaultHostUID is the first host uid (and gid) of the default
	// Workers.HostIDs range: far above the ids of users, system accounts
	// and the subordinate ranges that /etc/subuid hands out from 100000,
	// and below 2^31, which some tools mishandle.
	DefaultHostUID = 1_900_000_000
)

// maxHostID is the largest uid a range may hold, as internal/pool checks:
// 2^32-1 is (uid_t)-1, "no id", and one below it stays free.
const maxHostID = 1<<32 - 3

// DefaultStandby returns the standby of a pool of poolSize slots when
// Workers.Standby is zero: 1 for 1 to 3 slots, 2 from 4. One unbound
// worker absorbs one switch of group without a process start, and its
// slot starts the next while the run executes. A larger pool sees
// switches arrive together more often, but each standby worker is a
// process kept up for nothing until a switch, so the default does not grow
// with the pool: an engine whose runs switch tenants often sets more, or
// groups tenants of equal trust (a worker start costs about 90 ms of CPU;
// README, Benchmarks). A poolSize of zero means the number of CPUs, as in
// Config.PoolSize.
func DefaultStandby(poolSize int) int {
	if poolSize <= 0 {
		poolSize = runtime.NumCPU()
	}
	if poolSize >= 4 {
		return 2
	}
	return 1
}

// Validate reports every problem of w for an engine of poolSize slots
// (zero: the number of CPUs), each naming its field as it is written in
// a configuration file ("workers.hostIDs.count: ..."). New makes the same
// checks, and also that an explicit HostIDs range is mapped in the
// process's user namespace when the host is root.
func (w Workers) Validate(poolSize int) error {
	return errors.Join(w.problems(poolSize)...)
}

func (w Workers) problems(poolSize int) []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("workers.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	scope := w.scope()
	switch scope {
	case ScopeTenant, ScopeGroup, ScopeRun, ScopeShared:
	default:
		bad("scope", "%q is not %q, %q, %q or %q", w.Scope, ScopeTenant, ScopeGroup, ScopeRun, ScopeShared)
	}
	switch {
	case scope == ScopeGroup && len(w.Groups) == 0:
		bad("groups", "none, with scope %q: every tenant would be a group of its own, which is scope %q", ScopeGroup, ScopeTenant)
	case scope != ScopeGroup && len(w.Groups) > 0:
		bad("groups", "set, but scope is %q: groups apply only to scope %q", scope, ScopeGroup)
	}
	for _, tenant := range slices.Sorted(maps.Keys(w.Groups)) {
		if w.Groups[tenant] == "" {
			bad(fmt.Sprintf("groups[%q]", tenant), "empty group name")
		}
	}
	if scope == ScopeRun && w.MaxRuns > 1 {
		bad("maxRuns", "%d, but scope %q is one run per worker", w.MaxRuns, ScopeRun)
	}
	ids := w.HostIDs
	switch {
	case ids.First < 0:
		bad("hostIDs.first", "%d is negative", ids.First)
	case ids.Count > 0 && ids.First == 0:
		bad("hostIDs.first", "not set, with count %d: give the first uid of the range", ids.Count)
	case ids.First > 0 && ids.Count >= 0:
		slots := w.slots(poolSize)
		n := ids.Count
		if n == 0 {
			n = slots
		}
		if n < slots {
			bad("hostIDs.count", "%d does not cover the %d worker slots (poolSize %d + standby %d)", n, slots, orCPUs(poolSize), slots-orCPUs(poolSize))
		}
		if int64(ids.First)+int64(n)-1 > maxHostID {
			bad("hostIDs", "%d+%d goes past the largest uid (%d)", ids.First, n, int64(maxHostID))
		}
	}
	return errs
}

func orCPUs(poolSize int) int {
	if poolSize <= 0 {
		return runtime.NumCPU()
	}
	return poolSize
}

func (w Workers) scope() WorkerScope {
	if w.Scope == "" {
		return ScopeTenant
	}
	return w.Scope
}

// standby is w's standby in effect.
func (w Workers) standby(poolSize int) int {
	switch {
	case w.Standby < 0:
		return 0
	case w.Standby > 0:
		return w.Standby
	case w.scope() == ScopeShared:
		return 0
	}
	return DefaultStandby(poolSize)
}

// slots is how many workers a pool of poolSize runs at once keeps.
func (w Workers) slots(poolSize int) int { return orCPUs(poolSize) + w.standby(poolSize) }

// workerPolicy is a validated Workers with its defaults filled in, in the
// pool's terms.
type workerPolicy struct {
	scope            WorkerScope
	groups           map[string]string // tenant → group, with ScopeGroup
	standby          int
	maxRuns          int           // 0: no limit
	maxAge           time.Duration // 0: never
	retireAfterLimit bool
	// hostIDs is the range the workers use; defaultIDs says to take one
	// from DefaultHostUID when the pool starts instead. Both zero: none.
	hostIDs    IDRange
	defaultIDs bool
}

// resolveWorkers validates c.Workers and fills in its defaults. poolSize
// is the engine's, resolved.
func (c Config) resolveWorkers(poolSize int) (workerPolicy, []error) {
	w := c.Workers
	errs := w.problems(poolSize)
	p := workerPolicy{
		scope:            w.scope(),
		groups:           maps.Clone(w.Groups),
		standby:          w.standby(poolSize),
		maxRuns:          w.MaxRuns,
		maxAge:           w.MaxAge,
		retireAfterLimit: w.RetireAfterLimit == nil || *w.RetireAfterLimit,
	}
	switch {
	case p.scope == ScopeRun:
		p.maxRuns = 1
	case p.maxRuns == 0:
		p.maxRuns = DefaultMaxRuns
	case p.maxRuns < 0:
		p.maxRuns = 0
	}
	switch {
	case p.maxAge == 0:
		p.maxAge = DefaultMaxAge
	case p.maxAge < 0:
		p.maxAge = 0
	}
	if c.UnsafeNoJail || os.Geteuid() != 0 || w.HostIDs.Count < 0 {
		return p, errs
	}
	switch ids := w.HostIDs; {
	case ids == IDRange{}:
		p.defaultIDs = true
	case len(errs) == 0:
		if ids.Count == 0 {
			ids.Count = poolSize + p.standby
		}
		if err := idsMapped(ids); err != nil {
			errs = append(errs, fmt.Errorf("workers.hostIDs: %w", err))
		}
		p.hostIDs = ids
	}
	return p, errs
}

// group returns the pool group of a run of tenant: the runs that may share
// its worker. The prefixes keep a tenant and a group of the same name
// apart.
func (p *workerPolicy) group(tenant, runID string) string {
	switch p.scope {
	case ScopeShared:
		return ""
	case ScopeRun:
		return "r:" + runID // and its worker serves one run
	case ScopeGroup:
		if g, ok := p.groups[tenant]; ok {
			return "g:" + g
		}
	}
	return "t:" + tenant
}

// defaultIDs hands out the default host id ranges: each pool of the
// process gets the ids after the last one's, so that no two engines of a
// process give their workers the same ids.
var defaultIDs struct {
	mu   sync.Mutex
	next int // guarded by mu: the first id of the next range, past DefaultHostUID
}

// takeDefaultIDs returns the next count default host ids, or why there
// are none (the user namespace does not map them).
func takeDefaultIDs(count int) (IDRange, error) {
	defaultIDs.mu.Lock()
	defer defaultIDs.mu.Unlock()
	r := IDRange{First: DefaultHostUID + defaultIDs.next, Count: count}
	if int64(r.First)+int64(count)-1 > maxHostID {
		return IDRange{}, fmt.Errorf("the default host ids from %d are used up by the engines of this process", DefaultHostUID)
	}
	if err := idsMapped(r); err != nil {
		return IDRange{}, err
	}
	defaultIDs.next += count
	return r, nil
}

// idsMapped reports whether every id of r is mapped, as a uid and as a
// gid, in the user namespace of this process: the jail can map a worker's
// ids only to ids its parent has. A system without /proc/self/uid_map (not
// Linux) has no jail to map them.
func idsMapped(r IDRange) error {
	for _, f := range []string{"/proc/self/uid_map", "/proc/self/gid_map"} {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !inMap(string(b), int64(r.First), int64(r.Count)) {
			return fmt.Errorf("ids %d to %d are not all mapped in this process's user namespace (%s)", r.First, r.First+r.Count-1, f)
		}
	}
	return nil
}

// inMap reports whether ids first..first+count-1 lie in one extent of an
// id map ("inside outside length" lines).
func inMap(m string, first, count int64) bool {
	for _, line := range strings.Split(m, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		inside, err1 := strconv.ParseInt(f[0], 10, 64)
		n, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 == nil && err2 == nil && first >= inside && first+count <= inside+n {
			return true
		}
	}
	return false
}
