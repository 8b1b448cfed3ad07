//go:build cgo

package differential

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// install runs npm ci for package.json into a directory of the user's
// cache named by the lock file's contents, once, and returns it.
func install(t *testing.T) string {
	t.Helper()
	lock, err := os.ReadFile("package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "stepbox-test", fmt.Sprintf("differential-%x", hash(string(pkg)+string(lock))))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil {
		return dir
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir)+string(filepath.Separator), "install-")
	if err != nil {
		if err = os.MkdirAll(filepath.Dir(dir), 0o755); err == nil {
			tmp, err = os.MkdirTemp(filepath.Dir(dir), "install-")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	if b, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		t.Fatalf("npm ci (are node and npm installed? ./scripts/test installs them): %v\n%s", err, b)
	}
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		os.RemoveAll(tmp)
		if _, statErr := os.Stat(dir); statErr != nil { // another test binary won the race
			t.Fatal(err)
		}
	}
	return dir
}

// runNode installs the package's libraries (install), runs the script
// file of this directory under Node with in on its stdin and returns what
// it wrote to the file named by its argument. The script is copied into
// the install directory, as Node resolves its imports from where it is.
func runNode(t *testing.T, script string, in []byte) []byte {
	t.Helper()
	dir := install(t)
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSuffix(script, ".mjs")
	scriptFile := filepath.Join(dir, fmt.Sprintf("%s-%x.mjs", name, hash(string(src))))
	if err := os.WriteFile(scriptFile, src, 0o644); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(t.TempDir(), name+".json")
	cmd := exec.Command("node", scriptFile, outFile)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, b)
	}
	b, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// same reports whether a and b are the same JSON values, numbers equal
// to within 1e-9 (relative): both are GLPK 5.0, one compiled to
// WebAssembly, and need not round alike.
func same(a, b any) bool {
	switch a := a.(type) {
	case float64:
		b, ok := b.(float64)
		return ok && math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !same(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !same(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
