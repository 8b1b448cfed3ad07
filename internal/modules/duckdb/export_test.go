//go:build cgo

package duckdb

// Creates returns how many databases this process has made.
func Creates() int64 { return creates.Load() }
