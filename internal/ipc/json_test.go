package ipc

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckJSONDepth(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name string
		text string
		max  int
		ok   bool
	}{
		{"a scalar", `1`, 0, true},
		{"a string", `"x"`, 0, true},
		{"one level at max 0", `[]`, 0, false},
		{"at the limit", nest(MaxJSONDepth), MaxJSONDepth, true},
		{"one beyond", nest(MaxJSONDepth + 1), MaxJSONDepth, false},
		{"objects count as arrays do", `{"a":{"b":[{"c":1}]}}`, 4, true},
		{"objects beyond", `{"a":{"b":[{"c":[]}]}}`, 4, false},
		{"siblings do not add up", `[[1],[2],[3],{"a":4}]`, 2, true},
		{"brackets in strings do not count", `["[[[[{{{{"]`, 1, true},
		{"an escaped quote does not end the string", `["\"[[[["]`, 1, true},
		{"an escaped backslash does end it", `["\\",[[]]]`, 2, false},
		{"an escaped backslash, within the limit", `["\\",[[]]]`, 3, true},
		{"unicode escapes", `["\u005b\u005b",{"k\"[":1}]`, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJSONDepth([]byte(tc.text), tc.max)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrJSONDepth) {
				t.Fatalf("got %v, want ErrJSONDepth", err)
			}
			if want := "JSON value nested too deeply (more than "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("message %q", err)
			}
		})
	}
}
