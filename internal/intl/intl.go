// Package intl is the guest's Intl (ECMA-402): DateTimeFormat,
// NumberFormat, RelativeTimeFormat, ListFormat and PluralRules in Go, over
// CLDR data generated into Go tables (tables.go, from the Unicode
// consortium's CLDR JSON by gen/main.go) for the locales of
// gen/locales.txt, and Go's time zone database. internal/jsrt's intl.js is
// the JavaScript surface over it.
//
// Everything is compared with Node (ICU) by internal/jsrt's
// TestIntlAgainstNode; RATIONALE.md ("Why is Intl Go-backed") says why
// this design and lists where it differs.
package intl

//go:generate go run ./gen -dir gen -out tables.go

// DefaultLocale is the locale of a formatter given none, or none the
// Intl has: ECMA-402's DefaultLocale.
const DefaultLocale = "en-US"

// DefaultTimeZone is the time zone of a DateTimeFormat given none.
const DefaultTimeZone = "UTC"

// Env is one VM's Intl: the locales it offers and its defaults. The zero
// Env offers English, in UTC, with en-US as the default locale.
type Env struct {
	// Locales are the locales offered (NewSet, AllLocales).
	Locales Set
	// DefaultLocale is what a formatter resolves to when it is given no
	// locale, or none of Locales: DefaultLocale if empty. A locale that
	// Locales does not offer falls back as a requested one does.
	DefaultLocale string
	// TimeZone is the zone of a DateTimeFormat given none: DefaultTimeZone
	// if empty.
	TimeZone string
}

func (e *Env) defaultLocale() string {
	if e.DefaultLocale == "" {
		return DefaultLocale
	}
	return e.DefaultLocale
}

func (e *Env) timeZone() string {
	if e.TimeZone == "" {
		return DefaultTimeZone
	}
	return e.TimeZone
}
