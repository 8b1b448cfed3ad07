package testenv

import (
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"modernc.org/quickjs"
)

// Time budgets in tests.
//
// A test that does not mean to cross a limit gives its step [Unreachable]
// limits: no machine that can run the suite at all reaches them, and the
// test's own -timeout is the backstop for a hang. A test that crosses a
// limit on purpose makes a step that never ends by itself (a loop, a
// promise nobody settles), so how fast the machine is does not matter.
// What remains is an upper bound a test asserts on how long something
// took ("an abort ends the run within a second"): such a bound is written
// for a reference machine and passed through [Scale], which multiplies it
// by the slow-down this build shows on this machine, measured once when
// first asked (see [Slowdown]).

// Unreachable limits, in milliseconds, for steps that do not mean to
// cross them: ten minutes of CPU, twenty of wall time.
const (
	UnreachableCPUMs  = 10 * 60 * 1000
	UnreachableWallMs = 20 * 60 * 1000
)

// referenceCalibration is what calibrate took on the reference machine
// (a 2-vCPU AMD EPYC, quiet, without the race detector), best of three.
const referenceCalibration = 2 * time.Millisecond

// margin is the head room Scale adds on top of the measured slow-down:
// a machine's load changes during a run of the suite.
const margin = 4

var slowdown = sync.OnceValue(func() float64 {
	best := time.Duration(math.MaxInt64)
	for i := 0; i < 3; i++ {
		d, err := calibrate()
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv: calibration failed (%v); assuming a 100x slow-down\n", err)
			return 100
		}
		best = min(best, d)
	}
	return max(1, float64(best)/float64(referenceCalibration))
})

// calibrate times a fixed piece of QuickJS work in a fresh VM: the engine
// most tests spend their time in, built as this test binary was (race or
// not), on this machine as loaded as it is now.
func calibrate() (time.Duration, error) {
	start := time.Now()
	vm, err := quickjs.NewVM()
	if err != nil {
		return 0, err
	}
	defer vm.Close()
	_, err = vm.Eval(`
		let s = 0, a = [];
		for (let i = 0; i < 2500; i++) {
			a.push({ i, s: String(i) });
			s += a[i].s.length;
		}
		JSON.stringify(a.slice(0, 250)).length + s`, quickjs.EvalGlobal)
	return time.Since(start), err
}

// Slowdown returns how many times longer than on the reference machine a
// piece of engine work takes in this test binary here (at least 1). It is
// measured once, on first use, and includes the race detector's cost.
func Slowdown() float64 { return slowdown() }

// Scale returns n (milliseconds, or any count of time units) as a budget
// for this machine: n × Slowdown × a margin for changing load. Use it for
// upper bounds a test asserts on elapsed time and for limits a test must
// keep short but does not mean to cross.
func Scale(n int) int { return int(math.Ceil(float64(n) * Slowdown() * margin)) }

// ScaleDuration is Scale for a time.Duration.
func ScaleDuration(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Slowdown() * margin)
}
