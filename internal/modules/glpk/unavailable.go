//go:build !cgo || stepbox_noglpk

package glpk

// This binary has no GLPK: it was built without cgo (GLPK is a C library)
// or with the stepbox_noglpk tag (GLPK is GPL-3; the tag keeps a binary
// under Stepbox's own licence). Solve fails with KindUnavailable, saying
// which (unavailableWhy) and what to do; it checks available before
// calling anything here.

const available = false

func version() string { return "" }

type cancelFlag struct{}

func newCancelFlag() cancelFlag { return cancelFlag{} }
func (cancelFlag) set()         {}
func (cancelFlag) free()        {}

func run(*problem, bool, float64, int, int, cancelFlag) outcome {
	panic("glpk: run in a build without GLPK")
}
