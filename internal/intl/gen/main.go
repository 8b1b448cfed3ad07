// Command gen writes internal/intl's tables (tables.go) from the Unicode
// consortium's CLDR JSON, for the locales of locales.txt:
//
//	go generate ./internal/intl
//
// It installs the npm packages that package.json and package-lock.json pin
// (npm ci, once, into the user's cache directory, named by the lock file's
// contents) unless -cldr names a node_modules directory that has them.
// TestTablesGenerated runs it again and compares: the tables are never
// edited by hand.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("intl/gen: ")
	dir := flag.String("dir", ".", "the directory of package.json, package-lock.json and locales.txt")
	cldr := flag.String("cldr", "", "a node_modules directory with the CLDR packages (default: npm ci into the cache)")
	out := flag.String("out", "tables.go", "the file to write")
	flag.Parse()
	if *cldr == "" {
		var err error
		if *cldr, err = install(*dir); err != nil {
			log.Fatal(err)
		}
	}
	list, err := readLocales(filepath.Join(*dir, "locales.txt"))
	if err != nil {
		log.Fatal(err)
	}
	g := &generator{root: *cldr, strIndex: map[string]int{"": 0}, strs: []string{""}}
	src, err := g.generate(list)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// install runs npm ci for dir's package.json into a directory of the
// user's cache named by the lock file's contents, once, and returns its
// node_modules.
func install(dir string) (string, error) {
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return "", err
	}
	pkg, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", err
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	sum := sha256.Sum256(append(pkg, lock...))
	target := filepath.Join(base, "stepbox", fmt.Sprintf("cldr-%x", sum[:8]))
	modules := filepath.Join(target, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, ".package-lock.json")); err == nil {
		return modules, nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(target), "install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for name, b := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return "", err
		}
	}
	cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--legacy-peer-deps")
	cmd.Dir = tmp
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci: %v\n%s", err, b)
	}
	if err := os.Rename(tmp, target); err != nil {
		if _, statErr := os.Stat(filepath.Join(modules, ".package-lock.json")); statErr != nil {
			return "", err // not another generator that won the race
		}
	}
	return modules, nil
}

func readLocales(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var list []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		list = append(list, line)
	}
	if len(list) == 0 || list[0] != "en" {
		return nil, errors.New("locales.txt: the first locale must be en")
	}
	return list, nil
}

// obj is a JSON object of the CLDR files.
type obj = map[string]any

type generator struct {
	root     string
	strIndex map[string]int
	strs     []string
	files    map[string]obj

	metazones   []string // by index; 0 is none
	metazoneIdx map[string]int
	zones       []string // canonical names, by index
	zoneIdx     map[string]int
	zoneCountry map[string]string // canonical name → ISO country
}

func (g *generator) read(path string) (obj, error) {
	if o, ok := g.files[path]; ok {
		return o, nil
	}
	b, err := os.ReadFile(filepath.Join(g.root, path))
	if err != nil {
		return nil, err
	}
	var o obj
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if g.files == nil {
		g.files = map[string]obj{}
	}
	g.files[path] = o
	return o, nil
}

// at is the value at the path of keys in o, or nil.
func at(o any, keys ...string) any {
	for _, k := range keys {
		m, ok := o.(obj)
		if !ok {
			return nil
		}
		o = m[k]
	}
	return o
}

func atObj(o any, keys ...string) obj {
	m, _ := at(o, keys...).(obj)
	return m
}

func atStr(o any, keys ...string) string {
	s, _ := at(o, keys...).(string)
	return s
}

// str is s's index in the string pool, as Go source.
func (g *generator) str(s string) string {
	i, ok := g.strIndex[s]
	if !ok {
		i = len(g.strs)
		g.strs = append(g.strs, s)
		g.strIndex[s] = i
	}
	return strconv.Itoa(i)
}

func (g *generator) strs3(a [3]string) string {
	return "{" + g.str(a[0]) + ", " + g.str(a[1]) + ", " + g.str(a[2]) + "}"
}

func (g *generator) list(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = g.str(s)
	}
	return "{" + strings.Join(out, ", ") + "}"
}

var pluralNames = []string{"zero", "one", "two", "few", "many", "other", "1"}

// plurals is the plurals literal of o's keys prefix+"-count-"+category.
func (g *generator) plurals(o obj, prefix string) string {
	out := make([]string, len(pluralNames))
	for i, c := range pluralNames {
		out[i] = g.str(atStr(o, prefix+"-count-"+c))
	}
	return "{" + strings.Join(out, ", ") + "}"
}

func (g *generator) generate(list []string) ([]byte, error) {
	if err := g.readZones(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by gen/main.go from CLDR " + g.version() + "; DO NOT EDIT.\n\npackage intl\n\n")
	fmt.Fprintf(&b, "// localeTags are the locales of the tables, in the order of localeTable.\nvar localeTags = [...]string{%q", list[0])
	for _, t := range list[1:] {
		fmt.Fprintf(&b, ", %q", t)
	}
	b.WriteString("}\n\n")
	b.WriteString("var localeTable = [...]locale{\n")
	for _, tag := range list {
		src, err := g.locale(tag)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tag, err)
		}
		b.WriteString(src)
	}
	b.WriteString("}\n\n")
	aliases, err := g.aliases(list)
	if err != nil {
		return nil, err
	}
	b.WriteString(aliases)
	scripts, err := g.likelyScripts(list)
	if err != nil {
		return nil, err
	}
	b.WriteString(scripts)
	if err := g.writeZones(&b); err != nil {
		return nil, err
	}
	if err := g.writeCurrencyDigits(&b); err != nil {
		return nil, err
	}
	g.writePool(&b)
	src, err := format.Source(b.Bytes())
	if err != nil {
		os.WriteFile("/tmp/intl-tables-bad.go", b.Bytes(), 0o644)
		return nil, fmt.Errorf("gofmt: %w", err)
	}
	return src, nil
}

func (g *generator) version() string {
	o, err := g.read("cldr-core/package.json")
	if err != nil {
		return "?"
	}
	return atStr(o, "version")
}

func (g *generator) main(pkg, tag, file string, keys ...string) (obj, error) {
	o, err := g.read(filepath.Join(pkg, "main", tag, file))
	if err != nil {
		return nil, err
	}
	m := atObj(o, append([]string{"main", tag}, keys...)...)
	if m == nil {
		return nil, fmt.Errorf("%s/%s: no %s", pkg, file, strings.Join(keys, "/"))
	}
	return m, nil
}

// locale is the localeTable entry of tag, as Go source.
func (g *generator) locale(tag string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "{tag: %q,\n", tag)
	if err := g.dates(&b, tag); err != nil {
		return "", err
	}
	if err := g.timeZoneNames(&b, tag); err != nil {
		return "", err
	}
	if err := g.numbers(&b, tag); err != nil {
		return "", err
	}
	if err := g.units(&b, tag); err != nil {
		return "", err
	}
	if err := g.relative(&b, tag); err != nil {
		return "", err
	}
	if err := g.lists(&b, tag); err != nil {
		return "", err
	}
	b.WriteString("},\n")
	return b.String(), nil
}

var (
	widthKeys    = []string{"abbreviated", "narrow", "wide"}
	dayWidthKeys = []string{"abbreviated", "narrow", "wide", "short"}
	contextKeys  = []string{"format", "stand-alone"}
	styleKeys    = []string{"full", "long", "medium", "short"}
	dayKeys      = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	periodKeys   = []string{"", "morning1", "morning2", "afternoon1", "afternoon2", "evening1", "evening2", "night1", "night2", "noon"}
)

func (g *generator) dates(b *strings.Builder, tag string) error {
	cal, err := g.main("cldr-dates-full", tag, "ca-gregorian.json", "dates", "calendars", "gregorian")
	if err != nil {
		return err
	}
	b.WriteString("months: [2][3][12]str{")
	for _, c := range contextKeys {
		b.WriteString("{")
		for _, w := range widthKeys {
			m := atObj(cal, "months", c, w)
			names := make([]string, 12)
			for i := range names {
				names[i] = atStr(m, strconv.Itoa(i+1))
				if names[i] == "" {
					return fmt.Errorf("months %s %s %d missing", c, w, i+1)
				}
			}
			b.WriteString(g.list(names) + ",")
		}
		b.WriteString("},")
	}
	b.WriteString("},\ndays: [2][4][7]str{")
	for _, c := range contextKeys {
		b.WriteString("{")
		for _, w := range dayWidthKeys {
			m := atObj(cal, "days", c, w)
			names := make([]string, 7)
			for i, k := range dayKeys {
				names[i] = atStr(m, k)
				if names[i] == "" {
					return fmt.Errorf("days %s %s %s missing", c, w, k)
				}
			}
			b.WriteString(g.list(names) + ",")
		}
		b.WriteString("},")
	}
	b.WriteString("},\neras: [3][2]str{")
	for _, k := range []string{"eraAbbr", "eraNarrow", "eraNames"} {
		b.WriteString(g.list([]string{atStr(cal, "eras", k, "0"), atStr(cal, "eras", k, "1")}) + ",")
	}
	b.WriteString("},\nampm: [3][2]str{")
	for _, w := range widthKeys {
		m := atObj(cal, "dayPeriods", "format", w)
		b.WriteString(g.list([]string{atStr(m, "am"), atStr(m, "pm")}) + ",")
	}
	b.WriteString("},\nperiods: [3][periodCount]str{")
	for _, w := range widthKeys {
		m := atObj(cal, "dayPeriods", "format", w)
		names := make([]string, len(periodKeys))
		for i, k := range periodKeys {
			if k != "" {
				names[i] = atStr(m, k)
			}
		}
		b.WriteString(g.list(names) + ",")
	}
	b.WriteString("},\n")
	hours, err := g.dayPeriodRules(tag)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "dayPeriod: %#v,\n", hours)
	pick := func(o obj) []string {
		out := make([]string, 4)
		for i, s := range styleKeys {
			out[i] = atStr(o, s)
		}
		return out
	}
	fmt.Fprintf(b, "dateFormat: [4]str%s,\n", g.list(pick(atObj(cal, "dateFormats"))))
	fmt.Fprintf(b, "timeFormat: [4]str%s,\n", g.list(pick(atObj(cal, "timeFormats"))))
	fmt.Fprintf(b, "dateTime: [4]str%s,\n", g.list(pick(atObj(cal, "dateTimeFormats"))))
	at := atObj(cal, "dateTimeFormats-atTime", "standard")
	if at == nil {
		at = atObj(cal, "dateTimeFormats")
	}
	fmt.Fprintf(b, "atTime: [4]str%s,\n", g.list(pick(at)))
	avail := atObj(cal, "dateTimeFormats", "availableFormats")
	var skels []string
	for k := range avail {
		// The -alt-ascii variants are for plain-text protocols; counted
		// week patterns are not reachable from ECMA-402's options.
		if !strings.Contains(k, "-") {
			skels = append(skels, k)
		}
	}
	sort.Strings(skels)
	b.WriteString("skeletons: []skeletonPattern{")
	for _, k := range skels {
		fmt.Fprintf(b, "{%s, %s},", g.str(k), g.str(atStr(avail, k)))
	}
	b.WriteString("},\n")
	hc, err := g.hourCycle(tag)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "hourCycle: [3]byte{'%c', '%c', '%c'},\n", hc[0], hc[1], hc[2])
	return nil
}

// region is the region of tag, or the one its likely subtags give it.
func (g *generator) region(tag string) (string, error) {
	parts := strings.Split(tag, "-")
	for _, p := range parts[1:] {
		if len(p) == 2 || (len(p) == 3 && p[0] >= '0' && p[0] <= '9') {
			return p, nil
		}
	}
	o, err := g.read("cldr-core/supplemental/likelySubtags.json")
	if err != nil {
		return "", err
	}
	likely := atObj(o, "supplemental", "likelySubtags")
	full := atStr(likely, tag)
	if full == "" {
		full = atStr(likely, parts[0])
	}
	fp := strings.Split(full, "-")
	if len(fp) < 3 {
		return "", fmt.Errorf("no likely region for %s", tag)
	}
	return fp[2], nil
}

// hourCycle are the hour symbols of tag's region (timeData): the
// preferred one, and the first twelve-hour and 24-hour ones it allows.
func (g *generator) hourCycle(tag string) ([3]byte, error) {
	var hc [3]byte
	r, err := g.region(tag)
	if err != nil {
		return hc, err
	}
	o, err := g.read("cldr-core/supplemental/timeData.json")
	if err != nil {
		return hc, err
	}
	td := atObj(o, "supplemental", "timeData")
	lang := strings.Split(tag, "-")[0]
	for _, k := range []string{lang + "-" + r, r, "001"} {
		p := atStr(td, k, "_preferred")
		if p == "" {
			continue
		}
		hc = [3]byte{p[0], 'h', 'H'}
		allowed := strings.Fields(atStr(td, k, "_allowed"))
		for i := len(allowed) - 1; i >= 0; i-- {
			switch c := allowed[i][0]; c {
			case 'h', 'K':
				hc[1] = c
			case 'H', 'k':
				hc[2] = c
			}
		}
		return hc, nil
	}
	return hc, fmt.Errorf("no timeData for %s", tag)
}

// dayPeriodRules maps each hour to its flexible day period (dayPeriods.json).
func (g *generator) dayPeriodRules(tag string) ([24]uint8, error) {
	var hours [24]uint8
	o, err := g.read("cldr-core/supplemental/dayPeriods.json")
	if err != nil {
		return hours, err
	}
	sets := atObj(o, "supplemental", "dayPeriodRuleSet")
	rules := atObj(sets, tag)
	for t := tag; rules == nil && strings.Contains(t, "-"); {
		t = t[:strings.LastIndex(t, "-")]
		rules = atObj(sets, t)
	}
	if rules == nil {
		return hours, nil
	}
	hour := func(s string) (int, error) {
		h, m, ok := strings.Cut(s, ":")
		if !ok || m != "00" {
			return 0, fmt.Errorf("day period time %q", s)
		}
		return strconv.Atoi(h)
	}
	for i, k := range periodKeys {
		r := atObj(rules, k)
		if k == "" || k == "noon" || r == nil {
			continue
		}
		from, err := hour(atStr(r, "_from"))
		if err != nil {
			return hours, err
		}
		before, err := hour(atStr(r, "_before"))
		if err != nil {
			return hours, err
		}
		n := (before - from + 24) % 24
		if n == 0 {
			n = 24
		}
		for h := range n {
			hours[(from+h)%24] = uint8(i)
		}
	}
	return hours, nil
}

// readZones reads the zones (bcp47 timezone.json: canonical name first,
// then its aliases) and the metazones.
func (g *generator) readZones() error {
	o, err := g.read("cldr-bcp47/bcp47/timezone.json")
	if err != nil {
		return err
	}
	tz := atObj(o, "keyword", "u", "tz")
	var names []string
	g.zoneCountry = map[string]string{}
	for key, v := range tz {
		alias := atStr(v, "_alias")
		if alias == "" || atStr(v, "_deprecated") == "true" {
			continue
		}
		name := strings.Fields(alias)[0]
		names = append(names, name)
		// A zone's key is its country and three letters (frpar).
		if len(key) == 5 && key != "unk" && !strings.HasPrefix(key, "utc") && !strings.HasPrefix(key, "gmt") {
			g.zoneCountry[name] = strings.ToUpper(key[:2])
		}
	}
	sort.Strings(names)
	g.zones = names
	g.zoneIdx = map[string]int{}
	for i, n := range names {
		g.zoneIdx[n] = i
	}
	mz, err := g.read("cldr-core/supplemental/metaZones.json")
	if err != nil {
		return err
	}
	g.metazones = []string{""}
	g.metazoneIdx = map[string]int{}
	for _, m := range at(mz, "supplemental", "metaZones", "metazones").([]any) {
		name := atStr(m, "mapZone", "_other")
		if _, ok := g.metazoneIdx[name]; !ok {
			g.metazoneIdx[name] = len(g.metazones)
			g.metazones = append(g.metazones, name)
		}
	}
	return nil
}

// zoneNames flattens CLDR's nested zone objects ("America" → "New_York")
// into names ("America/New_York").
func zoneNamesOf(o obj, prefix string, f func(name string, v obj)) {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m, ok := o[k].(obj)
		if !ok {
			continue
		}
		if _, leaf := m["exemplarCity"]; leaf || m["long"] != nil || m["short"] != nil || m["_type"] != nil {
			f(prefix+k, m)
			continue
		}
		zoneNamesOf(m, prefix+k+"/", f)
	}
}

func (g *generator) timeZoneNames(b *strings.Builder, tag string) error {
	t, err := g.main("cldr-dates-full", tag, "timeZoneNames.json", "dates", "timeZoneNames")
	if err != nil {
		return err
	}
	// Not gmtZeroFormat: ICU 78 writes a zero offset GMT+0.
	fmt.Fprintf(b, "gmtFormat: %s, hourFormat: %s, regionFormat: %s,\n", g.str(atStr(t, "gmtFormat")),
		g.str(atStr(t, "hourFormat")), g.str(atStr(t, "regionFormat")))
	terr, err := g.main("cldr-localenames-full", tag, "territories.json", "localeDisplayNames", "territories")
	if err != nil {
		return err
	}
	var codes []string
	seen := map[string]bool{}
	for _, c := range g.zoneCountry {
		if !seen[c] {
			seen[c] = true
			codes = append(codes, c)
		}
	}
	sort.Strings(codes)
	b.WriteString("countries: []countryName{")
	for _, c := range codes {
		if n := atStr(terr, c); n != "" {
			fmt.Fprintf(b, "{%q, %s},", c, g.str(n))
		}
	}
	b.WriteString("},\ncities: []cityName{")
	type city struct {
		i    int
		name string
	}
	var cities []city
	zoneNamesOf(atObj(t, "zone"), "", func(name string, m obj) {
		ex := atStr(m, "exemplarCity")
		i, ok := g.zoneIdx[name]
		if !ok || ex == "" {
			return
		}
		last := name[strings.LastIndex(name, "/")+1:]
		if ex != strings.ReplaceAll(last, "_", " ") {
			cities = append(cities, city{i, ex})
		}
	})
	sort.Slice(cities, func(a, b int) bool { return cities[a].i < cities[b].i })
	for _, c := range cities {
		fmt.Fprintf(b, "{%d, %s},", c.i, g.str(c.name))
	}
	b.WriteString("},\n")
	kinds := []string{"generic", "standard", "daylight"}
	names := func(m obj, width string) [3]string {
		var r [3]string
		for i, k := range kinds {
			r[i] = atStr(m, width, k)
		}
		return r
	}
	mzs := atObj(t, "metazone")
	var keys []string
	for k := range mzs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return g.metazoneIdx[a] - g.metazoneIdx[b] })
	b.WriteString("metazones: []metazoneNames{")
	for _, k := range keys {
		i, ok := g.metazoneIdx[k]
		if !ok {
			continue // a metazone no zone is in any more
		}
		m := atObj(mzs, k)
		fmt.Fprintf(b, "{%d, [3]str%s, [3]str%s},", i, g.strs3(names(m, "long")), g.strs3(names(m, "short")))
	}
	b.WriteString("},\n")
	type zn struct {
		i    int
		long string
		shrt string
	}
	var zs []zn
	zoneNamesOf(atObj(t, "zone"), "", func(name string, m obj) {
		if m["long"] == nil && m["short"] == nil {
			return
		}
		i, ok := g.zoneIdx[name]
		if !ok {
			return
		}
		zs = append(zs, zn{i, g.strs3(names(m, "long")), g.strs3(names(m, "short"))})
	})
	sort.Slice(zs, func(a, b int) bool { return zs[a].i < zs[b].i })
	b.WriteString("zones: []zoneNames{")
	for _, z := range zs {
		fmt.Fprintf(b, "{%d, [3]str%s, [3]str%s},", z.i, z.long, z.shrt)
	}
	b.WriteString("},\n")
	return nil
}

var symbolKeys = []string{"decimal", "group", "percentSign", "plusSign", "minusSign", "exponential", "infinity", "nan", "approximatelySign", "currencyDecimal", "currencyGroup"}

func (g *generator) numbers(b *strings.Builder, tag string) error {
	n, err := g.main("cldr-numbers-full", tag, "numbers.json", "numbers")
	if err != nil {
		return err
	}
	if ns := atStr(n, "defaultNumberingSystem"); ns != "latn" {
		return fmt.Errorf("numbering system %s: the tables have Latin digits only", ns)
	}
	sym := atObj(n, "symbols-numberSystem-latn")
	out := make([]string, len(symbolKeys))
	for i, k := range symbolKeys {
		out[i] = atStr(sym, k)
	}
	fmt.Fprintf(b, "symbols: [symCount]str%s,\n", g.list(out))
	cf := atObj(n, "currencyFormats-numberSystem-latn")
	pats := []string{
		atStr(n, "decimalFormats-numberSystem-latn", "standard"),
		atStr(n, "percentFormats-numberSystem-latn", "standard"),
		atStr(cf, "standard"), atStr(cf, "accounting"),
		atStr(cf, "standard-alphaNextToNumber"), atStr(cf, "accounting-alphaNextToNumber"),
		atStr(n, "scientificFormats-numberSystem-latn", "standard"),
	}
	fmt.Fprintf(b, "patterns: [patCount]str%s,\n", g.list(pats))
	mg, err := strconv.Atoi(atStr(n, "minimumGroupingDigits"))
	if err != nil {
		return fmt.Errorf("minimumGroupingDigits: %w", err)
	}
	fmt.Fprintf(b, "minGrouping: %d,\n", mg)
	b.WriteString("compact: [2][2][15]plurals{")
	for _, width := range []string{"short", "long"} {
		b.WriteString("{")
		for _, set := range []obj{atObj(n, "decimalFormats-numberSystem-latn", width, "decimalFormat"), atObj(cf, width, "standard")} {
			b.WriteString("{")
			for e := 3; e < 18; e++ {
				b.WriteString(g.plurals(set, "1"+strings.Repeat("0", e)) + ",")
			}
			b.WriteString("},")
		}
		b.WriteString("},")
	}
	b.WriteString("},\n")
	fmt.Fprintf(b, "currencyName: plurals%s,\n", g.plurals(cf, "unitPattern"))
	cur, err := g.main("cldr-numbers-full", tag, "currencies.json", "numbers", "currencies")
	if err != nil {
		return err
	}
	var codes []string
	for k := range cur {
		codes = append(codes, k)
	}
	sort.Strings(codes)
	b.WriteString("currencies: []currencyNames{")
	for _, code := range codes {
		c := atObj(cur, code)
		sym, narrow := atStr(c, "symbol"), atStr(c, "symbol-alt-narrow")
		if sym == code {
			sym = ""
		}
		if narrow == sym || narrow == code {
			narrow = ""
		}
		names := g.plurals(c, "displayName")
		if atStr(c, "displayName-count-other") == "" && atStr(c, "displayName") != "" {
			// A name without plural forms: the one for every count.
			names = "{0, 0, 0, 0, 0, " + g.str(atStr(c, "displayName")) + ", 0}"
		}
		fmt.Fprintf(b, "{[3]byte{'%c', '%c', '%c'}, %s, %s, plurals%s},", code[0], code[1], code[2], g.str(sym), g.str(narrow), names)
	}
	b.WriteString("},\n")
	return nil
}

// sanctionedUnits are ECMA-402's simple units (IsSanctionedSingleUnitIdentifier).
var sanctionedUnits = []string{"acre", "bit", "byte", "celsius", "centimeter", "day", "degree", "fahrenheit",
	"fluid-ounce", "foot", "gallon", "gigabit", "gigabyte", "gram", "hectare", "hour", "inch", "kilobit",
	"kilobyte", "kilogram", "kilometer", "liter", "megabit", "megabyte", "meter", "microsecond", "mile",
	"mile-scandinavian", "milliliter", "millimeter", "millisecond", "minute", "month", "nanosecond", "ounce",
	"percent", "petabyte", "pound", "second", "stone", "terabit", "terabyte", "week", "yard", "year"}

func (g *generator) units(b *strings.Builder, tag string) error {
	u, err := g.main("cldr-units-full", tag, "units.json", "units")
	if err != nil {
		return err
	}
	widths := []string{"long", "short", "narrow"}
	// CLDR's keys carry a category: "length-meter", "speed-kilometer-per-hour".
	keyOf := map[string]string{}
	for k := range atObj(u, "long") {
		_, id, ok := strings.Cut(k, "-")
		if !ok {
			continue
		}
		if prev, dup := keyOf[id]; dup && prev < k {
			continue
		}
		keyOf[id] = k
	}
	var ids []string
	for _, s := range sanctionedUnits {
		ids = append(ids, s)
		for _, per := range sanctionedUnits {
			if id := s + "-per-" + per; keyOf[id] != "" {
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	fmt.Fprintf(b, "perPattern: [3]str{%s, %s, %s},\n", g.str(atStr(u, "long", "per", "compoundUnitPattern")),
		g.str(atStr(u, "short", "per", "compoundUnitPattern")), g.str(atStr(u, "narrow", "per", "compoundUnitPattern")))
	b.WriteString("units: []unitNames{")
	for _, id := range ids {
		key := keyOf[id]
		if key == "" {
			return fmt.Errorf("unit %s missing", id)
		}
		fmt.Fprintf(b, "{%q, [3]plurals{", id)
		for _, w := range widths {
			b.WriteString(g.plurals(atObj(u, w, key), "unitPattern") + ",")
		}
		b.WriteString("}, [3]str{")
		for _, w := range widths {
			b.WriteString(g.str(atStr(u, w, key, "perUnitPattern")) + ",")
		}
		b.WriteString("}},")
	}
	b.WriteString("},\n")
	return nil
}

var relativeKeys = []string{"second", "minute", "hour", "day", "week", "month", "quarter", "year"}

func (g *generator) relative(b *strings.Builder, tag string) error {
	f, err := g.main("cldr-dates-full", tag, "dateFields.json", "dates", "fields")
	if err != nil {
		return err
	}
	b.WriteString("relative: [relCount][3]relativeNames{")
	for _, unit := range relativeKeys {
		b.WriteString("{")
		for _, suffix := range []string{"", "-short", "-narrow"} {
			m := atObj(f, unit+suffix)
			near := make([]string, 5)
			for i := range near {
				near[i] = atStr(m, fmt.Sprintf("relative-type-%d", i-2))
			}
			fmt.Fprintf(b, "{plurals%s, plurals%s, [5]str%s},",
				g.plurals(atObj(m, "relativeTime-type-future"), "relativeTimePattern"),
				g.plurals(atObj(m, "relativeTime-type-past"), "relativeTimePattern"), g.list(near))
		}
		b.WriteString("},")
	}
	b.WriteString("},\n")
	return nil
}

func (g *generator) lists(b *strings.Builder, tag string) error {
	l, err := g.main("cldr-misc-full", tag, "listPatterns.json", "listPatterns")
	if err != nil {
		return err
	}
	b.WriteString("lists: [3][3][4]str{")
	for _, typ := range []string{"standard", "or", "unit"} {
		b.WriteString("{")
		for _, suffix := range []string{"", "-short", "-narrow"} {
			m := atObj(l, "listPattern-type-"+typ+suffix)
			if m == nil {
				return fmt.Errorf("list pattern %s%s missing", typ, suffix)
			}
			b.WriteString(g.list([]string{atStr(m, "start"), atStr(m, "middle"), atStr(m, "end"), atStr(m, "2")}) + ",")
		}
		b.WriteString("},")
	}
	b.WriteString("},\n")
	return nil
}

// aliases are the default content locales of the locales of list (de-DE
// for de): tags with the same data, which resolve to themselves.
func (g *generator) aliases(list []string) (string, error) {
	o, err := g.read("cldr-core/defaultContent.json")
	if err != nil {
		return "", err
	}
	index := map[string]int{}
	for i, t := range list {
		index[t] = i
	}
	type alias struct {
		tag string
		i   int
	}
	var out []alias
	// A language written in more than one script here (zh, zh-Hant) has
	// its likely script's locale under that script's name too: zh-Hans is
	// zh, and zh-Hans-CN, its default content, zh as well.
	ls, err := g.read("cldr-core/supplemental/likelySubtags.json")
	if err != nil {
		return "", err
	}
	for i, t := range list {
		if strings.Contains(t, "-") {
			continue
		}
		scripts := 0
		for _, u := range list {
			if p := strings.Split(u, "-"); p[0] == t && len(p) > 1 && len(p[1]) == 4 {
				scripts++
			}
		}
		s := strings.Split(atStr(ls, "supplemental", "likelySubtags", t), "-")
		if scripts > 0 && len(s) > 1 {
			index[t+"-"+s[1]] = i
			out = append(out, alias{t + "-" + s[1], i})
		}
	}
	// A default content locale's data is its parent's: de-DE is de,
	// zh-Hans-CN is zh-Hans, which is zh.
	dc := at(o, "defaultContent").([]any)
	// A locale with a parent of its own (nb's is no) gets no alias: ICU
	// has no nb_NO, and Node resolves nb-NO to nb.
	pl, err := g.read("cldr-core/supplemental/parentLocales.json")
	if err != nil {
		return "", err
	}
	parents := atObj(pl, "supplemental", "parentLocales", "parentLocale")
	changed := true
	for changed {
		changed = false
		for _, v := range dc {
			t, _ := v.(string)
			if _, done := index[t]; done || !strings.Contains(t, "-") {
				continue
			}
			parent := t[:strings.LastIndex(t, "-")]
			if p := atStr(parents, parent); p != "" && p != "und" {
				continue
			}
			if i, ok := index[parent]; ok {
				index[t] = i
				out = append(out, alias{t, i})
				changed = true
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].tag < out[b].tag })
	var b strings.Builder
	b.WriteString("// localeAliases are the default content locales of localeTable's, by tag.\nvar localeAliases = [...]localeAlias{\n")
	for _, a := range out {
		fmt.Fprintf(&b, "{%q, %d},\n", a.tag, a.i)
	}
	b.WriteString("}\n\n")
	return b.String(), nil
}

// likelyScripts are the language-region pairs of the languages of list
// whose likely script is not the language's (zh-TW: Hant, where zh is
// Hans): a request for one of them looks for the locale with the script.
func (g *generator) likelyScripts(list []string) (string, error) {
	o, err := g.read("cldr-core/supplemental/likelySubtags.json")
	if err != nil {
		return "", err
	}
	likely := atObj(o, "supplemental", "likelySubtags")
	langs := map[string]bool{}
	for _, t := range list {
		langs[strings.Split(t, "-")[0]] = true
	}
	var keys []string
	for k, v := range likely {
		parts := strings.Split(k, "-")
		if len(parts) != 2 || !langs[parts[0]] || len(parts[1]) != 2 {
			continue
		}
		script := strings.Split(v.(string), "-")[1]
		base := strings.Split(atStr(likely, parts[0]), "-")
		if len(base) > 1 && base[1] != script {
			keys = append(keys, k+" "+script)
		}
	}
	for l := range langs {
		if s := strings.Split(atStr(likely, l), "-"); len(s) > 1 {
			keys = append(keys, l+" "+s[1])
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("// likelyScripts are the languages of the tables with their likely script,\n// and the language-region pairs whose likely script is not the\n// language's, with that script.\nvar likelyScripts = [...][2]string{\n")
	for _, k := range keys {
		t, s, _ := strings.Cut(k, " ")
		fmt.Fprintf(&b, "{%q, %q},\n", t, s)
	}
	b.WriteString("}\n\n")
	return b.String(), nil
}

// timestamp parses metaZones.json's "1970-04-26 10:00" (UTC).
func timestamp(s string) (int64, error) {
	t, err := time.Parse("2006-01-02 15:04", s)
	if err != nil {
		return 0, err
	}
	return t.Unix(), nil
}

func (g *generator) writeZones(b *bytes.Buffer) error {
	mz, err := g.read("cldr-core/supplemental/metaZones.json")
	if err != nil {
		return err
	}
	info := atObj(mz, "supplemental", "metaZones", "metazoneInfo", "timezone")
	spans := map[string]string{}
	var walk func(o obj, prefix string)
	walk = func(o obj, prefix string) {
		for k, v := range o {
			switch v := v.(type) {
			case obj:
				walk(v, prefix+k+"/")
			case []any:
				type span struct {
					from, to int64
					mz       int
				}
				var list []span
				for _, e := range v {
					u := atObj(e, "usesMetazone")
					// A mapping without a start starts in 1970, as ICU's do
					// (zonemeta.cpp's gDefaultFrom): before it, a zone has
					// no metazone, and its names are GMT offsets.
					s := span{from: 0, to: math.MaxInt64, mz: g.metazoneIdx[atStr(u, "_mzone")]}
					if f := atStr(u, "_from"); f != "" {
						if s.from, err = timestamp(f); err != nil {
							return
						}
					}
					if t := atStr(u, "_to"); t != "" {
						if s.to, err = timestamp(t); err != nil {
							return
						}
					}
					list = append(list, s)
				}
				sort.Slice(list, func(a, b int) bool { return list[a].from < list[b].from })
				// A time between one span's end and the next one's start
				// is in no metazone.
				var out []string
				for i, s := range list {
					out = append(out, fmt.Sprintf("{%d, %d}", s.from, s.mz))
					if s.to != math.MaxInt64 && (i == len(list)-1 || list[i+1].from != s.to) {
						out = append(out, fmt.Sprintf("{%d, 0}", s.to))
					}
				}
				spans[prefix+k] = strings.Join(out, ", ")
			}
		}
	}
	walk(info, "")
	if err != nil {
		return err
	}
	b.WriteString("// metazoneIDs are CLDR's metazones, by index; 0 is none.\nvar metazoneIDs = [...]string{")
	for _, m := range g.metazones {
		fmt.Fprintf(b, "%q,", m)
	}
	pz, err := g.read("cldr-core/supplemental/primaryZones.json")
	if err != nil {
		return err
	}
	primary := atObj(pz, "supplemental", "primaryZones")
	perCountry := map[string]int{}
	for _, c := range g.zoneCountry {
		perCountry[c]++
	}
	b.WriteString("}\n\n// zoneTable are the IANA zones by CLDR's canonical name, with their metazones.\nvar zoneTable = [...]zone{\n")
	for _, z := range g.zones {
		c := g.zoneCountry[z]
		isPrimary := c != "" && (perCountry[c] == 1 || atStr(primary, c) == z)
		fmt.Fprintf(b, "{%q, []metazoneSpan{%s}, %q, %t},\n", z, spans[z], c, isPrimary)
	}
	b.WriteString("}\n\n")
	o, err := g.read("cldr-bcp47/bcp47/timezone.json")
	if err != nil {
		return err
	}
	var aliases []string
	seen := map[string]bool{}
	for _, v := range atObj(o, "keyword", "u", "tz") {
		alias := atStr(v, "_alias")
		if alias == "" || atStr(v, "_deprecated") == "true" {
			continue
		}
		names := strings.Fields(alias)
		if iana := atStr(v, "_iana"); iana != "" && !slices.Contains(names, iana) {
			names = append(names, iana)
		}
		for _, n := range names {
			u := strings.ToUpper(n)
			if seen[u] {
				continue
			}
			seen[u] = true
			aliases = append(aliases, fmt.Sprintf("{%q, %d, %q},", u, g.zoneIdx[names[0]], n))
		}
	}
	sort.Strings(aliases)
	b.WriteString("// zoneAliases are every IANA name CLDR knows, upper case, sorted.\nvar zoneAliases = [...]zoneAlias{\n")
	for _, a := range aliases {
		b.WriteString(a + "\n")
	}
	b.WriteString("}\n\n")
	return nil
}

func (g *generator) writeCurrencyDigits(b *bytes.Buffer) error {
	o, err := g.read("cldr-core/supplemental/currencyData.json")
	if err != nil {
		return err
	}
	fr := atObj(o, "supplemental", "currencyData", "fractions")
	var codes []string
	for k := range fr {
		if k != "DEFAULT" && atStr(fr, k, "_digits") != "2" {
			codes = append(codes, k)
		}
	}
	sort.Strings(codes)
	b.WriteString("// currencyDigits are the currencies with other than two fraction digits.\nvar currencyDigits = [...]struct {\n\tcode   string\n\tdigits uint8\n}{\n")
	for _, c := range codes {
		fmt.Fprintf(b, "{%q, %s},\n", c, atStr(fr, c, "_digits"))
	}
	b.WriteString("}\n\n")
	return nil
}

func (g *generator) writePool(b *bytes.Buffer) {
	b.WriteString("// strPool holds every string of the tables once; str i is\n// strPool[strOffsets[i]:strOffsets[i+1]].\nconst strPool = \"\" +\n")
	var offsets []string
	n := 0
	var line strings.Builder
	flush := func() {
		if line.Len() > 0 {
			b.WriteString("\t" + strconv.Quote(line.String()) + " +\n")
			line.Reset()
		}
	}
	for _, s := range g.strs {
		offsets = append(offsets, strconv.Itoa(n))
		n += len(s)
		line.WriteString(s)
		if line.Len() > 80 {
			flush()
		}
	}
	flush()
	offsets = append(offsets, strconv.Itoa(n))
	b.WriteString("\t\"\"\n\nvar strOffsets = [...]uint32{")
	for i, o := range offsets {
		if i%16 == 0 {
			b.WriteString("\n")
		}
		b.WriteString(o + ",")
	}
	b.WriteString("\n}\n")
}
