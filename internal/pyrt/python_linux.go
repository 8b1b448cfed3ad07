package pyrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
	Path       []string `json:"path"` // sys.path under -I -S
	LibDir     string   `json:"libdir"`
	Shared     bool     `json:"shared"` // linked against a shared libpython
	Version    []int    `json:"version"`
}

// probeScript prints pythonInfo. It runs on the host, unjailed, as the
// host's own trusted interpreter.
const probeScript = `import sys, os, json, sysconfig
print(json.dumps({"executable": os.path.realpath(sys.executable), "prefix": sys.prefix,
  "stdlib": sysconfig.get_path("stdlib") or "", "platstdlib": sysconfig.get_path("platstdlib") or "",
  "path": sys.path, "libdir": sysconfig.get_config_var("LIBDIR") or "",
  "shared": bool(sysconfig.get_config_var("Py_ENABLE_SHARED")), "version": list(sys.version_info[:3])}))`

// findPython returns the interpreter to use and what it says about itself.
// A missing interpreter is reported wrapping errors.ErrUnsupported.
func findPython(path string) (pythonInfo, error) {
	var info pythonInfo
	if path == "" {
		if _, err := os.Stat(DefaultPython); err == nil {
			path = DefaultPython
		} else if p, err := exec.LookPath("python3"); err == nil {
			path = p
		} else {
			return info, fmt.Errorf("pyrt: %w: no python3 interpreter (neither %s nor python3 on PATH)", errors.ErrUnsupported, DefaultPython)
		}
	}
	if _, err := os.Stat(path); err != nil {
		return info, fmt.Errorf("pyrt: %w: python3 interpreter: %v", errors.ErrUnsupported, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-I", "-S", "-c", probeScript)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return info, fmt.Errorf("pyrt: %w: %s does not run: %v: %s", errors.ErrUnsupported, path, err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(out, &info); err != nil || info.Executable == "" || len(info.Version) != 3 {
		return info, fmt.Errorf("pyrt: %s: unexpected answer %q", path, out)
	}
	if info.Version[0] != 3 || info.Version[1] < 9 {
		return info, fmt.Errorf("pyrt: %w: %s is Python %d.%d; 3.9 or later is needed", errors.ErrUnsupported, path, info.Version[0], info.Version[1])
	}
	return info, nil
}

// binds returns the read-only binds the zygote's jail needs: the
// interpreter, its standard library, the extra site-packages and the
// system's shared libraries, without duplicates and without a path that
// another one already covers (a bind cannot be made inside a read-only
// one).
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
	var errs []error
	for _, s := range sites {
		if _, err := os.Stat(s); err != nil {
			errs = append(errs, fmt.Errorf("pyrt: config: SitePackages: %w", err))
			continue
		}
		want = append(want, s)
	}
	want = append(want, jail.SystemLibraryBinds()...)
	var out []string
	for _, p := range want {
		if p == "" || !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if _, err := os.Lstat(p); err != nil {
			continue // python3.11.zip and the like
		}
		out = append(out, p)
	}
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
	return kept, errors.Join(errs...)
}

func coveredBy(path string, binds []string) bool {
	for _, b := range binds {
		if path == b || strings.HasPrefix(path, b+"/") {
			return true
		}
	}
	return false
}
