package intl

import (
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// Plural rules come from golang.org/x/text's CLDR data, which has every
// locale: Intl.PluralRules offers them all, the formatters use them for
// the locales of the tables.

// pluralForms are the categories of plural.Form, by value, and their
// index in a plurals array.
var (
	pluralForms = [...]string{plural.Other: "other", plural.Zero: "zero", plural.One: "one", plural.Two: "two", plural.Few: "few", plural.Many: "many"}
	pluralIndex = [...]int{plural.Other: pluralOther, plural.Zero: pluralZero, plural.One: pluralOne, plural.Two: pluralTwo, plural.Few: pluralFew, plural.Many: pluralMany}
)

// PluralLocale is the locale Intl.PluralRules resolves to from the
// requested ones (canonical): the first one whose language x/text has
// rules for, as its language alone (ICU's plural data, which Node
// reports, is by language: en-US is en) unless its region's rules differ
// (pt-PT), else def, the default locale.
func PluralLocale(requested []string, def string) string {
	for _, s := range requested {
		base, _ := splitExtensions(s)
		t, err := language.Parse(base)
		if err != nil {
			continue
		}
		b, c := t.Base()
		if c != language.Exact {
			continue
		}
		lang := language.Make(b.String())
		if r, conf := t.Region(); conf == language.Exact && !samePlurals(t, lang) {
			return b.String() + "-" + r.String() // pt-PT's rules are not pt's
		}
		return b.String()
	}
	return def
}

// rulesOf returns the rules of type ("cardinal" or "ordinal") and the tag
// of locale.
func rulesOf(locale, typ string) (*plural.Rules, language.Tag, error) {
	tag, err := language.Parse(locale)
	if err != nil {
		return nil, tag, fmt.Errorf("intl: %w", err)
	}
	if typ == "ordinal" {
		return plural.Ordinal, tag, nil
	}
	return plural.Cardinal, tag, nil
}

// PluralCategory is the plural category, in locale and for type
// ("cardinal" or "ordinal"), of dec: digits, an optional point and more
// digits, as a number is shown.
func PluralCategory(locale, typ, dec string) (string, error) {
	rules, tag, err := rulesOf(locale, typ)
	if err != nil {
		return "", err
	}
	form, err := matchDecimal(rules, tag, dec)
	if err != nil {
		return "", err
	}
	return pluralForms[form], nil
}

// PluralCategories are the categories of locale's rules of type, as a
// JSON array in the order Node reports them: by name, with other last.
func PluralCategories(locale, typ string) (string, error) {
	rules, tag, err := rulesOf(locale, typ)
	if err != nil {
		return "", err
	}
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
	return string(b), nil
}

// matchDecimal is the plural form of dec.
func matchDecimal(rules *plural.Rules, tag language.Tag, dec string) (plural.Form, error) {
	intPart, frac, _ := strings.Cut(dec, ".")
	var buf [64]byte
	digits := buf[:0]
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

// samePlurals reports whether a and b have the same cardinal rules over
// pluralProbes.
func samePlurals(a, b language.Tag) bool {
	for _, d := range pluralProbes {
		fa, errA := matchDecimal(plural.Cardinal, a, d)
		fb, errB := matchDecimal(plural.Cardinal, b, d)
		if errA != nil || errB != nil || fa != fb {
			return false
		}
	}
	return true
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

// pluralRules are a formatter's cardinal rules.
type pluralRules struct{ tag language.Tag }

func newPluralRules(l *locale) pluralRules {
	t, _ := language.Parse(l.tag)
	return pluralRules{t}
}

// category is the index in a plurals array of the rules' category for a
// number shown with the integer digits ip and fraction digits fp.
func (p pluralRules) category(ip, fp string) int {
	var buf [64]byte
	digits := buf[:0]
	for _, s := range []string{ip, fp} {
		for i := 0; i < len(s); i++ {
			digits = append(digits, s[i]-'0')
		}
	}
	form := plural.Cardinal.MatchDigits(p.tag, digits, len(ip), len(fp))
	if form == plural.Other && fp == "" && len(ip) > 6 && millionsMany(p.tag) && strings.Trim(ip[len(ip)-6:], "0") == "" {
		form = plural.Many
	}
	return pluralIndex[form]
}
