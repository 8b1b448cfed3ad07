package intl

import (
	"strings"
	"sync"
)

// Skeleton matching: the pattern a locale writes an option bag's fields
// with (UTS #35, "Matching Skeletons", as ICU's DateTimePatternGenerator
// does it, whose results Node reports). A skeleton is the pattern letters
// of the fields wanted, without order or literals ("yMMMdjmm"); the
// locale's availableFormats map skeletons to patterns; the best one by a
// distance between field widths is adjusted to the widths asked for, and
// a request no single pattern covers is a date pattern and a time pattern
// joined by the locale's dateTimeFormat.

// Fields of a skeleton, in ICU's order: the date fields, then the time
// fields.
const (
	fEra = iota
	fYear
	fQuarter
	fMonth
	fWeekOfYear
	fWeekOfMonth
	fWeekday
	fDayOfYear
	fDayOfWeekInMonth
	fDay
	fDayPeriod
	fHour
	fMinute
	fSecond
	fFraction
	fZone
	fCount
)

const (
	dateMask = 1<<fDayPeriod - 1
	timeMask = (1<<fCount - 1) &^ dateMask
)

// Field types, as the distance measures them: a numeric type is
// tNumeric plus the field's length, a text type negative, so that numeric
// and text widths of a field are far apart.
const (
	tNarrow  = -0x101
	tShorter = -0x102
	tShort   = -0x103
	tLong    = -0x104
	tNumeric = 0x100
	tDelta   = 0x10

	extraField   = 0x10000
	missingField = 0x1000
)

// letterType is a pattern letter's field and type from a length on.
type letterType struct {
	letter byte
	field  int
	typ    int
	minLen int
}

var letterTypes = []letterType{
	{'G', fEra, tShort, 1}, {'G', fEra, tLong, 4}, {'G', fEra, tNarrow, 5},
	{'y', fYear, tNumeric, 1}, {'Y', fYear, tNumeric + tDelta, 1}, {'u', fYear, tNumeric + 2*tDelta, 1},
	{'r', fYear, tNumeric + 3*tDelta, 1}, {'U', fYear, tShort, 1}, {'U', fYear, tLong, 4}, {'U', fYear, tNarrow, 5},
	{'Q', fQuarter, tNumeric, 1}, {'Q', fQuarter, tShort, 3}, {'Q', fQuarter, tLong, 4}, {'Q', fQuarter, tNarrow, 5},
	{'q', fQuarter, tNumeric + tDelta, 1}, {'q', fQuarter, tShort - tDelta, 3}, {'q', fQuarter, tLong - tDelta, 4},
	{'q', fQuarter, tNarrow - tDelta, 5},
	{'M', fMonth, tNumeric, 1}, {'M', fMonth, tShort, 3}, {'M', fMonth, tLong, 4}, {'M', fMonth, tNarrow, 5},
	{'L', fMonth, tNumeric + tDelta, 1}, {'L', fMonth, tShort - tDelta, 3}, {'L', fMonth, tLong - tDelta, 4},
	{'L', fMonth, tNarrow - tDelta, 5}, {'l', fMonth, tNumeric + tDelta, 1},
	{'w', fWeekOfYear, tNumeric, 1}, {'W', fWeekOfMonth, tNumeric, 1},
	{'E', fWeekday, tShort, 1}, {'E', fWeekday, tLong, 4}, {'E', fWeekday, tNarrow, 5}, {'E', fWeekday, tShorter, 6},
	{'c', fWeekday, tNumeric + 2*tDelta, 1}, {'c', fWeekday, tShort - 2*tDelta, 3}, {'c', fWeekday, tLong - 2*tDelta, 4},
	{'c', fWeekday, tNarrow - 2*tDelta, 5}, {'c', fWeekday, tShorter - 2*tDelta, 6},
	{'e', fWeekday, tNumeric + tDelta, 1}, {'e', fWeekday, tShort - tDelta, 3}, {'e', fWeekday, tLong - tDelta, 4},
	{'e', fWeekday, tNarrow - tDelta, 5}, {'e', fWeekday, tShorter - tDelta, 6},
	{'d', fDay, tNumeric, 1}, {'g', fDay, tNumeric + tDelta, 1},
	{'D', fDayOfYear, tNumeric, 1}, {'F', fDayOfWeekInMonth, tNumeric, 1},
	{'a', fDayPeriod, tShort, 1}, {'a', fDayPeriod, tLong, 4}, {'a', fDayPeriod, tNarrow, 5},
	{'b', fDayPeriod, tShort - tDelta, 1}, {'b', fDayPeriod, tLong - tDelta, 4}, {'b', fDayPeriod, tNarrow - tDelta, 5},
	{'B', fDayPeriod, tShort - 3*tDelta, 1}, {'B', fDayPeriod, tLong - 3*tDelta, 4}, {'B', fDayPeriod, tNarrow - 3*tDelta, 5},
	{'H', fHour, tNumeric + 10*tDelta, 1}, {'k', fHour, tNumeric + 11*tDelta, 1},
	{'h', fHour, tNumeric, 1}, {'K', fHour, tNumeric + tDelta, 1},
	{'m', fMinute, tNumeric, 1}, {'s', fSecond, tNumeric, 1}, {'A', fSecond, tNumeric + tDelta, 1},
	{'S', fFraction, tNumeric, 1},
	{'v', fZone, tShort - 2*tDelta, 1}, {'v', fZone, tLong - 2*tDelta, 4},
	{'z', fZone, tShort, 1}, {'z', fZone, tLong, 4},
	{'Z', fZone, tNarrow - tDelta, 1}, {'Z', fZone, tLong - tDelta, 4}, {'Z', fZone, tShort - tDelta, 5},
	{'O', fZone, tShort - tDelta, 1}, {'O', fZone, tLong - tDelta, 4},
	{'V', fZone, tShort - tDelta, 1}, {'V', fZone, tLong - tDelta, 2}, {'V', fZone, tLong - 1 - tDelta, 3},
	{'V', fZone, tLong - 2 - tDelta, 4},
	{'X', fZone, tNarrow - tDelta, 1}, {'X', fZone, tShort - tDelta, 2}, {'X', fZone, tLong - tDelta, 4},
	{'x', fZone, tNarrow - tDelta, 1}, {'x', fZone, tShort - tDelta, 2}, {'x', fZone, tLong - tDelta, 4},
}

// typeOf is the row of letterTypes for a letter repeated n times.
func typeOf(letter byte, n int) (letterType, bool) {
	var best letterType
	found := false
	for _, t := range letterTypes {
		if t.letter == letter && t.minLen <= n && (!found || t.minLen > best.minLen) {
			best, found = t, true
		}
	}
	return best, found
}

// skeleton is a parsed skeleton: per field, its letter, length and type.
type skeleton struct {
	letter [fCount]byte
	length [fCount]int8
	typ    [fCount]int
}

// patternItem is a piece of a pattern: a field (a letter, n times) or a
// literal text.
type patternItem struct {
	letter byte
	n      int
	text   string
}

// parsePattern splits a CLDR date pattern into fields and literals
// ('quoted' text is literal, ” a quote).
func parsePattern(p string) []patternItem {
	var out []patternItem
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, patternItem{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			if i+1 < len(p) && p[i+1] == '\'' {
				lit.WriteByte('\'')
				i += 2
				continue
			}
			j := i + 1
			for j < len(p) {
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				lit.WriteByte(p[j])
				j++
			}
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			flush()
			j := i
			for j < len(p) && p[j] == c {
				j++
			}
			out = append(out, patternItem{letter: c, n: j - i})
			i = j
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return out
}

// formatPattern writes items back as a pattern.
func formatPattern(items []patternItem) string {
	var b strings.Builder
	for _, it := range items {
		if it.letter != 0 {
			for range it.n {
				b.WriteByte(it.letter)
			}
			continue
		}
		quote := false
		for i := 0; i < len(it.text); i++ {
			c := it.text[i]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '\'' {
				quote = true
			}
		}
		if !quote {
			b.WriteString(it.text)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(it.text, "'", "''"))
		b.WriteByte('\'')
	}
	return b.String()
}

// parseSkeleton is ICU's DateTimeMatcher.set: the fields of a skeleton
// (or of a pattern, whose literals it skips). A twelve-hour clock without
// a day period gets one; a 24-hour clock loses it.
func parseSkeleton(s string) skeleton {
	var sk skeleton
	for _, it := range parsePattern(s) {
		if it.letter == 0 {
			continue
		}
		t, ok := typeOf(it.letter, it.n)
		if !ok {
			continue
		}
		sk.letter[t.field] = it.letter
		sk.length[t.field] = int8(it.n)
		sk.typ[t.field] = t.typ
		if t.typ > 0 {
			sk.typ[t.field] += it.n
		}
	}
	// Fraction of seconds without seconds: seconds go with them.
	if sk.letter[fFraction] != 0 && sk.letter[fSecond] == 0 && sk.letter[fMinute] != 0 {
		sk.letter[fSecond], sk.length[fSecond], sk.typ[fSecond] = 's', 1, tNumeric+1
	}
	if h := sk.letter[fHour]; h != 0 {
		if h == 'h' || h == 'K' {
			if sk.letter[fDayPeriod] == 0 {
				sk.letter[fDayPeriod], sk.length[fDayPeriod], sk.typ[fDayPeriod] = 'a', 1, tShort
			}
		} else if sk.letter[fDayPeriod] != 0 {
			sk.letter[fDayPeriod], sk.length[fDayPeriod], sk.typ[fDayPeriod] = 0, 0, 0
		}
	}
	return sk
}

func (s *skeleton) mask() int {
	m := 0
	for i, l := range s.letter {
		if l != 0 {
			m |= 1 << i
		}
	}
	return m
}

// distance is how far the available skeleton other is from s, over the
// fields of s in mask; missing and extra are the fields s has and other
// has not, and those other has and s has not.
func (s *skeleton) distance(other *skeleton, mask int) (d, missing, extra int) {
	for i := range fCount {
		mine := 0
		if mask&(1<<i) != 0 {
			mine = s.typ[i]
		}
		theirs := other.typ[i]
		switch {
		case mine == theirs:
		case mine == 0:
			d += extraField
			extra |= 1 << i
		case theirs == 0:
			d += missingField
			missing |= 1 << i
		default:
			d += abs(mine - theirs)
		}
	}
	return d, missing, extra
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// generator is a locale's patterns for skeleton matching.
type generator struct {
	loc      *locale
	hour     byte // the locale's preferred hour letter
	patterns []genPattern
	mu       sync.Mutex
	cache    map[string]string // skeleton → best pattern
}

type genPattern struct {
	sk        skeleton
	pattern   string
	specified bool // the skeleton is CLDR's key, not the pattern's own fields
}

var generators [len(localeTags)]struct {
	once sync.Once
	g    *generator
}

// generatorOf is the generator of the locale at index i of the tables,
// made on first use and kept: it is the locale's, not a VM's.
func generatorOf(i int) *generator {
	e := &generators[i]
	e.once.Do(func() { e.g = newGenerator(&localeTable[i]) })
	return e.g
}

func newGenerator(l *locale) *generator {
	g := &generator{loc: l, hour: l.hourCycle[0], cache: map[string]string{}}
	// The order of ICU's: single fields, the styles' patterns, then the
	// locale's availableFormats (which replace a pattern with the same
	// skeleton); among equally good ones the first wins.
	add := func(sk skeleton, pattern string, specified bool) {
		for i := range g.patterns {
			if g.patterns[i].sk.typ == sk.typ && g.patterns[i].sk.letter == sk.letter {
				g.patterns[i] = genPattern{sk, pattern, specified}
				return
			}
		}
		g.patterns = append(g.patterns, genPattern{sk, pattern, specified})
	}
	for _, c := range "GyQMwWEDFdaHmsSv" {
		add(parseSkeleton(string(c)), string(c), false)
	}
	for _, p := range l.dateFormat {
		add(parseSkeleton(p.String()), p.String(), false)
	}
	for _, p := range l.timeFormat {
		add(parseSkeleton(p.String()), p.String(), false)
	}
	for _, sp := range l.skeletons {
		add(parseSkeleton(sp.skeleton.String()), sp.pattern.String(), true)
	}
	return g
}

// best is ICU's getBestRaw: the pattern nearest to s over mask.
func (g *generator) best(s *skeleton, mask int) (*genPattern, int, int) {
	var best *genPattern
	bestD, bestMissing, bestExtra := 1<<30, -1, 0
	for i := range g.patterns {
		p := &g.patterns[i]
		d, missing, extra := s.distance(&p.sk, mask)
		// ICU's tie-break: of two as near, the one missing more fields
		// by their bit mask (getBestRaw).
		if d < bestD || d == bestD && bestMissing < missing {
			best, bestD, bestMissing, bestExtra = p, d, missing, extra
			if d == 0 {
				break
			}
		}
	}
	return best, bestMissing, bestExtra
}

// mapHour replaces ICU's 'j' in a skeleton with the locale's hour letter,
// adding a day period for a twelve-hour one.
func (g *generator) mapHour(s string) string {
	if !strings.ContainsRune(s, 'j') {
		return s
	}
	var b strings.Builder
	hasPeriod := strings.ContainsAny(s, "abB")
	for i := 0; i < len(s); i++ {
		if s[i] != 'j' {
			b.WriteByte(s[i])
			continue
		}
		n := 1
		for i+1 < len(s) && s[i+1] == 'j' {
			n++
			i++
		}
		hourLen := 1 + (n-1)&1
		if (g.hour == 'h' || g.hour == 'K') && !hasPeriod {
			b.WriteByte('a')
		}
		for range hourLen {
			b.WriteByte(g.hour)
		}
	}
	return b.String()
}

// pattern is ICU's getBestPattern for the skeleton (with 'j'), matching
// the hour's length as asked (UDATPG_MATCH_HOUR_FIELD_LENGTH, as V8 asks).
func (g *generator) pattern(skel string) string {
	g.mu.Lock()
	p, ok := g.cache[skel]
	g.mu.Unlock()
	if ok {
		return p
	}
	p = g.bestPattern(skel)
	g.mu.Lock()
	if len(g.cache) > 512 {
		clear(g.cache)
	}
	g.cache[skel] = p
	g.mu.Unlock()
	return p
}

func (g *generator) bestPattern(skel string) string {
	req := parseSkeleton(g.mapHour(skel))
	best, missing, extra := g.best(&req, -1)
	if best != nil && missing == 0 && extra == 0 {
		return g.adjust(best, &req, false)
	}
	fields := req.mask()
	date := g.appending(&req, fields&dateMask)
	tim := g.appending(&req, fields&timeMask)
	switch {
	case date == "":
		return tim
	case tim == "":
		return date
	}
	// Joined by the dateTimeFormat of the date's style: as wide as its
	// month (and weekday).
	style := styleShort
	switch req.length[fMonth] {
	case 4:
		style = styleLong
		if req.letter[fWeekday] != 0 {
			style = styleFull
		}
	case 3:
		style = styleMedium
	}
	return joinDateTime(g.loc.atTime[style].String(), date, tim)
}

// joinDateTime fills "{1} 'at' {0}" with a date and a time pattern.
func joinDateTime(glue, date, tim string) string {
	r := strings.NewReplacer("{0}", tim, "{1}", date)
	return r.Replace(glue)
}

// appending is ICU's getBestAppending: the pattern for the fields of req
// in mask, with the fields no pattern has appended by CLDR's appendItems
// (not generated here: ECMA-402's fields always have a pattern, except a
// fraction of a second, which goes after the seconds).
func (g *generator) appending(req *skeleton, mask int) string {
	if mask == 0 {
		return ""
	}
	best, missing, _ := g.best(req, mask)
	fix := missing&(1<<fFraction) != 0 && mask&(1<<fSecond) != 0
	p := g.adjust(best, req, fix)
	missing &^= 1 << fFraction
	for missing != 0 {
		next, still, _ := g.best(req, missing)
		found := missing &^ still
		if found == 0 {
			break
		}
		q := g.adjust(next, req, false)
		p = p + " " + q
		missing = still
	}
	return p
}

// adjust is ICU's adjustFieldTypes: the pattern's fields given the widths
// of the requested skeleton's; fix appends the requested fraction of a
// second to the seconds.
func (g *generator) adjust(gp *genPattern, req *skeleton, fix bool) string {
	items := parsePattern(gp.pattern)
	var spec *skeleton
	if gp.specified {
		spec = &gp.sk
	}
	out := make([]patternItem, 0, len(items)+2)
	for _, it := range items {
		if it.letter == 0 {
			out = append(out, it)
			continue
		}
		t, ok := typeOf(it.letter, it.n)
		if !ok {
			out = append(out, it)
			continue
		}
		f := t.field
		if fix && f == fSecond {
			out = append(out, it, patternItem{text: g.loc.symbols[symDecimal].String()},
				patternItem{letter: 'S', n: int(req.length[fFraction])})
			continue
		}
		if req.typ[f] == 0 {
			out = append(out, it)
			continue
		}
		reqLetter, reqLen := req.letter[f], int(req.length[f])
		if reqLetter == 'E' && reqLen < 3 {
			reqLen = 3
		}
		n := reqLen
		switch {
		case f == fMinute || f == fSecond:
			n = it.n // lengths of minutes and seconds are the locale's
		case spec != nil && reqLetter != 'c' && reqLetter != 'e':
			skelLen := int(spec.length[f])
			patNumeric := t.typ > 0
			reqNumeric := req.typ[f] > 0
			if skelLen == reqLen || patNumeric != reqNumeric {
				n = it.n
			}
		}
		letter := reqLetter
		if f == fHour || f == fMonth || f == fWeekday || f == fYear && reqLetter != 'Y' {
			letter = it.letter
		}
		if letter == 'E' && n < 3 {
			letter = 'e'
		}
		if f == fHour {
			switch {
			case reqLetter == g.hour:
				letter = g.hour
			case reqLetter == 'h' && g.hour == 'K':
				letter = 'K'
			case reqLetter == 'H' && g.hour == 'k':
				letter = 'k'
			case reqLetter == 'k' && g.hour == 'H':
				letter = 'H'
			case reqLetter == 'K' && g.hour == 'h':
				letter = 'h'
			}
		}
		out = append(out, patternItem{letter: letter, n: n})
	}
	return formatPattern(out)
}
