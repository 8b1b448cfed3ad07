package ipc

import (
	"errors"
	"fmt"
)

// MaxJSONDepth is the deepest nesting of arrays and objects accepted in any
// JSON value that crosses the bridge (results, data request parameters and
// replies, status payloads).
const MaxJSONDepth = 512

// ErrJSONDepth is returned by CheckJSONDepth for values nested too deeply.
var ErrJSONDepth = errors.New("JSON value nested too deeply")

// CheckJSONDepth reports whether the JSON text b nests arrays and objects no
// deeper than max. It scans the bytes without decoding, so it is safe to run
// before handing b to a decoder that recurses.
func CheckJSONDepth(b []byte, max int) error {
	depth := 0
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > max {
				return fmt.Errorf("%w (more than %d levels)", ErrJSONDepth, max)
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}
