package typescript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

const (
	// StepFileName is the file name stack traces give the compiled
	// JavaScript of a step (internal/jsrt's StepFile); RewriteStack rewrites
	// frames in it.
	StepFileName = "step.js"
	// TSFileName is the file name of the TypeScript source in the source
	// map and in rewritten stack frames.
	TSFileName = "step.ts"
	// QuickJSEvalFileName is the file name modernc.org/quickjs gives every
	// script run through VM.Eval, VM.EvalValue or VM.Compile; it cannot be
	// chosen. Pass it to RewriteStackFile when the step ran through Eval.
	// (Code compiled by eval, Function or AsyncFunction is named "<input>".)
	QuickJSEvalFileName = "<eval>"
)

// Output is a compiled step.
//
// Notes: an Output returned by a Cache is shared by every caller that
// compiled the same source, so it must be treated as read-only.
type Output struct {
	// JS is a JavaScript function body, to be run as the body of an async
	// function (new AsyncFunction(JS), or "(async function(){" + JS +
	// "\n})"). It starts with "use strict",
	// then any import declarations, then esbuild's helpers, then the step.
	// It contains no TypeScript and no export.
	JS string
	// Map is a source map v3 (JSON) from JS to the TypeScript source:
	// generated line 1 is the first line of JS, "sources" is [TSFileName],
	// "sourcesContent" is the TypeScript source. Parse it with
	// ParseSourceMap.
	Map string
	// Warnings are esbuild's warnings, such as an assignment to a
	// constant or a comparison that is always false. They do not stop the
	// compilation.
	Warnings []Diagnostic
}

// tsconfig pins the TypeScript settings that change the emitted code, so
// that a step compiles the same whatever esbuild's defaults become:
// alwaysStrict makes every step strict mode code, with or without a
// top-level await (which alone would make esbuild treat it as a module);
// decorators are the standard (TC39) ones, the default since TypeScript 5;
// class fields have define semantics, the TypeScript default for ES2022 and
// later; imports used only as types are elided.
const tsconfig = `{"compilerOptions":{` +
	`"alwaysStrict":true,` +
	`"experimentalDecorators":false,` +
	`"useDefineForClassFields":true,` +
	`"verbatimModuleSyntax":false}}`

// transformOptions are the esbuild options of every compilation. The target
// is ES2023, what QuickJS implements: await, optional chaining, class
// fields and the like are kept as written; decorators and "using"
// declarations are lowered into helper calls.
var transformOptions = api.TransformOptions{
	Loader:         api.LoaderTS,
	Target:         api.ES2023,
	Sourcemap:      api.SourceMapExternal,
	SourcesContent: api.SourcesContentExclude, // Compile adds the original source itself
	Sourcefile:     TSFileName,
	TsconfigRaw:    tsconfig,
	Charset:        api.CharsetASCII,
	LogLevel:       api.LogLevelSilent,
	Color:          api.ColorNever,
}

// maxPasses bounds the esbuild runs of one Compile. Two are the norm for a
// step with both a top-level await and a top-level return; more would mean
// esbuild reported a top-level return only after another was rewritten.
const maxPasses = 4

// topLevelReturnError is the text of the esbuild error that Compile turns
// into a rewrite, see returns.go.
const topLevelReturnError = "Top-level return cannot be used inside an ECMAScript module"

// Compile transforms a TypeScript step body into a JavaScript step body
// with a source map. No type checking is done: types are erased.
//
//	out, err := typescript.Compile(src)
//	var cerr *typescript.CompileError
//	if errors.As(err, &cerr) { /* cerr.Diagnostics: line, column, message */ }
//
// The step compiles as the top level of a module, so that namespaces,
// "declare" statements and imports are allowed as in any .ts file, and may
// also "return" and "await" at top level like the function body it is. See
// the package documentation for how. Imports used only as types are erased;
// other imports are kept, moved to the start of JS. An export is an error.
//
// On failure the error is a *CompileError holding every diagnostic; any
// other error is a bug.
//
// Notes: Compile is safe for concurrent use. Its cost is esbuild's: one
// run, rarely two, of esbuild's Transform, which has a fixed cost of a few
// hundred microseconds; see Cache to compile a source only once.
func Compile(src string) (*Output, error) {
	text := newSourceText(src)
	if guesses := guessReturns(src, text); len(guesses) > 0 {
		res := api.Transform(withPlaceholders(src, guesses), transformOptions)
		if len(res.Errors) == 0 {
			if out, err := finish(src, res, guesses); err == nil {
				return out, nil
			}
		}
		// A guess was wrong, or the step has errors: start over without
		// guesses, so that diagnostics are about the source as written.
	}
	return compileChecked(src, text)
}

// compileChecked compiles src, rewriting only the top-level returns that
// esbuild reports, in as many runs as that takes: one without any, two
// with some.
func compileChecked(src string, text *sourceText) (*Output, error) {
	var returns []topLevelReturn
	for pass := 1; ; pass++ {
		res := api.Transform(withPlaceholders(src, returns), transformOptions)
		var retErrs, otherErrs []api.Message
		for _, e := range res.Errors {
			if e.Text == topLevelReturnError && e.Location != nil {
				retErrs = append(retErrs, e)
			} else {
				otherErrs = append(otherErrs, e)
			}
		}
		if len(otherErrs) > 0 {
			return nil, &CompileError{Diagnostics: diagnostics(otherErrs)}
		}
		if len(retErrs) == 0 {
			return finish(src, res, returns)
		}
		added := 0
		for _, e := range retErrs {
			r, ok := locateReturn(text, src, e.Location)
			if !ok || slices.ContainsFunc(returns, func(q topLevelReturn) bool { return q.offset == r.offset }) {
				continue
			}
			returns = append(returns, r)
			added++
		}
		if added == 0 || pass == maxPasses {
			return nil, &CompileError{Diagnostics: diagnostics(retErrs)}
		}
	}
}

// withPlaceholders returns src with each return's placeholder written over
// its keyword.
func withPlaceholders(src string, returns []topLevelReturn) string {
	if len(returns) == 0 {
		return src
	}
	b := []byte(src)
	for _, r := range returns {
		copy(b[r.offset:], r.kind.placeholder())
	}
	return string(b)
}

// finish turns esbuild's output into an Output: it puts the top-level
// returns back, rejects exports, moves imports first and rewrites the map
// to match. esbuild's code has one statement per line and starts each
// top-level statement at column 0 with a mapping there; template literals
// are the only way for a line to start elsewhere than in a statement, and
// those lines have no mapping at column 0.
func finish(src string, res api.TransformResult, returns []topLevelReturn) (*Output, error) {
	var raw sourceMapJSON
	if err := json.Unmarshal(res.Map, &raw); err != nil {
		return nil, fmt.Errorf("typescript: internal error: esbuild's source map: %w", err)
	}
	if len(raw.Sources) > 1 {
		return nil, fmt.Errorf("typescript: internal error: esbuild's source map has %d sources", len(raw.Sources))
	}
	segs, err := decodeMappings(raw.Mappings, len(raw.Sources), len(raw.Names))
	if err != nil {
		return nil, fmt.Errorf("typescript: internal error: esbuild's source map: %w", err)
	}
	lines := strings.Split(string(res.Code), "\n")
	if len(segs) > len(lines) {
		return nil, fmt.Errorf("typescript: internal error: source map has %d lines, code %d", len(segs), len(lines))
	}
	for len(segs) < len(lines) {
		segs = append(segs, nil)
	}

	if err := restoreReturns(lines, segs, returns); err != nil {
		return nil, err
	}
	if ds := findExports(lines, segs, newSourceText(src)); len(ds) > 0 {
		return nil, &CompileError{Diagnostics: ds}
	}
	hoistImports(lines, segs)

	if raw.Names == nil {
		raw.Names = []string{}
	}
	out := sourceMapJSON{
		Version:        3,
		File:           StepFileName,
		Sources:        []string{TSFileName}, // esbuild's lacks it when nothing maps
		SourcesContent: []*string{&src},
		Names:          raw.Names,
		Mappings:       encodeMappings(segs),
		AstralColumns:  astralColumns(lines),
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("typescript: internal error: encode source map: %w", err)
	}
	return &Output{
		JS:       strings.Join(lines, "\n"),
		Map:      strings.TrimSuffix(buf.String(), "\n"),
		Warnings: diagnostics(res.Warnings),
	}, nil
}

// exportMessage is the diagnostic for an export statement.
const exportMessage = `A step cannot use "export": it is the body of a function, so return its result instead`

// findExports reports each top-level export statement left in the output,
// at the position of its "export" keyword in src.
func findExports(lines []string, segs [][]mapping, src *sourceText) []Diagnostic {
	var ds []Diagnostic
	for i, line := range lines {
		if !hasKeyword(line, "export") {
			continue
		}
		seg, ok := segmentAtColumn0(segs[i])
		if !ok {
			continue
		}
		col := src.runeColumnFromUTF16(int(seg.line), int(seg.col))
		// The mapping of "export const x" is on "const": point at "export".
		if text, ok := src.line(int(seg.line)); ok {
			before := strings.TrimRight(text[:runesToBytes(text, col)], " \t")
			if strings.HasSuffix(before, "export") {
				col = bytesToRunes(text, len(before)-len("export"))
			}
		}
		ds = append(ds, Diagnostic{Line: int(seg.line) + 1, Column: col + 1, Message: exportMessage})
	}
	return ds
}

// hoistImports moves the import declarations of the output to its start,
// after the directive prologue ("use strict"), keeping their order, so
// that a runtime finds them where a JavaScript step has them. Imports are
// hoisted by the language anyway: this changes no behavior. An import line
// is left in place if it does not end with ";", in case esbuild ever
// prints one over several lines.
func hoistImports(lines []string, segs [][]mapping) {
	prologue := 0
	for prologue < len(lines) && isDirective(lines[prologue]) {
		prologue++
	}
	var imports []int
	for i := prologue; i < len(lines); i++ {
		line := lines[i]
		if hasKeyword(line, "import") && len(line) > len("import") && strings.IndexByte(" {*\"'", line[len("import")]) >= 0 &&
			strings.HasSuffix(line, ";") {
			if _, ok := segmentAtColumn0(segs[i]); ok {
				imports = append(imports, i)
			}
		}
	}
	if len(imports) == 0 || imports[len(imports)-1] == prologue+len(imports)-1 {
		return // none, or already first
	}
	order := make([]int, 0, len(lines))
	for i := range prologue {
		order = append(order, i)
	}
	order = append(order, imports...)
	isImport := make(map[int]bool, len(imports))
	for _, i := range imports {
		isImport[i] = true
	}
	for i := prologue; i < len(lines); i++ {
		if !isImport[i] {
			order = append(order, i)
		}
	}
	oldLines, oldSegs := slices.Clone(lines), slices.Clone(segs)
	for to, from := range order {
		lines[to], segs[to] = oldLines[from], oldSegs[from]
	}
}

// isDirective reports whether line is a directive as esbuild prints one:
// a string literal statement such as "use strict";.
func isDirective(line string) bool {
	if len(line) < 3 || !strings.HasSuffix(line, ";") {
		return false
	}
	q := line[0]
	body := line[1 : len(line)-2]
	return (q == '"' || q == '\'') && line[len(line)-2] == q && !strings.ContainsAny(body, `\"'`)
}

// hasKeyword reports whether line starts with the keyword kw.
func hasKeyword(line, kw string) bool {
	return strings.HasPrefix(line, kw) && (len(line) == len(kw) || !isIdentByte(line[len(kw)]))
}

// isIdentByte reports whether c can continue an identifier. Non-ASCII
// bytes count, as esbuild escapes non-ASCII identifiers anyway.
func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c == '\\' || c >= 0x80 ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// segmentAtColumn0 returns the mapping of a statement that starts its line.
func segmentAtColumn0(segs []mapping) (mapping, bool) {
	if len(segs) > 0 && segs[0].genCol == 0 && segs[0].src >= 0 {
		return segs[0], true
	}
	return mapping{}, false
}

// astralColumns lists the characters outside the Basic Multilingual Plane
// in lines, for the source map extension described at astralColumnsKey.
func astralColumns(lines []string) [][2]int {
	var cols [][2]int
	for i, line := range lines {
		ascii := true
		for j := range len(line) {
			if line[j] >= 0x80 {
				ascii = false
				break
			}
		}
		if ascii {
			continue
		}
		col := 0
		for _, r := range line {
			if r >= 0x10000 {
				cols = append(cols, [2]int{i, col})
			}
			col += utf16Len(r)
		}
	}
	return cols
}
