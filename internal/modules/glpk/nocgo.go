//go:build !cgo

package glpk

// This binary was built without cgo: GLPK is a C library, so Solve fails
// with KindUnavailable (it checks available before calling anything here).

const available = false

type cancelFlag struct{}

func newCancelFlag() cancelFlag { return cancelFlag{} }
func (cancelFlag) set()         {}
func (cancelFlag) free()        {}

func run(*problem, bool, float64, int, int, cancelFlag) outcome {
	panic("glpk: run without cgo")
}
