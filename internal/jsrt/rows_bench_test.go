//go:build !(386 || arm)

package jsrt

import (
	"syscall"
	"testing"
	"time"

	"modernc.org/quickjs"
)

// benchVM returns a VM with globalThis.rows, n rows of the benchmark's
// shape (sandbox.BenchmarkDuckDBRun).
func benchVM(tb testing.TB, n int) (*quickjs.VM, quickjs.Value) {
	tb.Helper()
	vm, err := quickjs.NewVM()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { vm.Close() })
	if _, err := vm.Eval(`globalThis.rows = JSON.parse(JSON.stringify(Array.from({length: `+itoa(n)+`}, (_, i) => ({id: i, region: "r" + (i % 20), amount: (i % 997) / 10}))))`, quickjs.EvalGlobal); err != nil {
		tb.Fatal(err)
	}
	v, err := vm.EvalValue("rows", quickjs.EvalGlobal)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { v.Free() })
	return vm, v
}

// cpuPerOp reports the process's CPU time per op, steadier than the wall
// clock on a busy machine. Call it deferred, before b.Loop.
func cpuPerOp(b *testing.B) func() {
	var r0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	return func() {
		var r1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

func itoa(n int) string {
	b := []byte{}
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// BenchmarkWalkRows reads 10,000 rows from the VM.
func BenchmarkWalkRows(b *testing.B) {
	vm, v := benchVM(b, 10_000)
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, ok := walkRows(vm, v, 1<<30, func() {}); !ok {
			b.Fatal("gave up")
		}
	}
}

// BenchmarkStringifyRows is what the walk replaces: JSON.stringify.
func BenchmarkStringifyRows(b *testing.B) {
	vm, _ := benchVM(b, 10_000)
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := vm.Eval(`JSON.stringify(rows).length`, quickjs.EvalGlobal); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseRows is JSON.parse of the 10,000 rows, as a run's input.
func BenchmarkParseRows(b *testing.B) {
	vm, _ := benchVM(b, 10_000)
	if _, err := vm.Eval(`globalThis.text = JSON.stringify(rows)`, quickjs.EvalGlobal); err != nil {
		b.Fatal(err)
	}
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := vm.Eval(`JSON.parse(text).length`, quickjs.EvalGlobal); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildRows is buildJSON of the 10,000 rows.
func BenchmarkBuildRows(b *testing.B) {
	vm, _ := benchVM(b, 10_000)
	text, err := vm.Eval(`JSON.stringify(rows)`, quickjs.EvalGlobal)
	if err != nil {
		b.Fatal(err)
	}
	defer cpuPerOp(b)()
	for b.Loop() {
		v, ok, _ := buildJSON(vm, text.(string), func() bool { return false }, false)
		if !ok {
			b.Fatal("gave up")
		}
		v.Free()
	}
}
