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
//     fetches them: no install script of any package ever runs;
//  4. esbuild bundles the package into one script (platform neutral, so a
//     package that needs Node's built-ins, "fs" or "http", fails here with
//     esbuild's message); every input must come from the package's own
//     directory;
//  5. the script and a record of what was installed (stepbox.json, with
//     the bundle's SHA-256) are moved into the cache directory in one
//     rename: a reader sees the old install or the new one, never half.
//
// The bundle is an immediately invoked function expression whose value is
// the package's module namespace (its named exports, and "default" when it
// has one):
//
//	(function () {
//	var __sbx_pkg = (() => { … })();
//	return __sbx_pkg;
//	})()
//
// # Cache
//
//	DIR/simple-statistics@7.12.1/bundle.js      the script above
//	DIR/simple-statistics@7.12.1/stepbox.json   name, version, integrity, sha256 of bundle.js, esbuild version
//	DIR/simple-statistics@7.12.1/LICENSE        the package's licence files, as shipped
//
// A scoped name's slash is written "+": "@scope+name@1.0.0". The default
// directory is $XDG_CACHE_HOME/stepbox/packages, or
// ~/.cache/stepbox/packages (DefaultCacheDir). Load reads an entry back and
// checks it against the catalogue entry (name, version, integrity) and its
// own SHA-256, so an entry installed for another version, or edited since,
// is not used.
//
// # Runtime
//
// The engine loads the bundles a step imports and sends them with the run;
// internal/jsrt compiles each to QuickJS bytecode once per process and
// evaluates it in the run's VM, where the step's imports of it were
// rewritten into lookups of its namespace. Nothing here runs in the worker.
package npm
