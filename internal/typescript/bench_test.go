package typescript

import (
	"fmt"
	"strings"
	"testing"
)

// genStep generates a TypeScript step of about size bytes: interfaces,
// enums, a namespace, generic functions and classes, awaits and returns,
// with a final return of a checksum that runStep can verify.
func genStep(size int) (src string, want int) {
	var b strings.Builder
	b.WriteString("declare const input: { factor?: number };\nconst factor = input?.factor ?? 1;\nlet total = 0;\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `
interface Item%[1]d<T> { id: number; value: T; tags?: string[] }
enum Level%[1]d { Low = %[1]d, High = %[1]d + 1 }
namespace Util%[1]d {
  export function scale<T extends number>(x: T, k = factor): number { return x * k; }
}
abstract class Base%[1]d { abstract get(): number }
class Impl%[1]d extends Base%[1]d {
  constructor(private readonly item: Item%[1]d<number>) { super(); }
  get(): number { return Util%[1]d.scale(this.item.value) + Level%[1]d.High; }
}
const items%[1]d: Item%[1]d<number>[] = [{ id: 1, value: %[1]d }, { id: 2, value: 2, tags: ["x"] }];
total += (await Promise.resolve(items%[1]d)).map((it) => new Impl%[1]d(it).get()).reduce((a, c) => a + c, 0);
if (total < 0) return -1;
`, i)
		want += (2*i + 1) + (2 + i + 1) // value + Level.High for both items
	}
	b.WriteString("return total;\n")
	return b.String(), want
}

func TestCompileLarge(t *testing.T) {
	src, want := genStep(100 << 10)
	out := mustCompile(t, src)
	res := runJS(t, "globalThis.input = {}", out.JS)
	if res.JSON != fmt.Sprint(want) {
		t.Errorf("100 KB step returned %s %s, want %d", res.JSON, res.Error, want)
	}
	if _, err := ParseSourceMap(out.Map); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes of TypeScript gave %d bytes of JavaScript and a %d byte map", len(src), len(out.JS), len(out.Map))
}

func BenchmarkCompile1KB(b *testing.B)   { benchmarkCompile(b, 1<<10) }
func BenchmarkCompile100KB(b *testing.B) { benchmarkCompile(b, 100<<10) }

func benchmarkCompile(b *testing.B, size int) {
	src, _ := genStep(size)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileCached is a cache hit.
func BenchmarkCompileCached(b *testing.B) {
	src, _ := genStep(1 << 10)
	c := NewCache(0)
	for b.Loop() {
		if _, err := c.Compile(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRewriteStack maps a five-frame stack through the map of a
// 100 KB step, parsing the map once.
func BenchmarkRewriteStack(b *testing.B) {
	src, _ := genStep(100 << 10)
	out, err := Compile(src)
	if err != nil {
		b.Fatal(err)
	}
	m, err := ParseSourceMap(out.Map)
	if err != nil {
		b.Fatal(err)
	}
	stack := strings.Repeat("    at get (<eval>:1200:17)\n", 5)
	for b.Loop() {
		m.RewriteStackFile(stack, QuickJSEvalFileName, 18)
	}
}

// BenchmarkParseSourceMap parses the map of a 100 KB step.
func BenchmarkParseSourceMap(b *testing.B) {
	src, _ := genStep(100 << 10)
	out, err := Compile(src)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out.Map)))
	for b.Loop() {
		if _, err := ParseSourceMap(out.Map); err != nil {
			b.Fatal(err)
		}
	}
}
