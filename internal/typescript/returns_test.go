package typescript

import (
	"strings"
	"testing"
)

func TestClassifyReturn(t *testing.T) {
	for _, tt := range []struct {
		after string // what follows "return"
		want  returnKind
	}{
		{" x;", returnValue},
		{"(x)", returnValue},
		{`"s"`, returnValue},
		{" /re/.test(s)", returnValue},
		{" /* c */ x", returnValue},
		{";", returnBareSemi},
		{"  ;", returnBareSemi},
		{" /* c */;", returnBareSemi},
		{"", returnBare},
		{"\nx", returnBare},
		{"\r\nx", returnBare},
		{" \u2028x", returnBare},
		{" }", returnBare},
		{" // c\nx", returnBare},
		{" /* c\n */ x", returnBare},
		{" /* unterminated", returnBare},
		{"\u00a0\ufeffx", returnValue},
	} {
		src := "return" + tt.after
		if got := classifyReturn(src, len("return")); got != tt.want {
			t.Errorf("classifyReturn(%q) = %d, want %d", src, got, tt.want)
		}
	}
}

// TestGuessReturns checks which "return" words the scan takes for
// keywords. Each "return" in the sources below that is a keyword is
// followed by " 1" and no other is.
func TestGuessReturns(t *testing.T) {
	for _, src := range []string{
		"return 1",
		"const f = () => { return 1 };\nreturn 1;",
		`const s = "return"; const t = 'return \' return'; return 1`,
		"// return\n/* return */ return 1",
		"const t = `return ${ `return ${ {a: \"return\"}.a } return` } return`; return 1",
		"const t = `${ (() => { return 1 })() }`;",
		"const r = /return/g; if (r.test(x)) return 1",
		"const r = /[/]return/; return 1",
		"const o = { return: 2 }; o.return; o?.return; class A { #return = 3 }; return 1",
		"type T = { return: string }; return 1",
		"const d = a / b / c; return 1",
		"x = y) / 2; return 1",
		"const returned = 1, doReturn = 2; return 1",
	} {
		text := newSourceText(src)
		got := guessReturns(src, text)
		if want := strings.Count(src, "return 1"); len(got) != want {
			t.Errorf("%q: %d guesses, want %d: %+v", src, len(got), want, got)
			continue
		}
		for _, r := range got {
			if !strings.HasPrefix(src[r.offset:], "return 1") {
				t.Errorf("%q: guess at %d is %q", src, r.offset, src[r.offset:])
			}
		}
	}
	// Returns in namespaces and static blocks are left to esbuild; the one
	// after each is guessed.
	for _, src := range []string{
		"namespace N { export function f() { return 2 } }\nreturn 1",
		"namespace A.B { return 2 }\nreturn 1",
		"declare module 'x' { function f(): void }\nfunction g() { return 1 }",
		"class A { static { return 2 } static m() { return 1 } static x = { y: 1 } }\nreturn 1",
		"const module = { namespace: 1 }; if (module.namespace) { return 1 }",
	} {
		got := guessReturns(src, newSourceText(src))
		if want := strings.Count(src, "return 1"); len(got) != want {
			t.Errorf("%q: %d guesses, want %d: %+v", src, len(got), want, got)
			continue
		}
		for _, r := range got {
			if !strings.HasPrefix(src[r.offset:], "return 1") {
				t.Errorf("%q: guess at %d is %q", src, r.offset, src[r.offset:])
			}
		}
	}
}

// TestWrongGuesses runs steps where the scan guesses wrong, in both
// directions; Compile must notice and still produce the right code.
func TestWrongGuesses(t *testing.T) {
	for _, tt := range []struct {
		name, src, want string
	}{
		{
			// After ")" the scan takes "/" for a division and the regular
			// expression's "return" for a keyword.
			name: "guess inside a regular expression",
			src:  "const s = await Promise.resolve(\"a return b\");\nlet n = 0;\nif (s) /return/.test(s) && n++;\nreturn n;",
			want: "1",
		},
		{
			// After "}" the scan takes "/" for a regular expression and
			// misses the return.
			name: "missed return",
			src:  "await 0;\nconst o: any = {} / 2; return String(o);",
			want: `"NaN"`,
		},
		{
			name: "method named return in an interface",
			src:  "interface It { return(): void }\nconst v = await Promise.resolve(4);\nreturn v;",
			want: "4",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := mustCompile(t, tt.src)
			res := runJS(t, "", out.JS)
			if res.JSON != tt.want {
				t.Errorf("got %s %s, want %s\nJS:\n%s", res.JSON, res.Error, tt.want, out.JS)
			}
		})
	}
}

// TestReturnsInsideFunctionsSurviveGuessing checks that the returns of
// nested functions, which the guessing pass also replaces, come back.
func TestReturnsInsideFunctionsSurviveGuessing(t *testing.T) {
	src := `function f(x: number): number {
  if (x > 1) return x * f(x - 1);
  return 1;
}
const g = async (): Promise<void> => { return; };
class C { m() { return
  5 } get v() { return 6; } }
const v = await Promise.resolve(f(5));
return [v, await g(), new C().m(), new C().v];`
	out := mustCompile(t, src)
	if strings.Contains(out.JS, "throw") || strings.Contains(out.JS, "$R$") {
		t.Errorf("placeholders left in the output:\n%s", out.JS)
	}
	if got := strings.Count(out.JS, "return"); got != 6 {
		t.Errorf("%d returns in the output, want 6:\n%s", got, out.JS)
	}
	if res := runJS(t, "", out.JS); res.JSON != "[120,null,null,6]" {
		t.Errorf("got %s %s", res.JSON, res.Error)
	}
}
