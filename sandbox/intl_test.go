package sandbox_test

import "testing"

// TestIntl: Intl through the engine's workers (jailed processes by
// default): an IANA zone across a DST change, which needs the time zone
// database embedded in the worker (the jail has none), the run's default
// zone, UTC, for Intl and for Date, and the locale methods.
func TestIntl(t *testing.T) {
	expectResult(t, `return [
  new Date(Date.UTC(2026, 6, 1, 12)).toLocaleString("en-US", { timeZone: "Europe/Paris" }),
  (1234567.891).toLocaleString(),
  new Date("2026-11-01T05:59:59Z").toLocaleTimeString("en-US", { timeZone: "America/New_York", timeZoneName: "short" }),
  new Date("2026-11-01T06:00:00Z").toLocaleTimeString("en-US", { timeZone: "America/New_York", timeZoneName: "short" }),
  new Intl.DateTimeFormat().resolvedOptions().timeZone,
  new Date(0).getTimezoneOffset(),
  new Date(0).toLocaleString(),
  new Intl.PluralRules("ru").select(3),
  ["ö", "z", "o"].sort(new Intl.Collator("sv").compare).join(""),
  new Intl.ListFormat("en").format(["a", "b", "c"]),
]`, `["7/1/2026, 2:00:00 PM","1,234,567.891","1:59:59 AM EDT","1:00:00 AM EST","UTC",0,"1/1/1970, 12:00:00 AM","few","ozö","a, b, and c"]`)
}
