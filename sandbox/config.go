package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"time"

	"github.com/stepbox/stepbox/internal/jsrt"
)

// Config configures an Engine. It is plain data: the zero value of each
// field means the documented default, and New validates it once, reporting
// every problem together.
type Config struct {
	// Isolation says where JavaScript steps run: IsolationProcess (the
	// default, "" means it) or IsolationInProcess. Python always runs in
	// its own jailed processes.
	Isolation Isolation `json:"isolation,omitempty"`
	// UnsafeNoJail runs process-isolated workers without the jail, where
	// the kernel refuses it. For development only: a worker then has the
	// host's privileges. Without it, an engine whose jail cannot be set up
	// refuses to start.
	UnsafeNoJail bool `json:"unsafeNoJail,omitempty"`
	// Grace is how long a worker may outlive a run's wall-clock limit
	// before it is killed and the run ends LIMIT_EXCEEDED (limit "time").
	// Zero means DefaultGrace.
	Grace time.Duration `json:"grace,omitempty"`
	// PoolSize is how many runs execute at once (and, with
	// IsolationProcess, how many workers run). Zero means the number of
	// CPUs. Not settable per request.
	PoolSize int `json:"poolSize,omitempty"`
	// QueueSize is how many accepted runs may wait for a free slot; one more
	// is refused at once with UNAVAILABLE. Zero means 64 per slot; negative
	// means no waiting at all.
	QueueSize int `json:"queueSize,omitempty"`
	// Warm is how many pre-bootstrapped runtimes are kept ready ahead of
	// demand. Zero means 2; negative means none (each run builds its own).
	Warm int `json:"warm,omitempty"`
	// Workers says which runs may share a worker process and when a
	// worker is replaced; the zero value gives each tenant workers of its
	// own (see Workers). Not settable per request.
	Workers Workers `json:"workers,omitzero"`
	// TenantSlots is the most slots one tenant's runs (Request.Tenant; ""
	// is a tenant too) may hold at once: the tenant's share of the pool.
	// Its further runs wait in the queue, FIFO, while other tenants' runs
	// take the free slots; and it may fill at most the same fraction of the
	// queue (QueueSize × TenantSlots ÷ PoolSize, rounded up), one more run
	// being refused at once with UNAVAILABLE. The share is a hard cap: a
	// slot may stay idle while the tenant's runs wait, so that another
	// tenant's run never waits for one of them to end.
	//
	// Zero means DefaultTenantSlots (half the pool, rounded up), from the
	// first run of a second tenant on: an engine that only ever serves one
	// tenant lets it use every slot. A positive value applies from the
	// first run; more than PoolSize is an error, PoolSize caps nothing.
	// Negative means no share: one tenant may hold every slot. Not
	// settable per request. See RATIONALE.md, "Why is a tenant's share of
	// the pool a hard cap?".
	TenantSlots int `json:"tenantSlots,omitempty"`
	// EventBuffer is how many events of a run may wait for the caller to
	// read them before the run blocks. Zero means 64.
	EventBuffer int `json:"eventBuffer,omitempty"`
	// StallTimeout is how long a run may be blocked on its caller: when it
	// has an event to deliver, EventBuffer events already wait unread, and
	// the caller takes none for StallTimeout, the run ends ABORTED
	// (wrapping ErrStalled) whatever its limits, and its slot is free. The
	// clock runs only while the run waits for room in the full buffer and
	// starts again at every event the caller takes, so a slow reader is
	// never stalled as long as it takes an event every StallTimeout.
	// Answering data requests does not count: a step waiting for an
	// answer ends at its wall-clock limit. Zero means DefaultStallTimeout;
	// negative means no stall limit (a run blocked on its caller ends at
	// its wall-clock limit with TIMEOUT). Not settable per request.
	StallTimeout time.Duration `json:"stallTimeout,omitempty"`
	// Caps clamp every plan, field by field. Zero fields mean DefaultCaps.
	Caps Limits `json:"caps,omitempty"`
	// Plans is the plan catalogue: named limit sets. A request names one
	// and may only lower its limits. Zero fields of a plan mean
	// DefaultLimits. A nil or empty catalogue means one plan, named
	// DefaultPlan, with DefaultLimits.
	Plans map[string]Limits `json:"plans,omitempty"`
	// DefaultPlan is the plan of a request that names none. Empty means
	// "default".
	DefaultPlan string `json:"defaultPlan,omitempty"`
	// Meter receives one record per finished run. Nil means none.
	Meter Meter `json:"-"`
	// Logger receives the engine's operational records: worker starts,
	// deaths, kills and replacements, with the worker's pid and the reason.
	// Step output never goes here (it is console events). Nil means none.
	Logger *slog.Logger `json:"-"`
	// Python configures Python steps; the zero value uses the system's
	// python3, started on the first Python run.
	Python PythonConfig `json:"python,omitempty"`
	// Egress enables the guest's fetch through the host's FetchProxy. Nil
	// means fetch is off: every fetch rejects with a TypeError.
	Egress *Egress `json:"egress,omitempty"`
	// PlanModules lists, per plan name, the modules the plan's requests may
	// use: built-in modules (ModuleDuckDB, ModuleGLPK) and names of
	// Packages.Catalogue. A request for another, by Request.Modules or by
	// an import, is refused with VALIDATION. A plan without an entry (and
	// every plan, when PlanModules is nil) may use them all; an empty list
	// allows none.
	PlanModules map[string][]string `json:"planModules,omitempty"`
	// Defaults are a run's time zone and locale when its request names
	// none: see RunDefaults. The zero value means UTC and en-US.
	Defaults RunDefaults `json:"defaults,omitempty"`
	// PlanDefaults override Defaults, field by field, for the requests of
	// a plan (by plan name). A name not in Plans is an error.
	PlanDefaults map[string]RunDefaults `json:"planDefaults,omitempty"`
	// Packages configures the npm packages that JavaScript and TypeScript
	// steps may import; the zero value is DefaultPackages in the default
	// cache directory.
	Packages Packages `json:"packages,omitempty"`
	// Locales are the locales beyond English that the Intl of JavaScript
	// and TypeScript steps offers (DateTimeFormat, NumberFormat,
	// RelativeTimeFormat, ListFormat and the toLocale*String methods),
	// each one of IntlLocales; a language brings the binary's regional
	// locales of it ("de": de, de-AT, de-CH). A step's locale that is not
	// offered resolves as ECMA-402's lookup does, to its parent or to
	// en-US (and resolvedOptions().locale says which). Nil means every
	// locale of IntlLocales; empty means English alone. An unknown locale
	// is an error of New. Not settable per request. PluralRules and
	// Collator offer every locale golang.org/x/text has, whatever this
	// says.
	Locales []string `json:"locales,omitzero"`
}

// IntlLocales returns the locales the Intl of JavaScript steps has data
// for, English ones first: what Config.Locales chooses from. Each is a
// BCP 47 tag as CLDR names it (en, en-GB, de, de-AT, zh-Hant, ...).
func IntlLocales() []string { return jsrt.IntlLocales() }

const (
	defaultPlanName    = "default"
	defaultEventBuffer = 64
)

// DefaultStallTimeout is how long a run may be blocked on a caller that
// does not read its events, when Config.StallTimeout is zero: half of
// DefaultLimits' wall-clock limit.
const DefaultStallTimeout = 5 * time.Second

// DefaultTenantSlots returns the share of a pool of poolSize slots that
// one tenant may hold when Config.TenantSlots is zero: half the slots,
// rounded up (1 of 1 or 2, 2 of 3 or 4, ...), so that whatever one tenant
// does, the others have the rest. A poolSize of zero means the number of
// CPUs, as in Config.PoolSize.
func DefaultTenantSlots(poolSize int) int {
	if poolSize <= 0 {
		poolSize = runtime.NumCPU()
	}
	return (poolSize + 1) / 2
}

// resolved is a validated Config with its defaults filled in.
type resolved struct {
	Config
	plans map[string]Limits // effective: defaults filled, caps applied
	// planDefaults are each plan's RunDefaults, the engine's filled in,
	// TimeZone never empty.
	planDefaults map[string]RunDefaults
	modules      *moduleSet
	// share is the most slots one tenant holds once the share applies: from
	// the first run if shareFromStart, else from a second tenant's.
	share          int
	shareFromStart bool
	workers        workerPolicy
}

func (c Config) resolve() (*resolved, error) {
	var errs []error
	r := &resolved{Config: c, plans: map[string]Limits{}}
	if r.PoolSize < 0 {
		errs = append(errs, fmt.Errorf("poolSize=%d is negative", r.PoolSize))
	}
	if r.PoolSize == 0 {
		r.PoolSize = runtime.NumCPU()
	}
	if r.QueueSize == 0 {
		r.QueueSize = 64 * r.PoolSize
	}
	if r.QueueSize < 0 {
		r.QueueSize = 0
	}
	switch {
	case c.TenantSlots > 0 && c.PoolSize > 0 && c.TenantSlots > c.PoolSize:
		errs = append(errs, fmt.Errorf("tenantSlots=%d is more than poolSize=%d (a negative tenantSlots means no share)", c.TenantSlots, c.PoolSize))
	case c.TenantSlots > 0:
		r.share, r.shareFromStart = min(c.TenantSlots, r.PoolSize), true
	case c.TenantSlots == 0:
		r.share = DefaultTenantSlots(r.PoolSize)
	default:
		r.share, r.shareFromStart = r.PoolSize, true
	}
	if r.PoolSize > 0 { // a negative one is reported above
		var werrs []error
		r.workers, werrs = c.resolveWorkers(r.PoolSize)
		errs = append(errs, werrs...)
	}
	if r.StallTimeout == 0 {
		r.StallTimeout = DefaultStallTimeout
	}
	if r.EventBuffer < 0 {
		errs = append(errs, fmt.Errorf("eventBuffer=%d is negative", r.EventBuffer))
	}
	if r.EventBuffer == 0 {
		r.EventBuffer = defaultEventBuffer
	}
	if err := validateLimits(c.Caps, "caps"); err != nil {
		errs = append(errs, err)
	}
	caps := limitsOrDefault(c.Caps, DefaultCaps)
	if r.DefaultPlan == "" {
		r.DefaultPlan = defaultPlanName
	}
	plans := c.Plans
	if len(plans) == 0 {
		plans = map[string]Limits{r.DefaultPlan: {}}
	}
	names := make([]string, 0, len(plans))
	for name := range plans {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		l := plans[name]
		if name == "" {
			errs = append(errs, errors.New("plans: a plan has an empty name"))
			continue
		}
		if err := validateLimits(l, "plans."+name); err != nil {
			errs = append(errs, err)
			continue
		}
		r.plans[name] = clampLimits(limitsOrDefault(l, DefaultLimits), caps)
	}
	if _, ok := r.plans[r.DefaultPlan]; !ok {
		errs = append(errs, fmt.Errorf("defaultPlan=%q is not in plans", r.DefaultPlan))
	}
	if r.Isolation == "" {
		r.Isolation = IsolationProcess
	}
	if r.Grace < 0 {
		errs = append(errs, fmt.Errorf("grace=%v is negative", r.Grace))
	}
	if r.Grace == 0 {
		r.Grace = DefaultGrace
	}
	if r.Meter == nil {
		r.Meter = noMeter{}
	}
	if c.Locales != nil {
		if err := jsrt.CheckLocales(c.Locales); err != nil {
			errs = append(errs, fmt.Errorf("locales: %w", err))
		}
	}
	errs = append(errs, c.resolveModules(r)...)
	errs = append(errs, c.resolveDefaults(r)...)
	if err := c.Python.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("python: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("stepbox: invalid config: %w", err)
	}
	return r, nil
}
