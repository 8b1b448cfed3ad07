package sandbox_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

// zonedEngine has two plans: "default" in the engine's default zone
// (New York), "paris" with a zone and a locale of its own.
func zonedEngine(t *testing.T) *sandbox.Engine {
	return newEngine(t, sandbox.Config{
		PoolSize: 1,
		Plans:    map[string]sandbox.Limits{"default": testPlan, "paris": testPlan},
		Defaults: sandbox.RunDefaults{TimeZone: "America/New_York"},
		PlanDefaults: map[string]sandbox.RunDefaults{
			"paris": {TimeZone: "Europe/Paris", Locale: "fr-fr"},
		},
	})
}

// The local time of a step, in JavaScript (Date and Intl) and in Python
// (time, datetime), at 2026-07-01T12:00Z.
const (
	jsLocalTime = `const d = new Date(Date.UTC(2026, 6, 1, 12));
const f = new Intl.DateTimeFormat().resolvedOptions();
return [d.getHours(), d.getTimezoneOffset(), String(new Date(2026, 6, 1, 9)), d.toLocaleString("en-US"), f.timeZone,
  new Intl.PluralRules().resolvedOptions().locale]`
	pyLocalTime = `import time
from datetime import datetime
t = 1782907200
return [time.localtime(t).tm_hour, time.strftime("%Z %z", time.localtime(t)), datetime.fromtimestamp(t).astimezone().isoformat()]`
)

// TestRunTimeZone: a run's time zone is its request's, else its plan's,
// else the engine's, and both languages' local time follow it.
func TestRunTimeZone(t *testing.T) {
	e := zonedEngine(t)
	for _, c := range []struct {
		name string
		req  sandbox.Request
		want string
	}{
		{"engine's, JavaScript", sandbox.Request{Code: jsLocalTime},
			`[8,240,"Wed Jul 01 2026 09:00:00 GMT-0400","7/1/2026, 8:00:00 AM","America/New_York","en-US"]`},
		{"plan's, JavaScript", sandbox.Request{Plan: "paris", Code: jsLocalTime},
			`[14,-120,"Wed Jul 01 2026 09:00:00 GMT+0200","7/1/2026, 2:00:00 PM","Europe/Paris","fr-FR"]`},
		{"request's, JavaScript", sandbox.Request{Plan: "paris", TimeZone: "Asia/Kathmandu", Locale: "de", Code: jsLocalTime},
			`[17,-345,"Wed Jul 01 2026 09:00:00 GMT+0545","7/1/2026, 5:45:00 PM","Asia/Katmandu","de"]`},
		{"UTC, JavaScript", sandbox.Request{TimeZone: "UTC", Code: jsLocalTime},
			`[12,0,"Wed Jul 01 2026 09:00:00 GMT+0000","7/1/2026, 12:00:00 PM","UTC","en-US"]`},
		{"engine's, TypeScript", sandbox.Request{Language: sandbox.TypeScript, Code: `const d: Date = new Date(Date.UTC(2026, 6, 1, 12)); return d.getHours()`}, `8`},
		{"engine's, Python", sandbox.Request{Language: sandbox.Python, Code: pyLocalTime},
			`[8,"EDT -0400","2026-07-01T08:00:00-04:00"]`},
		{"plan's, Python", sandbox.Request{Language: sandbox.Python, Plan: "paris", Code: pyLocalTime},
			`[14,"CEST +0200","2026-07-01T14:00:00+02:00"]`},
		{"request's, Python", sandbox.Request{Language: sandbox.Python, TimeZone: "Asia/Kathmandu", Code: pyLocalTime},
			`[17,"+0545 +0545","2026-07-01T17:45:00+05:45"]`},
		{"UTC, Python", sandbox.Request{Language: sandbox.Python, Plan: "paris", TimeZone: "UTC", Code: pyLocalTime},
			`[12,"UTC +0000","2026-07-01T12:00:00+00:00"]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, res, err := run(t, e, c.req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Value) != c.want {
				t.Fatalf("got  %s\nwant %s", res.Value, c.want)
			}
		})
	}
}

// TestRunTimeZoneRefused: a request's zone or locale that is not one is
// VALIDATION, named; so is an engine's, in New.
func TestRunTimeZoneRefused(t *testing.T) {
	e := zonedEngine(t)
	for _, c := range []struct {
		name string
		req  sandbox.Request
		want string
	}{
		{"unknown zone", sandbox.Request{TimeZone: "Mars/Olympus_Mons", Code: "return 1"}, `timeZone: "Mars/Olympus_Mons" is not an IANA time zone name`},
		{"Local", sandbox.Request{TimeZone: "Local", Code: "return 1"}, `timeZone: "Local" is not`},
		{"a path", sandbox.Request{TimeZone: "../../etc/passwd", Code: "return 1"}, `is not an IANA time zone name`},
		{"long", sandbox.Request{TimeZone: strings.Repeat("A/", 100), Code: "return 1"}, `timeZone: 200 bytes is too long`},
		{"Python", sandbox.Request{Language: sandbox.Python, TimeZone: "Europe/Pariss", Code: "return 1"}, `timeZone: "Europe/Pariss"`},
		{"locale", sandbox.Request{Locale: "not a locale", Code: "return 1"}, `locale: "not a locale" is not a well-formed BCP 47 language tag`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := run(t, e, c.req, nil)
			var se *sandbox.Error
			if !errors.As(err, &se) || se.Code != sandbox.CodeValidation || !strings.Contains(se.Message, c.want) {
				t.Fatalf("got %v, want VALIDATION %q", err, c.want)
			}
		})
	}

	_, err := sandbox.New(sandbox.Config{
		Isolation:    sandbox.IsolationInProcess,
		Defaults:     sandbox.RunDefaults{TimeZone: "Europe/Pariss", Locale: "--"},
		PlanDefaults: map[string]sandbox.RunDefaults{"gold": {TimeZone: "UTC"}},
	})
	for _, want := range []string{`defaults.timeZone: "Europe/Pariss" is not an IANA time zone name`,
		`defaults.locale: "--" is not a well-formed BCP 47 language tag`, `planDefaults["gold"]: "gold" is not in plans`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New: %v, want %q", err, want)
		}
	}
}

// TestRunTimeZoneDefault: a request that names no zone, on an engine that
// names none, runs in UTC, whatever the host's zone.
func TestRunTimeZoneDefault(t *testing.T) {
	_, res, err := run(t, engine(t), sandbox.Request{Code: `return [new Date(Date.UTC(2026, 6, 1, 12)).getHours(), Intl.DateTimeFormat().resolvedOptions().timeZone]`}, nil)
	if err != nil || string(res.Value) != `[12,"UTC"]` {
		t.Fatalf("%s %v", res.Value, err)
	}
}
