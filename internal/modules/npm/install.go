package npm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/evanw/esbuild/pkg/api"
	"modernc.org/quickjs"
)

// InstallOptions configure how Install runs npm.
type InstallOptions struct {
	// NPM is the npm command: a path, or a name looked up in PATH. Empty
	// means "npm".
	NPM string
	// Env is npm's environment; nil means this process's, so that the
	// user's npm configuration (NPM_CONFIG_*, ~/.npmrc through HOME)
	// applies.
	Env []string
	// Log receives a line per step and npm's standard error. Nil discards
	// them (npm's standard error still ends up in the error of a failed
	// npm command).
	Log io.Writer
}

// Limits on what a package may unpack to.
const (
	maxTarballBytes = 64 << 20
	maxUnpackBytes  = 256 << 20
	maxUnpackFiles  = 20_000
)

// globalName is the variable the esbuild bundle assigns the namespace to,
// inside the wrapper function.
const globalName = "__sbx_pkg"

// Install installs p into the cache (see the package documentation for
// the steps) and returns its bundle. If the cache already holds a valid
// install of p, Install returns it without running npm.
//
//	b, err := npm.Cache{Dir: dir}.Install(ctx, npm.DefaultCatalogue[0], npm.InstallOptions{})
//
// ctx bounds npm's commands. Notes: concurrent Installs of one package into
// one cache are safe (both produce the same files; one rename wins).
func (c Cache) Install(ctx context.Context, p Package, opts InstallOptions) (*Bundle, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if b, err := c.Load(p); err == nil {
		return b, nil
	}
	if c.Dir == "" {
		return nil, errors.New("npm: no cache directory")
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("npm: install %s: %w", p, err)
	}
	// The work happens next to its destination, so that the last step is
	// a rename within one file system.
	tmp, err := os.MkdirTemp(c.Dir, ".install-")
	if err != nil {
		return nil, fmt.Errorf("npm: install %s: %w", p, err)
	}
	defer os.RemoveAll(tmp)
	if opts.NPM == "" {
		opts.NPM = "npm"
	}
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}

	logf("%s: npm pack", p)
	tarball, err := c.pack(ctx, p, tmp, opts)
	if err != nil {
		return nil, err
	}
	if got := integrityOf(tarball); got != p.Integrity {
		return nil, &IntegrityError{Package: p, Got: got}
	}
	logf("%s: integrity verified (%s)", p, p.Integrity)

	build := filepath.Join(tmp, "build")
	pkgDir := filepath.Join(build, "node_modules", filepath.FromSlash(p.Name))
	if err := unpack(tarball, pkgDir); err != nil {
		return nil, fmt.Errorf("npm: install %s: unpack: %w", p, err)
	}
	deps, err := c.dependencies(ctx, p, pkgDir, filepath.Join(tmp, "deps"), opts)
	if err != nil {
		return nil, err
	}
	logf("%s: bundle with esbuild", p)
	b, err := bundle(p, build)
	if err != nil {
		return nil, err
	}
	src := b.src
	if len(b.builtins) > 0 {
		logf("%s: refers to Node built-ins a step does not have, not needed to load it: %s (a step that reaches one fails)",
			p, strings.Join(b.builtins, ", "))
	}

	out := filepath.Join(tmp, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		return nil, fmt.Errorf("npm: install %s: %w", p, err)
	}
	sum := sha256.Sum256([]byte(src))
	rec, _ := json.MarshalIndent(record{
		Name: p.Name, Version: p.Version, Integrity: p.Integrity,
		SHA256: hex.EncodeToString(sum[:]), Bytes: len(src), Esbuild: esbuildVersion(), Format: bundleFormat, Dependencies: deps, NodeBuiltins: b.builtins,
	}, "", "  ")
	files := map[string][]byte{bundleFile: []byte(src), recordFile: append(rec, '\n')}
	if err := licences(pkgDir, files); err != nil {
		return nil, fmt.Errorf("npm: install %s: %w", p, err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return nil, fmt.Errorf("npm: install %s: %w", p, err)
		}
	}
	dest := c.entryDir(p)
	if _, err := os.Stat(dest); err == nil {
		// An unusable install (Load refused it above): move it aside.
		if err := os.Rename(dest, filepath.Join(tmp, "old")); err != nil {
			return nil, fmt.Errorf("npm: install %s: %w", p, err)
		}
	}
	if err := os.Rename(out, dest); err != nil {
		return nil, fmt.Errorf("npm: install %s: %w", p, err)
	}
	logf("%s: installed in %s (%d bytes of bundle)", p, dest, len(src))
	return c.Load(p)
}

// npm runs the npm client in dir and returns its standard output.
func npm(ctx context.Context, dir string, opts InstallOptions, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, opts.NPM, args...)
	cmd.Dir = dir
	cmd.Env = opts.Env
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if opts.Log != nil {
		cmd.Stderr = io.MultiWriter(&stderr, opts.Log)
	}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		if errors.Is(err, exec.ErrNotFound) {
			return nil, fmt.Errorf("npm: the npm client %q was not found: install Node.js and npm (Debian: apt-get install npm): %w", opts.NPM, err)
		}
		return nil, fmt.Errorf("npm: %s %s: %w: %s", opts.NPM, strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// pack fetches p's tarball with "npm pack" into dir and returns it.
func (c Cache) pack(ctx context.Context, p Package, dir string, opts InstallOptions) ([]byte, error) {
	out, err := npm(ctx, dir, opts, "pack", "--json", "--ignore-scripts", "--loglevel=error", "--", p.String())
	if err != nil {
		return nil, err
	}
	var packed []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 || packed[0].Filename == "" {
		return nil, fmt.Errorf("npm: npm pack %s: unexpected output %.200q", p, out)
	}
	name := filepath.Base(packed[0].Filename)
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("npm: npm pack %s: %w", p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTarballBytes+1))
	if err != nil {
		return nil, fmt.Errorf("npm: npm pack %s: %w", p, err)
	}
	if len(data) > maxTarballBytes {
		return nil, fmt.Errorf("npm: %s: the tarball is larger than %d bytes", p, maxTarballBytes)
	}
	return data, nil
}

// unpack writes the files of an npm tarball into dir, dropping the first
// path element ("package/"). Only regular files and directories are
// written; every path must stay inside dir.
func unpack(tarball []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(tarball))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	total, files := int64(0), 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		_, rest, ok := strings.Cut(name, "/")
		if !ok || rest == "" {
			continue // the top directory itself
		}
		if path.IsAbs(rest) || rest == ".." || strings.HasPrefix(rest, "../") || strings.Contains(rest, "/../") {
			return fmt.Errorf("%q leaves the package directory", h.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(rest))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if files++; files > maxUnpackFiles {
				return fmt.Errorf("more than %d files", maxUnpackFiles)
			}
			if total += h.Size; total > maxUnpackBytes {
				return fmt.Errorf("more than %d bytes unpacked", maxUnpackBytes)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, io.LimitReader(tr, h.Size))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		default:
			// Links, devices and the like have no place in a package.
		}
	}
}

// dependencies installs p's dependencies, if it declares any, with npm
// (no scripts, no dev dependencies) in depDir, moves them into pkgDir's
// node_modules and returns them as name@version.
func (c Cache) dependencies(ctx context.Context, p Package, pkgDir, depDir string, opts InstallOptions) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return nil, fmt.Errorf("npm: install %s: %w", p, err)
	}
	var manifest struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return nil, fmt.Errorf("npm: install %s: package.json: %w", p, err)
	}
	if len(manifest.Dependencies) == 0 {
		return nil, nil
	}
	if opts.Log != nil {
		fmt.Fprintf(opts.Log, "%s: npm install (%d dependencies)\n", p, len(manifest.Dependencies))
	}
	// In a directory of their own, whose package.json holds them alone:
	// in the package's own directory npm would resolve its development
	// dependencies too (--omit=dev only skips writing them), and fail on
	// any that do not resolve.
	if err := os.MkdirAll(depDir, 0o755); err != nil {
		return nil, fmt.Errorf("npm: install %s: %w", p, err)
	}
	manifestJSON, _ := json.Marshal(map[string]any{"private": true, "dependencies": manifest.Dependencies})
	if err := os.WriteFile(filepath.Join(depDir, "package.json"), manifestJSON, 0o644); err != nil {
		return nil, fmt.Errorf("npm: install %s: %w", p, err)
	}
	if _, err := npm(ctx, depDir, opts, "install", "--omit=dev", "--omit=optional", "--ignore-scripts",
		"--no-audit", "--no-fund", "--loglevel=error"); err != nil {
		return nil, err
	}
	// Where the package's own imports find them.
	if err := os.Rename(filepath.Join(depDir, "node_modules"), filepath.Join(pkgDir, "node_modules")); err != nil {
		return nil, fmt.Errorf("npm: install %s: %w", p, err)
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	raw, err = os.ReadFile(filepath.Join(depDir, "package-lock.json"))
	if err != nil || json.Unmarshal(raw, &lock) != nil {
		return nil, nil // the record is informational
	}
	var deps []string
	for k, v := range lock.Packages {
		if i := strings.LastIndex(k, "node_modules/"); i >= 0 && v.Version != "" {
			deps = append(deps, k[i+len("node_modules/"):]+"@"+v.Version)
		}
	}
	sort.Strings(deps)
	return deps, nil
}

// bundle bundles the package installed in build/node_modules into one
// script, with esbuild. The script's value is the module namespace a
// step's import of the package sees, as Node makes it: an ECMAScript
// module's own, or for a CommonJS module (see cjsNamespace) one whose
// default export is module.exports.
func bundle(p Package, build string) (bundled, error) {
	var b bundled
	res := api.Build(api.BuildOptions{
		EntryPoints:   []string{p.Name},
		AbsWorkingDir: build,
		Bundle:        true,
		Write:         false,
		Format:        api.FormatIIFE,
		GlobalName:    globalName,
		// The file Node would load for an import: the "import" condition
		// of package.json's exports, else "main" (Node ignores "module").
		// But a step is not Node: it has no Node built-ins and has the web
		// platform's globals, so a package's "browser" build is preferred
		// to one that needs "node:crypto", and its "browser" field's
		// replacements of files (object-inspect's of its use of "util")
		// apply: platform browser, whose main fields are not used.
		Platform:   api.PlatformBrowser,
		MainFields: []string{"main"},
		Conditions: []string{"import", "module", "browser", "default"},
		Define:     map[string]string{"process.env.NODE_ENV": `"production"`},
		// A package's imports of Node built-ins stay in the bundle as
		// require calls that throw, so that a package that needs one only
		// on some path (papaparse's Node streams) still installs; one that
		// needs one to load is refused below.
		External:          externalBuiltins,
		Target:            api.ES2023, // what QuickJS implements
		MinifyWhitespace:  true,
		MinifySyntax:      true,
		MinifyIdentifiers: false, // keep names for stack traces
		LegalComments:     api.LegalCommentsNone,
		Charset:           api.CharsetUTF8,
		Metafile:          true,
		LogLevel:          api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		e := &BundleError{Package: p}
		for _, m := range res.Errors {
			s := m.Text
			if m.Location != nil {
				s = fmt.Sprintf("%s:%d:%d: %s", m.Location.File, m.Location.Line, m.Location.Column, s)
			}
			e.Messages = append(e.Messages, s)
		}
		return b, e
	}
	if len(res.OutputFiles) != 1 {
		return b, &BundleError{Package: p, Messages: []string{fmt.Sprintf("esbuild produced %d files", len(res.OutputFiles))}}
	}
	// Every input must be the package's or its dependencies': esbuild
	// looks for node_modules in parent directories too.
	var meta struct {
		Inputs map[string]struct {
			Format  string `json:"format"`
			Imports []struct {
				Path     string `json:"path"`
				External bool   `json:"external"`
			} `json:"imports"`
		} `json:"inputs"`
		Outputs map[string]struct {
			EntryPoint string `json:"entryPoint"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(res.Metafile), &meta); err != nil {
		return b, &BundleError{Package: p, Messages: []string{"esbuild's metafile: " + err.Error()}}
	}
	for in := range meta.Inputs {
		// "(disabled):" marks a file the package's "browser" field maps
		// to false: an empty module.
		if !strings.HasPrefix(strings.TrimPrefix(in, "(disabled):"), "node_modules/") {
			return b, &BundleError{Package: p, Messages: []string{fmt.Sprintf("%s is outside the package's directory", in)}}
		}
	}
	builtins := map[string]bool{}
	for _, in := range meta.Inputs {
		for _, imp := range in.Imports {
			if imp.External {
				builtins[strings.TrimPrefix(imp.Path, "node:")] = true
			}
		}
	}
	for name := range builtins {
		b.builtins = append(b.builtins, name)
	}
	sort.Strings(b.builtins)
	entry := ""
	for _, out := range meta.Outputs {
		entry = out.EntryPoint
	}
	in, ok := meta.Inputs[entry]
	if !ok {
		return b, &BundleError{Package: p, Messages: []string{fmt.Sprintf("esbuild's metafile names no entry point (%q)", entry)}}
	}
	ret := globalName
	// esbuild marks a file that uses import or export "esm"; any other
	// is CommonJS (or a plain script, which Node loads as CommonJS too),
	// and the IIFE's value is its module.exports.
	if in.Format != "esm" {
		ret = cjsNamespace + "(" + globalName + ")"
	}
	b.src = "(function () {\n" + string(res.OutputFiles[0].Contents) + "return " + ret + ";\n})()\n"
	if len(b.src) > MaxBundleBytes {
		return b, &BundleError{Package: p, Messages: []string{fmt.Sprintf("the bundle is %d bytes, more than %d", len(b.src), MaxBundleBytes)}}
	}
	if len(b.builtins) > 0 {
		if err := loadCheck(p, b.src); err != nil {
			return b, err
		}
	}
	return b, nil
}

// bundled is what bundle makes of a package.
type bundled struct {
	src string
	// builtins are the Node built-ins the package imports or requires,
	// sorted: a require of one throws when it runs.
	builtins []string
}

// loadCheck evaluates a bundle that refers to Node built-ins in a bare
// QuickJS VM, and refuses the package if it requires one of them to load.
// Any other failure is left for the step that imports the package to
// report: the VM lacks the globals a step has.
func loadCheck(p Package, src string) error {
	vm, err := quickjs.NewVM()
	if err != nil {
		return fmt.Errorf("npm: %s: %w", p, err)
	}
	defer vm.Close()
	vm.SetMemoryLimit(256 << 20)
	_ = vm.SetEvalTimeout(10 * time.Second)
	_, err = vm.Eval(src+";0", quickjs.EvalGlobal) // the namespace stays in the VM
	if err == nil {
		return nil
	}
	var need []string
	msg := err.Error()
	for {
		_, rest, ok := strings.Cut(msg, `Dynamic require of "`)
		if !ok {
			break
		}
		name, after, _ := strings.Cut(rest, `"`)
		name = strings.TrimPrefix(name, "node:")
		if top, _, _ := strings.Cut(name, "/"); nodeBuiltins[top] {
			need = append(need, name)
		}
		msg = after
	}
	if len(need) == 0 {
		return nil
	}
	return &BundleError{Package: p, Messages: []string{err.Error()}, NodeBuiltins: need}
}

// cjsNamespace is a function expression that makes, from a CommonJS
// module's module.exports, the namespace an ECMAScript import of it gets
// in Node: "default" is module.exports itself (also when it sets
// __esModule), and the other names are module.exports' own enumerable
// properties, sorted, in a frozen object with a null prototype and the
// tag "Module". Node finds the names by scanning the source
// (cjs-module-lexer), which finds fewer (none for a UMD bundle such as
// lodash's): every name Node gives is here, with Node's value.
const cjsNamespace = `(function (m) {
var ns = Object.create(null), names = [];
if ((typeof m === "object" && m !== null) || typeof m === "function") names = Object.keys(m);
names.push("default");
names.sort();
for (var i = 0; i < names.length; i++) {
var k = names[i];
if (k === "__esModule") continue;
Object.defineProperty(ns, k, { value: k === "default" ? m : m[k], enumerable: true, writable: false, configurable: false });
}
Object.defineProperty(ns, Symbol.toStringTag, { value: "Module" });
return Object.freeze(ns);
})`

// nodeBuiltins are Node's built-in modules (module.builtinModules of
// Node 20, without the subpaths and the internal "_" ones).
var nodeBuiltins = map[string]bool{}

// externalBuiltins are the import paths of Node's built-ins, for esbuild.
var externalBuiltins = func() []string {
	var ext []string
	for _, n := range strings.Fields(`assert async_hooks buffer child_process cluster console constants
crypto dgram diagnostics_channel dns domain events fs http http2 https inspector module net os path
perf_hooks process punycode querystring readline repl stream string_decoder sys timers tls
trace_events tty url util v8 vm wasi worker_threads zlib`) {
		nodeBuiltins[n] = true
		ext = append(ext, n, n+"/*", "node:"+n, "node:"+n+"/*")
	}
	return ext
}()

// licences adds the package's licence and notice files to files.
func licences(pkgDir string, files map[string][]byte) error {
	entries, err := os.ReadDir(pkgDir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		up := strings.ToUpper(e.Name())
		if !e.Type().IsRegular() || !(strings.HasPrefix(up, "LICENSE") || strings.HasPrefix(up, "LICENCE") ||
			strings.HasPrefix(up, "COPYING") || strings.HasPrefix(up, "NOTICE")) {
			continue
		}
		if _, taken := files[e.Name()]; taken {
			continue
		}
		data, err := os.ReadFile(filepath.Join(pkgDir, e.Name()))
		if err != nil {
			return err
		}
		files[e.Name()] = data
	}
	return nil
}

// esbuildVersion is the version of esbuild this binary was built with.
func esbuildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/evanw/esbuild" {
				return d.Version
			}
		}
	}
	return "unknown"
}
