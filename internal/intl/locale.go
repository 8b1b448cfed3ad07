package intl

import (
	"slices"
	"sort"
	"strings"
)

// CanonicalLocale is tag in BCP 47 canonical form, as
// Intl.getCanonicalLocales writes it: subtags cased by kind, the Unicode
// extension's keywords sorted and "true" values dropped, deprecated
// language codes replaced. A tag that is not well-formed is a RangeError.
func CanonicalLocale(tag string) (string, error) {
	bad := rangeError("Incorrect locale information provided")
	if tag == "" || len(tag) > 255 {
		return "", bad
	}
	sub := strings.Split(strings.ToLower(tag), "-")
	for _, s := range sub {
		if s == "" || len(s) > 8 || !isAlnum(s) {
			return "", bad
		}
	}
	// language: 2-3 or 5-8 letters ("root", "i-klingon" and a private
	// use tag alone are not Unicode locale identifiers).
	lang := sub[0]
	if !isAlpha(lang) || len(lang) == 1 || len(lang) == 4 || lang == "root" {
		return "", bad
	}
	if a, ok := languageAliases[lang]; ok {
		lang = a
	}
	out := []string{lang}
	i := 1
	if i < len(sub) && len(sub[i]) == 4 && isAlpha(sub[i]) {
		out = append(out, strings.ToUpper(sub[i][:1])+sub[i][1:])
		i++
	}
	if i < len(sub) && (len(sub[i]) == 2 && isAlpha(sub[i]) || len(sub[i]) == 3 && isDigit(sub[i])) {
		out = append(out, strings.ToUpper(sub[i]))
		i++
	}
	var variants []string
	for ; i < len(sub) && isVariant(sub[i]); i++ {
		if slices.Contains(variants, sub[i]) {
			return "", bad
		}
		variants = append(variants, sub[i])
	}
	sort.Strings(variants)
	out = append(out, variants...)
	// Extensions, each a singleton and subtags of 2-8, sorted by singleton;
	// a private use part (x-) last.
	type ext struct {
		single string
		subs   []string
	}
	var exts []ext
	var private []string
	for i < len(sub) {
		s := sub[i]
		if len(s) != 1 {
			return "", bad
		}
		if s == "x" {
			if i+1 == len(sub) {
				return "", bad
			}
			private = sub[i:]
			break
		}
		for _, e := range exts {
			if e.single == s {
				return "", bad
			}
		}
		j := i + 1
		for j < len(sub) && len(sub[j]) > 1 {
			j++
		}
		if j == i+1 {
			return "", bad
		}
		e := ext{s, sub[i+1 : j]}
		if s == "u" {
			var err error
			if e.subs, err = canonicalUnicodeExtension(e.subs); err != nil {
				return "", err
			}
		}
		exts = append(exts, e)
		i = j
	}
	sort.Slice(exts, func(a, b int) bool { return exts[a].single < exts[b].single })
	for _, e := range exts {
		out = append(out, e.single)
		out = append(out, e.subs...)
	}
	out = append(out, private...)
	return strings.Join(out, "-"), nil
}

// languageAliases are the deprecated language codes CLDR replaces.
var languageAliases = map[string]string{
	"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro", "tl": "fil",
}

func isVariant(s string) bool {
	return len(s) >= 5 && len(s) <= 8 || len(s) == 4 && s[0] >= '0' && s[0] <= '9'
}

// canonicalUnicodeExtension sorts the keywords of a -u- extension (its
// attributes first), drops "true" values and a repeated key.
func canonicalUnicodeExtension(subs []string) ([]string, error) {
	var attrs []string
	i := 0
	for ; i < len(subs) && len(subs[i]) > 2; i++ {
		attrs = append(attrs, subs[i])
	}
	type kw struct {
		key    string
		values []string
	}
	var kws []kw
	for i < len(subs) {
		if len(subs[i]) != 2 || !isAlpha(subs[i][1:]) {
			return nil, rangeError("Incorrect locale information provided")
		}
		k := kw{key: subs[i]}
		i++
		for i < len(subs) && len(subs[i]) > 2 {
			k.values = append(k.values, subs[i])
			i++
		}
		if len(k.values) == 1 && k.values[0] == "true" {
			k.values = nil
		}
		dup := false
		for _, o := range kws {
			dup = dup || o.key == k.key
		}
		if !dup {
			kws = append(kws, k)
		}
	}
	sort.SliceStable(kws, func(a, b int) bool { return kws[a].key < kws[b].key })
	out := attrs
	for _, k := range kws {
		out = append(out, k.key)
		out = append(out, k.values...)
	}
	return out, nil
}

// CanonicalLocales is Intl.getCanonicalLocales of tags: each canonical,
// without repeats.
func CanonicalLocales(tags []string) ([]string, error) {
	out := []string{}
	for _, t := range tags {
		c, err := CanonicalLocale(t)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Set is the locales an Intl offers: some of the locales of the tables.
// The zero Set offers English alone.
type Set struct {
	on [len(localeTags)]bool
}

// Locales are the locales the tables have, English first: what a Set can
// offer.
func Locales() []string { return slices.Clone(localeTags[:]) }

// NewSet is the Set of English and the locales of names: each a locale
// of Locales (de), which brings those of its children the tables have
// (de-AT, de-CH). An unknown name is an error.
func NewSet(names []string) (Set, error) {
	var s Set
	for _, n := range names {
		c, err := CanonicalLocale(n)
		found := false
		for i, t := range localeTags {
			if err == nil && (t == c || strings.HasPrefix(t, c+"-")) {
				s.on[i], found = true, true
			}
		}
		if !found {
			return Set{}, &UnknownLocaleError{Locale: n}
		}
	}
	return s, nil
}

// AllLocales is the Set of every locale of the tables.
func AllLocales() Set {
	var s Set
	for i := range s.on {
		s.on[i] = true
	}
	return s
}

// UnknownLocaleError is a locale NewSet was given that the tables do
// not have.
type UnknownLocaleError struct{ Locale string }

func (e *UnknownLocaleError) Error() string {
	return "intl: no locale data for " + e.Locale + "; there is for " + strings.Join(localeTags[:], ", ")
}

// find is the index of tag (canonical, without extensions) in the tables
// if s offers it: by its own name or as an alias.
func (s *Set) find(tag string) int {
	for i, t := range localeTags {
		if t == tag {
			if s.offers(i) {
				return i
			}
			return -1
		}
	}
	j := sort.Search(len(localeAliases), func(j int) bool { return localeAliases[j].tag >= tag })
	if j < len(localeAliases) && localeAliases[j].tag == tag && s.offers(int(localeAliases[j].locale)) {
		return int(localeAliases[j].locale)
	}
	return -1
}

// offers reports whether s has the locale at index i of the tables:
// English always.
func (s *Set) offers(i int) bool {
	t := localeTags[i]
	return s.on[i] || t == "en" || strings.HasPrefix(t, "en-")
}

// lookup is ECMA-402's BestAvailableLocale for tag (canonical, without
// extensions): the locale of s for it or the nearest ancestor s has, the
// tag it resolves to, and false if none. A tag that names a locale's data
// with or without its likely script (zh-CN is zh-Hans-CN, zh-TW is
// zh-Hant-TW, zh-Hans is zh) resolves to itself; a region whose likely
// script is not the language's looks for the locale with that script.
func (s *Set) lookup(tag string) (int, string, bool) {
	parts := strings.Split(tag, "-")
	if len(parts) >= 2 && len(parts[1]) == 4 {
		if likelyScript(parts[0], "") == parts[1] {
			plain := parts[0] + strings.TrimPrefix(tag, parts[0]+"-"+parts[1])
			if i := s.find(plain); i >= 0 {
				return i, tag, true
			}
		}
	} else if script := likelyScript(parts[0], regionOf(parts)); script != "" {
		scripted := parts[0] + "-" + script + strings.TrimPrefix(tag, parts[0])
		if i := s.find(scripted); i >= 0 {
			return i, tag, true // the same data: the tag asked for
		}
		if script != likelyScript(parts[0], "") {
			return s.lookup(scripted) // zh-MO: zh-Hant, not zh
		}
	}
	for t := tag; ; {
		if i := s.find(t); i >= 0 {
			return i, t, true
		}
		k := strings.LastIndex(t, "-")
		if k < 0 {
			return 0, "", false
		}
		t = t[:k]
		if len(t) > 1 && t[len(t)-2] == '-' {
			t = t[:len(t)-2] // a singleton without its subtags
		}
	}
}

// regionOf is the region subtag of a tag's parts without a script.
func regionOf(parts []string) string {
	if len(parts) >= 2 && (len(parts[1]) == 2 || len(parts[1]) == 3 && isDigit(parts[1])) {
		return parts[1]
	}
	return ""
}

// likelyScript is the likely script of lang in region (or of the
// language, for ""), if the tables know it.
func likelyScript(lang, region string) string {
	find := func(k string) string {
		i := sort.Search(len(likelyScripts), func(i int) bool { return likelyScripts[i][0] >= k })
		if i < len(likelyScripts) && likelyScripts[i][0] == k {
			return likelyScripts[i][1]
		}
		return ""
	}
	if region != "" {
		if s := find(lang + "-" + region); s != "" {
			return s
		}
	}
	return find(lang)
}

// resolved is a locale a formatter resolved to.
type resolved struct {
	index int // in the tables
	data  *locale
	tag   string            // what resolvedOptions().locale reports, without extensions
	ext   map[string]string // the -u- keywords of the tag it came from
}

// resolveLocale is ECMA-402's ResolveLocale (the lookup matcher) over s:
// the first of the requested tags s has a locale for, else the default
// locale (def, if s has it), else en-US.
func (s *Set) resolveLocale(requested []string, def string) (resolved, error) {
	for _, r := range requested {
		c, err := CanonicalLocale(r)
		if err != nil {
			return resolved{}, err
		}
		base, ext := splitExtensions(c)
		if i, t, ok := s.lookup(base); ok {
			return resolved{i, &localeTable[i], t, ext}, nil
		}
	}
	if c, err := CanonicalLocale(def); err == nil {
		base, _ := splitExtensions(c)
		if i, t, ok := s.lookup(base); ok {
			return resolved{i, &localeTable[i], t, nil}, nil
		}
	}
	return resolved{0, &localeTable[0], "en-US", nil}, nil
}

// SplitExtensions is tag without its extensions and private use part,
// and the keywords of its -u- extension.
func SplitExtensions(tag string) (string, map[string]string) { return splitExtensions(tag) }

// splitExtensions is tag without its extensions and private use part, and
// the keywords of its -u- extension.
func splitExtensions(tag string) (string, map[string]string) {
	parts := strings.Split(tag, "-")
	for i := 1; i < len(parts); i++ {
		if len(parts[i]) != 1 {
			continue
		}
		base := strings.Join(parts[:i], "-")
		var ext map[string]string
		for j := i; j < len(parts); j++ {
			if parts[j] == "x" {
				break
			}
			if parts[j] != "u" {
				continue
			}
			for k := j + 1; k < len(parts) && len(parts[k]) > 1; {
				if len(parts[k]) != 2 {
					k++
					continue
				}
				key := parts[k]
				k++
				var vals []string
				for k < len(parts) && len(parts[k]) > 2 {
					vals = append(vals, parts[k])
					k++
				}
				if ext == nil {
					ext = map[string]string{}
				}
				ext[key] = strings.Join(vals, "-")
			}
			break
		}
		return base, ext
	}
	return tag, nil
}

// SupportedLocales is supportedLocalesOf: the requested locales (canonical)
// s has a locale for.
func (s *Set) SupportedLocales(requested []string) ([]string, error) {
	list, err := CanonicalLocales(requested)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, c := range list {
		base, _ := splitExtensions(c)
		if _, _, ok := s.lookup(base); ok {
			out = append(out, c)
		}
	}
	return out, nil
}

func isAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func isDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z') {
			return false
		}
	}
	return true
}
