// Package npm is the npm-packages module of DESIGN decision 7: pure
// JavaScript packages from npm that JavaScript and TypeScript steps import
// ("import * as ss from "simple-statistics""), from an operator's catalogue
// pinned by integrity hash.
//
// # Install
//
// Install fetches a catalogue entry with the npm client, so that the
// operator's npm configuration (registry, proxy, credentials, CA) applies;
// this package holds no registry address:
//
//  1. npm pack NAME@VERSION --ignore-scripts, in a fresh directory: the
//     tarball exactly as the registry serves it;
//  2. its SHA-512 is compared with the catalogue's integrity (the SRI
//     string that "npm view NAME@VERSION dist.integrity" prints); a
//     mismatch is an *IntegrityError and nothing is installed;
//  3. the tarball is unpacked (regular files and directories only, every
//     path checked to stay inside the directory) and, only if the package
//     declares dependencies, "npm install --omit=dev --ignore-scripts"
//     fetches them, in a directory of their own: no install script of any
//     package ever runs;
//  4. esbuild bundles the package into one script, resolving the file
//     Node imports (exports' "import" condition, else "main") but
//     preferring "browser" builds and the "browser" field's replacements,
//     since a step has web globals and no Node built-ins; every input must
//     come from the package's own directory. Node built-ins stay external
//     (a require of one throws when it runs): a package that requires one
//     to load, which evaluating the bundle in a bare QuickJS VM shows, is
//     refused with a *BundleError listing them (NodeBuiltins);
//  5. the script and a record of what was installed (stepbox.json, with
//     the bundle's SHA-256 and format) are moved into the cache directory
//     in one rename: a reader sees the old install or the new one, never
//     half.
//
// The bundle is an immediately invoked function expression whose value is
// the namespace an import of the package gets in Node: an ECMAScript
// module's (its named exports, and "default" when it has one), or, for a
// CommonJS package, a frozen object whose "default" is module.exports and
// whose other names are module.exports' own enumerable properties:
//
//	(function () {
//	var __sbx_pkg = (() => { … })();
//	return __sbx_pkg;                  // ESM; CommonJS: return (function (m) { … })(__sbx_pkg);
//	})()
//
// # Cache
//
//	DIR/simple-statistics@7.12.1/bundle.js      the script above
//	DIR/simple-statistics@7.12.1/stepbox.json   name, version, integrity, sha256 of bundle.js, esbuild version, bundle format
//	DIR/simple-statistics@7.12.1/LICENSE        the package's licence files, as shipped
//
// A scoped name's slash is written "+": "@scope+name@1.0.0". The default
// directory is $XDG_CACHE_HOME/stepbox/packages, or
// ~/.cache/stepbox/packages (DefaultCacheDir). Load reads an entry back and
// checks it against the catalogue entry (name, version, integrity) and its
// own SHA-256 and format, so an entry installed for another version, by
// another Stepbox, or edited since, is not used.
//
// # Runtime
//
// The engine loads the bundles a step imports and sends them with the run;
// internal/jsrt compiles each to QuickJS bytecode once per process and
// evaluates it in the run's VM, where the step's imports of it were
// rewritten into lookups of its namespace. Nothing here runs in the worker.
package npm
