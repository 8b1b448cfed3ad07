package security_test

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// The tests of this package run in the order they are declared here. The
// native-loop rows come last: a loop the engine cannot interrupt keeps a CPU
// busy after its row has failed, and would slow everything after it.

func TestMain(m *testing.M) { testenv.Main(m) }

// TestCatalogueNames keeps row names unique, so that -run can pick one.
func TestCatalogueNames(t *testing.T) {
	for name, rows := range catalogues() {
		seen := map[string]bool{}
		for _, a := range rows {
			if seen[a.name] {
				t.Errorf("%s: row %q appears twice", name, a.name)
			}
			seen[a.name] = true
		}
	}
}

func catalogues() map[string][]attack {
	m := map[string][]attack{"native": nativeLoops, "pyLeftovers": pyLeftovers}
	for _, pa := range poolAttacks {
		m["pool/"+pa.name] = pa.rows
	}
	for _, sec := range sections(nil) {
		m[sec.name] = sec.rows
	}
	return m
}

// TestAttacks runs the catalogue: every row against a real engine, for
// each isolation. Each section has its own engine, which must still work
// at the end; sections and isolations run in parallel, rows one by one.
func TestAttacks(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			t.Parallel()
			for _, sec := range sections(t) {
				t.Run(sec.name, func(t *testing.T) {
					t.Parallel()
					runSection(t, iso, sec)
					if sec.after != nil {
						sec.after(t)
					}
				})
			}
		})
	}
}

// sections are the catalogue's sections, each with the engine it needs. A
// nil t gives the rows only.
func sections(t *testing.T) []section {
	var port int
	var conns *atomic.Int64
	if t != nil {
		port, conns = loopback(t)
	}
	return []section{
		{name: "escape", rows: escapes},
		{name: "memory", rows: memoryBombs},
		{name: "recursion", rows: recursionBombs},
		{name: "time", rows: timeBombs},
		{name: "json", rows: jsonBombs},
		{name: "floods", rows: floods},
		{name: "typescript", lang: sandbox.TypeScript, rows: typescript},
		{
			name:  "egress",
			cfg:   egressConfig(port),
			subst: strings.NewReplacer("$PORT", strconv.Itoa(port)),
			rows:  ssrf,
			after: func(t *testing.T) {
				if n := conns.Load(); n != 0 {
					t.Errorf("SSRF: the loopback server saw %d connections; want none", n)
				}
			},
		},
	}
}

// TestNoStateAcrossRuns pollutes a runtime in one run and looks for the
// pollution in the next, on an engine with one slot.
func TestNoStateAcrossRuns(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			t.Parallel()
			noStateAcrossRuns(t, iso)
		})
	}
}

// TestPythonLeftovers has one tenant's Python steps leave what they can in
// their zygote's jail, and another tenant's next run on it look for it.
func TestPythonLeftovers(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			t.Parallel()
			pythonLeftovers(t, iso)
		})
	}
}

// TestPoolShare runs the pool attacks (share_test.go): one tenant's runs
// hold slots by not reading their events, by idling or by computing,
// while another tenant's runs must keep completing; each of the first
// tenant's runs then ends at the stall limit or its own. Isolations run in
// parallel, rows one by one.
func TestPoolShare(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			t.Parallel()
			poolShare(t, iso)
		})
	}
}

// TestSoak runs a mixed load with injected faults (worker and zygote
// kills, aborts, timeouts, OOMs) against both isolations at once, for
// -soak or $STEPBOX_SOAK (15 s by default), and checks every run's one
// terminal event and the host's figures; see soak_test.go. It must never
// run in parallel with another test: it kills the test process's children.
func TestSoak(t *testing.T) { soak(t) }

// TestNativeLoops runs the rows that loop inside a built-in.
func TestNativeLoops(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso.name, func(t *testing.T) {
			t.Parallel()
			rows := nativeLoops
			if iso.name == "inprocess" {
				// In-process nothing can stop a native loop: the run is
				// abandoned at wall+grace and its goroutine spins until
				// the call returns. Loops that do end, later, keep the
				// test binary's CPU and goroutines bounded.
				rows = boundedNativeLoops()
			}
			// Nothing but the grace ends these runs: the default one.
			runSection(t, iso, section{rows: rows, cfg: sandbox.Config{Grace: sandbox.DefaultGrace}})
		})
	}
}
