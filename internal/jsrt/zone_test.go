package jsrt

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestZoneAgainstNode runs testdata/zone/cases.js in a run of each time
// zone of the table and compares every value with node's with TZ set to
// that zone (golden.json, written by gen.sh): Date's getters, setters,
// constructor, parsing and strings, and Intl's default zone. The one
// difference allowed for: node ends toString and toTimeString with the
// zone's long name in parentheses, which QuickJS's never write.
func TestZoneAgainstNode(t *testing.T) {
	src, err := os.ReadFile("testdata/zone/cases.js")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/zone/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Node  string                 `json:"node"`
		TZ    string                 `json:"tz"`
		Zones map[string][][2]string `json:"zones"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	zoneName := regexp.MustCompile(` \([A-Za-z][A-Za-z .'-]*\)`)
	rt := newRT(t)
	lim := testLimits
	lim.MaxResultBytes = 8 << 20
	for zone, want := range golden.Zones {
		t.Run(zone, func(t *testing.T) {
			ev := runJob(t, rt, Job{Code: string(src) + "\nreturn evaluate()", Limits: lim, TimeZone: zone})
			if ev.Error != nil {
				t.Fatalf("run: %+v", ev.Error)
			}
			var got [][2]string
			if err := json.Unmarshal(ev.Result.Value, &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d cases, golden.json has %d: run gen.sh", len(got), len(want))
			}
			for i, w := range want {
				if got[i][0] != w[0] {
					t.Fatalf("case %d is %s, golden.json has %s: run gen.sh", i, got[i][0], w[0])
				}
				if node := zoneName.ReplaceAllString(w[1], ""); got[i][1] != node {
					t.Errorf("%s\n  got  %s\n  node %s", w[0], got[i][1], node)
				}
			}
		})
	}
	t.Logf("node %s, tz %s", golden.Node, golden.TZ)
}

// TestZoneHostProcess: in a process whose local time is not UTC (the host
// of an in-process engine, here TZ=Asia/Kolkata), a run is still in its
// own zone: UTC when it names none. The test runs itself again in such a
// process: QuickJS's C library reads TZ when the process starts.
func TestZoneHostProcess(t *testing.T) {
	const child = "STEPBOX_TEST_ZONE_CHILD"
	if os.Getenv(child) == "1" {
		if processZoneIsUTC() {
			t.Fatal("TZ=Asia/Kolkata, and the process's zone reads as UTC")
		}
		rt := newRT(t)
		for zone, want := range map[string]string{
			"":             `[12,0,"Wed Jul 01 2026 12:00:00 GMT+0000","7/1/2026, 12:00:00 PM"]`,
			"UTC":          `[12,0,"Wed Jul 01 2026 12:00:00 GMT+0000","7/1/2026, 12:00:00 PM"]`,
			"Europe/Paris": `[14,-120,"Wed Jul 01 2026 14:00:00 GMT+0200","7/1/2026, 2:00:00 PM"]`,
		} {
			ev := runJob(t, rt, Job{TimeZone: zone, Code: `const d = new Date(Date.UTC(2026, 6, 1, 12));
return [d.getHours(), d.getTimezoneOffset(), d.toString(), d.toLocaleString("en-US")]`})
			if ev.Result == nil || string(ev.Result.Value) != want {
				t.Errorf("zone %q: %+v %+v, want %s", zone, ev.Result, ev.Error, want)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestZoneHostProcess$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "TZ=Asia/Kolkata", child+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestZoneHostProcess") {
		t.Fatalf("in a process with TZ=Asia/Kolkata: %v\n%s", err, out)
	}
}

// TestZoneIgnoresReplacedBuiltins: zone.js's Date keeps the built-ins it
// uses from before the step: a step that replaced them (here, with
// functions that throw) gets the same local times as one that did not.
func TestZoneIgnoresReplacedBuiltins(t *testing.T) {
	// T reads a Date's time value with the built-ins as they were.
	const keep = "const apply = Reflect.apply, getTime = Date.prototype.getTime, S = String, P = Date.parse;\nconst T = d => apply(getTime, d, []);\n"
	const use = `const d = new Date(2026, 2, 29, 2, 30);
const e = new Date(d); e.setHours(26, 61); e.setFullYear(2027);
return [T(d), d.getHours(), d.getTimezoneOffset(), d.toString(), d.toDateString(), d.toTimeString(),
  P("2026-07-01T12:00"), T(new Date("July 1, 2026 10:00")), T(e), S(new Date(NaN)),
  T(new Date({ valueOf() { return 0 } })), typeof Date()]`
	const replace = `
const boom = () => { throw new Error("replaced") };
for (const [o, names] of [
  [Reflect, ["apply", "construct"]], [Object, ["defineProperty"]], [Math, ["abs", "floor", "trunc"]],
  [String.prototype, ["padStart", "slice"]], [RegExp.prototype, ["exec", "test"]],
  [Date, ["UTC", "parse", "now"]],
  [Date.prototype, ["getTime", "setTime", "getUTCFullYear", "getUTCMonth", "getUTCDate", "getUTCDay", "getUTCHours",
    "getUTCMinutes", "getUTCSeconds", "setUTCHours", "setUTCFullYear", "valueOf"]],
  [Function.prototype, ["call", "apply"]],
]) for (const n of names) o[n] = boom;
String = boom; Number = boom;
`
	rt := newRT(t)
	want := runJob(t, rt, Job{TimeZone: "Europe/Paris", Code: keep + use})
	got := runJob(t, rt, Job{TimeZone: "Europe/Paris", Code: keep + replace + use})
	if want.Result == nil || got.Result == nil || string(got.Result.Value) != string(want.Result.Value) {
		t.Fatalf("replaced built-ins: %+v %+v\nwant %+v", got.Result, got.Error, want.Result)
	}
	if !strings.Contains(string(want.Result.Value), `"Sun Mar 29 2026 03:30:00 GMT+0200"`) {
		t.Fatalf("%s", want.Result.Value)
	}
}
