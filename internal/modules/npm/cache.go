package npm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Bundle is an installed package: its catalogue entry and its script.
type Bundle struct {
	Package
	// Source is the bundle: a script whose completion value is the
	// package's module namespace.
	Source string
	// SHA256 is the hex SHA-256 of Source.
	SHA256 string
}

// Files of an install.
const (
	bundleFile = "bundle.js"
	recordFile = "stepbox.json"
)

// bundleFormat is the version of what Install makes of a package, in
// stepbox.json: an install made another way (before 2, a CommonJS
// package's bundle was its bare module.exports) is not used, and Install
// replaces it.
const bundleFormat = 2

// MaxBundleBytes is the largest bundle Install accepts. A bundle travels
// with every run that imports it.
const MaxBundleBytes = 8 << 20

// record is stepbox.json: what was installed.
type record struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Integrity string `json:"integrity"`
	SHA256    string `json:"sha256"`  // of bundle.js
	Bytes     int    `json:"bytes"`   // of bundle.js
	Esbuild   string `json:"esbuild"` // the bundler's version
	Format    int    `json:"format"`  // bundleFormat
	// Dependencies are the packages npm installed with it, "name@version",
	// when it has any.
	Dependencies []string `json:"dependencies,omitempty"`
	// NodeBuiltins are the Node built-ins the package refers to but does
	// not need to load, whose require throws in a step.
	NodeBuiltins []string `json:"nodeBuiltins,omitempty"`
}

// Cache is a directory of installed packages (see the package
// documentation for its layout). The zero value is not usable: set Dir.
type Cache struct {
	// Dir is the cache directory, absolute or relative to the working
	// directory. Install creates it when missing.
	Dir string
}

// DefaultCacheDir returns the default cache directory from the
// environment: $XDG_CACHE_HOME/stepbox/packages, or
// $HOME/.cache/stepbox/packages when XDG_CACHE_HOME is not set (Linux
// conventions, on every system). It returns "" when neither is set.
func DefaultCacheDir(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "stepbox", "packages")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "stepbox", "packages")
	}
	return ""
}

// entryDir is the directory of p's install.
func (c Cache) entryDir(p Package) string {
	return filepath.Join(c.Dir, strings.ReplaceAll(p.Name, "/", "+")+"@"+p.Version)
}

// Load returns the installed bundle of p. Its error wraps ErrNotInstalled
// when the cache holds no install of p with p's integrity, or one whose
// bundle no longer matches the SHA-256 recorded when it was installed.
//
//	b, err := npm.Cache{Dir: dir}.Load(p)
//	if errors.Is(err, npm.ErrNotInstalled) { /* run stepbox packages install */ }
func (c Cache) Load(p Package) (*Bundle, error) {
	dir := c.entryDir(p)
	raw, err := os.ReadFile(filepath.Join(dir, recordFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is not in %s", ErrNotInstalled, p, c.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("npm: load %s: %w", p, err)
	}
	var rec record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("%w: %s: %s is not valid: %v", ErrNotInstalled, p, filepath.Join(dir, recordFile), err)
	}
	if rec.Name != p.Name || rec.Version != p.Version || rec.Integrity != p.Integrity {
		return nil, fmt.Errorf("%w: %s: the install in %s is of %s@%s with integrity %s",
			ErrNotInstalled, p, dir, rec.Name, rec.Version, rec.Integrity)
	}
	if rec.Format != bundleFormat {
		return nil, fmt.Errorf("%w: %s: the install in %s was made by another version of Stepbox (bundle format %d, not %d): install it again",
			ErrNotInstalled, p, dir, rec.Format, bundleFormat)
	}
	src, err := os.ReadFile(filepath.Join(dir, bundleFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotInstalled, p, err)
	}
	sum := sha256.Sum256(src)
	if got := hex.EncodeToString(sum[:]); got != rec.SHA256 {
		return nil, fmt.Errorf("%w: %s: %s was changed after it was installed (sha256 %s, recorded %s)",
			ErrNotInstalled, p, filepath.Join(dir, bundleFile), got, rec.SHA256)
	}
	return &Bundle{Package: p, Source: string(src), SHA256: rec.SHA256}, nil
}
