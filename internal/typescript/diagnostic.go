package typescript

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// Diagnostic is one error or warning about the TypeScript source.
type Diagnostic struct {
	// Line is the 1-based line in the TypeScript source, or 0 when the
	// problem has no position. Lines end at "\n", "\r\n", "\r", U+2028 and
	// U+2029, as in ECMAScript.
	Line int
	// Column is the 1-based column within Line counted in Unicode code
	// points (not bytes, not UTF-16 units), the unit QuickJS uses for
	// JavaScript positions, or 0 when the problem has no position.
	Column int
	// Message is esbuild's text, such as `Expected ";" but found "x"`,
	// or Compile's own for an export.
	Message string
}

// String formats d as "line:col: message".
func (d Diagnostic) String() string {
	return fmt.Sprintf("%d:%d: %s", d.Line, d.Column, d.Message)
}

// CompileError is the error Compile returns when the TypeScript source does
// not compile. It holds every error found, in source order; esbuild stops
// parsing at the first syntax error, so there is one of those at most, but
// the errors it finds after parsing (strict mode violations, an export, …)
// all come together.
//
//	var cerr *typescript.CompileError
//	if errors.As(err, &cerr) {
//		first := cerr.Diagnostics[0] // Line, Column, Message
//	}
type CompileError struct {
	Diagnostics []Diagnostic
}

// Error returns one "line:col: message" line per diagnostic.
func (e *CompileError) Error() string {
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// diagnostics converts esbuild messages into Diagnostics sorted by
// position. Esbuild gives 1-based lines and 0-based byte columns within
// LineText.
func diagnostics(msgs []api.Message) []Diagnostic {
	if len(msgs) == 0 {
		return nil
	}
	ds := make([]Diagnostic, 0, len(msgs))
	for _, msg := range msgs {
		// Esbuild ends a few messages with ":" to introduce notes, which
		// point elsewhere and are left out.
		d := Diagnostic{Message: strings.TrimSuffix(msg.Text, ":")}
		if loc := msg.Location; loc != nil && loc.Line > 0 {
			d.Line = loc.Line
			d.Column = bytesToRunes(loc.LineText, max(loc.Column, 0)) + 1
		}
		ds = append(ds, d)
	}
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return ds
}
