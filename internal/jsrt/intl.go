package jsrt

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"

	"github.com/stepbox/stepbox/internal/intl"
)

// The guest's Intl is a part loaded on a step's first use of Intl or of a
// locale method (bootstrap.js, __sbx_intlAPI): intl.js over the host
// functions below, which format with internal/intl (CLDR data generated
// into Go tables, for the locales the Runtime offers: Config.Locales) and
// collate with golang.org/x/text. RATIONALE.md says why this and not the
// FormatJS polyfills.

//go:embed intl.js
var intlSource string

// DefaultTimeZone is the time zone of a run's Intl when the step names
// none: what Intl.DateTimeFormat().resolvedOptions().timeZone reports and
// what toLocaleString formats in.
const DefaultTimeZone = intl.DefaultTimeZone

// intlState is a VM's Intl once loaded: its setup and the formatters its
// step made, by the ids intl.js gave them.
type intlState struct {
	env   intl.Env
	fmts  map[int64]any // *intl.DateTimeFormat, *intl.NumberFormat, ...; one VM, one goroutine
	colls map[string]*collate.Collator
}

// maxFormatters bounds a VM's formatters kept by the host: a step that
// makes more has them made again from their requests (intl.js keeps each
// one's request, in the VM's own memory).
const maxFormatters = 256

// loadIntl registers the host functions intl.js reads (and deletes) from
// the global object. They take any arguments safely: a step that replaced
// a built-in the loading calls could reach them before intl.js deletes
// them.
func (m *machine) loadIntl() error {
	st := &intlState{env: m.intl, fmts: map[int64]any{}, colls: map[string]*collate.Collator{}}
	for name, fn := range map[string]func([]any) (any, error){
		"__sbx_intl_new":     st.newFormatter,
		"__sbx_intl_format":  st.format,
		"__sbx_intl_locales": st.locales,
		"__sbx_intl_locale":  st.locale,
		"__sbx_intl_plural":  intlPlural,
		"__sbx_intl_compare": func(args []any) (any, error) {
			return intlCompare(st.colls, args)
		},
	} {
		if err := m.vm.RegisterHostFunc(name, fn); err != nil {
			return fmt.Errorf("jsrt: intl: %w", err)
		}
	}
	return nil
}

// jsError is the answer of a host function that tells intl.js to throw:
// \x01, the error's constructor, \x01, its message.
func jsError(err error) (any, error) {
	var e *intl.Error
	if errors.As(err, &e) {
		return "\x01" + e.Name + "\x01" + e.Message, nil
	}
	return "\x01Error\x01" + err.Error(), nil
}

// newFormatter is __sbx_intl_new(kind, locales, options, id): the
// formatter (kind "dtf", "nf", "rtf" or "lf") for the locales (a JSON array
// of strings) and options (a JSON object of what intl.js read), kept under
// id; it answers the formatter's resolved options as JSON.
func (st *intlState) newFormatter(args []any) (any, error) {
	kind, _ := intlArg[string](args, 0)
	locs, _ := intlArg[string](args, 1)
	opts, _ := intlArg[string](args, 2)
	id, ok := number(args, 3)
	if !ok {
		return nil, errors.New("intl: no formatter id")
	}
	f, err := st.make(kind, locs, opts)
	if err != nil {
		return jsError(err)
	}
	if len(st.fmts) >= maxFormatters {
		clear(st.fmts)
	}
	st.fmts[int64(id)] = f
	switch f := f.(type) {
	case *intl.DateTimeFormat:
		return f.ResolvedOptions(), nil
	case *intl.NumberFormat:
		return f.ResolvedOptions(), nil
	case *intl.RelativeTimeFormat:
		return f.ResolvedOptions(), nil
	case *intl.ListFormat:
		return f.ResolvedOptions(), nil
	}
	return nil, errors.New("intl: no formatter")
}

func (st *intlState) make(kind, locs, opts string) (any, error) {
	var locales []string
	if err := json.Unmarshal([]byte(locs), &locales); err != nil {
		return nil, fmt.Errorf("intl: locales: %w", err)
	}
	var o map[string]any
	if err := json.Unmarshal([]byte(opts), &o); err != nil {
		return nil, fmt.Errorf("intl: options: %w", err)
	}
	switch kind {
	case "dtf":
		return st.env.NewDateTimeFormat(locales, intl.DateOptions(o))
	case "nf":
		return st.env.NewNumberFormat(locales, intl.NumberOptions(o))
	case "rtf":
		return st.env.NewRelativeTimeFormat(locales, intl.NumberOptions(o))
	case "lf":
		return st.env.NewListFormat(locales, intl.NumberOptions(o))
	}
	return nil, fmt.Errorf("intl: unknown kind %q", kind)
}

// format is __sbx_intl_format(id, value, toParts[, unit]): value
// formatted by the formatter id, as a string, or with toParts as the JSON
// of its parts; \x02 if the host no longer has the formatter, which
// intl.js then makes again (newFormatter).
func (st *intlState) format(args []any) (any, error) {
	id, _ := number(args, 0)
	toParts, _ := intlArg[bool](args, 2)
	f, ok := st.fmts[int64(id)]
	if !ok {
		return "\x02", nil
	}
	var parts []intl.Part
	switch f := f.(type) {
	case *intl.DateTimeFormat:
		ms, _ := number(args, 1)
		if !toParts {
			s, err := f.Format(ms)
			if err != nil {
				return jsError(err)
			}
			return s, nil
		}
		var err error
		if parts, err = f.FormatToParts(ms); err != nil {
			return jsError(err)
		}
	case *intl.NumberFormat:
		var v intl.Value
		if s, ok := intlArg[string](args, 1); ok {
			v = intl.Value{Decimal: s, IsDec: true}
		} else {
			v.F, _ = number(args, 1)
		}
		if !toParts {
			return f.Format(v), nil
		}
		parts = f.FormatToParts(v)
	case *intl.RelativeTimeFormat:
		n, _ := number(args, 1)
		unit, _ := intlArg[string](args, 3)
		var err error
		if parts, err = f.FormatToParts(n, unit); err != nil {
			return jsError(err)
		}
		if !toParts {
			var b strings.Builder
			for _, p := range parts {
				b.WriteString(p.Value)
			}
			return b.String(), nil
		}
	case *intl.ListFormat:
		list, _ := intlArg[string](args, 1)
		var items []string
		if err := json.Unmarshal([]byte(list), &items); err != nil {
			return nil, fmt.Errorf("intl: list: %w", err)
		}
		if !toParts {
			return f.Format(items), nil
		}
		parts = f.FormatToParts(items)
	default:
		return nil, errors.New("intl: no formatter")
	}
	return intl.PartsJSON(parts), nil
}

// number is args[i] as a float64: QuickJS gives a small integer as an int.
func number(args []any, i int) (float64, bool) {
	if i >= len(args) {
		return 0, false
	}
	switch v := args[i].(type) {
	case float64:
		return v, true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	}
	return 0, false
}

// locales is __sbx_intl_locales(kind, list): the canonical form of the
// list (a JSON array of tags) for kind "", else the part of it kind's
// supportedLocalesOf reports; for kind "values", Intl.supportedValuesOf
// of the key list is, as a JSON array.
func (st *intlState) locales(args []any) (any, error) {
	kind, _ := intlArg[string](args, 0)
	list, _ := intlArg[string](args, 1)
	if kind == "values" {
		vs, err := intl.SupportedValuesOf(list)
		if err != nil {
			return jsError(err)
		}
		b, _ := json.Marshal(vs)
		return string(b), nil
	}
	var tags []string
	if err := json.Unmarshal([]byte(list), &tags); err != nil {
		return nil, fmt.Errorf("intl: locale list: %w", err)
	}
	canon, err := intl.CanonicalLocales(tags)
	if err != nil {
		return jsError(err)
	}
	var out []string
	switch kind {
	case "":
		out = canon
	case "plural", "collator":
		out = []string{}
		for _, t := range canon {
			if l := localeOf(kind, []string{t}, ""); l != "" {
				out = append(out, t)
			}
		}
	default:
		if out, err = st.env.Locales.SupportedLocales(canon); err != nil {
			return jsError(err)
		}
	}
	b, _ := json.Marshal(out)
	return string(b), nil
}

// locale is __sbx_intl_locale(kind, tags): the locale a "plural" or
// "collator" formatter resolves to from tags, a canonical locale list as
// JSON: the first one with data, else the VM's default locale, as it is.
func (st *intlState) locale(args []any) (any, error) {
	kind, _ := intlArg[string](args, 0)
	list, _ := intlArg[string](args, 1)
	var tags []string
	if err := json.Unmarshal([]byte(list), &tags); err != nil {
		return nil, fmt.Errorf("intl: locale list: %w", err)
	}
	if kind != "plural" && kind != "collator" {
		return nil, fmt.Errorf("intl: unknown kind %q", kind)
	}
	def := st.env.DefaultLocale
	if def == "" {
		def = intl.DefaultLocale
	}
	return localeOf(kind, tags, def), nil
}

// localeOf is the locale of kind ("plural" or "collator") for the first
// of tags golang.org/x/text has data for, or def.
func localeOf(kind string, tags []string, def string) string {
	if kind == "plural" {
		return intl.PluralLocale(tags, def)
	}
	for _, s := range tags {
		base, _ := intl.SplitExtensions(s)
		t, err := language.Parse(base)
		if err != nil {
			continue
		}
		b, conf := t.Base()
		if conf != language.Exact {
			continue
		}
		// ICU's collation data, which Node reports, is by language, with
		// a few tailored regions and Chinese by script or region.
		switch {
		case collationRegions[base], b.String() == "zh":
			return base
		}
		if sc, conf := t.Script(); conf == language.Exact {
			return b.String() + "-" + sc.String() // sr-Latn
		}
		return b.String()
	}
	return def
}

// collationRegions are the locales whose collation ICU tailors beyond
// their language's.
var collationRegions = map[string]bool{"de-AT": true, "en-US": true, "fr-CA": true, "nb-NO": true}

// intlPlural is __sbx_intl_plural(locale, type, decimal): the plural
// category of the decimal number (digits, an optional point and more
// digits, as the step's number was rounded for display), or, with an
// empty decimal, the JSON array of the locale's categories in CLDR order.
func intlPlural(args []any) (any, error) {
	locale, _ := intlArg[string](args, 0)
	typ, _ := intlArg[string](args, 1)
	dec, _ := intlArg[string](args, 2)
	if dec == "" {
		return intl.PluralCategories(locale, typ)
	}
	return intl.PluralCategory(locale, typ, dec)
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
