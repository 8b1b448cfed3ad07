package jsrt

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	// The jail has no zoneinfo directory: Intl's every IANA zone comes
	// from the copy embedded in the binary (about 450 KB).
	_ "time/tzdata"

	"golang.org/x/text/collate"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
	"modernc.org/quickjs/intl"
)

// The guest's Intl is a part loaded on a step's first use of Intl or of a
// locale method (bootstrap.js, __sbx_intlAPI): modernc.org/quickjs/intl's
// DateTimeFormat and NumberFormat (Go over Go's time zone database, en-US
// data), and intl.js's PluralRules, Collator and ListFormat over the host
// functions below (golang.org/x/text's CLDR plural rules and collation).
// RATIONALE.md says why this and not the FormatJS polyfills.

//go:embed intl.js
var intlSource string

// DefaultTimeZone is the time zone of a run's Intl when the step names
// none: what Intl.DateTimeFormat().resolvedOptions().timeZone reports and
// what toLocaleString formats in.
const DefaultTimeZone = "UTC"

// defaultLocale is the locale a formatter resolves to when it is given
// none, or none this implementation has.
const defaultLocale = "en-US"

// loadIntl installs modernc.org/quickjs/intl's Intl and the host functions
// intl.js reads (and deletes) from the global object. They take any
// arguments safely: a step that replaced a built-in the loading calls
// could reach them before intl.js deletes them.
func (m *machine) loadIntl() error {
	zone, locale := DefaultTimeZone, defaultLocale
	if rn := m.run; rn != nil {
		if rn.job.TimeZone != "" {
			zone = rn.job.TimeZone
		}
		if rn.job.Locale != "" {
			locale = rn.job.Locale
		}
	}
	if err := intl.Register(m.vm, intl.TimeZone(zone)); err != nil {
		return fmt.Errorf("jsrt: intl: %w", err)
	}
	coll := map[string]*collate.Collator{} // one VM, one goroutine at a time
	for name, fn := range map[string]func([]any) (any, error){
		"__sbx_intl_locale": func(args []any) (any, error) {
			return intlLocale(locale, args)
		},
		"__sbx_intl_plural": intlPlural,
		"__sbx_intl_compare": func(args []any) (any, error) {
			return intlCompare(coll, args)
		},
	} {
		if err := m.vm.RegisterHostFunc(name, fn); err != nil {
			return fmt.Errorf("jsrt: intl: %w", err)
		}
	}
	return nil
}

// intlLocale is __sbx_intl_locale(kind, tags): the locale a "plural" or
// "collator" formatter resolves to from tags, a canonical locale list as
// JSON: the first one with data, else (unless a third argument is true:
// supportedLocalesOf's question) the run's default locale (fallback) if it
// has data, else defaultLocale.
func intlLocale(fallback string, args []any) (any, error) {
	kind, _ := intlArg[string](args, 0)
	list, _ := intlArg[string](args, 1)
	var tags []string
	if err := json.Unmarshal([]byte(list), &tags); err != nil {
		return nil, fmt.Errorf("intl: locale list: %w", err)
	}
	var supported func(language.Tag) bool
	switch kind {
	case "plural":
		supported = func(t language.Tag) bool {
			_, c := t.Base()
			return c != language.No
		}
	case "collator":
		m := language.NewMatcher(collate.Supported())
		supported = func(t language.Tag) bool {
			_, _, c := m.Match(t)
			return c >= language.High
		}
	default:
		return nil, fmt.Errorf("intl: unknown kind %q", kind)
	}
	if only, _ := intlArg[bool](args, 2); !only && fallback != defaultLocale {
		tags = append(tags, fallback)
	}
	for _, s := range tags {
		t, err := language.Parse(s)
		if err != nil || !supported(t) {
			continue
		}
		// ICU's data, which node reports, is mostly by language: de-DE
		// resolves to de, en-US (the default locale) to itself.
		if s == defaultLocale {
			return s, nil
		}
		if _, conf := t.Script(); kind == "collator" && conf == language.Exact {
			return s, nil // zh-Hant-TW: collation is by script
		}
		b, _ := t.Base()
		return b.String(), nil
	}
	return defaultLocale, nil
}

// pluralForms are the categories of plural.Form, by value.
var pluralForms = [...]string{plural.Other: "other", plural.Zero: "zero", plural.One: "one", plural.Two: "two", plural.Few: "few", plural.Many: "many"}

// intlPlural is __sbx_intl_plural(locale, type, decimal): the plural
// category of the decimal number (digits, an optional point and more
// digits, as the step's number was rounded for display), or, with an
// empty decimal, the JSON array of the locale's categories in CLDR order.
func intlPlural(args []any) (any, error) {
	locale, _ := intlArg[string](args, 0)
	typ, _ := intlArg[string](args, 1)
	dec, _ := intlArg[string](args, 2)
	tag, err := language.Parse(locale)
	if err != nil {
		return nil, fmt.Errorf("intl: %w", err)
	}
	rules := plural.Cardinal
	if typ == "ordinal" {
		rules = plural.Ordinal
	}
	if dec == "" {
		return pluralCategories(rules, tag), nil
	}
	form, err := matchDecimal(rules, tag, dec)
	if err != nil {
		return nil, err
	}
	return pluralForms[form], nil
}

// matchDecimal is the plural form of dec.
func matchDecimal(rules *plural.Rules, tag language.Tag, dec string) (plural.Form, error) {
	intPart, frac, _ := strings.Cut(dec, ".")
	digits := make([]byte, 0, len(dec))
	for _, s := range []string{intPart, frac} {
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, fmt.Errorf("intl: not a decimal: %q", dec)
			}
			digits = append(digits, s[i]-'0')
		}
	}
	if len(intPart) == 0 {
		return 0, fmt.Errorf("intl: not a decimal: %q", dec)
	}
	form := rules.MatchDigits(tag, digits, len(intPart), len(frac))
	if rules == plural.Cardinal && form == plural.Other && len(frac) == 0 && millionsMany(tag) && len(intPart) > 6 &&
		strings.Trim(intPart[len(intPart)-6:], "0") == "" {
		form = plural.Many // CLDR 38's "many" for exact millions, newer than x/text's data
	}
	return form, nil
}

// millionsMany reports whether tag's language has CLDR 38's cardinal
// "many" for exact millions (e = 0 and i != 0 and i % 1000000 = 0 and
// v = 0), which golang.org/x/text's plural data predates.
func millionsMany(tag language.Tag) bool {
	b, _ := tag.Base()
	switch b.String() {
	case "fr", "es", "it", "pt", "ca":
		return true
	}
	return false
}

// pluralProbes are the integers and the decimals with up to two places
// that tell CLDR's rules apart.
var pluralProbes = func() []string {
	var p []string
	for i := 0; i <= 200; i++ {
		p = append(p, fmt.Sprint(i))
	}
	for i := 0; i < 100; i++ {
		p = append(p, fmt.Sprintf("0.%02d", i), fmt.Sprintf("1.%d", i%10), fmt.Sprintf("2.%d", i%10))
	}
	return append(p, "1000", "10000", "100000", "1000000", "2000000", "1000000.5")
}()

// pluralCategories are the forms rules gives tag for pluralProbes, as a
// JSON array in the order node reports them: by name, with other last.
func pluralCategories(rules *plural.Rules, tag language.Tag) string {
	var seen [len(pluralForms)]bool
	for _, d := range pluralProbes {
		if f, err := matchDecimal(rules, tag, d); err == nil && int(f) < len(seen) {
			seen[f] = true
		}
	}
	var out []string
	for _, f := range []plural.Form{plural.Few, plural.Many, plural.One, plural.Two, plural.Zero, plural.Other} {
		if seen[f] || f == plural.Other {
			out = append(out, pluralForms[f])
		}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// intlCompare is __sbx_intl_compare(locale, sensitivity, numeric, a, b):
// a's order against b's (-1, 0, 1) by the locale's collation. coll keeps
// the collators made, by locale and options.
func intlCompare(coll map[string]*collate.Collator, args []any) (any, error) {
	locale, _ := intlArg[string](args, 0)
	sens, _ := intlArg[string](args, 1)
	numeric, _ := intlArg[bool](args, 2)
	a, okA := intlArg[string](args, 3)
	b, okB := intlArg[string](args, 4)
	if !okA || !okB {
		return nil, errors.New("intl: compare needs two strings")
	}
	key := fmt.Sprintf("%s\x00%s\x00%t", locale, sens, numeric)
	c := coll[key]
	if c == nil {
		tag, err := language.Parse(locale)
		if err != nil {
			return nil, fmt.Errorf("intl: %w", err)
		}
		var opts []collate.Option
		switch sens {
		case "base":
			opts = append(opts, collate.Loose)
		case "accent":
			opts = append(opts, collate.IgnoreCase, collate.IgnoreWidth)
		case "case":
			// Equal at the base level, then the case of the letters
			// without their diacritics decides.
			opts = append(opts, collate.Loose)
		}
		if numeric {
			opts = append(opts, collate.Numeric)
		}
		if len(coll) >= 64 {
			clear(coll)
		}
		c = collate.New(tag, opts...)
		coll[key] = c
	}
	r := c.CompareString(a, b)
	if sens == "case" && r == 0 {
		tertiary := coll["\x00tertiary"]
		if tertiary == nil {
			tertiary = collate.New(language.Und)
			coll["\x00tertiary"] = tertiary
		}
		r = tertiary.CompareString(withoutMarks(a), withoutMarks(b))
	}
	return float64(r), nil
}

// withoutMarks is s decomposed, without its combining marks.
func withoutMarks(s string) string {
	s = norm.NFD.String(s)
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

// intlArg is args[i] as a T, if it is one.
func intlArg[T any](args []any, i int) (T, bool) {
	var zero T
	if i >= len(args) {
		return zero, false
	}
	v, ok := args[i].(T)
	return v, ok
}
