//go:build !cgo || stepbox_noglpk

package glpk

// This binary has no GLPK: it was built without cgo (GLPK is a C library)
// or with the stepbox_noglpk tag (GLPK is GPL-3; the tag keeps a binary
// under Stepbox's own licence). Solve fails with KindUnavailable, saying
// which (unavailableWhy) and what to do; it checks available before
// calling run.

const available = false

func version() string { return "" }

type cancelFlag struct{}

func newCancelFlag() cancelFlag { return cancelFlag{} }
func (cancelFlag) set()         {}
func (cancelFlag) free()        {}

// run is never called (Solve checks Available first); were it called, the
// solve would fail as a solver error.
func run(*problem, bool, float64, int, int, int, cancelFlag) outcome {
	return outcome{failed: "GLPK is not in this binary"}
}

func write(*problem, bool) (string, string) { return "", "GLPK is not in this binary" }
