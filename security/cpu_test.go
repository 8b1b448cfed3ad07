package security_test

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// The rows of issue #14, item 6: a limit reported as something else, and
// late. Each run must end with the first limit it reaches, and a CPU limit
// within 10% and 10 ms of cpuMs, also when the step sits in one native call
// that the engine's interrupt (JavaScript) or a Python-level signal
// handler cannot reach.

var (
	cpu100mem128  = sandbox.Limits{CPUMs: 100, MemoryMB: 128}
	wall300mem128 = sandbox.Limits{WallMs: 300, MemoryMB: 128}
	cpu300        = sandbox.Limits{CPUMs: 300}
)

// cpuBound is the most CPU a run with a CPU limit of limit ms may report.
// The limits promise 10% and 10 ms; under the race detector the watchdogs'
// timers run late by more than that on a loaded machine, and the suite
// allows more (the README's figures are measured without it, by
// TestCPUOvershoot).
func cpuBound(limit float64) float64 {
	if testenv.Race {
		return limit*1.5 + 50
	}
	return limit*1.1 + 10
}

// cpuWithin checks that the run used at most cpuBound of its CPU limit.
func cpuWithin(limit float64) check {
	return func(t *testing.T, o *outcome) {
		t.Helper()
		if used := o.stats().CPUMs; used > cpuBound(limit) {
			t.Errorf("the run used %.1f ms of CPU for a limit of %.0f ms; want at most %.0f", used, limit, cpuBound(limit))
		}
	}
}

// longLength is the length of an array-like whose indexOf, one native
// loop the interrupt never reaches, takes about a second here (some two
// under the race detector): past every CPU limit below, and over soon
// after, so that an in-process engine's abandoned goroutine does not spin
// for long.
func longLength() string { return strconv.Itoa(int(6e7 / testenv.Slowdown())) }

// cpuRows are JavaScript steps that cross a limit in ways that used to be
// reported as another outcome, or late.
func cpuRows() []attack {
	rows := []attack{
		// The chain of promises grows until an allocation fails inside a
		// promise job, which the engine turns into a rejection nothing
		// sees; the queue then runs dry ("never finished", once).
		{"self-rescheduling promise chain", `const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})`, mem16, fails(sandbox.CodeOOM, "memoryMb")},
		{"self-rescheduling async chain", `async function f() { await null; return f() } f(); await new Promise(() => {})`, mem16, fails(sandbox.CodeOOM, "memoryMb")},
		{"promise chain whose rejection is caught", `const f = () => Promise.resolve().then(f); f().catch(() => {}); await new Promise(() => {})`, mem16, fails(sandbox.CodeOOM, "memoryMb")},
		{"promise chain, CPU limit first", `const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})`, cpu100mem128, fails(sandbox.CodeTimeout, "cpuMs").and(cpuWithin(100))},
		{"promise chain, wall limit first", `const f = () => Promise.resolve().then(f); f(); await new Promise(() => {})`, wall300mem128, fails(sandbox.CodeTimeout, "wallMs")},
		// Near the limit the engine throws null, having no memory for its
		// error: OOM every time, whatever the machine's load (a sampled
		// heap missed it).
		{"throw null near the memory limit", `const keep = []; for (let i = 0; i < 5; i++) keep.push("x".repeat(1 << 20)); throw null`, mem16, throws("Uncaught null")},
		// One native call past the CPU limit.
		{"indexOf on a long array-like", `return Array.prototype.indexOf.call({length: ` + longLength() + `}, 1)`, cpu100, fails(sandbox.CodeTimeout, "cpuMs").and(cpuWithin(100))},
		{"join of a long sparse array", `return new Array(` + longLength() + `).join("").length`, cpu100, fails(sandbox.CodeTimeout, "cpuMs").and(cpuWithin(100))},
	}
	for i := 1; i <= 5; i++ {
		rows = append(rows, attack{fmt.Sprintf("Set of strings, run %d", i), `const s = new Set(); for (let i = 0; ; i++) s.add("k" + i)`, mem4, fails(sandbox.CodeOOM, "memoryMb")})
	}
	// The issue's own: JSON.stringify's cycle check is quadratic in the
	// depth (25.6 s of CPU for a limit of 20 s under the race detector).
	// Last: in-process its goroutine spins on for seconds.
	return append(rows, attack{"a deep array as the result", `let a = []; for (let i = 0; i < 100000; i++) a = [a]; return a`, cpu100,
		fails(sandbox.CodeTimeout, "cpuMs").and(cpuWithin(100)).orElse(throws("TypeError: the result is not JSON-serializable"))})
}

// pyCPURows are Python steps that defeat their CPU timer and then sit in
// one native call: only the zygote's watch ends them at the limit
// (RLIMIT_CPU did, in whole seconds).
const pyIgnoreSIGPROF = "import signal\nsignal.signal(signal.SIGPROF, signal.SIG_IGN)\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\n"

var pyCPURows = []attack{
	{"sorted, SIGPROF ignored", pyIgnoreSIGPROF + "import random\nr = random.Random(1)\na = [r.random() for _ in range(10**5)] * 40\nreturn len(sorted(a))", cpu300, fails(sandbox.CodeTimeout, "cpuMs").and(cpuWithin(300))},
	{"str of a huge int, SIGPROF handled", "import signal, sys\nsignal.signal(signal.SIGPROF, lambda *a: None)\nsys.set_int_max_str_digits(0)\nreturn len(str(7 ** 4000000))", cpu300, fails(sandbox.CodeTimeout, "cpuMs").and(cpuWithin(300))},
	{"re backtracking, timer cancelled", "import signal, re\nsignal.setitimer(signal.ITIMER_PROF, 0)\nreturn bool(re.match(r'(a+)+$', 'a' * 40 + '!'))", cpu300, fails(sandbox.CodeTimeout, "cpuMs").and(cpuWithin(300))},
	{"threads spinning, SIGPROF ignored", pyIgnoreSIGPROF + "import threading\ndef spin():\n    while True:\n        pass\nfor _ in range(4):\n    threading.Thread(target=spin, daemon=True).start()\nspin()", cpu300, fails(sandbox.CodeTimeout, "cpuMs").and(cpuWithin(300))},
}

// TestFirstLimit runs cpuRows and pyCPURows in each isolation, one row at
// a time and nothing else in parallel: an in-process run abandoned in a
// native call keeps a CPU (one of the Go scheduler's few Ps) until the
// call returns, and the next row waits for it, so that each row's
// watchdog is measured on a machine it has to itself.
func TestFirstLimit(t *testing.T) {
	for name, rows := range map[string][]attack{"cpu": cpuRows(), "pyCPU": pyCPURows} {
		seen := map[string]bool{}
		for _, a := range rows {
			if seen[a.name] {
				t.Errorf("%s: row %q appears twice", name, a.name)
			}
			seen[a.name] = true
		}
	}
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			t.Run("cpu", func(t *testing.T) { runOneByOne(t, iso, section{rows: cpuRows()}) })
			t.Run("pyCPU", func(t *testing.T) { runOneByOne(t, iso, section{lang: sandbox.Python, rows: pyCPURows}) })
		})
	}
}

// runOneByOne is runSection with a wait for an idle engine after each row.
func runOneByOne(t *testing.T, iso isolation, sec section) {
	tg := newTarget(t, iso, sec.cfg)
	for _, a := range sec.rows {
		t.Run(a.name, func(t *testing.T) {
			if o := tg.run(t, sandbox.Request{Language: sec.lang, Code: a.code, Limits: a.limits}); o != nil {
				assertOutcome(t, a.want, o)
			}
			waitIdle(t, tg.engine())
		})
	}
	tg.finish(t)
}

// waitIdle waits until e runs nothing: an in-process run abandoned in a
// native call gives its slot back when the call returns.
func waitIdle(t *testing.T, e *sandbox.Engine) {
	t.Helper()
	testenv.WaitFor(t, "the engine to be idle", func() bool {
		running, _, _, _ := e.Load()
		return running == 0
	})
}

var overshootRuns = flag.Int("overshoot", 1, "how many times TestCPUOvershoot runs each provocation")

// provocation is one way to spend a CPU limit, for TestCPUOvershoot.
type provocation struct {
	name string
	lang sandbox.Language
	code string
}

var provocations = []provocation{
	{"JS: a loop", sandbox.JavaScript, `while (true) {}`},
	{"JS: await loop", sandbox.JavaScript, `while (true) await null`},
	{"JS: regex backtracking", sandbox.JavaScript, `return /(a+)+$/.test("a".repeat(40) + "!")`},
	{"JS: sort without a comparator", sandbox.JavaScript, `const a = []; for (let i = 0; i < 1e6; i++) a.push(String(Math.random())); a.sort(); return a.length`},
	{"JS: indexOf on an array-like (native)", sandbox.JavaScript, `return Array.prototype.indexOf.call({length: ` + longLength() + `}, 1)`},
	{"JS: join of a sparse array (native)", sandbox.JavaScript, `return new Array(` + longLength() + `).join("").length`},
	{"JS: a deep array as the result (native)", sandbox.JavaScript, `let a = []; for (let i = 0; i < 100000; i++) a = [a]; return a`},
	{"Python: a loop", sandbox.Python, "while True:\n    pass"},
	{"Python: sorted()", sandbox.Python, "import random\nr = random.Random(1)\na = [r.random() for _ in range(10**5)] * 40\nwhile True:\n    sorted(a)"},
	{"Python: sorted(), SIGPROF ignored", sandbox.Python, pyIgnoreSIGPROF + "import random\nr = random.Random(1)\na = [r.random() for _ in range(10**5)] * 40\nreturn len(sorted(a))"},
	{"Python: str() of a huge int, SIGPROF handled", sandbox.Python, "import signal, sys\nsignal.signal(signal.SIGPROF, lambda *a: None)\nsys.set_int_max_str_digits(0)\nreturn len(str(7 ** 4000000))"},
	{"Python: re backtracking, timer cancelled", sandbox.Python, "import signal, re\nsignal.setitimer(signal.ITIMER_PROF, 0)\nreturn bool(re.match(r'(a+)+$', 'a' * 40 + '!'))"},
	{"Python: 5 threads, SIGPROF ignored", sandbox.Python, pyIgnoreSIGPROF + "import threading\ndef spin():\n    while True:\n        pass\nfor _ in range(4):\n    threading.Thread(target=spin, daemon=True).start()\nspin()"},
}

// TestCPUOvershoot measures how far past its CPU limit each provocation
// gets, in each isolation, and logs the table the README's limits section
// shows (go test ./security -run TestCPUOvershoot -overshoot=5 -v). It
// asserts the promised bound, 10% and 10 ms of cpuMs, on the CPU the
// engine reports, and is skipped under the race detector, whose timers
// run too late for it.
func TestCPUOvershoot(t *testing.T) {
	if testenv.Race {
		t.Skip("the race detector delays the watchdogs' timers: the bound is checked without it (cpuWithin checks a looser one)")
	}
	const limit = 200.0
	type cell struct {
		worst, sum float64
		n          int
	}
	table := map[string]map[string]*cell{}
	for _, iso := range isolations {
		tg := newTarget(t, iso, sandbox.Config{PoolSize: 1})
		for _, p := range provocations {
			for i := 0; i < *overshootRuns; i++ {
				o := tg.run(t, sandbox.Request{Language: p.lang, Code: p.code, Limits: sandbox.Limits{CPUMs: int(limit)}})
				if o == nil {
					continue // reported as a hang
				}
				if o.err == nil || o.err.Code != sandbox.CodeTimeout || o.err.Limit != "cpuMs" {
					if p.name == "JS: a deep array as the result (native)" && o.err != nil && o.err.Code == sandbox.CodeRuntime {
						continue // the engine gave up on the depth before the limit
					}
					t.Errorf("%s, %s: %v; want TIMEOUT cpuMs", iso.name, p.name, o.err)
					continue
				}
				used := o.stats().CPUMs
				if used > cpuBound(limit) {
					t.Errorf("%s, %s: %.1f ms of CPU for a limit of %.0f ms; want at most %.0f", iso.name, p.name, used, limit, cpuBound(limit))
				}
				if table[p.name] == nil {
					table[p.name] = map[string]*cell{}
				}
				c := table[p.name][iso.name]
				if c == nil {
					c = &cell{}
					table[p.name][iso.name] = c
				}
				c.worst = max(c.worst, used)
				c.sum += used
				c.n++
			}
			// An abandoned in-process run keeps its slot until its call
			// returns: wait, so that the next measurement has the CPU.
			waitIdle(t, tg.engine())
		}
		tg.finish(t)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CPU at the end of runs with cpuMs=%.0f (bound %.0f), worst of %d (mean):\n\n", limit, cpuBound(limit), *overshootRuns)
	fmt.Fprintf(&b, "| provocation | process | in-process |\n| --- | --- | --- |\n")
	names := make([]string, 0, len(table))
	for _, p := range provocations {
		if table[p.name] != nil {
			names = append(names, p.name)
		}
	}
	for _, n := range names {
		fmt.Fprintf(&b, "| %s |", n)
		for _, iso := range isolations {
			c := table[n][iso.name]
			if c == nil {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(&b, " %.0f ms (%.0f) |", c.worst, c.sum/float64(c.n))
		}
		b.WriteString("\n")
	}
	t.Log("\n" + b.String())
}
