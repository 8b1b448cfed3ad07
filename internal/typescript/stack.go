package typescript

import (
	"strconv"
	"strings"
)

// RewriteStack rewrites the frames of a QuickJS stack trace that point into
// the compiled step, file StepFileName, so that they point into the
// TypeScript source, file TSFileName:
//
//	at total (step.js:12:5)   becomes   at total (step.ts:9:3)
//	at step.js:4:1            becomes   at step.ts:2:1
//	at step.js:7              becomes   at step.ts:5
//
// offsetCol1 is the number of columns the runtime's wrapper prefix adds to
// line 1 of the script it evaluates, for instance 18 for a script that is
// "(async function(){" + out.JS + "\n})": columns on line 1 are reduced by it
// before mapping. Lines need no offset, as the prefix has no newline.
//
// A frame is left as it is when it is in another file (a native function,
// another script), when its position is in the wrapper prefix or suffix, or
// when the map has no source for it (esbuild's helper functions). Lines that
// are not frames, such as an "Error: message" header, are kept as they are.
// A frame that QuickJS gave only a line keeps only a line. Columns are
// code points, as QuickJS counts them.
//
// Notes: like every SourceMap method, it is safe for concurrent use.
func (m *SourceMap) RewriteStack(stack string, offsetCol1 int) string {
	return m.RewriteStackFile(stack, StepFileName, offsetCol1)
}

// RewriteStackFile is RewriteStack for a runtime that names the compiled
// step jsFile rather than StepFileName. modernc.org/quickjs names every
// script it runs through VM.Eval QuickJSEvalFileName ("<eval>"), so a
// runtime that uses Eval passes that.
func (m *SourceMap) RewriteStackFile(stack, jsFile string, offsetCol1 int) string {
	if m == nil || jsFile == "" || !strings.Contains(stack, jsFile+":") {
		return stack
	}
	var b strings.Builder
	b.Grow(len(stack))
	for len(stack) > 0 {
		line := stack
		rest := ""
		if i := strings.IndexByte(stack, '\n'); i >= 0 {
			line, rest = stack[:i+1], stack[i+1:]
		}
		b.WriteString(m.rewriteFrame(line, jsFile, offsetCol1))
		stack = rest
	}
	return b.String()
}

// rewriteFrame rewrites one line of a stack trace, newline included.
func (m *SourceMap) rewriteFrame(line, jsFile string, offsetCol1 int) string {
	body := strings.TrimRight(line, "\r\n")
	// The location is either the parenthesized end of the line,
	// "at name (file:line:col)", or all that follows "at ", "at file:line:col".
	var start, end int
	if strings.HasSuffix(body, ")") {
		open := strings.LastIndexByte(body, '(')
		if open < 0 {
			return line
		}
		start, end = open+1, len(body)-1
	} else {
		trimmed := strings.TrimLeft(body, " \t")
		if !strings.HasPrefix(trimmed, "at ") {
			return line
		}
		start, end = len(body)-len(trimmed)+len("at "), len(body)
	}
	loc := body[start:end]
	if !strings.HasPrefix(loc, jsFile+":") {
		return line
	}
	jsLine, jsCol, hasCol, ok := parseLineCol(loc[len(jsFile)+1:])
	if !ok {
		return line
	}
	if !hasCol {
		jsCol = 0
	} else if jsLine == 1 && jsCol >= 1 {
		jsCol -= offsetCol1
		if jsCol < 1 {
			return line // in the runtime's prefix
		}
	}
	seg, ok := m.lookup(jsLine, jsCol)
	if !ok {
		return line
	}
	origLine, origCol, _ := m.Original(jsLine, jsCol)
	newLoc := m.source(seg.src) + ":" + strconv.Itoa(origLine)
	if hasCol {
		newLoc += ":" + strconv.Itoa(origCol)
	}
	return line[:start] + newLoc + line[end:]
}

// parseLineCol parses "12:5" or "12".
func parseLineCol(s string) (line, col int, hasCol, ok bool) {
	ls, cs, hasCol := strings.Cut(s, ":")
	line, err := strconv.Atoi(ls)
	if err != nil || line < 1 || !isDigits(ls) {
		return 0, 0, false, false
	}
	if hasCol {
		col, err = strconv.Atoi(cs)
		if err != nil || col < 0 || !isDigits(cs) {
			return 0, 0, false, false
		}
	}
	return line, col, hasCol, true
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
