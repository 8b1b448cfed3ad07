package jsrt

import "strings"

// A step is compiled by the AsyncFunction constructor, which refuses
// import declarations: only a module may have them. So the imports of
// catalogue packages are rewritten before the step compiles, into calls of
// the guest's package table:
//
//	import * as ss from "simple-statistics";     const ss = __sbx_require("simple-statistics");
//	import { mean, median as med } from "x";     const { mean, median: med } = __sbx_require("x");
//	import d, { a } from "x";                    const { default: d, a } = __sbx_require("x");
//	import d, * as ns from "x";                  const ns = __sbx_require("x"), d = ns.default;
//	import "x";                                  __sbx_require("x");
//	await import("x")                            await __sbx_import("x")
//
// The replacement keeps the declaration's line breaks (at its end), so
// every line of the step keeps its number and error positions stay right;
// only code after an import on the same line moves sideways. Bindings
// become constants instead of live immutable bindings, which a package's
// namespace (never reassigned) cannot tell apart, except that they are not
// hoisted: an import must come before the code that runs with it, which is
// where TypeScript's output and nearly every step have it.
//
// The scan is a tokenizer, not a parser: it skips comments, strings,
// template literals (with their substitutions) and regular expression
// literals, and recognises an import declaration only where a statement
// starts at the top level of the step, and an import call only with one
// string literal argument. Anything else is left for the engine to judge:
// an import declaration it cannot read is the engine's SyntaxError.

// Import is one import of a package by a step.
type Import struct {
	// Name is the module specifier: "simple-statistics".
	Name string
	// Line is the 1-based line of the import in the step.
	Line int
	// Dynamic is true for import("name") and false for a declaration.
	Dynamic bool
}

// ScanImports returns the imports of a step: its import declarations, and
// its import() calls with a string literal argument, in source order. A
// declaration it cannot read (a syntax error) is not returned; the engine
// reports it when the step compiles.
//
//	imps := jsrt.ScanImports(`import * as ss from "simple-statistics"; return ss.mean([1, 2])`)
//	// [{Name: "simple-statistics", Line: 1}]
func ScanImports(code string) []Import {
	if !strings.Contains(code, "import") {
		return nil
	}
	sites := findImports(code)
	out := make([]Import, len(sites))
	for i, s := range sites {
		out[i] = Import{Name: s.name, Line: 1 + strings.Count(code[:s.start], "\n"), Dynamic: s.dynamic}
	}
	return out
}

// rewriteImports rewrites the imports of the packages in have, as the
// comment above shows, and leaves every other import as it is.
func rewriteImports(code string, have map[string]bool) string {
	if len(have) == 0 || !strings.Contains(code, "import") {
		return code
	}
	sites := findImports(code)
	var b strings.Builder
	last := 0
	for _, s := range sites {
		if !have[s.name] {
			continue
		}
		b.WriteString(code[last:s.start])
		b.WriteString(s.replacement())
		b.WriteString(strings.Repeat("\n", strings.Count(code[s.start:s.end], "\n")))
		last = s.end
	}
	if last == 0 {
		return code
	}
	b.WriteString(code[last:])
	return b.String()
}

// requireFunc and importFunc are the guest functions the rewritten imports
// call (installed by the bootstrap when the run has packages).
const (
	requireFunc = "__sbx_require"
	importFunc  = "__sbx_import"
)

// importSite is one import found in a step: the bytes [start, end) of code.
type importSite struct {
	start, end int
	name       string // the specifier, decoded
	spec       string // the specifier as written, quotes included
	dynamic    bool
	// A declaration's bindings.
	def   string      // default binding
	ns    string      // namespace binding
	named [][2]string // {imported name as written, local name}
}

func (s *importSite) replacement() string {
	call := requireFunc + "(" + s.spec + ")"
	switch {
	case s.dynamic:
		return importFunc
	case s.ns != "" && s.def != "":
		return "const " + s.ns + " = " + call + ", " + s.def + " = " + s.ns + ".default;"
	case s.ns != "":
		return "const " + s.ns + " = " + call + ";"
	case s.def == "" && len(s.named) == 0:
		return call + ";"
	}
	parts := make([]string, 0, 1+len(s.named))
	if s.def != "" {
		parts = append(parts, "default: "+s.def)
	}
	for _, n := range s.named {
		if n[0] == n[1] {
			parts = append(parts, n[0])
		} else {
			parts = append(parts, n[0]+": "+n[1])
		}
	}
	return "const { " + strings.Join(parts, ", ") + " } = " + call + ";"
}

// findImports returns the imports of code in source order.
func findImports(code string) []importSite {
	toks := tokenize(code)
	var sites []importSite
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tokIdent || t.text != "import" {
			continue
		}
		var prev *token
		if i > 0 {
			prev = &toks[i-1]
		}
		if prev != nil && prev.kind == tokPunct && prev.text == "." {
			continue // obj.import
		}
		if i+1 < len(toks) && toks[i+1].kind == tokPunct && toks[i+1].text == "(" {
			// import("name") or import("name", options)
			if i+3 < len(toks) && toks[i+2].kind == tokString && toks[i+2].ok &&
				toks[i+3].kind == tokPunct && (toks[i+3].text == ")" || toks[i+3].text == ",") {
				sites = append(sites, importSite{start: t.start, end: t.end, name: toks[i+2].text, dynamic: true})
			}
			continue
		}
		// A declaration starts a statement at the top level.
		if t.depth != 0 || !(prev == nil || t.nl || prev.kind == tokPunct && (prev.text == ";" || prev.text == "}")) {
			continue
		}
		if s, next, ok := parseImport(code, toks, i); ok {
			sites = append(sites, s)
			i = next - 1
		}
	}
	return sites
}

// parseImport reads the import declaration whose "import" is toks[i]. It
// returns the site and the index of the first token after it.
func parseImport(code string, toks []token, i int) (importSite, int, bool) {
	s := importSite{start: toks[i].start}
	j := i + 1
	at := func(k int) *token {
		if k < len(toks) {
			return &toks[k]
		}
		return &token{kind: tokEOF}
	}
	isPunct := func(k int, p string) bool { t := at(k); return t.kind == tokPunct && t.text == p }
	isWord := func(k int, w string) bool { t := at(k); return t.kind == tokIdent && t.text == w }
	if at(j).kind != tokString { // not import "x"
		var ok bool
		if j, ok = parseBindings(code, toks, j, &s); !ok || !isWord(j, "from") {
			return s, 0, false
		}
		j++
	}
	spec := at(j)
	if spec.kind != tokString || !spec.ok {
		return s, 0, false
	}
	s.name, s.spec = spec.text, code[spec.start:spec.end]
	s.end = spec.end
	j++
	// Import attributes (with { type: "json" }) mean nothing for a package.
	if (isWord(j, "with") || isWord(j, "assert") && !at(j).nl) && isPunct(j+1, "{") {
		k := j + 2
		for k < len(toks) && !isPunct(k, "}") {
			k++
		}
		if k == len(toks) {
			return s, 0, false
		}
		s.end = toks[k].end
		j = k + 1
	}
	if isPunct(j, ";") {
		s.end = toks[j].end
		j++
	} else if t := at(j); t.kind != tokEOF && !t.nl && !(t.kind == tokPunct && t.text == "}") {
		return s, 0, false // something else follows on the same line
	}
	return s, j, true
}

// parseBindings reads the bindings of an import declaration from toks[j]
// into s and returns the index of the token after them ("from").
func parseBindings(code string, toks []token, j int, s *importSite) (int, bool) {
	at := func(k int) *token {
		if k < len(toks) {
			return &toks[k]
		}
		return &token{kind: tokEOF}
	}
	isPunct := func(k int, p string) bool { t := at(k); return t.kind == tokPunct && t.text == p }
	binding := func(k int) (string, bool) {
		t := at(k)
		if t.kind != tokIdent || !isPlainIdent(t.text) {
			return "", false
		}
		return t.text, true
	}
	if name, ok := binding(j); ok {
		s.def = name // import d from "x", import d, ...
		j++
		if !isPunct(j, ",") {
			return j, true
		}
		j++
	}
	switch {
	case isPunct(j, "*"):
		if t := at(j + 1); t.kind != tokIdent || t.text != "as" {
			return j, false
		}
		name, ok := binding(j + 2)
		if !ok {
			return j, false
		}
		s.ns = name
		return j + 3, true
	case isPunct(j, "{"):
		j++
		for !isPunct(j, "}") {
			t := at(j)
			var imported string
			switch {
			case t.kind == tokIdent && !strings.ContainsAny(t.text, "\\#"):
				imported = t.text
			case t.kind == tokString && t.ok:
				imported = code[t.start:t.end]
			default:
				return j, false
			}
			local := imported
			j++
			if u := at(j); u.kind == tokIdent && u.text == "as" {
				name, ok := binding(j + 1)
				if !ok {
					return j, false
				}
				local = name
				j += 2
			} else if t.kind == tokString || isReserved(imported) {
				return j, false // "x" and keywords need a local name
			}
			s.named = append(s.named, [2]string{imported, local})
			if isPunct(j, ",") {
				j++
			} else if !isPunct(j, "}") {
				return j, false
			}
		}
		return j + 1, true
	}
	return j, s.def != ""
}

func isPlainIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' || strings.ContainsAny(s, "\\#") {
		return false
	}
	return !isReserved(s)
}

// isReserved reports whether s is a reserved word, which can be neither a
// binding nor, without "as", an imported name.
func isReserved(s string) bool {
	switch s {
	case "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete",
		"do", "else", "enum", "export", "extends", "false", "finally", "for", "function", "if",
		"import", "in", "instanceof", "new", "null", "return", "super", "switch", "this", "throw",
		"true", "try", "typeof", "var", "void", "while", "with", "await", "yield", "let", "static",
		"implements", "interface", "package", "private", "protected", "public", "arguments", "eval":
		return true
	}
	return false
}

// ---- tokenizer ----

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokIdent
	tokString
	tokNumber
	tokTemplate
	tokRegex
	tokPunct
)

type token struct {
	kind       tokKind
	start, end int
	// text is the identifier or punctuator, or a string's value (when ok:
	// no escapes other than \\, \", \' and line continuations).
	text  string
	ok    bool
	nl    bool // a line break comes between the previous token and this one
	depth int  // brackets open before this token
}

// regexKeywords are the keywords after which a slash starts a regular
// expression rather than a division.
var regexKeywords = map[string]bool{
	"return": true, "typeof": true, "instanceof": true, "in": true, "of": true, "new": true,
	"delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true,
	"yield": true, "await": true,
}

// tokenize splits code into tokens, dropping comments. It never fails: an
// unterminated string, template, comment or regular expression ends at the
// end of the code.
func tokenize(code string) []token {
	var toks []token
	var templates []int // the depth at which each open template substitution started
	depth := 0
	nl := false
	n := len(code)
	regexOK := func() bool {
		if len(toks) == 0 {
			return true
		}
		p := toks[len(toks)-1]
		switch p.kind {
		case tokIdent:
			return regexKeywords[p.text]
		case tokPunct:
			return p.text != ")" && p.text != "]"
		case tokTemplate:
			return !strings.HasSuffix(code[p.start:p.end], "`")
		}
		return false
	}
	emit := func(k tokKind, start, end int, text string, ok bool) {
		toks = append(toks, token{kind: k, start: start, end: end, text: text, ok: ok, nl: nl, depth: depth})
		nl = false
	}
	// template scans a template piece from i (just after ` or }) to its end.
	template := func(start, i int) int {
		for i < n {
			switch code[i] {
			case '\\':
				i += 2
				continue
			case '`':
				emit(tokTemplate, start, i+1, "", false)
				return i + 1
			case '$':
				if i+1 < n && code[i+1] == '{' {
					emit(tokTemplate, start, i+2, "", false)
					templates = append(templates, depth)
					depth++
					return i + 2
				}
			}
			i++
		}
		emit(tokTemplate, start, n, "", false)
		return n
	}
	for i := 0; i < n; {
		c := code[i]
		switch {
		case c == '\n' || c == '\r':
			nl = true
			i++
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			i++
		case c == '/' && i+1 < n && code[i+1] == '/':
			for i < n && code[i] != '\n' && code[i] != '\r' {
				i++
			}
		case c == '/' && i+1 < n && code[i+1] == '*':
			end := strings.Index(code[i+2:], "*/")
			if end < 0 {
				i = n
				break
			}
			if strings.ContainsAny(code[i+2:i+2+end], "\n\r") {
				nl = true
			}
			i += end + 4
		case c == '"' || c == '\'':
			start := i
			i++
			var b strings.Builder
			ok := true
			for i < n && code[i] != c && code[i] != '\n' {
				if code[i] == '\\' && i+1 < n {
					switch e := code[i+1]; e {
					case '\\', '"', '\'':
						b.WriteByte(e)
					case '\n':
					default:
						ok = false
					}
					i += 2
					continue
				}
				b.WriteByte(code[i])
				i++
			}
			if i < n && code[i] == c {
				i++
			} else {
				ok = false
			}
			emit(tokString, start, i, b.String(), ok)
		case c == '`':
			i = template(i, i+1)
		case c == '}' && len(templates) > 0 && templates[len(templates)-1] == depth-1:
			templates = templates[:len(templates)-1]
			depth--
			i = template(i, i+1)
		case c == '/' && regexOK():
			start := i
			i++
			class := false
			for i < n && code[i] != '\n' {
				if code[i] == '\\' {
					i += 2
					continue
				}
				if code[i] == '[' {
					class = true
				} else if code[i] == ']' {
					class = false
				} else if code[i] == '/' && !class {
					break
				}
				i++
			}
			i++
			for i < n && isIdentByte(code[i]) {
				i++
			}
			emit(tokRegex, start, min(i, n), "", false)
		case isIdentByte(c) && !(c >= '0' && c <= '9') || c == '#':
			start := i
			i++
			for i < n && isIdentByte(code[i]) {
				i++
			}
			emit(tokIdent, start, i, code[start:i], false)
		case c >= '0' && c <= '9' || c == '.' && i+1 < n && code[i+1] >= '0' && code[i+1] <= '9':
			start := i
			i++
			for i < n && (isIdentByte(code[i]) || code[i] == '.' ||
				(code[i] == '+' || code[i] == '-') && (code[i-1] == 'e' || code[i-1] == 'E')) {
				i++
			}
			emit(tokNumber, start, i, "", false)
		default:
			start := i
			p := code[i : i+1]
			if strings.HasPrefix(code[i:], "...") {
				p = "..."
			}
			i += len(p)
			switch c {
			case '{', '(', '[':
				emit(tokPunct, start, i, p, false)
				depth++
				continue
			case '}', ')', ']':
				depth = max(0, depth-1)
			}
			emit(tokPunct, start, i, p, false)
		}
	}
	return toks
}

// isIdentByte reports whether c can be part of an identifier. Bytes of
// non-ASCII characters count: a tokenizer that only looks for imports need
// not tell letters from other symbols there.
func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c == '\\' || c >= 0x80 ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
