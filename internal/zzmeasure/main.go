package main

import (
	"fmt"
	"os"
	"time"

	"modernc.org/quickjs"
	"modernc.org/quickjs/intl"
)

const probe = `[new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString("en-US", { timeZone: "Europe/Paris" }), (1234567.891).toLocaleString()].join(" | ")`
const loop = `(function(){ const f = new Intl.DateTimeFormat("en-US", {timeZone: "America/New_York", dateStyle: "medium", timeStyle: "short"}); let s = 0; for (let i = 0; i < 10000; i++) s += f.format(new Date(1700000000000 + i * 3600000)).length; return s })()`

func best(n int, f func() time.Duration) time.Duration {
	b := time.Hour
	for i := 0; i < n; i++ {
		if d := f(); d < b {
			b = d
		}
	}
	return b
}

func main() {
	for _, path := range os.Args[1:] {
		src, _ := os.ReadFile(path)
		vm, _ := quickjs.NewVM()
		code, err := vm.Compile("globalThis.Intl = {};\n"+string(src), quickjs.EvalGlobal)
		if err != nil {
			panic(err)
		}
		vm.Close()
		fmt.Printf("%s: source %d B, bytecode %d B\n", path, len(src), len(code))
		var out any
		load := best(5, func() time.Duration {
			vm, _ := quickjs.NewVM()
			defer vm.Close()
			t := time.Now()
			if _, err := vm.EvalBytecodeValue(code); err != nil {
				panic(err)
			}
			return time.Since(t)
		})
		first := best(5, func() time.Duration {
			vm, _ := quickjs.NewVM()
			defer vm.Close()
			t := time.Now()
			vm.EvalBytecodeValue(code)
			out, err = vm.Eval(probe, quickjs.EvalGlobal)
			if err != nil {
				panic(err)
			}
			return time.Since(t)
		})
		vm, _ = quickjs.NewVM()
		vm.EvalBytecodeValue(code)
		t := time.Now()
		if _, err := vm.Eval(loop, quickjs.EvalGlobal); err != nil {
			panic(err)
		}
		fmt.Printf("  load %v, load+first use %v -> %v; 10k loop %v\n", load, first, out, time.Since(t))
		vm.Close()
	}
	// modernc intl
	var out any
	reg := best(5, func() time.Duration {
		vm, _ := quickjs.NewVM()
		defer vm.Close()
		t := time.Now()
		if err := intl.Register(vm, intl.TimeZone("UTC")); err != nil {
			panic(err)
		}
		return time.Since(t)
	})
	first := best(5, func() time.Duration {
		vm, _ := quickjs.NewVM()
		defer vm.Close()
		t := time.Now()
		intl.Register(vm, intl.TimeZone("UTC"))
		var err error
		out, err = vm.Eval(probe, quickjs.EvalGlobal)
		if err != nil {
			panic(err)
		}
		return time.Since(t)
	})
	vm, _ := quickjs.NewVM()
	intl.Register(vm, intl.TimeZone("UTC"))
	t := time.Now()
	if _, err := vm.Eval(loop, quickjs.EvalGlobal); err != nil {
		panic(err)
	}
	fmt.Printf("modernc intl: register %v, register+first use %v -> %v; 10k loop %v\n", reg, first, out, time.Since(t))
}
