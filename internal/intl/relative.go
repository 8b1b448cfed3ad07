package intl

import (
	"math"
	"strings"
)

// RelativeTimeFormat is a resolved Intl.RelativeTimeFormat.
type RelativeTimeFormat struct {
	loc     *locale
	tag     string
	style   int // 0 long, 1 short, 2 narrow
	numeric string
	nf      *NumberFormat
}

var relativeStyles = []string{"long", "short", "narrow"}

// NewRelativeTimeFormat resolves an Intl.RelativeTimeFormat.
func (e *Env) NewRelativeTimeFormat(locales []string, o NumberOptions) (*RelativeTimeFormat, error) {
	r, err := e.Locales.resolveLocale(locales, e.defaultLocale())
	if err != nil {
		return nil, err
	}
	if _, err := o.str("localeMatcher", "best fit", "lookup", "best fit"); err != nil {
		return nil, err
	}
	if v, ok := o["numberingSystem"]; ok && v != nil {
		if s, _ := v.(string); !isTypeSequence(s) {
			return nil, rangeError("Invalid numberingSystem : %s", s)
		}
	}
	style, err := o.str("style", "long", "long", "short", "narrow")
	if err != nil {
		return nil, err
	}
	numeric, err := o.str("numeric", "always", "always", "auto")
	if err != nil {
		return nil, err
	}
	f := &RelativeTimeFormat{loc: r.data, tag: r.tag, numeric: numeric}
	if r.ext["nu"] == "latn" {
		f.tag += "-u-nu-latn"
	}
	for i, s := range relativeStyles {
		if s == style {
			f.style = i
		}
	}
	nf := &NumberFormat{loc: r.data, tag: r.tag, plural: newPluralRules(r.data), style: "decimal", notation: "standard",
		signDisplay: "never", roundingMode: "halfExpand", roundingPriority: "auto", trailingZero: "auto",
		useGrouping: "auto", minInt: 1, maxFrac: 3, roundingType: "fraction", roundingIncrement: 1}
	nf.pattern = nf.stylePattern()
	f.nf = nf
	return f, nil
}

// ResolvedOptions is resolvedOptions() as JSON.
func (f *RelativeTimeFormat) ResolvedOptions() string {
	var j jsonObject
	j.str("locale", f.tag)
	j.str("style", relativeStyles[f.style])
	j.str("numeric", f.numeric)
	j.str("numberingSystem", "latn")
	return j.String()
}

// Locale is the resolved locale.
func (f *RelativeTimeFormat) Locale() string { return f.tag }

var relativeUnits = map[string]int{
	"second": relSecond, "seconds": relSecond, "minute": relMinute, "minutes": relMinute,
	"hour": relHour, "hours": relHour, "day": relDay, "days": relDay, "week": relWeek, "weeks": relWeek,
	"month": relMonth, "months": relMonth, "quarter": relQuarter, "quarters": relQuarter,
	"year": relYear, "years": relYear,
}

// Format is format(v, unit).
func (f *RelativeTimeFormat) Format(v float64, unit string) (string, error) {
	parts, err := f.FormatToParts(v, unit)
	if err != nil {
		return "", err
	}
	return joinParts(parts), nil
}

// FormatToParts is formatToParts(v, unit).
func (f *RelativeTimeFormat) FormatToParts(v float64, unit string) ([]Part, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, rangeError("Invalid time value")
	}
	u, ok := relativeUnits[unit]
	if !ok {
		return nil, rangeError("Invalid unit argument for format() '%s'", unit)
	}
	singular := strings.TrimSuffix(unit, "s")
	names := &f.loc.relative[u][f.style]
	if f.numeric == "auto" && v == math.Trunc(v) && v >= -2 && v <= 2 {
		if s := names.near[int(v)+2]; s != 0 {
			return []Part{{Type: "literal", Value: s.String()}}, nil
		}
	}
	past := v < 0 || v == 0 && math.Signbit(v)
	num := f.nf.parts(number{d: decimalOfFloat(v)})
	cat := pluralOther
	var ip, fp string
	for _, p := range num {
		switch p.Type {
		case "integer":
			ip += p.Value
		case "fraction":
			fp = p.Value
		}
	}
	cat = f.nf.plural.category(ip, fp)
	for i := range num {
		num[i].Unit = singular
	}
	pats := &names.future
	if past {
		pats = &names.past
	}
	return substitute(pats.get(cat), num, Part{}, ""), nil
}
