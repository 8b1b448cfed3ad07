package intl

import "strings"

// ListFormat is a resolved Intl.ListFormat.
type ListFormat struct {
	loc     *locale
	tag     string
	typ     int // 0 conjunction, 1 disjunction, 2 unit
	style   int // 0 long, 1 short, 2 narrow
	spanish bool
}

var listTypes = []string{"conjunction", "disjunction", "unit"}

// NewListFormat resolves an Intl.ListFormat.
func (e *Env) NewListFormat(locales []string, o NumberOptions) (*ListFormat, error) {
	r, err := e.Locales.resolveLocale(locales, e.defaultLocale())
	if err != nil {
		return nil, err
	}
	if _, err := o.str("localeMatcher", "best fit", "lookup", "best fit"); err != nil {
		return nil, err
	}
	typ, err := o.str("type", "conjunction", listTypes...)
	if err != nil {
		return nil, err
	}
	style, err := o.str("style", "long", relativeStyles...)
	if err != nil {
		return nil, err
	}
	f := &ListFormat{loc: r.data, tag: r.tag, spanish: r.data.tag == "es" || strings.HasPrefix(r.data.tag, "es-")}
	for i, s := range listTypes {
		if s == typ {
			f.typ = i
		}
	}
	for i, s := range relativeStyles {
		if s == style {
			f.style = i
		}
	}
	return f, nil
}

// ResolvedOptions is resolvedOptions() as JSON.
func (f *ListFormat) ResolvedOptions() string {
	var j jsonObject
	j.str("locale", f.tag)
	j.str("type", listTypes[f.typ])
	j.str("style", relativeStyles[f.style])
	return j.String()
}

// Locale is the resolved locale.
func (f *ListFormat) Locale() string { return f.tag }

// Format is format(list).
func (f *ListFormat) Format(items []string) string { return joinParts(f.FormatToParts(items)) }

// FormatToParts is formatToParts(list).
func (f *ListFormat) FormatToParts(items []string) []Part {
	n := len(items)
	out := make([]Part, 0, 2*n)
	if n == 0 {
		return out
	}
	p := &f.loc.lists[f.typ][f.style]
	elem := func(s string) Part { return Part{Type: "element", Value: s} }
	if n == 1 {
		return append(out, elem(items[0]))
	}
	// "{0}, {1}": the text between; the patterns have nothing outside.
	sep := func(pattern, next string) string {
		_, mid, _ := strings.Cut(pattern, "{0}")
		mid, _, _ = strings.Cut(mid, "{1}")
		if f.spanish {
			mid = spanishConjunction(mid, next)
		}
		return mid
	}
	for i, it := range items {
		if i > 0 {
			var pat string
			switch {
			case n == 2:
				pat = p[3].String()
			case i == n-1:
				pat = p[2].String()
			case i == 1:
				pat = p[0].String()
			default:
				pat = p[1].String()
			}
			out = appendLiteral(out, sep(pat, it))
		}
		out = append(out, elem(it))
	}
	return out
}

// spanishConjunction is ICU's rule for Spanish: "y" before a word that
// starts with the sound i is "e", "o" before the sound o is "u".
func spanishConjunction(sep, next string) string {
	lower := strings.ToLower(next)
	switch strings.TrimSpace(sep) {
	case "y":
		if (strings.HasPrefix(lower, "i") || strings.HasPrefix(lower, "hi")) &&
			!strings.HasPrefix(lower, "hia") && !strings.HasPrefix(lower, "hie") && !strings.HasPrefix(lower, "hio") && !strings.HasPrefix(lower, "hiu") {
			return strings.Replace(sep, "y", "e", 1)
		}
	case "o":
		if strings.HasPrefix(lower, "o") || strings.HasPrefix(lower, "ho") || strings.HasPrefix(lower, "8") ||
			strings.HasPrefix(lower, "11") && (len(lower) == 2 || lower[2] < '0' || lower[2] > '9') {
			return strings.Replace(sep, "o", "u", 1)
		}
	}
	return sep
}
