package typescript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCompile feeds arbitrary sources to Compile, which must not panic,
// must return a *CompileError or an Output whose map parses, and must
// never leave a placeholder behind.
func FuzzCompile(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.ts")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("await 0;\nif (x) return\nelse return;\nreturn /* a\n */ 1")
	f.Add("const r = /return/; x.return; `${ `return` }`; return 1")
	f.Fuzz(func(t *testing.T, src string) {
		out, err := Compile(src)
		if err != nil {
			if _, ok := err.(*CompileError); !ok {
				t.Fatalf("Compile(%q): %v", src, err)
			}
			return
		}
		if _, err := ParseSourceMap(out.Map); err != nil {
			t.Fatalf("Compile(%q): map: %v", src, err)
		}
		if strings.Contains(out.JS, "$R$") && !strings.Contains(src, "$R$") {
			t.Fatalf("Compile(%q) left a placeholder:\n%s", src, out.JS)
		}
	})
}
