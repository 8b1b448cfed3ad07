package duckdb

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Load infers column types the way DuckDB's JSON reader (read_json with
// auto-detection) does, over every row rather than a sample: a tree of
// what was seen at each place of the rows (node), then the type of each
// column from it (typeOfNode). TestLoadOracle holds the two side by side.

// What a node has seen; a node with two or more of them is JSON.
const (
	descNull = iota
	descBool
	descUint    // a non-negative integer literal within uint64 (BIGINT, or HUGEINT beyond int64)
	descSint    // a negative integer literal within int64 (BIGINT)
	descHugeint // both of those: HUGEINT
	descDouble  // any other number
	descString
	descList
	descStruct
)

// Candidate types of strings, in the order DuckDB tries them.
const (
	candTime = 1 << iota
	candDate
	// Timestamps: one bit per form, since a column's timestamps must
	// all have one form.
	candTimestampSpace     // 2024-03-01 13:45:00
	candTimestampSpaceFrac // 2024-03-01 13:45:00.5
	candTimestampT         // 2024-03-01T13:45:00, with a fraction of 1-6 digits or not
	candTimestampZ         // 2024-03-01T13:45:00Z, …
	candTimestampOffset    // 2024-03-01T13:45:00+02:00, …
	candUUID
	candTimestamp = candTimestampSpace | candTimestampSpaceFrac | candTimestampT | candTimestampZ | candTimestampOffset
	candAll       = candTime | candDate | candTimestamp | candUUID
)

// node is what the values at one place of the rows were seen to be.
type node struct {
	count, nulls int
	descs        []*desc
}

type desc struct {
	kind int
	big  bool  // descUint: some value is beyond int64
	cand int   // descString: the candidates every string satisfies
	elem *node // descList
	// descStruct: the keys in order of first appearance.
	keys     []string
	index    map[string]int
	children []*node
}

// add records a value of kind in n and returns its description (nil for
// a null).
func (n *node) add(kind int) *desc {
	n.count++
	if kind == descNull {
		n.nulls++
	}
	d, _ := n.addDesc(kind)
	return d
}

// addDesc returns n's description of kind, made if new (created), nil for
// a null: numbers of two kinds merge, a null adds nothing to another kind.
func (n *node) addDesc(kind int) (d *desc, created bool) {
	if kind == descNull {
		if len(n.descs) == 0 {
			n.descs = append(n.descs, &desc{kind: descNull})
		}
		return nil, false
	}
	if len(n.descs) == 1 && n.descs[0].kind == descNull {
		n.descs = n.descs[:0]
	}
	for _, d := range n.descs {
		if d.kind == kind {
			return d, false
		}
		if numeric(kind) && numeric(d.kind) {
			d.kind = maxNumeric(d.kind, kind)
			return d, false
		}
	}
	d = &desc{kind: kind, cand: candAll}
	switch kind {
	case descList:
		d.elem = &node{}
	case descStruct:
		d.index = map[string]int{}
	}
	n.descs = append(n.descs, d)
	return d, true
}

func numeric(k int) bool {
	return k == descUint || k == descSint || k == descHugeint || k == descDouble
}

func maxNumeric(a, b int) int {
	if a == descDouble || b == descDouble {
		return descDouble
	}
	return descHugeint // integers of both signs
}

func (d *desc) child(key string) *node {
	if i, ok := d.index[key]; ok {
		return d.children[i]
	}
	d.index[key] = len(d.children)
	d.keys = append(d.keys, key)
	c := &node{}
	d.children = append(d.children, c)
	return c
}

// extract records the JSON value raw (well-formed) in n.
func (n *node) extract(raw []byte) {
	s := scanner{b: raw}
	s.space()
	n.scan(&s)
}

func (n *node) scan(s *scanner) {
	switch c := s.b[s.i]; c {
	case 'n':
		s.i += 4
		n.add(descNull)
	case 't':
		s.i += 4
		n.add(descBool)
	case 'f':
		s.i += 5
		n.add(descBool)
	case '"':
		start := s.i
		s.skipString()
		d := n.add(descString)
		if d.cand != 0 {
			str, err := unquote(s.b[start:s.i])
			if err != nil {
				d.cand = 0
			} else {
				d.cand &= candidates(str)
			}
		}
	case '[':
		d := n.add(descList)
		s.i++
		s.space()
		if s.consume(']') {
			return
		}
		for {
			s.space()
			d.elem.scan(s)
			s.space()
			if s.consume(']') {
				return
			}
			s.consume(',')
		}
	case '{':
		d := n.add(descStruct)
		s.i++
		s.space()
		if s.consume('}') {
			return
		}
		for {
			s.space()
			raw, _ := s.rawString()
			key, _ := unquote(raw)
			s.space()
			s.consume(':')
			s.space()
			d.child(key).scan(s)
			s.space()
			if s.consume('}') {
				return
			}
			s.consume(',')
		}
	default:
		start := s.i
		s.value()
		n.addNumber(s.b[start:s.i])
	}
}

// addNumber records the JSON number v.
func (n *node) addNumber(v []byte) {
	k := numberKind(v)
	d := n.add(k)
	if k == descUint && d.kind == descUint && !d.big {
		_, err := strconv.ParseInt(string(v), 10, 64)
		d.big = err != nil
	}
}

// numberKind classifies a JSON number as DuckDB's reader does.
func numberKind(v []byte) int {
	if strings.ContainsAny(string(v), ".eE") {
		return descDouble
	}
	if v[0] == '-' {
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return descSint
		}
		return descDouble
	}
	if _, err := strconv.ParseUint(string(v), 10, 64); err == nil {
		return descUint
	}
	return descDouble
}

var (
	timeForm      = regexp.MustCompile(`^([01]?\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?$`)
	dateForm      = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	timestampForm = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})([T ])([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?(Z|[+-]\d{2}:?\d{2})?$`)
	uuidForm      = regexp.MustCompile(`^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`)
)

// candidates returns the candidate types s is a valid text of: ISO 8601
// times, dates and timestamps, and UUIDs.
func candidates(s string) int {
	if len(s) < 4 || len(s) > 40 {
		return 0
	}
	c := 0
	if timeForm.MatchString(s) {
		c |= candTime
	}
	if dateForm.MatchString(s) && validDate(s) {
		c |= candDate
	}
	if m := timestampForm.FindStringSubmatch(s); m != nil && validDate(m[1]) {
		switch {
		case m[2] == " " && m[5] != "":
		case m[2] == " " && m[4] != "":
			c |= candTimestampSpaceFrac
		case m[2] == " ":
			c |= candTimestampSpace
		case m[5] == "Z":
			c |= candTimestampZ
		case m[5] != "":
			c |= candTimestampOffset
		default:
			c |= candTimestampT
		}
	}
	if uuidForm.MatchString(s) {
		c |= candUUID
	}
	return c
}

func validDate(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// stringType is the type of strings that all satisfy cand.
func stringType(cand int) string {
	switch {
	case cand&candTime != 0:
		return "TIME"
	case cand&candDate != 0:
		return "DATE"
	case cand&candTimestamp != 0:
		return "TIMESTAMP"
	case cand&candUUID != 0:
		return "UUID"
	}
	return "VARCHAR"
}

// fieldAppearanceThreshold and mapInferenceThreshold are read_json's
// defaults: an object whose keys appear in less than a tenth of its
// values on average, or one of 200 keys or more of like types, is a MAP.
const (
	fieldAppearanceThreshold = 0.1
	mapInferenceThreshold    = 200
)

// typeOfNode is the SQL type of n's values; nullType is what a node of
// nulls only is (JSON, or NULL while merging map values).
func typeOfNode(n *node, nullType string) string {
	if len(n.descs) == 0 {
		return nullType
	}
	if len(n.descs) > 1 {
		return "JSON"
	}
	d := n.descs[0]
	switch d.kind {
	case descNull:
		return nullType
	case descBool:
		return "BOOLEAN"
	case descSint:
		return "BIGINT"
	case descUint:
		if d.big {
			return "HUGEINT"
		}
		return "BIGINT"
	case descHugeint:
		return "HUGEINT"
	case descDouble:
		return "DOUBLE"
	case descString:
		return stringType(d.cand)
	case descList:
		return typeOfNode(d.elem, nullType) + "[]"
	}
	// descStruct
	if len(d.children) == 0 {
		return "MAP(VARCHAR, " + nullType + ")"
	}
	if n.count > n.nulls {
		total := 0.0
		for _, c := range d.children {
			total += float64(c.count) / float64(n.count-n.nulls)
		}
		if total/float64(len(d.children)) < fieldAppearanceThreshold {
			return "MAP(VARCHAR, " + typeOfNode(merged(d), nullType) + ")"
		}
	}
	if len(d.children) >= mapInferenceThreshold {
		vt := typeOfNode(merged(d), "NULL")
		if vt != "JSON" && !strings.HasPrefix(vt, "STRUCT") {
			if vt == "NULL" {
				vt = nullType
			}
			return "MAP(VARCHAR, " + vt + ")"
		}
	}
	var b strings.Builder
	b.WriteString("STRUCT(")
	for i, c := range d.children {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(d.keys[i]))
		b.WriteByte(' ')
		b.WriteString(typeOfNode(c, nullType))
	}
	b.WriteByte(')')
	return b.String()
}

// merged is one node holding what all of d's children saw: the values of
// a MAP.
func merged(d *desc) *node {
	m := &node{}
	for _, c := range d.children {
		m.merge(c)
	}
	return m
}

func (m *node) merge(n *node) {
	m.count += n.count
	m.nulls += n.nulls
	for _, d := range n.descs {
		md, created := m.addDesc(d.kind)
		if md == nil {
			continue
		}
		md.big = md.big || d.big
		switch d.kind {
		case descString:
			if created {
				md.cand = d.cand
			} else if stringType(md.cand) != stringType(d.cand) {
				md.cand = 0
			}
		case descList:
			md.elem.merge(d.elem)
		case descStruct:
			for i, k := range d.keys {
				md.child(k).merge(d.children[i])
			}
		}
	}
}
