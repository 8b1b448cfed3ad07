package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/cli"
)

// writeFile writes text to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBadJSONFiles: a bad --input is VALIDATION (exit 3) with the position
// of the problem; an empty one is an error, not null; the JSON files of
// --data, --plans, --egress and --catalogue say what is wrong in JSON's
// words, never Go's.
func TestBadJSONFiles(t *testing.T) {
	dir := t.TempDir()
	empty := writeFile(t, dir, "empty.json", "  \n")
	badIn := writeFile(t, dir, "in.json", "{\"a\": 1,\n  \"b\": [1 2]}")
	array := writeFile(t, dir, "array.json", `[{"m": 1}]`)
	broken := writeFile(t, dir, "broken.json", `{"m": }`)
	plans := writeFile(t, dir, "plans.json", `{"tiny": {"memoryMb": "64"}}`)
	planArray := writeFile(t, dir, "plan-array.json", `{"tiny": [64]}`)
	plansTrailing := writeFile(t, dir, "plans-trailing.json", `{"tiny": {}} {}`)
	egress := writeFile(t, dir, "egress.json", `{"policy": {"hosts": "api.example.com"}}`)
	egressUnknown := writeFile(t, dir, "egress-unknown.json", `{"policy": {"hosts": ["api.example.com"]}, "secret": []}`)
	catObject := writeFile(t, dir, "cat.json", `{"name": "he"}`)
	catVersion := writeFile(t, dir, "cat-version.json", `[{"name": "he", "version": 1.2, "integrity": "x"}]`)
	for _, tc := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"--input", "{"}, cli.ExitValidation, "stepbox run: --input: not valid JSON at line 1, column 2 (byte 1): unexpected end of JSON input\n"},
		{[]string{"--input", `{"a": tru}`}, cli.ExitValidation, "stepbox run: --input: not valid JSON at line 1, column 10 (byte 9): invalid character '}' in literal true (expecting 'e')\n"},
		{[]string{"--input", "@" + badIn}, cli.ExitValidation, "stepbox run: --input @" + badIn + ": not valid JSON at line 2, column 11 (byte 19): invalid character '2' after array element\n"},
		{[]string{"--input", ""}, cli.ExitValidation, "stepbox run: --input: is empty: give a JSON value, such as null or {}\n"},
		{[]string{"--input", "@" + empty}, cli.ExitValidation, "stepbox run: --input @" + empty + ": is empty: give a JSON value, such as null or {}\n"},
		{[]string{"--data", array}, cli.ExitUsage, "stepbox run: --data " + array + ": must be a JSON object mapping method names to answers, got an array\n"},
		{[]string{"--data", empty}, cli.ExitUsage, "stepbox run: --data " + empty + ": is empty: it must be a JSON object mapping method names to answers\n"},
		{[]string{"--data", broken}, cli.ExitUsage, "stepbox run: --data " + broken + ": not valid JSON at line 1, column 7 (byte 6): invalid character '}' looking for beginning of value\n"},
		{[]string{"--plans", plans}, cli.ExitUsage, "stepbox run: --plans " + plans + `: plan "tiny": at memoryMb: want an integer, got a string` + "\n"},
		{[]string{"--plans", planArray}, cli.ExitUsage, "stepbox run: --plans " + planArray + `: plan "tiny": must be an object of limits, {"memoryMb": 64, ...}, got an array` + "\n"},
		{[]string{"--plans", plansTrailing}, cli.ExitUsage, "stepbox run: --plans " + plansTrailing + ": at line 1, column 14 (byte 13): more after the JSON value\n"},
		{[]string{"--egress", egress}, cli.ExitUsage, "stepbox run: --egress " + egress + ": at policy.hosts: want an array, got a string\n"},
		{[]string{"--egress", egressUnknown}, cli.ExitUsage, "stepbox run: --egress " + egressUnknown + `: unknown field "secret"` + "\n"},
		{[]string{"--catalogue", catObject}, cli.ExitUsage, "stepbox run: --catalogue " + catObject + `: must be a JSON array of {"name", "version", "integrity"}, got an object` + "\n"},
		{[]string{"--catalogue", catVersion}, cli.ExitUsage, "stepbox run: --catalogue " + catVersion + ": at version: want a string, got a number\n"},
	} {
		code, out, errs := stepbox(t, "return input", append([]string{"run", "-"}, tc.args...)...)
		if code != tc.exit || errs != tc.want || out != "" {
			t.Errorf("%q: exit %d (want %d), stdout %q\nstderr %q\nwant   %q", tc.args, code, tc.exit, out, errs, tc.want)
		}
		plain := strings.ReplaceAll(errs, ".json:", ":") // the files' names
		for _, goism := range []string{"Go ", "json:", "map[", "struct", "unmarshal", "RawMessage"} {
			if strings.Contains(plain, goism) {
				t.Errorf("%q: the message speaks Go (%q): %s", tc.args, goism, errs)
			}
		}
	}
	// packages reads its --catalogue the same way.
	if code, _, errs := stepbox(t, "", "packages", "list", "--catalogue", catObject, "--cache", dir); code != cli.ExitUsage || !strings.Contains(errs, "got an object") {
		t.Errorf("packages --catalogue: exit %d, %q", code, errs)
	}
	// Good JSON still runs, whatever its layout.
	if code, out, errs := stepbox(t, "return input.a", "run", "-", "--input", " {\"a\":\n[1, \"é\"]} "); code != 0 || strings.TrimSpace(out) != `[1,"é"]` {
		t.Errorf("good input: exit %d, %q %q", code, out, errs)
	}
}

// TestStepNotUTF8CLI: the engine refuses a step that is not UTF-8, and the
// CLI shows where, by file, line and column, and by byte offset.
func TestStepNotUTF8CLI(t *testing.T) {
	f := writeFile(t, t.TempDir(), "latin1.js", "// caf\xe9\nreturn 'caf\xe9'")
	code, out, errs := stepbox(t, "", "run", f)
	if want := "stepbox: VALIDATION at " + f + ":1:7: the step is not valid UTF-8: byte 0xe9 at offset 6\n"; code != cli.ExitValidation || errs != want || out != "" {
		t.Fatalf("exit %d, stdout %q\nstderr %q\nwant   %q", code, out, errs, want)
	}
	code, _, errs = stepbox(t, "return '\xff'", "run", "-", "--lang", "typescript")
	if want := "stepbox: VALIDATION at step.ts:1:9: the step is not valid UTF-8: byte 0xff at offset 8\n"; code != cli.ExitValidation || errs != want {
		t.Fatalf("stdin: exit %d, stderr %q, want %q", code, errs, want)
	}
}

// TestLang: --lang chooses the language of a step from stdin, and
// overrides a file's extension.
func TestLang(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"const n: number = 6; return n * 7", []string{"-", "--lang", "typescript"}, "42"},
		{"import math\nreturn math.factorial(5)", []string{"-", "--lang", "python"}, "120"},
		{"return [typeof input, 1 + 1]", []string{"-", "--lang", "javascript"}, `["object",2]`},
		{"", []string{writeFile(t, dir, "step.txt", "enum E { A = 3 }\nreturn E.A as number"), "--lang", "typescript"}, "3"},
		{"", []string{writeFile(t, dir, "really-python.js", "return sum([1, 2, 3])"), "--lang", "python"}, "6"},
	} {
		code, out, errs := stepbox(t, tc.stdin, append([]string{"run"}, tc.args...)...)
		if code != 0 || strings.TrimSpace(out) != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %s", tc.args, code, out, errs, tc.want)
		}
	}
	// Without --lang, stdin is JavaScript: TypeScript is a syntax error.
	if code, _, _ := stepbox(t, "const n: number = 6; return n", "run", "-"); code != cli.ExitValidation {
		t.Errorf("stdin without --lang: exit %d, want %d", code, cli.ExitValidation)
	}
	if code, _, errs := stepbox(t, "return 1", "run", "-", "--lang", "ruby"); code != cli.ExitUsage || !strings.Contains(errs, `--lang "ruby": want javascript, typescript or python`) {
		t.Errorf("--lang ruby: exit %d, %q", code, errs)
	}
}

// TestTimeZoneAndLocale: --tz and --locale set the step's local time and
// default locale, in both languages; without them a step is in UTC,
// whatever this machine's zone; a zone or tag that is not one is
// VALIDATION (3).
func TestTimeZoneAndLocale(t *testing.T) {
	const js = `return [new Date(Date.UTC(2026, 6, 1, 12)).getHours(), Intl.DateTimeFormat().resolvedOptions().timeZone, new Intl.PluralRules().resolvedOptions().locale]`
	const py = "import time\nreturn time.strftime('%H %Z', time.localtime(1782907200))"
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{js, []string{"-"}, `[12,"UTC","en-US"]`},
		{js, []string{"-", "--tz", "Europe/Paris", "--locale", "de-DE"}, `[14,"Europe/Paris","de-DE"]`},
		{js, []string{"-", "--tz", "America/Los_Angeles"}, `[5,"America/Los_Angeles","en-US"]`},
		{py, []string{"-", "--lang", "python"}, `"12 UTC"`},
		{py, []string{"-", "--lang", "python", "--tz", "Europe/Paris"}, `"14 CEST"`},
	} {
		code, out, errs := stepbox(t, tc.stdin, append([]string{"run"}, tc.args...)...)
		if code != 0 || strings.TrimSpace(out) != tc.want {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %s", tc.args, code, out, errs, tc.want)
		}
	}
	for _, tc := range []struct{ flag, value, want string }{
		{"--tz", "Europe/Atlantis", `timeZone: "Europe/Atlantis" is not an IANA time zone name`},
		{"--locale", "english please", `locale: "english please" is not a well-formed BCP 47 language tag`},
	} {
		if code, _, errs := stepbox(t, "return 1", "run", "-", tc.flag, tc.value); code != cli.ExitValidation || !strings.Contains(errs, tc.want) {
			t.Errorf("%s %s: exit %d, %q; want %d and %q", tc.flag, tc.value, code, errs, cli.ExitValidation, tc.want)
		}
	}
}

// TestStackNamesTheFile: a step's frames and its error position carry the
// file's name, in each language; from stdin they carry the default.
func TestStackNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	js := writeFile(t, dir, "report.js", "function total(rows) {\n  throw new Error('no rows')\n}\nreturn total([])")
	py := writeFile(t, dir, "report.py", "def total(rows):\n    raise ValueError('no rows')\nreturn total([])")
	ts := writeFile(t, dir, "report.ts", "type Row = {n: number}\nfunction total(rows: Row[]): number {\n  throw new Error('no rows')\n}\nreturn total([])")
	for _, tc := range []struct {
		file string
		want []string
	}{
		{js, []string{"stepbox: RUNTIME at " + js + ":2:", "at total (" + js + ":2:", "(" + js + ":4:"}},
		{ts, []string{"stepbox: RUNTIME at " + ts + ":3:", "at total (" + ts + ":3:", "(" + ts + ":5:"}},
		{py, []string{"stepbox: RUNTIME at " + py + ":2:", `File "` + py + `", line 2, in total`, `File "` + py + `", line 3`}},
	} {
		code, _, errs := stepbox(t, "", "run", tc.file)
		if code != cli.ExitRuntime {
			t.Fatalf("%s: exit %d: %s", tc.file, code, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr %q lacks %q", tc.file, errs, w)
			}
		}
		if strings.Contains(errs, "step.js") || strings.Contains(errs, "step.ts") || strings.Contains(errs, "step.py") {
			t.Errorf("%s: stderr names the runtime's file: %s", tc.file, errs)
		}
	}
	if _, _, errs := stepbox(t, "throw new Error('x')", "run", "-", "--lang", "typescript"); !strings.Contains(errs, "(step.ts:1:") {
		t.Errorf("stdin: %q", errs)
	}
}

// TestMessagesTeach: the errors of a run without fetch or without a module
// say how to get them.
func TestMessagesTeach(t *testing.T) {
	code, out, errs := stepbox(t, `try { await fetch("http://127.0.0.1:1/") } catch (e) { return e.message }`, "run", "-")
	if code != 0 || !strings.Contains(out, "stepbox run --egress FILE") || !strings.Contains(out, "the server config's egress key") {
		t.Errorf("fetch off: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, m := range []string{"duckdb", "glpk"} {
		code, _, errs := stepbox(t, "return "+m+".toString()", "run", "-")
		if code != cli.ExitRuntime || !strings.Contains(errs, "ReferenceError: '"+m+"' is not defined") || !strings.Contains(errs, "--modules "+m) {
			t.Errorf("%s without --modules: exit %d, %q", m, code, errs)
		}
	}
	code, _, errs = stepbox(t, "db = await duckdb.open()", "run", "-", "--lang", "python")
	if code != cli.ExitRuntime || !strings.Contains(errs, "NameError: name 'duckdb' is not defined") || !strings.Contains(errs, "--modules duckdb") {
		t.Errorf("Python duckdb without --modules: exit %d, %q", code, errs)
	}
}
