package intl

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DateTimeFormat is a resolved Intl.DateTimeFormat: the locale's pattern
// for the options, in a time zone.
type DateTimeFormat struct {
	loc  *locale
	tag  string
	zone timeZone

	hourCycle string // "" without an hour
	dateStyle string
	timeStyle string
	pattern   []patternItem
	// opts are the resolved components for resolvedOptions, read back
	// from the pattern.
	opts [len(componentKeys)]string
	fsd  int // fractionalSecondDigits
}

// DateOptions are the options of Intl.DateTimeFormat as the JavaScript
// layer read them: strings, booleans and numbers, absent ones absent.
type DateOptions map[string]any

func (o DateOptions) str(key string, allowed ...string) (string, error) {
	v, ok := o[key]
	if !ok || v == nil {
		return "", nil
	}
	s, _ := v.(string)
	for _, a := range allowed {
		if a == s {
			return s, nil
		}
	}
	return "", rangeError("Value %s out of range for Intl.DateTimeFormat options property %s", s, key)
}

// componentKeys are the component options, in resolvedOptions' order.
var componentKeys = [...]string{"weekday", "era", "year", "month", "day", "dayPeriod", "hour", "minute", "second", "fractionalSecondDigits", "timeZoneName"}

const (
	cWeekday = iota
	cEra
	cYear
	cMonth
	cDay
	cDayPeriod
	cHour
	cMinute
	cSecond
	cFraction
	cZoneName
)

var (
	textWidths    = []string{"narrow", "short", "long"}
	numericWidths = []string{"numeric", "2-digit"}
	styleNames    = []string{"full", "long", "medium", "short"}
)

// NewDateTimeFormat resolves an Intl.DateTimeFormat for the requested
// locales (as given) and options (after ECMA-402's ToDateTimeOptions,
// which the JavaScript layer applies).
func (e *Env) NewDateTimeFormat(locales []string, o DateOptions) (*DateTimeFormat, error) {
	r, err := e.Locales.resolveLocale(locales, e.defaultLocale())
	if err != nil {
		return nil, err
	}
	f := &DateTimeFormat{loc: r.data, tag: r.tag}
	if _, err := o.str("localeMatcher", "lookup", "best fit"); err != nil {
		return nil, err
	}
	for _, k := range []string{"calendar", "numberingSystem"} {
		if v, ok := o[k]; ok && v != nil {
			if s, _ := v.(string); !isTypeSequence(s) {
				return nil, rangeError("Invalid %s : %s", k, s)
			}
		}
	}
	hour12, hasHour12 := o["hour12"].(bool)
	hc, err := o.str("hourCycle", "h11", "h12", "h23", "h24")
	if err != nil {
		return nil, err
	}
	// extHC: the -u-hc- keyword decides, no option naming a clock.
	extHC := false
	if hasHour12 {
		hc = ""
	} else if hc == "" {
		extHC = true
		if v := r.ext["hc"]; hourLetter(v) != 0 {
			hc = v
		}
	}
	tz := e.timeZone()
	if v, ok := o["timeZone"]; ok && v != nil {
		s, _ := v.(string)
		tz = s
	}
	if f.zone, err = resolveTimeZone(tz); err != nil {
		return nil, err
	}
	var comp [len(componentKeys)]string
	for i, k := range componentKeys {
		var allowed []string
		switch i {
		case cWeekday, cEra, cDayPeriod:
			allowed = textWidths
		case cMonth:
			allowed = []string{"numeric", "2-digit", "narrow", "short", "long"}
		case cFraction:
			continue
		case cZoneName:
			allowed = []string{"short", "long", "shortOffset", "longOffset", "shortGeneric", "longGeneric"}
		default:
			allowed = numericWidths
		}
		if comp[i], err = o.str(k, allowed...); err != nil {
			return nil, err
		}
	}
	if v, ok := o["fractionalSecondDigits"]; ok && v != nil {
		n, _ := v.(float64)
		if math.IsNaN(n) || n < 1 || n > 3 {
			return nil, rangeError("fractionalSecondDigits value is out of range.")
		}
		f.fsd = int(math.Floor(n))
		comp[cFraction] = strconv.Itoa(f.fsd)
	}
	if _, err := o.str("formatMatcher", "basic", "best fit"); err != nil {
		return nil, err
	}
	if f.dateStyle, err = o.str("dateStyle", styleNames...); err != nil {
		return nil, err
	}
	if f.timeStyle, err = o.str("timeStyle", styleNames...); err != nil {
		return nil, err
	}
	hasComp := false
	for _, c := range comp {
		hasComp = hasComp || c != ""
	}
	if f.dateStyle != "" || f.timeStyle != "" {
		if hasComp {
			return nil, typeError("Can't set option %s when %s is used", firstSet(comp), styleOption(f))
		}
	} else if !hasComp {
		comp[cYear], comp[cMonth], comp[cDay] = "numeric", "numeric", "numeric"
	}
	l := f.loc
	// The hour cycle: hour12 picks the locale's twelve- or 24-hour clock
	// (ECMA-402's [[HourCycle12]], [[HourCycle24]]), hourCycle or the
	// -u-hc- keyword names one, else the locale's own.
	hasHour := comp[cHour] != "" || f.timeStyle != ""
	letter := byte(0)
	switch {
	case hasHour12 && hour12:
		letter = l.hourCycle[1]
	case hasHour12:
		letter = l.hourCycle[2]
	case hc != "":
		letter = hourLetter(hc)
	}
	gen := generatorOf(r.index)
	var pattern string
	if f.dateStyle != "" || f.timeStyle != "" {
		pattern = f.stylePattern(gen, letter)
	} else {
		pattern = gen.pattern(skeletonOf(comp, letter))
		if letter != 0 {
			pattern = replaceHourLetter(pattern, letter)
		}
	}
	f.pattern = parsePattern(pattern)
	if hasHour {
		for _, it := range f.pattern {
			switch it.letter {
			case 'h':
				f.hourCycle = "h12"
			case 'H':
				f.hourCycle = "h23"
			case 'K':
				f.hourCycle = "h11"
			case 'k':
				f.hourCycle = "h24"
			}
		}
	}
	// The -u-hc- keyword stays in the locale unless hour12 or hourCycle
	// chose another clock (V8's); -u-nu-latn stays, Latin being ours.
	var kw []string
	if ext := r.ext["hc"]; hourLetter(ext) != 0 && (extHC || f.hourCycle == ext) {
		kw = append(kw, "hc-"+ext)
	}
	if r.ext["nu"] == "latn" {
		kw = append(kw, "nu-latn")
	}
	if kw != nil {
		f.tag += "-u-" + strings.Join(kw, "-")
	}
	if f.dateStyle == "" && f.timeStyle == "" {
		f.readComponents()
	}
	return f, nil
}

func firstSet(comp [len(componentKeys)]string) string {
	for i, c := range comp {
		if c != "" {
			return componentKeys[i]
		}
	}
	return ""
}

func styleOption(f *DateTimeFormat) string {
	if f.dateStyle != "" {
		return "dateStyle"
	}
	return "timeStyle"
}

func hourLetter(hc string) byte {
	switch hc {
	case "h11":
		return 'K'
	case "h12":
		return 'h'
	case "h23":
		return 'H'
	case "h24":
		return 'k'
	}
	return 0
}

// skeletonOf is the skeleton of the components (V8's), with hour as the
// hour letter, or 'j' (the locale's) if 0.
func skeletonOf(comp [len(componentKeys)]string, hour byte) string {
	var b strings.Builder
	rep := func(c byte, n int) {
		for range n {
			b.WriteByte(c)
		}
	}
	text := func(c byte, v string) {
		switch v {
		case "narrow":
			rep(c, 5)
		case "short":
			rep(c, 3)
		case "long":
			rep(c, 4)
		}
	}
	text('E', comp[cWeekday])
	text('G', comp[cEra])
	switch comp[cYear] {
	case "numeric":
		rep('y', 1)
	case "2-digit":
		rep('y', 2)
	}
	switch comp[cMonth] {
	case "numeric":
		rep('M', 1)
	case "2-digit":
		rep('M', 2)
	default:
		text('M', comp[cMonth])
	}
	switch comp[cDay] {
	case "numeric":
		rep('d', 1)
	case "2-digit":
		rep('d', 2)
	}
	switch comp[cDayPeriod] {
	case "narrow":
		rep('B', 5)
	case "short":
		rep('B', 1)
	case "long":
		rep('B', 4)
	}
	if hour == 0 {
		hour = 'j'
	}
	switch comp[cHour] {
	case "numeric":
		rep(hour, 1)
	case "2-digit":
		rep(hour, 2)
	}
	switch comp[cMinute] {
	case "numeric":
		rep('m', 1)
	case "2-digit":
		rep('m', 2)
	}
	switch comp[cSecond] {
	case "numeric":
		rep('s', 1)
	case "2-digit":
		rep('s', 2)
	}
	if n, err := strconv.Atoi(comp[cFraction]); err == nil {
		rep('S', n)
	}
	switch comp[cZoneName] {
	case "short":
		rep('z', 1)
	case "long":
		rep('z', 4)
	case "shortOffset":
		rep('O', 1)
	case "longOffset":
		rep('O', 4)
	case "shortGeneric":
		rep('v', 1)
	case "longGeneric":
		rep('v', 4)
	}
	return b.String()
}

// replaceHourLetter writes every hour of pattern with the letter (V8's
// ReplaceHourCycleInPattern): the matcher may have kept the locale's.
func replaceHourLetter(pattern string, letter byte) string {
	items := parsePattern(pattern)
	for i := range items {
		switch items[i].letter {
		case 'h', 'H', 'k', 'K':
			items[i].letter = letter
		}
	}
	return formatPattern(items)
}

// stylePattern is the pattern of dateStyle and timeStyle; with an hour
// cycle other than the pattern's, the pattern of its skeleton with that
// hour (V8's DateTimeStylePattern).
func (f *DateTimeFormat) stylePattern(gen *generator, letter byte) string {
	l := f.loc
	ds, ts := styleIndex(f.dateStyle), styleIndex(f.timeStyle)
	var p string
	switch {
	case ds >= 0 && ts >= 0:
		p = joinDateTime(l.atTime[ds].String(), l.dateFormat[ds].String(), l.timeFormat[ts].String())
	case ds >= 0:
		p = l.dateFormat[ds].String()
	default:
		p = l.timeFormat[ts].String()
	}
	if letter == 0 || ts < 0 {
		return p
	}
	items := parsePattern(p)
	var skel strings.Builder
	same := true
	for _, it := range items {
		switch it.letter {
		case 0:
			continue
		case 'a', 'b', 'B':
			continue
		case 'h', 'H', 'k', 'K':
			same = same && it.letter == letter
			it.letter = letter
		}
		for range it.n {
			skel.WriteByte(it.letter)
		}
	}
	if same {
		return p
	}
	return replaceHourLetter(gen.pattern(skel.String()), letter)
}

func styleIndex(s string) int {
	for i, n := range styleNames {
		if n == s {
			return i
		}
	}
	return -1
}

// readComponents sets the resolved components from the pattern, as V8
// reports them.
func (f *DateTimeFormat) readComponents() {
	for _, it := range f.pattern {
		n := it.n
		text := func() string {
			switch {
			case n == 4:
				return "long"
			case n == 5:
				return "narrow"
			}
			return "short"
		}
		num := func() string {
			if n == 2 {
				return "2-digit"
			}
			return "numeric"
		}
		switch it.letter {
		case 'E', 'c', 'e':
			f.opts[cWeekday] = text()
		case 'G':
			f.opts[cEra] = text()
		case 'y':
			f.opts[cYear] = num()
		case 'M', 'L':
			if n <= 2 {
				f.opts[cMonth] = num()
			} else {
				f.opts[cMonth] = text()
			}
		case 'd':
			f.opts[cDay] = num()
		case 'B', 'b':
			f.opts[cDayPeriod] = text()
		case 'h', 'H', 'k', 'K':
			f.opts[cHour] = num()
		case 'm':
			f.opts[cMinute] = num()
		case 's':
			f.opts[cSecond] = num()
		case 'S':
			f.opts[cFraction] = strconv.Itoa(n)
		case 'z':
			if n == 4 {
				f.opts[cZoneName] = "long"
			} else {
				f.opts[cZoneName] = "short"
			}
		case 'O':
			if n == 4 {
				f.opts[cZoneName] = "longOffset"
			} else {
				f.opts[cZoneName] = "shortOffset"
			}
		case 'v':
			if n == 4 {
				f.opts[cZoneName] = "longGeneric"
			} else {
				f.opts[cZoneName] = "shortGeneric"
			}
		}
	}
}

// ResolvedOptions is resolvedOptions() as JSON, in Node's order.
func (f *DateTimeFormat) ResolvedOptions() string {
	var j jsonObject
	j.str("locale", f.tag)
	j.str("calendar", "gregory")
	j.str("numberingSystem", "latn")
	j.str("timeZone", f.zone.name)
	if f.hourCycle != "" {
		j.str("hourCycle", f.hourCycle)
		j.raw("hour12", strconv.FormatBool(f.hourCycle == "h11" || f.hourCycle == "h12"))
	}
	for i, v := range f.opts {
		if v == "" {
			continue
		}
		if i == cFraction {
			j.raw(componentKeys[i], v)
			continue
		}
		j.str(componentKeys[i], v)
	}
	if f.dateStyle != "" {
		j.str("dateStyle", f.dateStyle)
	}
	if f.timeStyle != "" {
		j.str("timeStyle", f.timeStyle)
	}
	return j.String()
}

// Locale is the resolved locale.
func (f *DateTimeFormat) Locale() string { return f.tag }

// maxTime is the largest magnitude of a time value.
const maxTime = 8.64e15

// Format is format(ms): the date in the pattern, with the space V8 writes
// where CLDR has U+202F (before AM and PM in English) as an ordinary one.
func (f *DateTimeFormat) Format(ms float64) (string, error) {
	if err := checkTime(ms); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(32)
	f.render(ms, func(_, v string) { b.WriteString(v) })
	s := b.String()
	if strings.Contains(s, "\u202f") {
		s = strings.ReplaceAll(s, "\u202f", " ")
	}
	return s, nil
}

// FormatToParts is formatToParts(ms).
func (f *DateTimeFormat) FormatToParts(ms float64) ([]Part, error) {
	if err := checkTime(ms); err != nil {
		return nil, err
	}
	out := make([]Part, 0, len(f.pattern))
	f.render(ms, func(typ, v string) {
		if typ == "literal" {
			out = appendLiteral(out, v)
			return
		}
		out = append(out, Part{Type: typ, Value: v})
	})
	return out, nil
}

func checkTime(ms float64) error {
	if math.IsNaN(ms) || math.IsInf(ms, 0) || math.Abs(ms) > maxTime {
		return rangeError("Invalid time value")
	}
	return nil
}

// render writes the time value ms in the pattern, part by part.
func (f *DateTimeFormat) render(ms float64, emit func(typ, value string)) {
	ms = math.Trunc(ms)
	t := time.UnixMilli(int64(ms)).In(f.zone.loc)
	year, month, day := t.Date()
	hour, minute, second := t.Clock()
	l := f.loc
	for _, it := range f.pattern {
		if it.letter == 0 {
			emit("literal", it.text)
			continue
		}
		n := it.n
		switch it.letter {
		case 'G':
			era := 1
			if year < 1 {
				era = 0
			}
			emit("era", l.eras[textWidth(n)][era].String())
		case 'y':
			y := year
			if y < 1 {
				y = 1 - y
			}
			v := strconv.Itoa(y)
			if n == 2 {
				v = pad2(y % 100)
			} else if len(v) < n {
				v = strings.Repeat("0", n-len(v)) + v
			}
			emit("year", v)
		case 'M', 'L':
			m := int(month)
			var v string
			switch {
			case n == 1:
				v = strconv.Itoa(m)
			case n == 2:
				v = pad2(m)
			default:
				ctx := 0
				if it.letter == 'L' {
					ctx = 1
				}
				v = l.months[ctx][textWidth(n)][m-1].String()
			}
			emit("month", v)
		case 'd':
			emit("day", padN(day, n))
		case 'E', 'c', 'e':
			ctx := 0
			if it.letter == 'c' {
				ctx = 1
			}
			w := textWidth(n)
			if n == 6 {
				w = widthShort
			}
			emit("weekday", l.days[ctx][w][t.Weekday()].String())
		case 'a':
			pm := 0
			if hour >= 12 {
				pm = 1
			}
			emit("dayPeriod", l.ampm[textWidth(n)][pm].String())
		case 'B', 'b':
			emit("dayPeriod", l.flexiblePeriod(hour, minute, second, textWidth(n)))
		case 'h':
			h := hour % 12
			if h == 0 {
				h = 12
			}
			emit("hour", padN(h, n))
		case 'H':
			emit("hour", padN(hour, n))
		case 'K':
			emit("hour", padN(hour%12, n))
		case 'k':
			h := hour
			if h == 0 {
				h = 24
			}
			emit("hour", padN(h, n))
		case 'm':
			emit("minute", padN(minute, n))
		case 's':
			emit("second", padN(second, n))
		case 'S':
			frac := int(math.Mod(ms, 1000))
			if frac < 0 {
				frac += 1000
			}
			v := strconv.Itoa(1000 + frac)[1:]
			if n <= 3 {
				v = v[:n]
			} else {
				v += strings.Repeat("0", n-3)
			}
			emit("fractionalSecond", v)
		case 'z', 'v', 'O', 'V', 'Z', 'X', 'x':
			emit("timeZoneName", l.zoneName(f.zone, t, it.letter, n))
		default:
			emit("literal", strings.Repeat(string(it.letter), n))
		}
	}
}

func textWidth(n int) int {
	switch {
	case n == 4:
		return widthWide
	case n == 5:
		return widthNarrow
	}
	return widthAbbreviated
}

// smallNumbers are 0 to 99 in digits, and padded to two.
var smallNumbers, smallPadded = func() (a, b [100]string) {
	for i := range a {
		a[i] = strconv.Itoa(i)
		b[i] = fmt.Sprintf("%02d", i)
	}
	return a, b
}()

func pad2(n int) string {
	if n >= 0 && n < 100 {
		return smallPadded[n]
	}
	return strconv.Itoa(n)
}

func padN(v, n int) string {
	if n >= 2 {
		return pad2(v)
	}
	if v >= 0 && v < 100 {
		return smallNumbers[v]
	}
	return strconv.Itoa(v)
}

// flexiblePeriod is the day period (the dayPeriod option's, "in the
// morning") of a time: noon at 12:00 where the locale names it, else the
// period of the hour, else AM or PM.
func (l *locale) flexiblePeriod(hour, minute, second, w int) string {
	if hour == 12 && minute == 0 && second == 0 && l.periods[w][periodNoon] != 0 {
		return l.periods[w][periodNoon].String()
	}
	if p := l.dayPeriod[hour]; p != 0 && l.periods[w][p] != 0 {
		return l.periods[w][p].String()
	}
	pm := 0
	if hour >= 12 {
		pm = 1
	}
	return l.ampm[w][pm].String()
}
