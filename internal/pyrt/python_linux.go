package pyrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/stepbox/stepbox/internal/jail"
)

// pythonInfo is what the host learns about the interpreter before jailing
// it.
type pythonInfo struct {
	Executable string   `json:"executable"` // real path, symbolic links resolved
	Prefix     string   `json:"prefix"`
	Stdlib     string   `json:"stdlib"`
	PlatStdlib string   `json:"platstdlib"`
	Path       []string `json:"path"`   // sys.path
	Sites      []string `json:"sites"`  // site.getsitepackages()
	TZPath     []string `json:"tzpath"` // zoneinfo.TZPATH
	LibDir     string   `json:"libdir"`
	Shared     bool     `json:"shared"` // linked against a shared libpython
	Version    []int    `json:"version"`
}

// probeScript prints pythonInfo, as its last line. It runs on the host,
// unjailed, as the host's own trusted interpreter, with the site module
// (which is what finds a virtualenv's site-packages) but -I: no PYTHON*
// variables, no user site.
const probeScript = `import sys, os, json, site, sysconfig
try:
    import zoneinfo
    tzpath = list(zoneinfo.TZPATH)
except ImportError:
    tzpath = []
print(json.dumps({"executable": os.path.realpath(sys.executable), "prefix": sys.prefix,
  "stdlib": sysconfig.get_path("stdlib") or "", "platstdlib": sysconfig.get_path("platstdlib") or "",
  "path": sys.path, "sites": site.getsitepackages(), "tzpath": tzpath,
  "libdir": sysconfig.get_config_var("LIBDIR") or "",
  "shared": bool(sysconfig.get_config_var("Py_ENABLE_SHARED")), "version": list(sys.version_info[:3])}))`

// findPython returns the interpreter to use and what it says about itself.
// A missing interpreter is reported wrapping errors.ErrUnsupported.
func findPython(path string) (pythonInfo, error) {
	var info pythonInfo
	switch {
	case path == "":
		if _, err := os.Stat(DefaultPython); err == nil {
			path = DefaultPython
		} else if p, err := exec.LookPath("python3"); err == nil {
			path = p
		} else {
			return info, fmt.Errorf("pyrt: %w: no python3 interpreter (neither %s nor python3 on PATH)", errors.ErrUnsupported, DefaultPython)
		}
	case !strings.Contains(path, "/"):
		p, err := exec.LookPath(path)
		if err != nil {
			return info, fmt.Errorf("pyrt: %w: python3 interpreter: %v", errors.ErrUnsupported, err)
		}
		path = p
	}
	if _, err := os.Stat(path); err != nil {
		return info, fmt.Errorf("pyrt: %w: python3 interpreter: %v", errors.ErrUnsupported, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-I", "-c", probeScript)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return info, fmt.Errorf("pyrt: %w: %s does not run: %v: %s", errors.ErrUnsupported, path, err, strings.TrimSpace(stderr.String()))
	}
	// A .pth file may print; the answer is the last line.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	out = []byte(lines[len(lines)-1])
	if err := json.Unmarshal(out, &info); err != nil || info.Executable == "" || len(info.Version) != 3 {
		return info, fmt.Errorf("pyrt: %s: unexpected answer %q", path, out)
	}
	if info.Version[0] != 3 || info.Version[1] < 9 {
		return info, fmt.Errorf("pyrt: %w: %s is Python %d.%d; 3.9 or later is needed", errors.ErrUnsupported, path, info.Version[0], info.Version[1])
	}
	return info, nil
}

// sitePackages returns the directories a step's sys.path gets after the
// standard library, in order, under cfg (defaults filled in): the
// interpreter's own site-packages that exist (PackagesAuto), then
// cfg.SitePackages, which must exist.
func (info pythonInfo) sitePackages(cfg Config) ([]string, error) {
	var dirs []string
	if cfg.Packages == PackagesAuto {
		for _, d := range info.Sites {
			if st, err := os.Stat(d); err == nil && st.IsDir() && filepath.IsAbs(d) {
				dirs = append(dirs, filepath.Clean(d))
			}
		}
	}
	var errs []error
	for _, d := range cfg.SitePackages {
		if st, err := os.Stat(d); err != nil {
			errs = append(errs, fmt.Errorf("pyrt: config: SitePackages: %w", err))
			continue
		} else if !st.IsDir() {
			errs = append(errs, fmt.Errorf("pyrt: config: SitePackages: %s is not a directory", d))
			continue
		}
		dirs = append(dirs, d)
	}
	var out []string
	for _, d := range dirs {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, errors.Join(errs...)
}

// reservedPrefixes are the paths the jail makes itself (see
// jail.Config.ReadOnlyBinds): no bind can be there.
var reservedPrefixes = []string{"/proc", "/sys", "/dev", "/tmp", "/stepbox"}

// alternatives is where Debian's update-alternatives keeps the links that
// choose, among others, the BLAS and LAPACK libraries:
// /usr/lib/x86_64-linux-gnu/libblas.so.3 -> /etc/alternatives/libblas.so.3-x86_64-linux-gnu
// -> /usr/lib/x86_64-linux-gnu/blas/libblas.so.3.
const alternatives = "/etc/alternatives"

// binds returns the read-only binds the zygote's jail needs: the
// interpreter, its standard library, the site-packages, the time zone
// database and the system's shared libraries, so that each resolves in
// the jail as on the host. Every symbolic link on the way to one is
// recreated as the same link, and the directory or file it ends at is
// bound, so that a link never makes more visible than its target: links
// inside a bound directory are resolved in the jail, where only the binds
// exist. Of /etc/alternatives, only the links that end in a bound place
// are recreated. No path comes twice, and none is inside another bound
// directory (a bind cannot be made inside a read-only one).
func (info pythonInfo) binds(sites []string) ([]string, error) {
	want := []string{info.Executable, info.Stdlib, info.PlatStdlib}
	for _, p := range info.Path {
		if strings.HasSuffix(p, "lib-dynload") {
			want = append(want, p)
		}
	}
	if info.Shared && info.LibDir != "" {
		want = append(want, info.LibDir)
	}
	want = append(want, sites...)
	for _, p := range info.TZPath {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			want = append(want, p)
		}
	}
	want = append(want, jail.SystemLibraryBinds()...)
	var paths []string
	for _, p := range want {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		chain, err := pathChain(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // python3.11.zip and the like
		}
		if err != nil {
			return nil, fmt.Errorf("pyrt: jail: %w", err)
		}
		for _, c := range chain {
			if c == "/" {
				return nil, fmt.Errorf("pyrt: jail: %s is the root directory, which the jail never shows", p)
			}
			for _, r := range reservedPrefixes {
				if c == r || strings.HasPrefix(c, r+"/") {
					return nil, fmt.Errorf("pyrt: jail: %s (%s) is under %s, which the jail makes itself: Python and its packages cannot be there", p, c, r)
				}
			}
		}
		paths = append(paths, chain...)
	}
	kept := prune(paths)
	if entries, err := os.ReadDir(alternatives); err == nil {
		for _, e := range entries {
			chain, err := pathChain(filepath.Join(alternatives, e.Name()))
			if err != nil || len(chain) < 2 || !coveredBy(chain[len(chain)-1], kept) {
				continue // not a link, broken, or to what the jail does not hold
			}
			paths = append(paths, chain[:len(chain)-1]...)
		}
		kept = prune(paths)
	}
	return kept, nil
}

// prune sorts paths and drops duplicates and paths inside another one.
func prune(paths []string) []string {
	out := slices.Clone(paths)
	slices.Sort(out)
	out = slices.Compact(out)
	// Sorted, a path comes right after the ones that cover it... or after
	// siblings; check against every kept one.
	var kept []string
	for _, p := range out {
		if !coveredBy(p, kept) {
			kept = append(kept, p)
		}
	}
	return kept
}

// pathChain returns what a jail must hold for path to resolve in it as on
// the host: each symbolic link met on the way, in order (a component of
// the path or of a link's target), then the real path it ends at, which
// holds no link. An error wraps fs.ErrNotExist when a component is
// missing.
func pathChain(path string) ([]string, error) {
	var links []string
	rest := strings.Split(filepath.Clean(path), "/")
	cur := "/"
	for hops := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur) // cur is real: its parent is too
			continue
		}
		next := filepath.Join(cur, name)
		st, err := os.Lstat(next)
		if err != nil {
			return nil, err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return nil, &fs.PathError{Op: "resolve", Path: path, Err: syscall.ELOOP}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return nil, err
		}
		links = append(links, next)
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return append(links, cur), nil
}

func coveredBy(path string, binds []string) bool {
	for _, b := range binds {
		if path == b || strings.HasPrefix(path, b+"/") {
			return true
		}
	}
	return false
}
