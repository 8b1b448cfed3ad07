package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/stepbox/stepbox/internal/modules/npm"
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
	cat := npm.DefaultCatalogue
	if *catFile != "" {
		b, err := readArg(st, *catFile)
		if err != nil {
			fmt.Fprintf(st.Stderr, "stepbox packages: %v\n", err)
			return ExitUsage
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		cat = nil
		if err := d.Decode(&cat); err != nil {
			fmt.Fprintf(st.Stderr, "stepbox packages: --catalogue %s: want a JSON array of {\"name\", \"version\", \"integrity\"}: %v\n", *catFile, err)
			return ExitUsage
		}
	}
	if err := npm.ValidateCatalogue(cat); err != nil {
		fmt.Fprintf(st.Stderr, "stepbox packages: %v\n", err)
		return ExitUsage
	}
	dir := *cache
	if dir == "" {
		if dir = npm.DefaultCacheDir(st.Getenv); dir == "" {
			fmt.Fprintf(st.Stderr, "stepbox packages: neither XDG_CACHE_HOME nor HOME is set: use --cache DIR\n")
			return ExitUsage
		}
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
