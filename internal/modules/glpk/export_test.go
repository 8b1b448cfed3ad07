//go:build cgo

package glpk

// FailForTest makes GLPK report an internal error inside the recovery of
// sb_solve and returns the message it captured ("" if none was).
var FailForTest = failForTest

// Version is GLPK's version.
var Version = version
