//go:build cgo && !stepbox_noglpk

package glpk

// FailForTest makes GLPK report an internal error inside the recovery of
// sb_solve and returns the message it captured ("" if none was).
var FailForTest = failForTest
