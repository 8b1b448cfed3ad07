package intl

// The types of the tables in tables.go, which gen/main.go writes from the
// Unicode consortium's CLDR JSON (the npm packages gen/package.json pins).
// Every string of the tables is a str: an index into one pool of the
// distinct strings, so that a name shared by many locales ("€", "{0} h")
// is stored once and a locale's table is numbers, with no work at start.

// str is a string of the pool; 0 is the empty string, which the tables
// use for "none".
type str uint32

func (s str) String() string { return strPool[strOffsets[s]:strOffsets[s+1]] }

// Plural categories, the index of a plurals array.
const (
	pluralZero = iota
	pluralOne
	pluralTwo
	pluralFew
	pluralMany
	pluralOther
)

// pluralExactOne is the index in a plurals array of CLDR's explicit "1"
// (count-1: fr's compact "mille", not "1 millier").
const pluralExactOne = 6

// plurals is a text by plural category; CLDR's "other" is always there,
// the others only where the locale distinguishes them.
type plurals [7]str

// get is the text for category c, or the locale's "other" where it has
// none for c.
func (p *plurals) get(c int) string {
	if p[c] != 0 {
		return p[c].String()
	}
	return p[pluralOther].String()
}

// Widths of names, the index of the name arrays.
const (
	widthAbbreviated = iota
	widthNarrow
	widthWide
	widthShort // days only
)

// Styles of dates and times, of the [4]str pattern arrays.
const (
	styleFull = iota
	styleLong
	styleMedium
	styleShort
)

// Flexible day periods (the dayPeriod option), the index of
// locale.periodNames' second dimension and the values of periodOfHour.
const (
	periodNone = iota
	periodMorning1
	periodMorning2
	periodAfternoon1
	periodAfternoon2
	periodEvening1
	periodEvening2
	periodNight1
	periodNight2
	periodNoon
	periodCount
)

// Number symbols, the index of locale.symbols.
const (
	symDecimal = iota
	symGroup
	symPercent
	symPlus
	symMinus
	symExponential
	symInfinity
	symNaN
	symApprox
	symCurrencyDecimal // the currency style's, where the locale has one
	symCurrencyGroup
	symCount
)

// Number patterns, the index of locale.patterns.
const (
	patDecimal = iota
	patPercent
	patCurrency
	patAccounting
	patCurrencyAlpha   // the currency pattern next to a currency symbol of letters
	patAccountingAlpha // the accounting one
	patScientific
	patCount
)

// Relative time units, the first index of locale.relative.
const (
	relSecond = iota
	relMinute
	relHour
	relDay
	relWeek
	relMonth
	relQuarter
	relYear
	relCount
)

// locale is the CLDR data of one locale, resolved (nothing is inherited
// at run time): what DateTimeFormat, NumberFormat, RelativeTimeFormat and
// ListFormat need, in the gregorian calendar and Latin digits.
type locale struct {
	tag string

	// Dates and times.
	months     [2][3][12]str // [format, stand-alone][abbreviated, narrow, wide]
	days       [2][4][7]str  // [format, stand-alone][abbreviated, narrow, wide, short], Sunday first
	eras       [3][2]str     // [abbreviated, narrow, wide][BC, AD]
	ampm       [3][2]str     // [abbreviated, narrow, wide][am, pm], format context
	periods    [3][periodCount]str
	dayPeriod  [24]uint8 // the flexible day period of each hour, 0 if the locale has none
	dateFormat [4]str    // by style
	timeFormat [4]str
	dateTime   [4]str // "{1}, {0}" by the date's style
	atTime     [4]str // "{1} 'at' {0}", what ICU joins the styles and skeletons with
	skeletons  []skeletonPattern
	// hourCycle are the locale's hour letters ('h', 'H', 'K' or 'k'): the
	// preferred one, the twelve-hour one and the 24-hour one.
	hourCycle [3]byte

	// Time zone names.
	gmtFormat, hourFormat str
	regionFormat          str             // "{0} Time": a zone's generic location name
	metazones             []metazoneNames // by metazone
	zones                 []zoneNames     // by zone
	countries             []countryName   // by code, those of zones
	cities                []cityName      // by zone, where not the name's last part

	// Numbers.
	symbols      [symCount]str
	patterns     [patCount]str
	minGrouping  uint8
	compact      [2][2][15]plurals // [short, long][decimal, currency][10^3 .. 10^17]; long currency is unused
	currencyName plurals           // "{0} {1}": the number and the currency's name
	currencies   []currencyNames   // by code
	units        []unitNames       // by id
	perPattern   [3]str            // [long, short, narrow] "{0} per {1}"

	// Relative time: [unit][long, short, narrow].
	relative [relCount][3]relativeNames

	// Lists: [conjunction, disjunction, unit][long, short, narrow]
	// [start, middle, end, two].
	lists [3][3][4]str
}

// skeletonPattern is one of CLDR's availableFormats: the pattern that
// writes the fields of the skeleton.
type skeletonPattern struct {
	skeleton, pattern str
}

// metazoneNames are a locale's names of a metazone:
// [generic, standard, daylight].
type metazoneNames struct {
	metazone    uint16
	long, short [3]str
}

// zoneNames are a locale's names of one zone, which win over its
// metazone's.
type zoneNames struct {
	zone        uint16
	long, short [3]str
}

// countryName is a locale's name of a country.
type countryName struct {
	code string
	name str
}

// cityName is a locale's name of a zone's exemplar city.
type cityName struct {
	zone uint16
	name str
}

// currencyNames are a locale's names of a currency.
type currencyNames struct {
	code           [3]byte
	symbol, narrow str
	name           plurals
}

// unitNames are a locale's patterns of a unit: [long, short, narrow].
type unitNames struct {
	id      string
	pattern [3]plurals // "{0} meters"
	per     [3]str     // "{0} per meter"
}

// relativeNames are a locale's texts of a relative time unit.
type relativeNames struct {
	future, past plurals // "in {0} days", "{0} days ago"
	near         [5]str  // for -2, -1, 0, 1, 2: "yesterday", "now"...
}

// zone is an IANA time zone: its canonical name (CLDR's, which ICU and so
// Node report: Asia/Calcutta), and the metazones it was in.
type zone struct {
	name      string
	metazones []metazoneSpan
	// country is the zone's country (ISO 3166, from its BCP 47 key), ""
	// for none; primary, whether it is the country's only zone or its
	// primary one: its generic location name is the country's.
	country string
	primary bool
}

// metazoneSpan is a metazone of a zone from a time (Unix seconds) until
// the next span's start; before the first, the zone has none.
type metazoneSpan struct {
	from     int64
	metazone uint16 // 0: none
}

// zoneAlias maps an IANA name (upper case) to its zone in zones.
type zoneAlias struct {
	upper string
	zone  uint16
	name  string // as the database spells it
}

// localeAlias is a locale tag that names the same data as one of locales:
// a default content locale (de-DE for de), or a region whose script is
// not the language's (zh-TW for zh-Hant).
type localeAlias struct {
	tag    string
	locale uint16
}
