// Package docs checks that the Go code in the repository's Markdown files
// is code the test suite compiles and runs.
//
// Every ```go block of a Markdown file is preceded by a marker naming its
// source:
//
//	<!-- example: sandbox/readme_example_test.go#ExampleEngine -->
//	<!-- example: examples/gohost/main.go -->
//
// FILE#FUNC means the body of the function FUNC in FILE (a path from the
// repository's root), without its braces, its first level of indentation
// and its trailing "// Output:" comment; FILE alone means the whole file.
// The block must be that text byte for byte, so editing either without the
// other fails the suite; `go test ./internal/docs -update` rewrites every
// marked block from its source. The functions are Example functions (go test
// compiles them and checks their output) or the main of a program under
// examples/, which internal/cli's tests build and run.
package docs

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite every marked Go block of the Markdown files from its source")

// root is the repository's root, from this package's directory.
const root = "../.."

// marker is the comment that names a block's source.
var marker = regexp.MustCompile(`^<!-- example: (\S+?)(?:#(\w+))? -->$`)

// block is one ```go block of a Markdown file.
type block struct {
	file string // path from the root
	line int    // of the opening fence, 1-based
	end  int    // of the closing fence, 1-based
	src  string // the marker's FILE, "" without a marker
	fn   string // the marker's FUNC, "" for a whole file
	text string // the block's lines, each ending in "\n"
}

func TestGoBlocksAreCompiledCode(t *testing.T) {
	if *update {
		updateBlocks(t)
	}
	blocks := goBlocks(t)
	if len(blocks) < 6 {
		t.Fatalf("found %d Go blocks in the Markdown files, want at least the READMEs' 6: %v", len(blocks), blocks)
	}
	for _, b := range blocks {
		name := fmt.Sprintf("%s:%d", b.file, b.line)
		if b.src == "" {
			t.Errorf("%s: a ```go block without a marker: precede it with <!-- example: FILE#FUNC --> naming the Example it is, or <!-- example: FILE --> for a whole file (see internal/docs)", name)
			continue
		}
		want, err := source(b.src, b.fn)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if b.text != want {
			t.Errorf("%s is not %s: the block and its source differ (copy the source into the block)\n%s", name, b.ref(), diff(b.text, want))
		}
	}
}

// TestMarkers checks the parser the test relies on, on a document made up
// for it: a marked block is read whole, an unmarked one has no source.
func TestMarkers(t *testing.T) {
	md := "text\n<!-- example: a/b_test.go#ExampleX -->\n```go\nx := 1\n\n\ty()\n```\n\n```go\nz()\n```\n<!-- example: c.go -->\n\n```js\n1\n```\n"
	got := parseBlocks("t.md", md)
	if len(got) != 2 {
		t.Fatalf("blocks %+v", got)
	}
	if b := got[0]; b.src != "a/b_test.go" || b.fn != "ExampleX" || b.text != "x := 1\n\n\ty()\n" || b.line != 3 || b.end != 7 {
		t.Errorf("first block %+v", b)
	}
	if b := got[1]; b.src != "" || b.text != "z()\n" {
		t.Errorf("second block %+v", b)
	}
}

func (b block) ref() string {
	if b.fn == "" {
		return b.src
	}
	return b.src + "#" + b.fn
}

// goBlocks returns the ```go blocks of every Markdown file of the
// repository.
func goBlocks(t *testing.T) []block {
	t.Helper()
	var out []block
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".cache", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, parseBlocks(filepath.ToSlash(rel), string(b))...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// parseBlocks returns the ```go blocks of the Markdown text md, each with
// the marker on the last non-blank line before it, if any.
func parseBlocks(file, md string) []block {
	var out []block
	lines := strings.SplitAfter(md, "\n")
	prev := "" // the last non-blank line outside blocks
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], "\r\n")
		if strings.HasPrefix(l, "```") {
			fence := l
			var body strings.Builder
			j := i + 1
			for ; j < len(lines) && strings.TrimRight(lines[j], "\r\n") != "```"; j++ {
				body.WriteString(lines[j])
			}
			if strings.TrimSpace(strings.TrimPrefix(fence, "```")) == "go" {
				b := block{file: file, line: i + 1, end: j + 1, text: body.String()}
				if m := marker.FindStringSubmatch(prev); m != nil {
					b.src, b.fn = m[1], m[2]
				}
				out = append(out, b)
			}
			i, prev = j, ""
			continue
		}
		if strings.TrimSpace(l) != "" {
			prev = strings.TrimSpace(l)
		}
	}
	return out
}

// updateBlocks rewrites every marked block of the Markdown files from its
// source.
func updateBlocks(t *testing.T) {
	t.Helper()
	byFile := map[string][]block{}
	for _, b := range goBlocks(t) {
		byFile[b.file] = append(byFile[b.file], b)
	}
	for file, blocks := range byFile {
		p := filepath.Join(root, file)
		old, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(old), "\n")
		var out strings.Builder
		next := 0 // the first line not yet written, 0-based
		for _, b := range blocks {
			if b.src == "" {
				continue
			}
			text, err := source(b.src, b.fn)
			if err != nil {
				t.Errorf("%s:%d: %v", file, b.line, err)
				continue
			}
			out.WriteString(strings.Join(lines[next:b.line], "")) // through the opening fence
			out.WriteString(text)
			next = b.end - 1 // the closing fence
		}
		out.WriteString(strings.Join(lines[next:], ""))
		if out.String() != string(old) {
			if err := os.WriteFile(p, []byte(out.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("updated %s", file)
		}
	}
}

// source returns the text a block marked FILE#FUNC (fn == "": FILE) must
// be.
func source(file, fn string) (string, error) {
	if filepath.IsAbs(file) || strings.Contains(file, "..") {
		return "", fmt.Errorf("marker names %q: want a path from the repository's root", file)
	}
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return "", fmt.Errorf("marker names a file that cannot be read: %w", err)
	}
	if fn == "" {
		return string(b), nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, b, parser.ParseComments)
	if err != nil {
		return "", fmt.Errorf("marker names %s: %w", file, err)
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn || fd.Recv != nil || fd.Body == nil {
			continue
		}
		start := fset.Position(fd.Body.Lbrace).Offset + 1
		end := fset.Position(fd.Body.Rbrace).Offset
		// An Example's output comment is the last comment of its body, a
		// group of its own: go test runs an Example only with one.
		output := false
		for _, cg := range f.Comments {
			if cg.Pos() > fd.Body.Lbrace && cg.End() < fd.Body.Rbrace {
				if c := cg.List[0].Text; strings.HasPrefix(c, "// Output:") || strings.HasPrefix(c, "// Unordered output:") {
					end, output = fset.Position(cg.Pos()).Offset, true
				}
			}
		}
		switch {
		case strings.HasPrefix(fn, "Example") && strings.HasSuffix(file, "_test.go"):
			if !output {
				return "", fmt.Errorf("marker names %s#%s, which has no // Output: comment of its own (a comment group that starts with it): go test would compile it without running it", file, fn)
			}
		case fn == "main" && strings.HasPrefix(file, "examples/"):
		default:
			return "", fmt.Errorf("marker names %s#%s: want an Example function of a _test.go file, or the main of a program under examples/", file, fn)
		}
		return dedent(string(b[start:end])), nil
	}
	return "", fmt.Errorf("marker names %s#%s: %s has no function %s", file, fn, file, fn)
}

// dedent returns a function body's lines without their first tab, from
// its first line to its last non-blank one, each ending in "\n".
func dedent(body string) string {
	lines := strings.Split(body, "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	var out bytes.Buffer
	for _, l := range lines {
		out.WriteString(strings.TrimPrefix(l, "\t"))
		out.WriteByte('\n')
	}
	return out.String()
}

// diff names the first line where got and want differ.
func diff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d of the block:\n\tblock:  %q\n\tsource: %q", i+1, gl, wl)
		}
	}
	return ""
}
