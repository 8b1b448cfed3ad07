//go:build race

package testenv

// Race reports whether the race detector is on. Transpiled QuickJS runs
// tens of times slower under it, so tests that run real workloads scale
// their time limits with Scale.
const Race = true
