package intl

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Part is one element of a formatToParts result. Unit is set in the parts
// of Intl.RelativeTimeFormat that are the number.
type Part struct {
	Type  string `json:"type"`
	Value string `json:"value"`
	Unit  string `json:"unit,omitempty"`
}

// NumberFormat is a resolved Intl.NumberFormat.
type NumberFormat struct {
	loc    *locale
	tag    string
	plural pluralRules

	style, currency, currencyDisplay, currencySign string
	unit, unitDisplay                              string
	notation, compactDisplay, signDisplay          string
	roundingMode, roundingPriority, trailingZero   string
	useGrouping                                    string // "auto", "always", "min2" or "" for false
	percentUnit                                    bool   // unit "percent", short or narrow

	minInt, minFrac, maxFrac, minSig, maxSig int
	roundingType                             string // "fraction", "significant", "morePrecision", "lessPrecision"
	roundingIncrement                        int

	pattern numPattern // the style's pattern
}

// NumberOptions are the options of Intl.NumberFormat as the JavaScript
// layer read them (strings and numbers; absent ones absent).
type NumberOptions map[string]any

func (o NumberOptions) str(key string, def string, allowed ...string) (string, error) {
	v, ok := o[key]
	if !ok || v == nil {
		return def, nil
	}
	s, _ := v.(string)
	for _, a := range allowed {
		if a == s {
			return s, nil
		}
	}
	return "", rangeError("Value %s out of range for Intl.NumberFormat options property %s", s, key)
}

// num is ECMA-402's GetNumberOption; ok is false if the option is absent.
func (o NumberOptions) num(key string, lo, hi int) (int, bool, error) {
	v, ok := o[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	f, _ := v.(float64)
	if i, isInt := v.(int); isInt {
		f = float64(i)
	}
	if math.IsNaN(f) || f < float64(lo) || f > float64(hi) {
		return 0, false, rangeError("%s value is out of range.", key)
	}
	return int(math.Floor(f)), true, nil
}

// NewNumberFormat resolves an Intl.NumberFormat for the requested locales
// (as given) and options.
func (e *Env) NewNumberFormat(locales []string, o NumberOptions) (*NumberFormat, error) {
	r, err := e.Locales.resolveLocale(locales, e.defaultLocale())
	if err != nil {
		return nil, err
	}
	f := &NumberFormat{loc: r.data, tag: r.tag}
	if nu, ok := r.ext["nu"]; ok && nu == "latn" {
		f.tag += "-u-nu-latn"
	}
	f.plural = newPluralRules(r.data)
	if _, err := o.str("localeMatcher", "best fit", "lookup", "best fit"); err != nil {
		return nil, err
	}
	if v, ok := o["numberingSystem"]; ok && v != nil {
		if s, _ := v.(string); !isTypeSequence(s) {
			return nil, rangeError("Invalid numberingSystem : %s", s)
		}
	}
	if f.style, err = o.str("style", "decimal", "decimal", "percent", "currency", "unit"); err != nil {
		return nil, err
	}
	cur, hasCur := o["currency"].(string)
	if hasCur && (len(cur) != 3 || !isAlpha(cur)) {
		return nil, rangeError("Invalid currency code : %s", cur)
	}
	if f.style == "currency" && !hasCur {
		return nil, typeError("Currency code is required with currency style.")
	}
	curDisplay, err := o.str("currencyDisplay", "symbol", "code", "symbol", "narrowSymbol", "name")
	if err != nil {
		return nil, err
	}
	curSign, err := o.str("currencySign", "standard", "standard", "accounting")
	if err != nil {
		return nil, err
	}
	unit, hasUnit := o["unit"].(string)
	if hasUnit && !wellFormedUnit(unit) {
		return nil, rangeError("Invalid unit argument for Intl.NumberFormat() '%s'", unit)
	}
	if f.style == "unit" && !hasUnit {
		return nil, typeError("Unit is required with unit style.")
	}
	unitDisplay, err := o.str("unitDisplay", "short", "short", "narrow", "long")
	if err != nil {
		return nil, err
	}
	switch f.style {
	case "currency":
		f.currency, f.currencyDisplay, f.currencySign = strings.ToUpper(cur), curDisplay, curSign
	case "unit":
		f.unit, f.unitDisplay = unit, unitDisplay
		// ICU writes percent as a unit with the percent pattern, except
		// long ("1,5 Prozent").
		f.percentUnit = unit == "percent" && unitDisplay != "long"
	}
	if f.notation, err = o.str("notation", "standard", "standard", "scientific", "engineering", "compact"); err != nil {
		return nil, err
	}
	mnfdDefault, mxfdDefault := 0, 3
	switch {
	case f.style == "currency" && f.notation == "standard":
		d := currencyFractionDigits(f.currency)
		mnfdDefault, mxfdDefault = d, d
	case f.style == "currency":
		mnfdDefault, mxfdDefault = 0, currencyFractionDigits(f.currency)
		if f.notation == "compact" {
			mxfdDefault = 0
		}
	case f.style == "percent":
		mxfdDefault = 0
	}
	if err := f.digitOptions(o, mnfdDefault, mxfdDefault); err != nil {
		return nil, err
	}
	if f.compactDisplay, err = o.str("compactDisplay", "short", "short", "long"); err != nil {
		return nil, err
	}
	if f.notation != "compact" {
		f.compactDisplay = ""
	}
	defGrouping := "auto"
	if f.notation == "compact" {
		defGrouping = "min2"
	}
	if f.useGrouping, err = groupingOption(o, defGrouping); err != nil {
		return nil, err
	}
	if f.signDisplay, err = o.str("signDisplay", "auto", "auto", "never", "always", "exceptZero", "negative"); err != nil {
		return nil, err
	}
	f.pattern = f.stylePattern()
	return f, nil
}

// isTypeSequence reports whether s is a Unicode locale extension type:
// alphanumeric subtags of 3 to 8 characters.
func isTypeSequence(s string) bool {
	if s == "" {
		return false
	}
	for _, p := range strings.Split(s, "-") {
		if len(p) < 3 || len(p) > 8 || !isAlnum(p) {
			return false
		}
	}
	return true
}

// wellFormedUnit is ECMA-402's IsWellFormedUnitIdentifier.
func wellFormedUnit(u string) bool {
	if sanctioned(u) {
		return true
	}
	num, den, ok := strings.Cut(u, "-per-")
	return ok && sanctioned(num) && sanctioned(den)
}

func sanctioned(u string) bool {
	i := sort.SearchStrings(sanctionedUnits[:], u)
	return i < len(sanctionedUnits) && sanctionedUnits[i] == u
}

// sanctionedUnits are ECMA-402's simple units, sorted.
var sanctionedUnits = [...]string{"acre", "bit", "byte", "celsius", "centimeter", "day", "degree", "fahrenheit",
	"fluid-ounce", "foot", "gallon", "gigabit", "gigabyte", "gram", "hectare", "hour", "inch", "kilobit",
	"kilobyte", "kilogram", "kilometer", "liter", "megabit", "megabyte", "meter", "microsecond", "mile",
	"mile-scandinavian", "milliliter", "millimeter", "millisecond", "minute", "month", "nanosecond", "ounce",
	"percent", "petabyte", "pound", "second", "stone", "terabit", "terabyte", "week", "yard", "year"}

// currencyFractionDigits is CLDR's number of fraction digits of code.
func currencyFractionDigits(code string) int {
	i := sort.Search(len(currencyDigits), func(i int) bool { return currencyDigits[i].code >= code })
	if i < len(currencyDigits) && currencyDigits[i].code == code {
		return int(currencyDigits[i].digits)
	}
	return 2
}

var roundingIncrements = []int{1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000}

// digitOptions is ECMA-402's SetNumberFormatDigitOptions.
func (f *NumberFormat) digitOptions(o NumberOptions, mnfdDefault, mxfdDefault int) error {
	var err error
	f.minInt, _, err = o.num("minimumIntegerDigits", 1, 21)
	if err != nil {
		return err
	}
	if f.minInt == 0 {
		f.minInt = 1
	}
	_, hasMnfd := o["minimumFractionDigits"]
	_, hasMxfd := o["maximumFractionDigits"]
	_, hasMnsd := o["minimumSignificantDigits"]
	_, hasMxsd := o["maximumSignificantDigits"]
	inc, hasInc, err := o.num("roundingIncrement", 1, 5000)
	if err != nil {
		return err
	}
	if !hasInc {
		inc = 1
	}
	ok := false
	for _, i := range roundingIncrements {
		ok = ok || i == inc
	}
	if !ok {
		return rangeError("roundingIncrement value is out of range.")
	}
	f.roundingIncrement = inc
	if f.roundingMode, err = o.str("roundingMode", "halfExpand", "ceil", "floor", "expand", "trunc",
		"halfCeil", "halfFloor", "halfExpand", "halfTrunc", "halfEven"); err != nil {
		return err
	}
	if f.roundingPriority, err = o.str("roundingPriority", "auto", "auto", "morePrecision", "lessPrecision"); err != nil {
		return err
	}
	if f.trailingZero, err = o.str("trailingZeroDisplay", "auto", "auto", "stripIfInteger"); err != nil {
		return err
	}
	if inc != 1 {
		mxfdDefault = mnfdDefault
	}
	hasSd, hasFd := hasMnsd || hasMxsd, hasMnfd || hasMxfd
	needSd, needFd := true, true
	if f.roundingPriority == "auto" {
		needSd = hasSd
		if needSd || !hasFd && f.notation == "compact" {
			needFd = false
		}
	}
	if needSd {
		if hasSd {
			mn, okMn, err := o.num("minimumSignificantDigits", 1, 21)
			if err != nil {
				return err
			}
			if !okMn {
				mn = 1
			}
			mx, okMx, err := o.num("maximumSignificantDigits", mn, 21)
			if err != nil {
				return err
			}
			if !okMx {
				mx = 21
			}
			f.minSig, f.maxSig = mn, mx
		} else {
			f.minSig, f.maxSig = 1, 21
		}
	}
	if needFd {
		if hasFd {
			mn, okMn, err := o.num("minimumFractionDigits", 0, 100)
			if err != nil {
				return err
			}
			mx, okMx, err := o.num("maximumFractionDigits", 0, 100)
			if err != nil {
				return err
			}
			switch {
			case !okMn:
				mn = min(mnfdDefault, mx)
			case !okMx:
				mx = max(mxfdDefault, mn)
			case mn > mx:
				return rangeError("maximumFractionDigits value is out of range.")
			}
			f.minFrac, f.maxFrac = mn, mx
		} else {
			f.minFrac, f.maxFrac = mnfdDefault, mxfdDefault
		}
	}
	switch {
	case !needSd && !needFd:
		f.minFrac, f.maxFrac, f.minSig, f.maxSig = 0, 0, 1, 2
		f.roundingType, f.roundingPriority = "morePrecision", "morePrecision"
	case f.roundingPriority == "auto" && hasSd:
		f.roundingType = "significant"
	case f.roundingPriority == "auto":
		f.roundingType = "fraction"
	default:
		f.roundingType = f.roundingPriority
	}
	if inc != 1 {
		if f.roundingType != "fraction" {
			return typeError("roundingIncrement is only valid with fraction digits")
		}
		if f.maxFrac != f.minFrac {
			return rangeError("maximumFractionDigits must equal minimumFractionDigits with a roundingIncrement")
		}
	}
	return nil
}

// groupingOption is ECMA-402's GetBooleanOrStringNumberFormatOption for
// useGrouping: "" for false.
func groupingOption(o NumberOptions, def string) (string, error) {
	v, ok := o["useGrouping"]
	if !ok || v == nil {
		return def, nil
	}
	switch x := v.(type) {
	case bool:
		if x {
			return "always", nil
		}
		return "", nil
	case string:
		switch x {
		case "min2", "auto", "always":
			return x, nil
		case "true", "false":
			return def, nil
		case "":
			return "", nil
		}
	}
	return "", rangeError("Value %v out of range for Intl.NumberFormat options property useGrouping", v)
}

// ResolvedOptions is resolvedOptions() as JSON, in Node's order.
func (f *NumberFormat) ResolvedOptions() string {
	var j jsonObject
	j.str("locale", f.tag)
	j.str("numberingSystem", "latn")
	j.str("style", f.style)
	if f.style == "currency" {
		j.str("currency", f.currency)
		j.str("currencyDisplay", f.currencyDisplay)
		j.str("currencySign", f.currencySign)
	}
	if f.style == "unit" {
		j.str("unit", f.unit)
		j.str("unitDisplay", f.unitDisplay)
	}
	j.num("minimumIntegerDigits", f.minInt)
	if f.roundingType != "fraction" {
		j.num("minimumSignificantDigits", f.minSig)
		j.num("maximumSignificantDigits", f.maxSig)
	}
	if f.roundingType != "significant" {
		j.num("minimumFractionDigits", f.minFrac)
		j.num("maximumFractionDigits", f.maxFrac)
	}
	if f.useGrouping == "" {
		j.raw("useGrouping", "false")
	} else {
		j.str("useGrouping", f.useGrouping)
	}
	j.str("notation", f.notation)
	if f.compactDisplay != "" {
		j.str("compactDisplay", f.compactDisplay)
	}
	j.str("signDisplay", f.signDisplay)
	j.str("roundingMode", f.roundingMode)
	j.num("roundingIncrement", f.roundingIncrement)
	j.str("trailingZeroDisplay", f.trailingZero)
	j.str("roundingPriority", f.roundingPriority)
	return j.String()
}

// Locale is the resolved locale.
func (f *NumberFormat) Locale() string { return f.tag }

// ---- patterns ---------------------------------------------------------------

// affix is a piece of a pattern around the number: literal text, or a
// symbol: '-' minus, '+' plus, '%' percent, '¤' currency.
type affix struct {
	kind byte // 0 literal
	text string
}

// numPattern is a parsed CLDR number pattern.
type numPattern struct {
	posPrefix, posSuffix []affix
	negPrefix, negSuffix []affix
	hasNeg               bool
	primary, secondary   int // grouping sizes; 0 none
	zeros                int // the integer zeros: a compact pattern's digits
	noDigits             bool
}

func parseAffix(s string) []affix {
	var out []affix
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, affix{0, lit.String()})
			lit.Reset()
		}
	}
	quoted := false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted = !quoted
		case !quoted && (r == '-' || r == '+' || r == '%'):
			flush()
			out = append(out, affix{byte(r), ""})
		case !quoted && r == '¤':
			flush()
			out = append(out, affix{'$', ""})
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	return out
}

// splitPattern cuts one subpattern into its prefix, number and suffix.
func splitPattern(s string) (string, string, string) {
	start, end := -1, -1
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			quoted = !quoted
			continue
		}
		if !quoted && (c == '#' || c == '0' || c == ',' || c == '.' || c == '@' || c == 'E' && start >= 0) {
			if start < 0 {
				start = i
			}
			end = i + 1
		}
	}
	if start < 0 {
		return s, "", ""
	}
	return s[:start], s[start:end], s[end:]
}

func parseNumPattern(s string) numPattern {
	pos, neg, hasNeg := strings.Cut(s, ";")
	var p numPattern
	pre, num, suf := splitPattern(pos)
	p.posPrefix, p.posSuffix = parseAffix(pre), parseAffix(suf)
	p.noDigits = num == ""
	ip, _, _ := strings.Cut(num, ".")
	ip, _, _ = strings.Cut(ip, "E")
	p.zeros = strings.Count(ip, "0")
	if i := strings.LastIndexByte(ip, ','); i >= 0 {
		p.primary = len(ip) - i - 1
		if j := strings.LastIndexByte(ip[:i], ','); j >= 0 {
			p.secondary = i - j - 1
		}
	}
	if hasNeg {
		npre, _, nsuf := splitPattern(neg)
		p.negPrefix, p.negSuffix, p.hasNeg = parseAffix(npre), parseAffix(nsuf), true
	} else {
		p.negPrefix = append([]affix{{'-', ""}}, p.posPrefix...)
		p.negSuffix = p.posSuffix
	}
	return p
}

// stylePattern is the pattern of f's style and notation.
func (f *NumberFormat) stylePattern() numPattern {
	l := f.loc
	switch {
	case f.notation == "scientific" || f.notation == "engineering":
		return parseNumPattern(l.patterns[patScientific].String())
	case f.style == "percent" || f.percentUnit:
		return parseNumPattern(l.patterns[patPercent].String())
	case f.style == "currency" && f.currencyDisplay != "name":
		if f.currencySign == "accounting" {
			return parseNumPattern(l.patterns[patAccounting].String())
		}
		return parseNumPattern(l.patterns[patCurrency].String())
	}
	return parseNumPattern(l.patterns[patDecimal].String())
}

// ---- formatting -------------------------------------------------------------

// Value is a number to format: a float64, or (from a BigInt or a string)
// exact decimal digits.
type Value struct {
	F float64
	// Decimal, used when IsDec, is a decimal literal, or a BigInt's digits
	// followed by "n". A literal beyond a float64's range is infinite or
	// zero, as in V8; a BigInt is exact whatever its size.
	Decimal string
	IsDec   bool
}

// number is a value about to be formatted.
type number struct {
	d   decimal
	neg bool
	nan bool
	inf bool
}

func numberOf(v Value) number {
	if v.IsDec {
		s, bigint := strings.CutSuffix(v.Decimal, "n")
		d, neg, ok := parseDecimal(s)
		if !ok {
			return number{nan: true}
		}
		if !bigint && !d.isZero() {
			switch f, _ := strconv.ParseFloat(strings.TrimSpace(s), 64); {
			case math.IsInf(f, 0):
				return number{inf: true, neg: neg}
			case f == 0:
				return number{neg: neg} // below the smallest float64
			}
		}
		return number{d: d, neg: neg}
	}
	f := v.F
	switch {
	case math.IsNaN(f):
		return number{nan: true}
	case math.IsInf(f, 0):
		return number{inf: true, neg: f < 0}
	}
	return number{d: decimalOfFloat(f), neg: math.Signbit(f)}
}

// Format is format(v).
func (f *NumberFormat) Format(v Value) string {
	return joinParts(f.FormatToParts(v))
}

func joinParts(parts []Part) string {
	n := 0
	for _, p := range parts {
		n += len(p.Value)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range parts {
		b.WriteString(p.Value)
	}
	return b.String()
}

// FormatToParts is formatToParts(v).
func (f *NumberFormat) FormatToParts(v Value) []Part {
	n := numberOf(v)
	return f.parts(n)
}

// roundDecimal is d rounded as f's digit options say, and the number of
// fraction digits to show at least.
func (f *NumberFormat) roundDecimal(d decimal, neg bool) (decimal, int) {
	fixed := func() (decimal, int, int) {
		r := d.roundIncrement(f.roundingIncrement, -f.maxFrac, f.roundingMode, neg)
		if f.roundingIncrement != 1 {
			return r, f.minFrac, -f.maxFrac
		}
		return r, f.minFrac, -f.maxFrac
	}
	sig := func() (decimal, int, int) {
		mag := d.magnitude()
		r := d.round(mag-f.maxSig+1, f.roundingMode, neg)
		// The minimum counts from the rounded number's first digit.
		m := r.magnitude()
		if r.isZero() {
			m = 0
		}
		return r, max(f.minSig-1-m, 0), mag - f.maxSig + 1
	}
	var r decimal
	var minFrac int
	switch f.roundingType {
	case "fraction":
		r, minFrac, _ = fixed()
	case "significant":
		r, minFrac, _ = sig()
	default:
		fr, fmin, fmag := fixed()
		sr, smin, smag := sig()
		fixedMore := smag > fmag
		if f.roundingType == "lessPrecision" {
			fixedMore = smag <= fmag
		}
		if fixedMore {
			r, minFrac = fr, fmin
		} else {
			r, minFrac = sr, smin
		}
	}
	if f.trailingZero == "stripIfInteger" && r.fractionDigits() == 0 {
		minFrac = 0
	}
	return r, minFrac
}

// parts formats n.
func (f *NumberFormat) parts(n number) []Part {
	l := f.loc
	if n.nan || n.inf {
		typ, val := "nan", l.symbols[symNaN].String()
		if n.inf {
			typ, val = "infinity", l.symbols[symInfinity].String()
		}
		return f.wrap(f.pattern, []Part{{Type: typ, Value: val}}, n.neg && !n.nan, false, n.nan, pluralOther)
	}
	d := n.d
	if f.style == "percent" {
		d = d.shift(2)
	}
	pat := f.pattern
	var exp int
	switch f.notation {
	case "scientific", "engineering":
		exp = d.magnitude()
		if f.notation == "engineering" {
			exp -= ((exp % 3) + 3) % 3
		}
		d = d.shift(-exp)
	case "compact":
		var cp numPattern
		var ok bool
		d, cp, ok = f.compact(d, n.neg)
		if ok {
			pat = cp
		}
	}
	r, minFrac := f.roundDecimal(d, n.neg)
	switch f.notation {
	case "scientific":
		if r.magnitude() >= 1 { // 9.99 rounded to 10
			exp++
			r, minFrac = f.roundDecimal(d.shift(-1), n.neg)
		}
	case "engineering":
		if r.magnitude() >= 3 {
			exp += 3
			r, minFrac = f.roundDecimal(d.shift(-3), n.neg)
		}
	}
	ip, fp := r.render(f.minInt, minFrac)
	num := f.digitParts(ip, fp, pat)
	if pat.noDigits {
		num = nil // a compact pattern that is a word: fr's "mille"
	}
	if f.notation == "scientific" || f.notation == "engineering" {
		num = append(num, Part{Type: "exponentSeparator", Value: l.symbols[symExponential].String()})
		if exp < 0 {
			num = append(num, Part{Type: "exponentMinusSign", Value: l.symbols[symMinus].String()})
			exp = -exp
		}
		num = append(num, Part{Type: "exponentInteger", Value: strconv.Itoa(exp)})
	}
	cat := f.plural.category(ip, fp)
	return f.wrap(pat, num, n.neg, r.isZero(), false, cat)
}

// digitParts are the integer, group, decimal and fraction parts of ip.fp
// as pattern groups them.
func (f *NumberFormat) digitParts(ip, fp string, pat numPattern) []Part {
	l := f.loc
	dec, grp := l.symbols[symDecimal], l.symbols[symGroup]
	if f.style == "currency" {
		if l.symbols[symCurrencyDecimal] != 0 {
			dec = l.symbols[symCurrencyDecimal]
		}
		if l.symbols[symCurrencyGroup] != 0 {
			grp = l.symbols[symCurrencyGroup]
		}
	}
	var out []Part
	primary, secondary := pat.primary, pat.secondary
	if primary == 0 && f.notation == "compact" {
		primary = 3 // compact patterns have no grouping of their own
	}
	if secondary == 0 {
		secondary = primary
	}
	minGroup := 1
	switch f.useGrouping {
	case "auto":
		minGroup = int(l.minGrouping)
	case "min2":
		minGroup = 2
	}
	if f.useGrouping == "" || primary == 0 || len(ip) < primary+minGroup {
		out = append(out, Part{Type: "integer", Value: ip})
	} else {
		var groups []string
		rest := ip
		groups = append(groups, rest[len(rest)-primary:])
		rest = rest[:len(rest)-primary]
		for len(rest) > secondary {
			groups = append(groups, rest[len(rest)-secondary:])
			rest = rest[:len(rest)-secondary]
		}
		if rest != "" {
			groups = append(groups, rest)
		}
		for i := len(groups) - 1; i >= 0; i-- {
			out = append(out, Part{Type: "integer", Value: groups[i]})
			if i > 0 {
				out = append(out, Part{Type: "group", Value: grp.String()})
			}
		}
	}
	if fp != "" {
		out = append(out, Part{Type: "decimal", Value: dec.String()}, Part{Type: "fraction", Value: fp})
	}
	return out
}

// signOf is the sign to show: '-', '+' or 0.
func (f *NumberFormat) signOf(neg, zero, nan bool) byte {
	switch f.signDisplay {
	case "never":
		return 0
	case "always":
		if neg {
			return '-'
		}
		return '+'
	case "exceptZero":
		switch {
		case zero || nan:
			return 0
		case neg:
			return '-'
		}
		return '+'
	case "negative":
		if neg && !zero {
			return '-'
		}
		return 0
	}
	if neg {
		return '-'
	}
	return 0
}

// wrap puts the pattern's prefix and suffix around the number's parts,
// with the sign, and the style's currency, percent sign or unit. cat is
// the plural category of the number as shown.
func (f *NumberFormat) wrap(pat numPattern, num []Part, neg, zero, nan bool, cat int) []Part {
	sign := f.signOf(neg, zero, nan)
	prefix, suffix := pat.posPrefix, pat.posSuffix
	switch {
	case sign == '-':
		prefix, suffix = pat.negPrefix, pat.negSuffix
	case sign == '+':
		if pat.hasNeg && (hasKind(pat.negPrefix, '-') || hasKind(pat.negSuffix, '-')) {
			prefix, suffix = swapKind(pat.negPrefix, '-', '+'), swapKind(pat.negSuffix, '-', '+')
		} else {
			prefix = append([]affix{{'+', ""}}, pat.posPrefix...)
		}
	}
	currency := ""
	if f.style == "currency" && f.currencyDisplay != "name" {
		currency = f.currencyText()
	}
	out := make([]Part, 0, len(num)+4)
	out = f.affixParts(out, prefix, currency, num, true)
	out = append(out, num...)
	out = f.affixParts(out, suffix, currency, num, false)
	switch {
	case f.style == "unit" && !f.percentUnit:
		return f.unitParts(out, cat)
	case f.style == "currency" && f.currencyDisplay == "name":
		return f.currencyNameParts(out, cat)
	}
	return out
}

func hasKind(a []affix, k byte) bool {
	for _, x := range a {
		if x.kind == k {
			return true
		}
	}
	return false
}

func swapKind(a []affix, from, to byte) []affix {
	out := make([]affix, len(a))
	for i, x := range a {
		if x.kind == from {
			x.kind = to
		}
		out[i] = x
	}
	return out
}

// affixParts appends the parts of a prefix (before) or suffix.
func (f *NumberFormat) affixParts(out []Part, a []affix, currency string, num []Part, before bool) []Part {
	l := f.loc
	for i, x := range a {
		switch x.kind {
		case 0:
			out = appendLiteral(out, x.text)
		case '-':
			out = append(out, Part{Type: "minusSign", Value: l.symbols[symMinus].String()})
		case '+':
			out = append(out, Part{Type: "plusSign", Value: l.symbols[symPlus].String()})
		case '%':
			typ := "percentSign"
			if f.percentUnit {
				typ = "unit"
			}
			out = append(out, Part{Type: typ, Value: l.symbols[symPercent].String()})
		case 'c':
			out = append(out, Part{Type: "compact", Value: x.text})
		case '$':
			// CLDR's currency spacing: a symbol that ends (or starts) with
			// a letter gets a no-break space from the digits it touches.
			if !before && i == 0 && needsSpace(currency, false) && digitNext(num, false) {
				out = append(out, Part{Type: "literal", Value: "\u00a0"})
			}
			out = append(out, Part{Type: "currency", Value: currency})
			if before && i == len(a)-1 && needsSpace(currency, true) && digitNext(num, true) {
				out = append(out, Part{Type: "literal", Value: "\u00a0"})
			}
		}
	}
	return out
}

func appendLiteral(out []Part, s string) []Part {
	if s == "" {
		return out
	}
	if n := len(out); n > 0 && out[n-1].Type == "literal" {
		out[n-1].Value += s
		return out
	}
	return append(out, Part{Type: "literal", Value: s})
}

// needsSpace reports whether currency, before (or after) the number, has a
// character there that is neither a symbol nor a space.
func needsSpace(currency string, before bool) bool {
	var r rune
	if before {
		r, _ = utf8.DecodeLastRuneInString(currency)
	} else {
		r, _ = utf8.DecodeRuneInString(currency)
	}
	return r != utf8.RuneError && !unicode.IsSymbol(r) && !unicode.In(r, unicode.Z)
}

// digitNext reports whether num starts (or ends) with a digit.
func digitNext(num []Part, first bool) bool {
	if len(num) == 0 {
		return false
	}
	p := num[len(num)-1]
	if first {
		p = num[0]
	}
	return p.Type == "integer" || p.Type == "fraction" || p.Type == "exponentInteger"
}

// currencyText is the currency as currencyDisplay asks.
func (f *NumberFormat) currencyText() string {
	if f.currencyDisplay == "code" {
		return f.currency
	}
	c := f.loc.currency(f.currency)
	if c == nil {
		return f.currency
	}
	if f.currencyDisplay == "narrowSymbol" && c.narrow != 0 {
		return c.narrow.String()
	}
	if c.symbol != 0 {
		return c.symbol.String()
	}
	return f.currency
}

func (l *locale) currency(code string) *currencyNames {
	if len(code) != 3 {
		return nil
	}
	c := [3]byte{code[0], code[1], code[2]}
	i := sort.Search(len(l.currencies), func(i int) bool { return string(l.currencies[i].code[:]) >= code })
	if i < len(l.currencies) && l.currencies[i].code == c {
		return &l.currencies[i]
	}
	return nil
}

// currencyNameParts puts the number into the locale's "{0} {1}" with the
// currency's name for its plural category.
func (f *NumberFormat) currencyNameParts(num []Part, cat int) []Part {
	name := f.currency
	if c := f.loc.currency(f.currency); c != nil && c.name[pluralOther] != 0 {
		name = c.name.get(cat)
	}
	return substitute(f.loc.currencyName.get(cat), num, Part{Type: "currency", Value: name}, "")
}

// substitute fills "{0}" of pattern with num and "{1}" with the part one;
// the pattern's other text is literal, or of type textType if set (a
// unit's name), with the spaces around the number literal.
func substitute(pattern string, num []Part, one Part, textType string) []Part {
	var out []Part
	text := func(s string, afterNum bool) {
		if s == "" {
			return
		}
		if textType == "" {
			out = appendLiteral(out, s)
			return
		}
		// The spaces next to the number are literal, the rest is the unit.
		var lead, core, trail string
		core = s
		trimmed := strings.TrimLeftFunc(core, unicode.IsSpace)
		lead, core = core[:len(core)-len(trimmed)], trimmed
		trimmed = strings.TrimRightFunc(core, unicode.IsSpace)
		trail, core = core[len(trimmed):], trimmed
		out = appendLiteral(out, lead)
		if core != "" {
			out = append(out, Part{Type: textType, Value: core})
		}
		out = appendLiteral(out, trail)
	}
	for pattern != "" {
		i := strings.IndexByte(pattern, '{')
		if i < 0 || i+2 >= len(pattern) || pattern[i+2] != '}' {
			text(pattern, false)
			break
		}
		text(pattern[:i], false)
		switch pattern[i+1] {
		case '0':
			out = append(out, num...)
		case '1':
			out = append(out, one)
		}
		pattern = pattern[i+3:]
	}
	return out
}

// unitParts puts the number into the unit's pattern for its plural
// category.
func (f *NumberFormat) unitParts(num []Part, cat int) []Part {
	w := map[string]int{"long": 0, "short": 1, "narrow": 2}[f.unitDisplay]
	l := f.loc
	if u := l.unitOf(f.unit); u != nil {
		return substitute(u.pattern[w].get(cat), num, Part{}, "unit")
	}
	numer, denom, _ := strings.Cut(f.unit, "-per-")
	nu, du := l.unitOf(numer), l.unitOf(denom)
	if nu == nil || du == nil {
		return append(num, Part{Type: "literal", Value: " "}, Part{Type: "unit", Value: f.unit})
	}
	inner := substitute(nu.pattern[w].get(cat), num, Part{}, "unit")
	if p := du.per[w]; p != 0 {
		return substitute(p.String(), inner, Part{}, "unit")
	}
	// "{0}/{1}" with the denominator's name for one, without its number.
	one := strings.TrimSpace(strings.ReplaceAll(du.pattern[w].get(pluralOne), "{0}", ""))
	return substitute(l.perPattern[w].String(), inner, Part{Type: "unit", Value: one}, "unit")
}

func (l *locale) unitOf(id string) *unitNames {
	i := sort.Search(len(l.units), func(i int) bool { return l.units[i].id >= id })
	if i < len(l.units) && l.units[i].id == id {
		return &l.units[i]
	}
	return nil
}

// compact scales d for compact notation: the scaled number, the pattern
// of its magnitude and whether there is one (a magnitude below a thousand,
// or CLDR's "0", formats as it is).
func (f *NumberFormat) compact(d decimal, neg bool) (decimal, numPattern, bool) {
	l := f.loc
	width := 0
	if f.compactDisplay == "long" {
		width = 1
	}
	set := 0
	if f.style == "currency" {
		set, width = 1, 0 // CLDR has short currency patterns only
	}
	r, _ := f.roundDecimal(d, neg)
	mag := r.magnitude()
	for try := 0; try < 2; try++ {
		if mag < 3 {
			return d, numPattern{}, false
		}
		m := min(mag, 17)
		pats := &l.compact[width][set][m-3]
		if pats[pluralOther] == 0 {
			return d, numPattern{}, false
		}
		other := pats[pluralOther].String()
		if other == "0" {
			return d, numPattern{}, false
		}
		zeros := parseNumPattern(other).zeros
		scale := m - zeros + 1
		scaled := d.shift(-scale)
		sr, minFrac := f.roundDecimal(scaled, neg)
		if sr.magnitude()+scale > mag && mag < 17 && !sr.isZero() {
			mag = sr.magnitude() + scale // 999,999 rounds to 1,000K: 1M
			continue
		}
		ip, fp := sr.render(f.minInt, minFrac)
		text := pats.get(f.plural.category(ip, fp))
		if ip == "1" && fp == "" && pats[pluralExactOne] != 0 {
			text = pats[pluralExactOne].String()
		}
		p := parseNumPattern(text)
		p.primary = 0
		return scaled, markCompact(p), true
	}
	return d, numPattern{}, false
}

// markCompact turns the literal text of a compact pattern (not the spaces
// next to the number) into compact parts.
func markCompact(p numPattern) numPattern {
	mark := func(a []affix) []affix {
		var out []affix
		for _, x := range a {
			if x.kind != 0 {
				out = append(out, x)
				continue
			}
			t := x.text
			core := strings.TrimFunc(t, unicode.IsSpace)
			if core == "" {
				out = append(out, x)
				continue
			}
			i := strings.Index(t, core)
			if i > 0 {
				out = append(out, affix{0, t[:i]})
			}
			out = append(out, affix{'c', core})
			if rest := t[i+len(core):]; rest != "" {
				out = append(out, affix{0, rest})
			}
		}
		return out
	}
	p.posPrefix, p.posSuffix = mark(p.posPrefix), mark(p.posSuffix)
	p.negPrefix, p.negSuffix = mark(p.negPrefix), mark(p.negSuffix)
	return p
}
