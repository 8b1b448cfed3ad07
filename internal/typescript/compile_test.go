package typescript

import (
	"strings"
	"testing"
)

// TestImportsHoisted checks that imports move to the start of the output,
// after "use strict", with their mappings.
func TestImportsHoisted(t *testing.T) {
	src := "const a: number = await Promise.resolve(1);\nimport { mean } from \"simple-statistics\";\nimport type { T } from \"./t\";\nreturn mean([a]) as T;"
	out := mustCompile(t, src)
	lines := strings.Split(out.JS, "\n")
	want := []string{`"use strict";`, `import { mean } from "simple-statistics";`, `const a = await Promise.resolve(1);`, `return mean([a]);`}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Fatalf("JS line %d = %q, want %q\nJS:\n%s", i+1, lines[i], w, out.JS)
		}
	}
	m, err := ParseSourceMap(out.Map)
	if err != nil {
		t.Fatal(err)
	}
	for jsLine, tsLine := range map[int]int{2: 2, 3: 1, 4: 4} {
		if got, _, ok := m.Original(jsLine, 1); !ok || got != tsLine {
			t.Errorf("JS line %d maps to TS line %d (ok %v), want %d", jsLine, got, ok, tsLine)
		}
	}
}

// TestNoPlaceholdersLeft checks that every "return" of the testdata steps
// is back in the output and no placeholder is left.
func TestNoPlaceholdersLeft(t *testing.T) {
	for _, name := range []string{"top_level", "classes", "generics", "decorators", "namespaces", "using"} {
		src := readTestdata(t, name+".ts")
		out := mustCompile(t, src)
		if strings.Contains(out.JS, "$R$") {
			t.Errorf("%s: placeholder left:\n%s", name, out.JS)
		}
		// Every return keyword of the source is in the output; helpers may
		// add more.
		if got, want := strings.Count(out.JS, "return"), len(guessReturns(src, newSourceText(src))); got < want {
			t.Errorf("%s: %d returns in the output, want at least %d:\n%s", name, got, want, out.JS)
		}
	}
}

// TestGuessedAndCheckedAgree compiles steps both ways, with guessed
// returns and with the returns esbuild reports, and expects the same
// output.
func TestGuessedAndCheckedAgree(t *testing.T) {
	for _, name := range []string{"top_level", "classes", "generics", "decorators", "using", "optional_chaining", "async_arrows", "enums"} {
		src := readTestdata(t, name+".ts")
		guessed := mustCompile(t, src)
		if guessReturns(src, newSourceText(src)) == nil {
			t.Errorf("%s: no guesses", name)
		}
		checked, err := compileChecked(src, newSourceText(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if guessed.JS != checked.JS || guessed.Map != checked.Map {
			t.Errorf("%s: the two ways differ:\n%s\nversus\n%s", name, guessed.JS, checked.JS)
		}
	}
}
