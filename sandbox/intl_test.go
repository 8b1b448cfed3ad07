package sandbox_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/sandbox"
)

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

// TestIntlLocales: Config.Locales reaches the workers (or the in-process
// runtime): an engine that offers German alone (and English) formats de
// and its regions, and resolves fr as ECMA-402's lookup does, to the
// default locale; nil offers every locale of IntlLocales; an unknown one
// is an error of New, with the other config errors.
func TestIntlLocales(t *testing.T) {
	const nbsp, nnbsp = "\u00a0", "\u202f" // CLDR's spaces in numbers
	step := `return ["de-AT", "fr", "en-GB"].map(l => [
  new Intl.DateTimeFormat(l).resolvedOptions().locale,
  new Intl.NumberFormat(l, {style: "currency", currency: "EUR"}).format(1234.5),
  Intl.NumberFormat.supportedLocalesOf(l).length,
])`
	for _, c := range []struct {
		name    string
		locales []string
		want    string
	}{
		{"de", []string{"de"}, `[["de-AT","€` + nbsp + `1.234,50",1],["en-US","€1,234.50",0],["en-GB","€1,234.50",1]]`},
		{"english alone", []string{}, `[["en-US","€1,234.50",0],["en-US","€1,234.50",0],["en-GB","€1,234.50",1]]`},
		{"every locale", nil, `[["de-AT","€` + nbsp + `1.234,50",1],["fr","1` + nnbsp + `234,50` + nbsp + `€",1],["en-GB","€1,234.50",1]]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEngine(t, sandbox.Config{PoolSize: 1, Locales: c.locales})
			_, res, err := run(t, e, sandbox.Request{Code: step}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Value) != c.want {
				t.Fatalf("got %s, want %s", res.Value, c.want)
			}
		})
	}

	if got := sandbox.IntlLocales(); len(got) < 20 || got[0] != "en" || !slices.Contains(got, "de") || !slices.Contains(got, "zh-Hant") {
		t.Errorf("IntlLocales() = %v", got)
	}
	_, err := sandbox.New(sandbox.Config{Locales: []string{"de", "xx-YY"}, PoolSize: -1})
	if err == nil || !strings.Contains(err.Error(), "xx-YY") || !strings.Contains(err.Error(), "poolSize=-1") {
		t.Fatalf("New with an unknown locale: %v", err)
	}
}
