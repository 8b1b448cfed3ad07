package sandbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/modules/npm"
)

// The built-in modules a Request may list in Modules (DESIGN decision 7).
// Each is a global of that name in the run's guest, and exists only in
// runs that list it:
//
//	const db = await duckdb.open()                // DuckDB, in-memory, one per run
//	await db.load("sales", rows)                  // an array of objects
//	const top = await db.query("SELECT region, sum(amount) AS total FROM sales WHERE day >= ? GROUP BY ALL", since)
//	const r = await glpk.solve(model, {mipgap: 0}) // GLPK, glpk.js's model and result
//
// Python steps get the same globals, with the same calls and results
// (db = await duckdb.open(); rows = await db.query(sql, *params)); their
// calls run in the jailed worker whose zygote runs the step, with either
// isolation (see python.go).
const (
	ModuleDuckDB = jsrt.ModuleDuckDB
	ModuleGLPK   = jsrt.ModuleGLPK
)

// BuiltinModules returns the names of the built-in modules, sorted.
func BuiltinModules() []string { return slices.Sorted(slices.Values(jsrt.BuiltinModules)) }

// Package is an npm package of the operator's catalogue: JavaScript and
// TypeScript steps may import it (import * as ss from "simple-statistics").
type Package struct {
	// Name is the npm name: "simple-statistics", "@scope/name".
	Name string `json:"name"`
	// Version is an exact version: "7.12.1".
	Version string `json:"version"`
	// Integrity is the SHA-512 of the package's tarball as npm prints it
	// (npm view NAME@VERSION dist.integrity): "sha512-…". The tarball npm
	// fetches must match it.
	Integrity string `json:"integrity"`
}

// DefaultPackages is the catalogue of an engine whose Config.Packages
// names none: simple-statistics.
var DefaultPackages = func() []Package {
	out := make([]Package, len(npm.DefaultCatalogue))
	for i, p := range npm.DefaultCatalogue {
		out[i] = Package(p)
	}
	return out
}()

// Packages configures the npm packages of JavaScript and TypeScript steps.
// The zero value is the default catalogue in the default cache directory,
// installed beforehand with "stepbox packages install".
type Packages struct {
	// Catalogue lists the packages steps may import. Nil means
	// DefaultPackages; an empty, non-nil list means none.
	Catalogue []Package `json:"catalogue,omitempty"`
	// CacheDir is where installed packages are (see "stepbox packages
	// install --cache DIR"). Empty means $XDG_CACHE_HOME/stepbox/packages,
	// or ~/.cache/stepbox/packages.
	CacheDir string `json:"cacheDir,omitempty"`
	// AutoInstall lets the engine install a package that a step imports
	// and the cache lacks, with the npm client, on first use (Submit then
	// waits for npm, up to a few minutes). When false, the default, such a
	// request is refused with UNAVAILABLE.
	AutoInstall bool `json:"autoInstall,omitempty"`
	// NPM is the npm command AutoInstall runs: a path or a name in PATH.
	// Empty means "npm".
	NPM string `json:"npm,omitempty"`
}

// installTimeout bounds an automatic install.
const installTimeout = 5 * time.Minute

// moduleSet is the engine's view of modules: which exist, which each plan
// allows, and the installed packages.
type moduleSet struct {
	catalogue map[string]npm.Package
	names     []string            // every module name, sorted, for messages
	allowed   map[string][]string // plan -> allowed names; a plan without an entry allows all
	cache     npm.Cache
	auto      bool
	npm       string

	mu sync.Mutex
	// bundles are the packages loaded from the cache, by name. Guarded by
	// mu.
	bundles map[string]*npm.Bundle
	// installing are the automatic installs in progress, by name. Guarded
	// by mu.
	installing map[string]*install

	// stopInstalls ends the installs in progress; wg counts them.
	installCtx   context.Context
	stopInstalls context.CancelFunc
	wg           sync.WaitGroup
}

// install is one automatic install that every run importing the package
// waits for.
type install struct {
	done chan struct{}
	b    *npm.Bundle
	err  error
}

// ValidateModules reports every problem of c's module settings together,
// joined with errors.Join, each naming its field as it is written in a
// configuration file: a Packages.Catalogue entry that is not an npm
// package pinned to a version and an integrity, that repeats a name or
// takes a built-in module's ("packages.catalogue[1]: ..."), and a
// PlanModules entry for a plan that is not in Plans or naming a module
// that is neither built in nor in the catalogue ("planModules.free[0]:
// ..."). New makes the same checks: a server's --check calls it, so that
// a configuration the check accepts also starts.
func (c Config) ValidateModules() error {
	_, _, errs := c.checkModules()
	return errors.Join(errs...)
}

// checkModules returns c's package catalogue by name (DefaultPackages
// when Packages.Catalogue is nil), the name of every module, sorted, and
// the problems of c's module settings.
func (c Config) checkModules() (map[string]npm.Package, []string, []error) {
	var errs []error
	cat := c.Packages.Catalogue
	if cat == nil {
		cat = DefaultPackages
	}
	np := make([]npm.Package, len(cat))
	for i, p := range cat {
		np[i] = npm.Package(p)
	}
	for _, e := range unjoin(npm.ValidateCatalogue(np)) {
		errs = append(errs, fmt.Errorf("packages.catalogue%w", e)) // "[1]: ..."
	}
	catalogue := map[string]npm.Package{}
	known := map[string]bool{}
	for _, m := range jsrt.BuiltinModules {
		known[m] = true
	}
	for i, p := range np {
		if slices.Contains(jsrt.BuiltinModules, p.Name) {
			errs = append(errs, fmt.Errorf("packages.catalogue[%d]: %q is the name of a built-in module", i, p.Name))
			continue
		}
		catalogue[p.Name] = p
		known[p.Name] = true
	}
	names := slices.Sorted(maps.Keys(known))
	plans := map[string]bool{}
	for name := range c.Plans {
		plans[name] = true
	}
	if len(c.Plans) == 0 {
		plans[cmp.Or(c.DefaultPlan, defaultPlanName)] = true
	}
	for _, plan := range slices.Sorted(maps.Keys(c.PlanModules)) {
		if !plans[plan] {
			errs = append(errs, fmt.Errorf("planModules.%s: %q is not in plans", plan, plan))
		}
		for j, m := range c.PlanModules[plan] {
			switch {
			case m == "":
				errs = append(errs, fmt.Errorf("planModules.%s[%d]: empty module name", plan, j))
			case !known[m]:
				errs = append(errs, fmt.Errorf("planModules.%s[%d]: unknown module %q (known: %s)", plan, j, m, strings.Join(names, ", ")))
			}
		}
	}
	return catalogue, names, errs
}

// unjoin returns the errors that errors.Join joined into err (none for
// nil), so that each gets its field prefix.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// resolveModules validates the module settings of c into r.
func (c Config) resolveModules(r *resolved) []error {
	catalogue, names, errs := c.checkModules()
	ms := &moduleSet{
		catalogue:  catalogue,
		names:      names,
		allowed:    map[string][]string{},
		auto:       c.Packages.AutoInstall,
		npm:        c.Packages.NPM,
		bundles:    map[string]*npm.Bundle{},
		installing: map[string]*install{},
	}
	ms.installCtx, ms.stopInstalls = context.WithCancel(context.Background())
	for plan, list := range c.PlanModules {
		ms.allowed[plan] = slices.Clone(list)
	}
	dir := c.Packages.CacheDir
	if dir == "" {
		dir = npm.DefaultCacheDir(os.Getenv)
	}
	ms.cache = npm.Cache{Dir: dir}
	r.modules = ms
	return errs
}

// allows reports whether plan may use module name.
func (ms *moduleSet) allows(plan, name string) bool {
	list, ok := ms.allowed[plan]
	return !ok || slices.Contains(list, name)
}

// resolve checks a request's modules and its code's imports, and returns
// the built-in modules and the package bundles its run gets. code is the
// JavaScript that will run (a TypeScript step's compiled output); ts maps
// its positions, when it is TypeScript.
func (ms *moduleSet) resolve(ctx context.Context, req Request, plan, code string, ts *tsMapper) ([]string, []ipc.Package, error) {
	var builtins []string
	for _, m := range req.Modules {
		_, isPkg := ms.catalogue[m]
		if !isPkg && !slices.Contains(jsrt.BuiltinModules, m) {
			return nil, nil, newError(CodeValidation, nil, "unknown module %q (known: %s)", m, strings.Join(ms.names, ", "))
		}
		if isPkg && req.Language == Python {
			return nil, nil, newError(CodeValidation, nil, "%q is an npm package: Python steps may use the built-in modules only (%s)",
				m, strings.Join(jsrt.BuiltinModules, ", "))
		}
		if !ms.allows(plan, m) {
			return nil, nil, newError(CodeValidation, nil, "module %q is not allowed by plan %q", m, plan)
		}
		if !isPkg && !slices.Contains(builtins, m) {
			builtins = append(builtins, m)
		}
	}
	if req.Language == Python {
		return builtins, nil, nil
	}
	var want []npm.Package
	for _, imp := range jsrt.ScanImports(code) {
		p, ok := ms.catalogue[imp.Name]
		switch {
		case ok && slices.Contains(want, p):
			continue
		case !ok && imp.Dynamic:
			continue // import("x") of anything else fails in the step, where it can catch it
		case !ok && slices.Contains(jsrt.BuiltinModules, imp.Name):
			return nil, nil, importError(ts, imp, "%q is a built-in module, not a package: list it in Request.Modules and use the global %s", imp.Name, imp.Name)
		case !ok:
			return nil, nil, importError(ts, imp, "package %q is not in the catalogue", imp.Name)
		case !ms.allows(plan, p.Name):
			return nil, nil, importError(ts, imp, "package %q is not allowed by plan %q", imp.Name, plan)
		}
		want = append(want, p)
	}
	pkgs := make([]ipc.Package, 0, len(want))
	for _, p := range want {
		b, err := ms.bundle(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		pkgs = append(pkgs, ipc.Package{Name: p.Name, Version: p.Version, Source: b.Source})
	}
	return builtins, pkgs, nil
}

// importError is the VALIDATION error of an import, at its line.
func importError(ts *tsMapper, imp jsrt.Import, format string, args ...any) *Error {
	e := newError(CodeValidation, nil, format, args...)
	e.Position = &Position{Line: imp.Line}
	if ts != nil {
		f := &ipc.Failure{Position: &ipc.Position{Line: imp.Line, Column: 1}}
		ts.failure(f)
		e.Position = &Position{Line: f.Position.Line, Column: f.Position.Column}
	}
	return e // the position is the error's Position, not repeated in its message
}

// bundle returns p's bundle: from memory, from the cache, or installed now
// when the engine may.
func (ms *moduleSet) bundle(ctx context.Context, p npm.Package) (*npm.Bundle, error) {
	ms.mu.Lock()
	if b := ms.bundles[p.Name]; b != nil {
		ms.mu.Unlock()
		return b, nil
	}
	ms.mu.Unlock()
	b, err := ms.cache.Load(p)
	if err == nil {
		ms.remember(b)
		return b, nil
	}
	if !errors.Is(err, npm.ErrNotInstalled) {
		return nil, newError(CodeUnavailable, err, "package %s cannot be loaded: %v", p, err)
	}
	if !ms.auto {
		return nil, newError(CodeUnavailable, err,
			"package %s is not installed in %s: run `stepbox packages install --cache %s`, or have packages installed on first use "+
				"(a server's config: `packages: {autoInstall: true}`; Go: Packages.AutoInstall; `stepbox run` does unless --no-install)",
			p, ms.cache.Dir, ms.cache.Dir)
	}
	ms.mu.Lock()
	in := ms.installing[p.Name]
	if in == nil {
		in = &install{done: make(chan struct{})}
		ms.installing[p.Name] = in
		ms.wg.Add(1) // Done when the install ends; close waits for it.
		go func() {
			defer ms.wg.Done()
			// Not the request's ctx: others may wait for this install, and
			// a half-done install helps nobody. Engine.Close ends it.
			ictx, cancel := context.WithTimeout(ms.installCtx, installTimeout)
			defer cancel()
			in.b, in.err = ms.cache.Install(ictx, p, npm.InstallOptions{NPM: ms.npm})
			if in.err == nil {
				ms.remember(in.b)
			}
			ms.mu.Lock()
			delete(ms.installing, p.Name)
			ms.mu.Unlock()
			close(in.done)
		}()
	}
	ms.mu.Unlock()
	select {
	case <-in.done:
	case <-ctx.Done():
		return nil, newError(CodeUnavailable, ctx.Err(), "package %s: gave up waiting for its installation: %v", p, ctx.Err())
	}
	if in.err != nil {
		return nil, newError(CodeUnavailable, in.err, "package %s could not be installed: %v", p, in.err)
	}
	return in.b, nil
}

// close stops the automatic installs in progress and waits for them.
func (ms *moduleSet) close() {
	ms.stopInstalls()
	ms.wg.Wait()
}

func (ms *moduleSet) remember(b *npm.Bundle) {
	ms.mu.Lock()
	ms.bundles[b.Name] = b
	ms.mu.Unlock()
}
