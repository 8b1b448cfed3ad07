package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/modules/npm"
	"github.com/stepbox/stepbox/internal/typescript"
	"github.com/stepbox/stepbox/sandbox"
)

const packagesUsage = `Usage: stepbox packages install [flags]
       stepbox packages list [flags]

install fetches the catalogue's npm packages with the npm client (your npm
configuration decides the registry), checks each tarball against the
catalogue's integrity hash, bundles it with esbuild and stores the bundle in
the package cache, where the engine loads it when a step imports the package.
list shows the catalogue and what the cache holds.

Flags:
  --cache DIR        the package cache (default $XDG_CACHE_HOME/stepbox/packages,
                     or ~/.cache/stepbox/packages)
  --catalogue FILE   a JSON array of {"name", "version", "integrity"} (default:
                     the built-in catalogue, simple-statistics)
  --npm PATH         the npm command (default "npm")

Exit status: 0 when every package is installed, 2 for a bad command line,
9 when a package could not be installed (or, for list, is not installed).
`

// installTimeout bounds the install of one package.
const installTimeout = 5 * time.Minute

func packagesCommand(ctx context.Context, st *State, args []string) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(st.Stdout, packagesUsage)
		return ExitOK
	}
	if len(args) == 0 || (args[0] != "install" && args[0] != "list") {
		fmt.Fprint(st.Stderr, packagesUsage)
		return ExitUsage
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("packages", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cache := fs.String("cache", "", "")
	catFile := fs.String("catalogue", "", "")
	npmCmd := fs.String("npm", "", "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(st.Stdout, packagesUsage)
			return ExitOK
		}
		if err == nil {
			err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
		}
		fmt.Fprintf(st.Stderr, "stepbox packages: %v\n\n%s", err, packagesUsage)
		return ExitUsage
	}
	cat, err := loadCatalogue(st, *catFile)
	if err != nil {
		fmt.Fprintf(st.Stderr, "stepbox packages: %v\n", err)
		return ExitUsage
	}
	dir, err := cacheDir(st, *cache)
	if err == nil && dir == "" {
		err = errNoCache
	}
	if err != nil {
		fmt.Fprintf(st.Stderr, "stepbox packages: %v\n", err)
		return ExitUsage
	}
	c := npm.Cache{Dir: dir}
	status := ExitOK
	for _, p := range cat {
		var b *npm.Bundle
		var err error
		if sub == "install" {
			ictx, cancel := context.WithTimeout(ctx, installTimeout)
			b, err = c.Install(ictx, p, npm.InstallOptions{NPM: *npmCmd, Log: st.Stderr})
			cancel()
		} else {
			b, err = c.Load(p)
		}
		switch {
		case err == nil:
			fmt.Fprintf(st.Stdout, "%s\tinstalled\t%d bytes\t%s\n", p, len(b.Source), p.Integrity)
		case sub == "list" && errors.Is(err, npm.ErrNotInstalled):
			fmt.Fprintf(st.Stdout, "%s\tnot installed\n", p)
			status = ExitUnavailable
		default:
			fmt.Fprintf(st.Stderr, "stepbox packages: %v\n", err)
			status = ExitUnavailable
		}
	}
	if status == ExitOK && sub == "install" {
		fmt.Fprintf(st.Stderr, "packages are in %s\n", dir)
	}
	return status
}

// errNoCache is why there is no default package cache.
var errNoCache = errors.New("neither XDG_CACHE_HOME nor HOME is set: use --cache DIR")

// loadCatalogue reads the catalogue file of --catalogue and checks it; no
// file is the built-in catalogue.
func loadCatalogue(st *State, file string) ([]npm.Package, error) {
	if file == "" {
		return npm.DefaultCatalogue, nil
	}
	b, err := readArg(st, file)
	if err != nil {
		return nil, err
	}
	var cat []npm.Package
	if err := decodeJSON("--catalogue "+file, b, &cat, `a JSON array of {"name", "version", "integrity"}`); err != nil {
		return nil, err
	}
	if err := npm.ValidateCatalogue(cat); err != nil {
		return nil, fmt.Errorf("--catalogue %s: %w", file, err)
	}
	return cat, nil
}

// packagesConfig is the engine's package settings for run's --catalogue
// and --cache, which mean what they mean to "stepbox packages".
func packagesConfig(st *State, catFile, cache string) (sandbox.Packages, error) {
	cat, err := loadCatalogue(st, catFile)
	if err != nil {
		return sandbox.Packages{}, err
	}
	p := sandbox.Packages{Catalogue: make([]sandbox.Package, len(cat))}
	for i, c := range cat {
		p.Catalogue[i] = sandbox.Package(c)
	}
	// Empty when there is no default: only a step that imports a package
	// needs the cache.
	p.CacheDir, err = cacheDir(st, cache)
	return p, err
}

// cacheDir is the package cache of --cache DIR, or the default one, as an
// absolute path (esbuild bundles in a working directory under it, which
// must be absolute); "" if there is no default.
func cacheDir(st *State, flag string) (string, error) {
	getenv := st.Getenv
	if getenv == nil { // a State with no environment
		getenv = func(string) string { return "" }
	}
	dir := flag
	if dir == "" {
		if dir = npm.DefaultCacheDir(getenv); dir == "" {
			return "", nil
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--cache %s: %w", dir, err)
	}
	return abs, nil
}

// installImports installs the catalogue packages that req's step imports
// and the cache lacks, with a progress line for each on stderr, so that a
// step's first import needs no "stepbox packages install" first. The
// catalogue pins each package's integrity, which the install checks.
// With --no-install it installs nothing and the engine refuses the run
// (UNAVAILABLE), saying how to install.
func (f *runFlags) installImports(ctx context.Context, st *State, req sandbox.Request, cfg sandbox.Packages) error {
	code := req.Code
	switch req.Language {
	case sandbox.Python:
		return nil // Python steps import no npm packages
	case sandbox.TypeScript:
		out, err := typescript.Compile(req.Code)
		if err != nil {
			return nil // the engine reports the compile error
		}
		code = out.JS
	}
	if f.noInstall || !strings.Contains(code, "import") {
		return nil
	}
	cat := map[string]npm.Package{}
	for _, p := range cfg.Catalogue {
		cat[p.Name] = npm.Package(p)
	}
	c := npm.Cache{Dir: cfg.CacheDir}
	done := map[string]bool{}
	for _, imp := range jsrt.ScanImports(code) {
		p, ok := cat[imp.Name]
		if !ok || done[p.Name] {
			continue
		}
		done[p.Name] = true
		if _, err := c.Load(p); !errors.Is(err, npm.ErrNotInstalled) {
			continue // installed, or broken in a way the engine reports
		}
		if c.Dir == "" {
			return fmt.Errorf("the step imports %s, which is not installed, and %w", p, errNoCache)
		}
		fmt.Fprintf(st.Stderr, "stepbox: installing %s into %s (first use; --no-install to refuse)\n", p, c.Dir)
		ictx, cancel := context.WithTimeout(ctx, installTimeout)
		_, err := c.Install(ictx, p, npm.InstallOptions{NPM: f.npm, Log: st.Stderr})
		cancel()
		if err != nil {
			return fmt.Errorf("package %s could not be installed: %w", p, err)
		}
	}
	return nil
}
