package typescript

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/evanw/esbuild/pkg/api"
)

// A step may return at top level, but esbuild accepts a top-level return
// only in a file it does not consider a module, and a top-level await or an
// import makes it one. So Compile replaces "return" keywords with
// placeholders of the same length that esbuild accepts anywhere and that end
// the statement where the return did, compiles, finds each placeholder in
// the output through the source map (a statement's mapping points at its
// first token, which is where the keyword was) and writes "return" back.
// Keeping the length keeps every other position of the source, so
// diagnostics and mappings need no adjustment.
//
//	return expr       ->  throw  expr       (throw, like return, takes the rest of the statement)
//	return;           ->  $R$() ;           (a call statement that the ';' ends)
//	return <newline>  ->  $R$();<newline>   (return ends at a newline, '}' or the end of input)
//
// Which keywords: first those guessReturns finds, all of them, so that a
// step compiles in one esbuild run; if that fails, only those esbuild
// reports as top-level returns, which takes one run more.

// returnKind says which placeholder replaces a return.
type returnKind uint8

const (
	returnValue    returnKind = iota // "return" followed by an expression
	returnBareSemi                   // "return" followed by ';'
	returnBare                       // "return" ended by a newline, '}' or the end of input
)

// placeholder returns the 6 bytes that replace "return".
func (k returnKind) placeholder() string {
	switch k {
	case returnValue:
		return "throw "
	case returnBareSemi:
		return "$R$() "
	default:
		return "$R$();"
	}
}

// outputPrefix returns the 5 bytes that esbuild prints for the placeholder
// and that "return" replaces.
func (k returnKind) outputPrefix() string {
	if k == returnValue {
		return "throw"
	}
	return "$R$()"
}

// topLevelReturn is a return replaced by a placeholder: a top-level one, or
// any one when guessed.
type topLevelReturn struct {
	offset int // byte offset of the keyword in the source
	line   int // 0-based line of the keyword
	col16  int // 0-based UTF-16 column of the keyword, as in the source map
	kind   returnKind
}

// locateReturn finds the "return" keyword an esbuild error points at.
func locateReturn(text *sourceText, input string, loc *api.Location) (topLevelReturn, bool) {
	line := loc.Line - 1
	off := text.offset(line, loc.Column)
	if off < 0 || !strings.HasPrefix(input[off:], "return") {
		return topLevelReturn{}, false
	}
	lineText, _ := text.line(line)
	return topLevelReturn{
		offset: off,
		line:   line,
		col16:  bytesToUTF16(lineText, loc.Column),
		kind:   classifyReturn(input, off+len("return")),
	}, true
}

// classifyReturn looks at what follows a "return" keyword that ends at s[i]
// to tell whether the statement has an expression. Per the grammar, a line
// terminator (also inside a block comment) right after "return" ends it.
func classifyReturn(s string, i int) returnKind {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' || r == '}':
			return returnBare
		case r == ';':
			return returnBareSemi
		case strings.HasPrefix(s[i:], "//"):
			return returnBare
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 || strings.ContainsAny(s[i+2:i+2+end], "\n\r\u2028\u2029") {
				return returnBare
			}
			i += 2 + end + 2
			continue
		case r == '\t' || r == '\v' || r == '\f' || r == '\uFEFF' || unicode.Is(unicode.Zs, r):
		default:
			return returnValue
		}
		i += n
	}
	return returnBare
}

// restoreReturns writes "return" over each placeholder in the output lines
// and shifts the mappings after it on its line by the extra byte. Every
// replaced return must be found exactly once, or it is an error.
func restoreReturns(lines []string, segs [][]mapping, returns []topLevelReturn) error {
	if len(returns) == 0 {
		return nil
	}
	type pos struct{ line, col int32 }
	want := make(map[pos]int, len(returns))
	for i, r := range returns {
		want[pos{int32(r.line), int32(r.col16)}] = i
	}
	done := make([]bool, len(returns))
	for li := range lines {
		// Candidates on this line, rightmost first so that an edit does not
		// move the ones still to do.
		var cands []mapping
		for _, s := range segs[li] {
			if s.src == 0 {
				if _, ok := want[pos{s.line, s.col}]; ok {
					cands = append(cands, s)
				}
			}
		}
		slices.SortFunc(cands, func(a, b mapping) int { return cmp.Compare(b.genCol, a.genCol) })
		for _, c := range cands {
			ri := want[pos{c.line, c.col}]
			if done[ri] {
				continue
			}
			line := lines[li]
			b := utf16ToBytes(line, int(c.genCol))
			if b < 0 {
				continue
			}
			// The mapping of a statement that is the body of an if, a loop
			// or a label is on the space before it.
			for b < len(line) && line[b] == ' ' {
				b++
			}
			prefix := returns[ri].kind.outputPrefix()
			if !strings.HasPrefix(line[b:], prefix) ||
				(returns[ri].kind == returnValue && len(line) > b+len(prefix) && isIdentByte(line[b+len(prefix)])) {
				continue
			}
			lines[li] = line[:b] + "return" + line[b+len(prefix):]
			at := int32(bytesToUTF16(line, b))
			for j := range segs[li] {
				if segs[li][j].genCol > at {
					segs[li][j].genCol++
				}
			}
			done[ri] = true
		}
	}
	for i, ok := range done {
		if !ok {
			r := returns[i]
			return fmt.Errorf("typescript: internal error: return at %d:%d not found in esbuild's output", r.line+1, r.col16+1)
		}
	}
	return nil
}

// guessReturns finds the "return" keywords of src with a light scan that
// knows strings, comments, template literals and regular expressions but no
// grammar, so that Compile can replace them all before the first esbuild
// run and compile most steps in one run rather than two. Returns inside
// functions are replaced too: the placeholders go back to "return" all the
// same, and without minification esbuild prints a throw or a call statement
// exactly as it would print the return.
//
// A wrong guess cannot produce wrong code: a placeholder that is not a
// statement where the return was (because the scan mistook a string, a
// comment or a property name for code) has no mapping at its position in
// the output, so restoreReturns fails and Compile starts over without
// guesses. What a guess could do is make esbuild accept a return where
// only a function may have one but any statement may throw: in a namespace
// or a class static block. So returns in those are never guessed: esbuild
// either accepts them (they are in a nested function) or reports them.
func guessReturns(src string, text *sourceText) []topLevelReturn {
	if !strings.Contains(src, "return") {
		return nil
	}
	var rets []topLevelReturn
	var templates []int // depth at which each open template expression ("${") returns to its template
	var regions []int   // depth at which each enclosing namespace or static block opened
	pendingRegion := false
	depth := 0
	regexOK := true // whether a '/' here starts a regular expression rather than a division
	for i := 0; i < len(src); {
		c := src[i]
		// "namespace a.b {", "module 'm' {" and "static {" open a region;
		// anything else between the word and a brace cancels it.
		if pendingRegion && !(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '.' || c == '{' ||
			c == '\'' || c == '"' || isIdentByte(c) || strings.HasPrefix(src[i:], "//") || strings.HasPrefix(src[i:], "/*")) {
			pendingRegion = false
		}
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			i += strings.IndexAny(src[i:]+"\n", "\n\r")
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return rets
			}
			i += 2 + end + 2
		case c == '/' && regexOK:
			i = skipRegExp(src, i)
			regexOK = false
		case c == '\'' || c == '"':
			i = skipString(src, i)
			regexOK = false
		case c == '`':
			var opened bool
			i, opened = skipTemplate(src, i+1)
			if opened {
				templates = append(templates, depth)
				depth++
				regexOK = true
			} else {
				regexOK = false
			}
		case c == '}' && len(templates) > 0 && depth-1 == templates[len(templates)-1]:
			templates = templates[:len(templates)-1]
			depth--
			var opened bool
			i, opened = skipTemplate(src, i+1)
			if opened {
				templates = append(templates, depth)
				depth++
				regexOK = true
			} else {
				regexOK = false
			}
		case isIdentByte(c):
			start := i
			for i < len(src) && isIdentByte(src[i]) {
				i++
			}
			word := src[start:i]
			// Not a property name: x.return, #return, {return: 1}.
			switch word {
			case "namespace", "module", "static":
				pendingRegion = !afterDotOrHash(src, start)
			}
			if word == "return" && len(regions) == 0 && !afterDotOrHash(src, start) && !nextIs(src, i, ':') {
				line, col16 := text.position(start)
				rets = append(rets, topLevelReturn{offset: start, line: line, col16: col16, kind: classifyReturn(src, i)})
			}
			regexOK = isKeywordBeforeExpression(word)
		case c == '{':
			if pendingRegion {
				regions = append(regions, depth)
				pendingRegion = false
			}
			depth++
			regexOK = true
			i++
		case c == '}':
			depth--
			if len(regions) > 0 && regions[len(regions)-1] == depth {
				regions = regions[:len(regions)-1]
			}
			regexOK = true
			i++
		case c == ')' || c == ']':
			regexOK = false
			i++
		default:
			regexOK = true
			i++
		}
	}
	return rets
}

// skipString returns the offset after the string literal at s[i].
func skipString(s string, i int) int {
	q := s[i]
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q, '\n':
			return i + 1
		}
	}
	return len(s)
}

// skipTemplate scans template literal text from s[i] to the closing
// backquote (opened false) or to an opening "${" (opened true), and
// returns the offset after it.
func skipTemplate(s string, i int) (next int, opened bool) {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '`':
			return i + 1, false
		case '$':
			if i+1 < len(s) && s[i+1] == '{' {
				return i + 2, true
			}
		}
	}
	return len(s), false
}

// skipRegExp returns the offset after the regular expression literal at
// s[i], flags included.
func skipRegExp(s string, i int) int {
	inClass := false
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '\n', '\r':
			return i // not a regular expression after all; let the caller go on
		case '/':
			if !inClass {
				i++
				for i < len(s) && isIdentByte(s[i]) {
					i++
				}
				return i
			}
		}
	}
	return len(s)
}

// afterDotOrHash reports whether the word at s[i] is a property name
// (x.return, x?.return) or a private name (#return).
func afterDotOrHash(s string, i int) bool {
	if i > 0 && s[i-1] == '#' {
		return true
	}
	for i--; i >= 0; i-- {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case '.':
			return true
		}
		return false
	}
	return false
}

// nextIs reports whether the first byte after s[i:] that is not a space is c.
func nextIs(s string, i int, c byte) bool {
	for ; i < len(s); i++ {
		if s[i] != ' ' && s[i] != '\t' {
			return s[i] == c
		}
	}
	return false
}

// isKeywordBeforeExpression reports whether an expression, and so a
// regular expression, can follow word.
func isKeywordBeforeExpression(word string) bool {
	switch word {
	case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void",
		"throw", "case", "do", "else", "yield", "await", "extends":
		return true
	}
	return false
}
