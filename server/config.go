package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/stepbox/stepbox/internal/egress"
	"github.com/stepbox/stepbox/sandbox"
)

// Auth modes of Config.Auth.
const (
	// AuthNone serves every caller without a key. It is the default only
	// while Listen is a loopback address; elsewhere it must be written out.
	AuthNone = "none"
	// AuthKeys requires an API key of a configured tenant on every call
	// (Health and the operational endpoints excepted).
	AuthKeys = "keys"
)

// Defaults of the Config fields whose zero value means one.
const (
	DefaultListen          = "127.0.0.1:8080"
	DefaultMaxRequestBytes = 16 << 20
	DefaultDrainTimeout    = 30 * time.Second
	DefaultLogLevel        = "info"
)

// Config configures a Server and the engine behind it. It is plain data,
// loaded from YAML by LoadConfig (keys are the JSON names below), then
// ApplyEnv, then command-line flags. The zero Config serves a local
// developer: 127.0.0.1:8080, no authentication, one plan with
// sandbox.DefaultLimits.
//
// The engine fields (PoolSize through Egress) are sandbox.Config's; build
// the engine from EngineConfig.
type Config struct {
	// Listen is the TCP address to serve on, host:port. Empty means
	// DefaultListen (loopback only).
	Listen string `json:"listen,omitempty"`
	// TLS serves HTTPS (HTTP/2 and HTTP/1.1) when both files are set;
	// otherwise the server speaks cleartext HTTP/1.1 and HTTP/2 (h2c), which
	// gRPC clients use without TLS.
	TLS TLS `json:"tls,omitzero"`
	// Auth is AuthNone or AuthKeys. Empty means AuthKeys when Tenants are
	// configured; otherwise AuthNone if Listen is a loopback address, and an
	// error elsewhere: a server reachable from the network never runs code
	// without authentication unless the file says `auth: none`.
	Auth string `json:"auth,omitempty"`
	// Tenants are the callers known to the server, each with its API keys,
	// plans and concurrency quota.
	Tenants []Tenant `json:"tenants,omitempty"`
	// MetricsEndpoint says where /metrics is served and to whom: on a
	// listener of its own, with a bearer key, or both. Zero: on Listen, to
	// anyone when Auth is "none", to no one (403) when tenants are
	// configured, since the metrics name every tenant and its outcomes.
	MetricsEndpoint MetricsEndpoint `json:"metrics,omitzero"`

	// PoolSize is how many runs execute at once. Zero: the number of CPUs.
	PoolSize int `json:"poolSize,omitempty"`
	// QueueSize is how many runs may wait for a slot. Zero: 64 per slot;
	// negative: none.
	QueueSize int `json:"queueSize,omitempty"`
	// Warm is how many pre-bootstrapped runtimes are kept ready. Zero: 2;
	// negative: none.
	Warm int `json:"warm,omitempty"`
	// Locales are the locales beyond English that the Intl of JavaScript
	// steps offers, each one of sandbox.IntlLocales (see
	// sandbox.Config.Locales): absent, every one; [] English alone.
	Locales []string `json:"locales,omitzero"`
	// TenantSlots is the most slots (of PoolSize) one tenant's runs may hold
	// at once, and so the same fraction of the queue; its further runs wait,
	// while other tenants' runs take the free slots (see
	// sandbox.Config.TenantSlots). Zero: half the pool, rounded up
	// (sandbox.DefaultTenantSlots), from the first run when two or more
	// tenants are configured, else from the first run of a second tenant
	// name (without auth, clients name their tenant). Negative: no share.
	TenantSlots int `json:"tenantSlots,omitempty"`
	// Workers says which runs may share a worker process (scope tenant,
	// group, run or shared), the standby of unbound workers, when a worker
	// is retired (maxRuns, maxAge, retireAfterLimit) and the host uids of
	// the workers (hostIDs); see sandbox.Workers. Zero: every tenant has
	// workers of its own. The tenant of a run is its API key's.
	Workers sandbox.Workers `json:"workers,omitzero"`
	// EventBuffer is how many events of a run may wait for the client. Zero:
	// 64.
	EventBuffer int `json:"eventBuffer,omitempty"`
	// StallTimeout is how long a run may wait for a client that takes none
	// of its events: an Execute stream whose client has not taken a message
	// for this long is reset, and its run ends ABORTED ("the client did not
	// read its events for 5s"); a run whose events wait unread in a full
	// EventBuffer ends the same way (see sandbox.Config.StallTimeout). Zero:
	// sandbox.DefaultStallTimeout (5 s); negative: none. In YAML, a Go
	// duration such as "5s".
	StallTimeout time.Duration `json:"stallTimeout,omitempty"`
	// Plans is the plan catalogue (see sandbox.Config.Plans).
	Plans map[string]sandbox.Limits `json:"plans,omitempty"`
	// DefaultPlan is the plan of a request that names none and whose tenant
	// names no plans. Empty: "default".
	DefaultPlan string `json:"defaultPlan,omitempty"`
	// Caps clamp every plan (see sandbox.Config.Caps).
	Caps sandbox.Limits `json:"caps,omitzero"`
	// Egress enables fetch: the policy, per-plan narrowing and secrets. Nil:
	// fetch is off. A secret is bound to an origin, {origin:
	// "https://api.example.com:8443", header, value} (see sandbox.Secret;
	// the older {host: api.example.com} means https on port 443). Its value
	// may be written "${NAME}": ApplyEnv reads it from the environment
	// variable NAME, so the file holds no credential.
	Egress *sandbox.Egress `json:"egress,omitempty"`
	// AuditFile, if set, is a file that receives one JSON line per fetch
	// attempt of every run (appended; created 0600). The audit also goes to
	// the log as "fetch" records.
	AuditFile string `json:"auditFile,omitempty"`
	// PlanModules lists, per plan, the modules its requests may use
	// (duckdb, glpk and package names; see sandbox.Config.PlanModules).
	PlanModules map[string][]string `json:"planModules,omitempty"`
	// Defaults are a run's time zone and locale when its request names
	// none, {timeZone: Europe/Paris, locale: fr-FR} (see
	// sandbox.Config.Defaults); empty: UTC and en-US.
	Defaults sandbox.RunDefaults `json:"defaults,omitzero"`
	// PlanDefaults override Defaults per plan (see
	// sandbox.Config.PlanDefaults).
	PlanDefaults map[string]sandbox.RunDefaults `json:"planDefaults,omitempty"`
	// Packages is the npm package catalogue steps may import and its cache
	// (see sandbox.Config.Packages; install it with `stepbox packages
	// install`).
	Packages sandbox.Packages `json:"packages,omitzero"`
	// Python configures Python steps (see sandbox.PythonConfig).
	Python sandbox.PythonConfig `json:"python,omitzero"`

	// MaxRequestBytes caps the body of one request (one message of a
	// stream), in bytes. Zero means DefaultMaxRequestBytes.
	MaxRequestBytes int64 `json:"maxRequestBytes,omitempty"`
	// DrainTimeout is how long a shutdown (SIGTERM) lets runs in flight
	// finish before aborting them. Zero means DefaultDrainTimeout. In YAML, a
	// Go duration such as "30s".
	DrainTimeout time.Duration `json:"drainTimeout,omitempty"`
	// LogLevel is debug, info, warn or error. Empty means info.
	LogLevel string `json:"logLevel,omitempty"`
	// Reflection serves gRPC server reflection (v1 and v1alpha), which
	// lets grpcurl and similar tools call the server without its proto
	// files. Nil means true; false turns it off. (The standard gRPC health
	// service is always served.)
	Reflection *bool `json:"reflection,omitempty"`

	// Logger receives the server's JSON logs. Nil: stderr, at LogLevel,
	// through NewLogger. Whatever the handler, the server cuts the client's
	// text in its records (LogValueBytes, LogMetadataEntries, ...); only
	// NewLogger also bounds whole lines (LogLineBytes).
	Logger *slog.Logger `json:"-"`
	// Metrics is where the server's Prometheus metrics live, and the
	// sandbox.Meter that feeds them: give the same value to the engine's
	// Config.Meter (EngineConfig does). Nil: New makes one, and run
	// counters stay at zero unless the engine reports to it.
	Metrics *Metrics `json:"-"`
	// Version is reported by Health and the metrics.
	Version string `json:"-"`
}

// TLS names a certificate and its key, PEM files.
type TLS struct {
	CertFile string `json:"certFile,omitempty"`
	KeyFile  string `json:"keyFile,omitempty"`
}

// Tenant is one caller of the server.
type Tenant struct {
	// Name identifies the tenant in runs, metering, metrics and logs; the
	// tenant of an authenticated call replaces the request's tenant.
	Name string `json:"name"`
	// Keys are the SHA-256 hashes of the tenant's API keys, as
	// "sha256:HEX" (or bare HEX): 64 hex digits. The keys themselves are
	// never stored; HashKey computes the hash of one.
	Keys []string `json:"keys"`
	// Plans the tenant may use; the first is its default. Empty: only the
	// server's DefaultPlan.
	Plans []string `json:"plans,omitempty"`
	// MaxConcurrent caps the tenant's runs in flight (running or queued);
	// one more is refused with RESOURCE_EXHAUSTED (HTTP 429). Zero: no cap
	// besides the engine's queue.
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
	// Egress narrows the egress policy for the tenant's runs. Nil: the
	// server's (and the plan's) policy.
	Egress *sandbox.EgressPolicy `json:"egress,omitempty"`
}

// HashKey returns the form of an API key stored in Tenant.Keys:
// "sha256:" and the hex SHA-256 of the key. Keys should be long and random
// (32 bytes from a CSPRNG, e.g. `openssl rand -hex 32`): the hash is only
// as strong as the key.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// parseKeyHash decodes a Tenant.Keys entry.
func parseKeyHash(s string) ([32]byte, error) {
	var h [32]byte
	hexPart := strings.TrimPrefix(s, "sha256:")
	if len(hexPart) != 64 {
		return h, fmt.Errorf("want \"sha256:\" and 64 hex digits (a SHA-256 hash, see `stepbox serve --hash-key`), got %d characters", len(hexPart))
	}
	if _, err := hex.Decode(h[:], []byte(hexPart)); err != nil {
		return h, errors.New("not hexadecimal: want \"sha256:\" and 64 hex digits")
	}
	return h, nil
}

// withDefaults returns c with the defaults of its zero fields filled in.
// Auth stays empty when it cannot be decided (Validate reports it).
func (c Config) withDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Auth == "" {
		switch {
		case len(c.Tenants) > 0:
			c.Auth = AuthKeys
		case isLoopback(c.Listen):
			c.Auth = AuthNone
		}
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.LogLevel == "" {
		c.LogLevel = DefaultLogLevel
	}
	if c.DefaultPlan == "" {
		c.DefaultPlan = "default"
	}
	return c
}

// isLoopback reports whether addr's host is a loopback address or
// localhost. An empty host means every interface.
// reflection reports whether gRPC server reflection is served.
func (c Config) reflection() bool { return c.Reflection == nil || *c.Reflection }

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// anyHost reports whether host, of a listen address, means every interface.
func anyHost(host string) bool { return host == "" || host == "0.0.0.0" || host == "::" }

// Validate reports every problem of c together, each naming its field as
// it is written in the YAML file ("tenants[0].keys[1]: ..."). It makes the
// engine's checks of c's engine fields, so that a Config it accepts starts.
// A secret value still written "${NAME}" is a problem: ApplyEnv replaces
// it when the variable NAME is set.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if _, port, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "%q is not host:port", c.Listen)
	} else if port == "" {
		bad("listen", "%q has no port", c.Listen)
	} else if _, err := net.LookupPort("tcp", port); err != nil {
		bad("listen", "%q: port %q is not a number from 0 to 65535", c.Listen, port)
	}
	if ml := c.MetricsEndpoint.Listen; ml != "" {
		if host, port, err := net.SplitHostPort(ml); err != nil {
			bad("metrics.listen", "%q is not host:port", ml)
		} else if port == "" {
			bad("metrics.listen", "%q has no port", ml)
		} else if _, err := net.LookupPort("tcp", port); err != nil {
			bad("metrics.listen", "%q: port %q is not a number from 0 to 65535", ml, port)
		} else if lhost, lport, err := net.SplitHostPort(c.Listen); err == nil && lport == port && port != "0" &&
			(lhost == host || anyHost(lhost) || anyHost(host)) {
			bad("metrics.listen", "%q is the address of listen %q: give the metrics a port of their own", ml, c.Listen)
		}
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		bad("tls", "set both certFile and keyFile, or neither")
	}
	switch c.Auth {
	case AuthKeys:
		if len(c.Tenants) == 0 {
			bad("auth", "%q needs at least one tenant with keys", AuthKeys)
		}
	case AuthNone:
		if len(c.Tenants) > 0 {
			bad("auth", "%q, but tenants are configured: their keys would be ignored (remove auth, or the tenants)", AuthNone)
		}
	case "":
		bad("auth", "listen %q is not a loopback address: configure tenants with keys, or write `auth: none` to serve without authentication", c.Listen)
	default:
		bad("auth", "%q is not %q or %q", c.Auth, AuthNone, AuthKeys)
	}
	if c.PoolSize < 0 {
		bad("poolSize", "%d is negative", c.PoolSize)
	}
	if c.EventBuffer < 0 {
		bad("eventBuffer", "%d is negative", c.EventBuffer)
	}
	for i, l := range c.Locales {
		if !slices.Contains(sandbox.IntlLocales(), l) {
			bad(fmt.Sprintf("locales[%d]", i), "%q is not one of %s", l, strings.Join(sandbox.IntlLocales(), ", "))
		}
	}
	if c.PoolSize > 0 && c.TenantSlots > c.PoolSize {
		bad("tenantSlots", "%d is more than poolSize (%d): write -1 for no share", c.TenantSlots, c.PoolSize)
	}
	if err := c.Workers.Validate(c.PoolSize); err != nil {
		errs = append(errs, egress.Unjoin(err)...) // each names its field: "workers.scope: ..."
	}
	if c.MaxRequestBytes < 0 {
		bad("maxRequestBytes", "%d is negative", c.MaxRequestBytes)
	}
	if c.DrainTimeout < 0 {
		bad("drainTimeout", "%v is negative", c.DrainTimeout)
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		bad("logLevel", "%v", err)
	}

	// Plans, as the engine will see them.
	plans := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(c.Plans)) {
		l := c.Plans[name]
		plans[name] = true
		if name == "" {
			bad("plans", "a plan has an empty name")
		}
		for _, f := range limitFields(l) {
			if f.v < 0 {
				bad("plans."+name+"."+f.name, "%d is negative", f.v)
			}
		}
	}
	for _, f := range limitFields(c.Caps) {
		if f.v < 0 {
			bad("caps."+f.name, "%d is negative", f.v)
		}
	}
	if len(c.Plans) == 0 {
		plans[c.DefaultPlan] = true
	} else if !plans[c.DefaultPlan] {
		bad("defaultPlan", "%q is not in plans", c.DefaultPlan)
	}

	// The engine's checks of planModules and packages, each its own line
	// ("planModules.free[0]: unknown module ...").
	if err := c.EngineConfig().ValidateModules(); err != nil {
		errs = append(errs, egress.Unjoin(err)...)
	}
	if err := c.Defaults.Validate(); err != nil {
		for _, e := range egress.Unjoin(err) {
			errs = append(errs, fmt.Errorf("defaults.%w", e)) // "defaults.timeZone: ..."
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.PlanDefaults)) {
		if !plans[name] {
			bad("planDefaults."+name, "%q is not in plans", name)
		}
		if err := c.PlanDefaults[name].Validate(); err != nil {
			for _, e := range egress.Unjoin(err) {
				errs = append(errs, fmt.Errorf("planDefaults.%s.%w", name, e))
			}
		}
	}
	if err := c.Python.Validate(); err != nil {
		for _, e := range egress.Unjoin(err) {
			errs = append(errs, fmt.Errorf("python.%w", e)) // "python.packages: ..."
		}
	}
	if c.Egress == nil && c.AuditFile != "" {
		bad("auditFile", "set, but egress is off: there is nothing to audit")
	}

	seenTenant := map[string]int{}
	seenKey := map[[32]byte]string{}
	metricsKeys := map[[32]byte]string{}
	for j, k := range c.MetricsEndpoint.Keys {
		at := fmt.Sprintf("metrics.keys[%d]", j)
		h, err := parseKeyHash(k)
		if err != nil {
			bad(at, "%v", err)
			continue
		}
		if other, dup := metricsKeys[h]; dup {
			bad(at, "the same key as %s", other)
			continue
		}
		metricsKeys[h] = at
	}
	for i, t := range c.Tenants {
		at := fmt.Sprintf("tenants[%d]", i)
		if t.Name == "" {
			bad(at+".name", "empty")
		} else if j, dup := seenTenant[t.Name]; dup {
			bad(at+".name", "%q is also tenants[%d]", t.Name, j)
		} else {
			seenTenant[t.Name] = i
		}
		if len(t.Keys) == 0 {
			bad(at+".keys", "no key: the tenant could never call")
		}
		for j, k := range t.Keys {
			h, err := parseKeyHash(k)
			if err != nil {
				bad(fmt.Sprintf("%s.keys[%d]", at, j), "%v", err)
				continue
			}
			if other, dup := seenKey[h]; dup {
				bad(fmt.Sprintf("%s.keys[%d]", at, j), "the same key as %s", other)
				continue
			}
			if m, dup := metricsKeys[h]; dup {
				bad(fmt.Sprintf("%s.keys[%d]", at, j), "the same key as %s: the tenant could read every tenant's metrics", m)
			}
			seenKey[h] = fmt.Sprintf("%s.keys[%d]", at, j)
		}
		for j, p := range t.Plans {
			if !plans[p] {
				bad(fmt.Sprintf("%s.plans[%d]", at, j), "%q is not in plans", p)
			}
		}
		if t.MaxConcurrent < 0 {
			bad(at+".maxConcurrent", "%d is negative", t.MaxConcurrent)
		}
		if t.Egress != nil {
			if err := egress.Policy(*t.Egress).Validate(); err != nil {
				bad(at+".egress", "%v", err)
			}
		}
	}
	if e := c.Egress; e != nil {
		if err := egress.Policy(e.Policy).Validate(); err != nil {
			bad("egress.policy", "%v", err)
		}
		for _, name := range slices.Sorted(maps.Keys(e.Plans)) {
			p := e.Plans[name]
			if !plans[name] {
				bad("egress.plans."+name, "%q is not in plans", name)
			}
			if err := egress.Policy(p).Validate(); err != nil {
				bad("egress.plans."+name, "%v", err)
			}
		}
		for i, s := range e.Secrets {
			at := fmt.Sprintf("egress.secrets[%d]", i)
			if name, ok := secretEnvName(s.Value); ok {
				bad(at+".value", "%q was not replaced: the environment variable %s is not set, or is empty", s.Value, name)
				s.Value = "${unset}" // reported; check the rest
			} else if s.Value == "" {
				bad(at+".value", "empty: write the value, or ${NAME} to read it from the environment variable NAME")
				s.Value = "${empty}"
			}
			// The engine's own checks, each as its own line: origin,
			// header, value.
			if err := s.Validate(); err != nil {
				for _, e := range egress.Unjoin(err) {
					bad(at, "%v", e)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// EngineConfig returns the sandbox.Config of the engine to serve: the
// engine fields of c, with Metrics as its Meter. With two or more tenants
// configured and TenantSlots zero, the engine's TenantSlots is
// sandbox.DefaultTenantSlots, so that the share applies from the first
// run.
func (c Config) EngineConfig() sandbox.Config {
	ec := sandbox.Config{
		PoolSize:     c.PoolSize,
		QueueSize:    c.QueueSize,
		Warm:         c.Warm,
		Locales:      c.Locales,
		Workers:      c.Workers,
		TenantSlots:  c.TenantSlots,
		EventBuffer:  c.EventBuffer,
		StallTimeout: c.StallTimeout,
		Caps:         c.Caps,
		Plans:        c.Plans,
		DefaultPlan:  c.DefaultPlan,
		Egress:       c.Egress,
		PlanModules:  c.PlanModules,
		Defaults:     c.Defaults,
		PlanDefaults: c.PlanDefaults,
		Packages:     c.Packages,
		Python:       c.Python,
		Logger:       c.Logger,
	}
	if c.Metrics != nil {
		ec.Meter = c.Metrics
	}
	if ec.TenantSlots == 0 && len(c.Tenants) > 1 {
		ec.TenantSlots = sandbox.DefaultTenantSlots(c.PoolSize)
	}
	return ec
}

// stallTimeout is the stall limit of c's Execute streams; zero means none.
func (c Config) stallTimeout() time.Duration {
	switch {
	case c.StallTimeout == 0:
		return sandbox.DefaultStallTimeout
	case c.StallTimeout < 0:
		return 0
	}
	return c.StallTimeout
}

type namedInt struct {
	name string
	v    int
}

// limitFields lists l's fields with their JSON names.
func limitFields(l sandbox.Limits) []namedInt {
	return []namedInt{
		{"memoryMb", l.MemoryMB}, {"cpuMs", l.CPUMs}, {"wallMs", l.WallMs},
		{"maxCodeBytes", l.MaxCodeBytes}, {"maxResultBytes", l.MaxResultBytes},
		{"maxDataRequests", l.MaxDataRequests}, {"maxDataBytes", l.MaxDataBytes},
		{"maxStatusEvents", l.MaxStatusEvents}, {"maxConsoleEvents", l.MaxConsoleEvents},
		{"maxConsoleBytes", l.MaxConsoleBytes}, {"maxFetchRequests", l.MaxFetchRequests},
		{"maxFetchBytes", l.MaxFetchBytes},
	}
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	switch strings.ToLower(s) {
	case "debug", "info", "warn", "error":
		return l, l.UnmarshalText([]byte(s))
	}
	return l, fmt.Errorf("%q is not debug, info, warn or error", s)
}
