package intl

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	// The jail has no zoneinfo directory: every IANA zone comes from the
	// copy embedded in the binary (about 450 KB).
	_ "time/tzdata"
)

// timeZone is a resolved time zone.
type timeZone struct {
	name string // as resolvedOptions reports it
	zone int    // in zoneTable; -1 for an offset zone
	loc  *time.Location
}

var (
	zoneMu    sync.Mutex
	zoneCache = map[string]timeZone{} // guarded by zoneMu
)

// utcZones are the zones ECMA-402 (and Node) report as "UTC".
var utcZones = map[string]bool{"Etc/UTC": true, "Etc/GMT": true}

// resolveTimeZone resolves an IANA name (in any case) to CLDR's canonical
// zone, or an offset (+05:30) to itself. Anything else is a RangeError.
func resolveTimeZone(name string) (timeZone, error) {
	zoneMu.Lock()
	z, ok := zoneCache[name]
	zoneMu.Unlock()
	if ok {
		return z, nil
	}
	z, err := lookupTimeZone(name)
	if err != nil {
		return z, err
	}
	zoneMu.Lock()
	if len(zoneCache) > 1024 {
		clear(zoneCache)
	}
	zoneCache[name] = z
	zoneMu.Unlock()
	return z, nil
}

func lookupTimeZone(name string) (timeZone, error) {
	bad := rangeError("Invalid time zone specified: %s", name)
	if name == "" {
		return timeZone{}, bad
	}
	if name[0] == '+' || name[0] == '-' {
		secs, ok := parseOffset(name)
		if !ok {
			return timeZone{}, bad
		}
		n := offsetName(secs)
		return timeZone{name: n, zone: -1, loc: time.FixedZone(n, secs)}, nil
	}
	u := strings.ToUpper(name)
	i := sort.Search(len(zoneAliases), func(i int) bool { return zoneAliases[i].upper >= u })
	if i == len(zoneAliases) || zoneAliases[i].upper != u {
		return timeZone{}, bad
	}
	a := zoneAliases[i]
	z := timeZone{name: zoneTable[a.zone].name, zone: int(a.zone)}
	// Go's database may spell a zone by another of its names.
	var err error
	for _, n := range []string{z.name, a.name} {
		if z.loc, err = time.LoadLocation(n); err == nil {
			break
		}
	}
	if z.loc == nil {
		for _, b := range zoneAliases {
			if b.zone == a.zone {
				if z.loc, err = time.LoadLocation(b.name); err == nil {
					break
				}
			}
		}
	}
	if z.loc == nil {
		return timeZone{}, bad
	}
	if utcZones[z.name] {
		z.name = "UTC"
	}
	return z, nil
}

// parseOffset reads ±HH, ±HHMM or ±HH:MM.
func parseOffset(s string) (int, bool) {
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	s = s[1:]
	var hh, mm string
	switch {
	case len(s) == 2:
		hh = s
	case len(s) == 4:
		hh, mm = s[:2], s[2:]
	case len(s) == 5 && s[2] == ':':
		hh, mm = s[:2], s[3:]
	default:
		return 0, false
	}
	if !isDigit(hh) || !isDigit(mm) {
		return 0, false
	}
	h := int(hh[0]-'0')*10 + int(hh[1]-'0')
	m := 0
	if mm != "" {
		m = int(mm[0]-'0')*10 + int(mm[1]-'0')
	}
	if h > 23 || m > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60), true
}

func offsetName(secs int) string {
	sign := '+'
	if secs < 0 {
		sign, secs = '-', -secs
	}
	return fmt.Sprintf("%c%02d:%02d", sign, secs/3600, secs%3600/60)
}

// metazoneAt is the metazone of zone z at t (Unix seconds), 0 if none.
func metazoneAt(z int, t int64) int {
	spans := zoneTable[z].metazones
	i := sort.Search(len(spans), func(i int) bool { return spans[i].from > t })
	if i == 0 {
		return 0
	}
	return int(spans[i-1].metazone)
}

func (l *locale) metazoneNames(mz int) *metazoneNames {
	i := sort.Search(len(l.metazones), func(i int) bool { return int(l.metazones[i].metazone) >= mz })
	if i < len(l.metazones) && int(l.metazones[i].metazone) == mz {
		return &l.metazones[i]
	}
	return nil
}

func (l *locale) zoneNamesOf(z int) *zoneNames {
	i := sort.Search(len(l.zones), func(i int) bool { return int(l.zones[i].zone) >= z })
	if i < len(l.zones) && int(l.zones[i].zone) == z {
		return &l.zones[i]
	}
	return nil
}

// zoneName is the name of zone at t in the pattern field letter × n: z
// (specific), v (generic), O (the offset), short for n < 4.
func (l *locale) zoneName(zone timeZone, t time.Time, letter byte, n int) string {
	long := n >= 4
	_, offset := t.Zone()
	kind := 1 // standard
	if t.IsDST() {
		kind = 2
	}
	named := func(kind int) string {
		if zone.zone < 0 {
			return ""
		}
		if zn := l.zoneNamesOf(zone.zone); zn != nil {
			if s := pick(zn.long, zn.short, long, kind); s != "" {
				return s
			}
		}
		if zone.name == "UTC" {
			if kind == 0 {
				return "" // no generic name: GMT+0
			}
			if zn := l.zoneNamesOf(utcZone()); zn != nil {
				if s := pick(zn.long, zn.short, long, kind); s != "" {
					return s
				}
			}
		}
		mz := metazoneAt(zone.zone, t.Unix())
		if mz == 0 {
			return ""
		}
		m := l.metazoneNames(mz)
		if m == nil {
			return ""
		}
		if kind == 0 && !hasDST(zone.loc, t) {
			// ICU's generic name of a zone without daylight time near t
			// is its standard name: Japan Standard Time.
			if s := pick(m.long, m.short, long, 1); s != "" {
				return s
			}
		}
		return pick(m.long, m.short, long, kind)
	}
	switch letter {
	case 'z':
		if s := named(kind); s != "" {
			return s
		}
	case 'v':
		if s := named(0); s != "" {
			return s
		}
		if s := l.locationName(zone); s != "" {
			return s
		}
	}
	return l.gmt(offset, long)
}

// hasDST reports whether loc observes daylight time within half a year
// of t.
func hasDST(loc *time.Location, t time.Time) bool {
	for _, d := range []time.Duration{0, -184 * 24 * time.Hour, 184 * 24 * time.Hour} {
		if t.Add(d).In(loc).IsDST() {
			return true
		}
	}
	return false
}

func pick(long, short [3]str, isLong bool, kind int) string {
	if isLong {
		return long[kind].String()
	}
	return short[kind].String()
}

var utcZone = sync.OnceValue(func() int {
	for i, z := range zoneTable {
		if z.name == "Etc/UTC" {
			return i
		}
	}
	return -1
})

// gmt is the localized GMT format of an offset: "GMT+1" (short),
// "GMT+01:00" (long); zero is "GMT+0", as ICU 78 writes it, not CLDR's
// gmtZeroFormat.
func (l *locale) gmt(offset int, long bool) string {
	pos, neg, _ := strings.Cut(l.hourFormat.String(), ";")
	p := pos
	if offset < 0 {
		p, offset = neg, -offset
	}
	h, m, s := offset/3600, offset%3600/60, offset%60
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == 'H':
			two := i+1 < len(p) && p[i+1] == 'H'
			if two {
				i++
			}
			if long {
				b.WriteString(pad2(h))
			} else {
				b.WriteString(fmt.Sprint(h))
			}
		case p[i] == 'm':
			if i+1 < len(p) && p[i+1] == 'm' {
				i++
			}
			b.WriteString(pad2(m))
			if s != 0 {
				b.WriteString(":" + pad2(s))
			}
		case !long && m == 0 && s == 0 && strings.HasPrefix(p[i+1:], "mm"):
			i += 2 // "+1", not "+1:00"
		default:
			b.WriteByte(p[i])
		}
	}
	return strings.Replace(l.gmtFormat.String(), "{0}", b.String(), 1)
}

// locationName is ICU's generic location name of zone: "France Time" for
// the only (or primary) zone of its country, "Los Angeles Time" for another
// (its exemplar city), "" for a zone of no country.
func (l *locale) locationName(zone timeZone) string {
	if zone.zone < 0 {
		return ""
	}
	z := &zoneTable[zone.zone]
	if z.country == "" || l.regionFormat == 0 {
		return ""
	}
	var place string
	if z.primary {
		i := sort.Search(len(l.countries), func(i int) bool { return l.countries[i].code >= z.country })
		if i < len(l.countries) && l.countries[i].code == z.country {
			place = l.countries[i].name.String()
		}
	} else {
		i := sort.Search(len(l.cities), func(i int) bool { return int(l.cities[i].zone) >= zone.zone })
		if i < len(l.cities) && int(l.cities[i].zone) == zone.zone {
			place = l.cities[i].name.String()
		} else {
			place = strings.ReplaceAll(z.name[strings.LastIndex(z.name, "/")+1:], "_", " ")
		}
	}
	if place == "" {
		return ""
	}
	return strings.Replace(l.regionFormat.String(), "{0}", place, 1)
}
