package intl

import (
	"strconv"
	"strings"
)

// jsonObject writes a JSON object with its keys in the order they are
// added: resolvedOptions() objects list their properties in ECMA-402's
// order.
type jsonObject struct {
	b strings.Builder
}

func (j *jsonObject) key(k string) {
	if j.b.Len() == 0 {
		j.b.WriteByte('{')
	} else {
		j.b.WriteByte(',')
	}
	j.b.WriteString(strconv.Quote(k))
	j.b.WriteByte(':')
}

func (j *jsonObject) str(k, v string) {
	j.key(k)
	j.b.WriteString(quoteJSON(v))
}

func (j *jsonObject) num(k string, v int) {
	j.key(k)
	j.b.WriteString(strconv.Itoa(v))
}

func (j *jsonObject) raw(k, v string) {
	j.key(k)
	j.b.WriteString(v)
}

func (j *jsonObject) String() string {
	if j.b.Len() == 0 {
		return "{}"
	}
	return j.b.String() + "}"
}

// quoteJSON is s as a JSON string.
func quoteJSON(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// PartsJSON is parts as a JSON array of {type, value(, unit)} objects.
func PartsJSON(parts []Part) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":`)
		b.WriteString(quoteJSON(p.Type))
		b.WriteString(`,"value":`)
		b.WriteString(quoteJSON(p.Value))
		if p.Unit != "" {
			b.WriteString(`,"unit":`)
			b.WriteString(quoteJSON(p.Unit))
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}
