package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"
)

// decodeJSON decodes the JSON document b, the contents of what ("--plans
// plans.json"), into v, refusing unknown fields. Its errors speak JSON, not
// Go: a value of the wrong kind at the top is "must be shape, got an
// array"; a syntax error has its line, column and byte offset; a field of
// the wrong kind is named by its path ("at tiny.memoryMb: want an integer,
// got a string").
func decodeJSON(what string, b []byte, v any, shape string) error {
	want := kindOfType(reflect.TypeOf(v).Elem())
	got, empty := kindOfText(b)
	switch {
	case empty:
		return fmt.Errorf("%s: is empty: it must be %s", what, shape)
	case got != want && got != "" && want != "":
		return fmt.Errorf("%s: must be %s, got %s", what, shape, got)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%s: %s", what, jsonProblem(b, err))
	}
	if rest := bytes.TrimSpace(b[d.InputOffset():]); len(rest) > 0 {
		off := len(b) - len(bytes.TrimLeft(b[d.InputOffset():], " \t\r\n"))
		return fmt.Errorf("%s: %s: more after the JSON value", what, where(b, off))
	}
	return nil
}

// checkJSON returns nil if b is one JSON value, else what is wrong with it.
func checkJSON(b []byte) error {
	if _, empty := kindOfText(b); empty {
		return errors.New("is empty: give a JSON value, such as null or {}")
	}
	if json.Valid(b) {
		return nil
	}
	var v any
	return errors.New(jsonProblem(b, json.Unmarshal(b, &v)))
}

// jsonProblem describes an error of encoding/json about the document b.
func jsonProblem(b []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off := int(se.Offset) - 1 // the byte that did not fit
		if se.Error() == "unexpected end of JSON input" {
			off = len(b)
		}
		return fmt.Sprintf("not valid JSON %s: %s", where(b, max(off, 0)), se.Error())
	case errors.As(err, &te):
		at := ""
		if te.Field != "" {
			at = "at " + te.Field + ": "
		}
		return fmt.Sprintf("%swant %s, got %s", at, kindOfType(te.Type), article(te.Value))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("not valid JSON %s: unexpected end of JSON input", where(b, len(b)))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// where is the position of byte off of b: "at line 2, column 5 (byte 17)",
// the column in characters.
func where(b []byte, off int) string {
	off = min(off, len(b))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := 1 + utf8.RuneCount(b[bytes.LastIndexByte(b[:off], '\n')+1:off])
	return fmt.Sprintf("at line %d, column %d (byte %d)", line, col, off)
}

// kindOfText returns the kind of the JSON value b starts with ("an
// object", "an array", ...), "" if it starts with no JSON value, and
// whether b is empty or only white space.
func kindOfText(b []byte) (kind string, empty bool) {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return "", true
	}
	switch c := b[0]; {
	case c == '{':
		return "an object", false
	case c == '[':
		return "an array", false
	case c == '"':
		return "a string", false
	case c == 't' || c == 'f':
		return "a boolean", false
	case c == 'n':
		return "null", false
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number", false
	}
	return "", false
}

// kindOfType names the JSON kind a Go type decodes from.
func kindOfType(t reflect.Type) string {
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return "" // json.RawMessage and []byte: any value
		}
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return ""
}

// article turns encoding/json's description of a value ("array", "number
// 1.5") into words.
func article(value string) string {
	switch {
	case value == "object" || value == "array":
		return "an " + value
	case value == "bool":
		return "a boolean"
	case value == "null":
		return "null"
	case strings.HasPrefix(value, "number "):
		return "the number " + strings.TrimPrefix(value, "number ")
	}
	return "a " + value
}
