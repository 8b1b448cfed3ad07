package server_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
)

// The playground's static side: what it serves, with which headers, and
// that its HTML holds nothing the Content-Security-Policy would block.
func TestPlaygroundServed(t *testing.T) {
	ts := start(t, server.Config{})
	for _, c := range []struct{ path, ctype, contains string }{
		{"/", "text/html; charset=utf-8", `<script src="playground/playground.js" defer></script>`},
		{"/playground/playground.js", "text/javascript; charset=utf-8", "stepbox.v1.StepboxService/Run"},
		{"/playground/playground.css", "text/css; charset=utf-8", "--mono"},
		{"/playground/icon.svg", "image/svg+xml", "<svg"},
		{"/playground/config.json", "application/json", `"auth":"none"`},
	} {
		resp, err := ts.h1.Get(ts.url + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.ctype || !strings.Contains(string(b), c.contains) {
			t.Errorf("GET %s: %d %q, want 200 %q with %q:\n%.300s", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), c.ctype, c.contains, b)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: Content-Security-Policy %q lacks %q", c.path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: Content-Security-Policy %q allows something unsafe", c.path, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: headers %v", c.path, resp.Header)
		}
		if c.path == "/" {
			// Nothing inline: no script body, no style attribute or element,
			// no event handler attribute, nothing from another origin.
			for _, re := range []string{`<script[^>]*>[^<]`, `<style`, `\sstyle=`, `\son[a-z]+=`, `(src|href)="(https?:)?//`} {
				if m := regexp.MustCompile(re).FindString(string(b)); m != "" {
					t.Errorf("index.html has %q, which the CSP forbids or which needs the network", m)
				}
			}
			etag := resp.Header.Get("ETag")
			req, _ := http.NewRequest("GET", ts.url+"/", nil)
			req.Header.Set("If-None-Match", etag)
			resp, err := ts.h1.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if etag == "" || resp.StatusCode != http.StatusNotModified {
				t.Errorf("GET / with If-None-Match %s: %d, want 304", etag, resp.StatusCode)
			}
		}
	}
	// Only GET (and HEAD); nothing else is served at /.
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"POST", "/", http.StatusMethodNotAllowed},
		{"PUT", "/playground/playground.js", http.StatusMethodNotAllowed},
		{"HEAD", "/", http.StatusOK},
		{"GET", "/playground/", http.StatusNotFound},
		{"GET", "/playground/nope.js", http.StatusNotFound},
		{"GET", "/playground/../server.go", http.StatusNotFound},
		{"GET", "/index.html", http.StatusNotFound},
	} {
		req, _ := http.NewRequest(c.method, ts.url+c.path, nil)
		resp, err := ts.h1.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
	}
	// The API is unchanged beside it.
	if status, _ := ts.get(t, "/healthz"); status != 200 {
		t.Errorf("/healthz: %d", status)
	}
	if status, resp, raw := ts.post(t, runPath, `{"code": "return 1 + 1"}`); status != 200 || jsonOf(dig(resp, "result", "value")) != "2" {
		t.Errorf("Run: %d %s", status, raw)
	}
}

// The playground end to end in headless Chromium: the page loads under its
// CSP, runs JavaScript, TypeScript and Python steps through the real
// server, and shows the result, the console lines, the data requests, the
// errors and the stats in the DOM.
func TestPlaygroundBrowser(t *testing.T) {
	b := launchChromium(t)
	ts := start(t, server.Config{Plans: slowLimits})

	b.open(t, ts.url+"/")
	if got := b.evalString(t, `document.getElementById("auth").hidden ? "hidden" : "shown"`); got != "hidden" {
		t.Errorf("API key field %s on a server without auth", got)
	}

	t.Run("javascript", func(t *testing.T) {
		out := b.runStep(t, step{
			language: "javascript",
			code: "reportStatus({stage: \"start\"});\n" +
				"const u = await dataProxy.request(\"user\", {id: input.id});\n" +
				"console.log(\"hello\", u.name);\n" +
				"console.warn(\"careful\", [1, 2]);\n" +
				"let missing;\ntry { await dataProxy.request(\"orders\") } catch (e) { missing = e.message }\n" +
				"return {greeting: \"hi \" + u.name, n: 0.1, missing: missing.length > 0};",
			input: `{"id": 7}`,
			data:  `{"user": {"name": "Ada"}}`,
		})
		out.wantState(t, "ok")
		// A Value's object comes sorted by key (see "Precision" in the .proto).
		if want := "{\n  \"greeting\": \"hi Ada\",\n  \"missing\": true,\n  \"n\": 0.1\n}"; out.Result != want {
			t.Errorf("result %q, want %q", out.Result, want)
		}
		out.wantEvents(t,
			`status {"stage": "start"}`,
			`data request("user", {"id": 7})  → answered from the fixtures`,
			`console.log hello Ada`,
			`console.warn careful [ 1, 2 ]`,
			`data request("orders", null)  → refused: no fixture for this method`,
		)
		if out.Stats["dataRequests"] != "2" || out.Stats["consoleEvents"] != "2" || out.Stats["statusEvents"] != "1" || out.Stats["wallMs"] == "" {
			t.Errorf("stats %v", out.Stats)
		}
		// JavaScript's heap is measured: a figure, never "not measured".
		if heap, err := strconv.ParseFloat(out.Stats["heapMb"], 64); err != nil || heap <= 0 || out.Stats["rssMb"] != "" {
			t.Errorf("JavaScript's heap %q (rss row %q), want a figure above 0 and no RSS row", out.Stats["heapMb"], out.Stats["rssMb"])
		}
	})

	t.Run("javascript error", func(t *testing.T) {
		out := b.runStep(t, step{language: "javascript", code: "const a = 1;\nnull.boom;\nreturn a;"})
		out.wantState(t, "failed")
		for _, want := range []string{"codeRUNTIME", "TypeError", "positionline 2, column"} {
			if !strings.Contains(out.Error, want) {
				t.Errorf("error %q lacks %q", out.Error, want)
			}
		}
		if out.Result != "" || out.Stats["wallMs"] == "" {
			t.Errorf("result %q, stats %v", out.Result, out.Stats)
		}
		out.wantErrorLines(t, "2")
		// The band is over line 2 of the code, where the editor shows it.
		if got := b.evalString(t, `(() => {
			const band = document.querySelector("#error-marks div").getBoundingClientRect();
			const code = document.getElementById("code");
			const lh = parseFloat(getComputedStyle(code).lineHeight);
			const top = code.getBoundingClientRect().top + parseFloat(getComputedStyle(code).paddingTop) - code.scrollTop + lh;
			return Math.abs(band.top - top) < 1 && Math.abs(band.height - lh) < 1 ? "over line 2" : "band at " + band.top + "+" + band.height + ", line 2 at " + top + "+" + lh;
		})()`); got != "over line 2" {
			t.Errorf("the band: %s", got)
		}
		// The next run clears the mark, whatever its outcome.
		out = b.runStep(t, step{language: "javascript", code: "return 1"})
		out.wantState(t, "ok")
		out.wantErrorLines(t, "")
	})

	t.Run("javascript syntax error", func(t *testing.T) {
		out := b.runStep(t, step{language: "javascript", code: "const a = 1;\nconst b = 2;\nconst c = ;\nreturn a;"})
		out.wantState(t, "failed")
		for _, want := range []string{"codeVALIDATION", "positionline 3, column"} {
			if !strings.Contains(out.Error, want) {
				t.Errorf("error %q lacks %q", out.Error, want)
			}
		}
		out.wantErrorLines(t, "3")
		// A runtime throw after it moves the mark to its own line.
		out = b.runStep(t, step{language: "javascript", code: "const a = 1;\n\n\n\nthrow new Error(\"boom\");"})
		out.wantState(t, "failed")
		if !strings.Contains(out.Error, "codeRUNTIME") {
			t.Errorf("error %q", out.Error)
		}
		out.wantErrorLines(t, "5")
	})

	t.Run("typescript", func(t *testing.T) {
		out := b.runStep(t, step{
			language: "typescript",
			code: "interface Point { x: number; y: number }\n" +
				"const p: Point = {x: input.x, y: 2};\n" +
				"console.info(\"point\", p);\n" +
				"return p.x * p.y as number;",
			input: `{"x": 21}`,
		})
		out.wantState(t, "ok")
		if out.Result != "42" {
			t.Errorf("result %q", out.Result)
		}
		out.wantEvents(t, `console.info point { x: 21, y: 2 }`)
	})

	t.Run("typescript error position", func(t *testing.T) {
		out := b.runStep(t, step{language: "typescript", code: "type N = number;\nconst n: N = 1;\n\nthrow new Error(\"boom \" + n);"})
		out.wantState(t, "failed")
		for _, want := range []string{"codeRUNTIME", "Error: boom 1", "positionline 4, column", "step.ts:4:"} {
			if !strings.Contains(out.Error, want) {
				t.Errorf("error %q lacks %q", out.Error, want)
			}
		}
		// The line of the .ts source, not of the JavaScript it became.
		out.wantErrorLines(t, "4")
	})

	// A step that does not parse fails as a run, whatever its language:
	// the same outcome, the code, the message once and the position once.
	t.Run("typescript compile error and javascript syntax error", func(t *testing.T) {
		ts := b.runStep(t, step{language: "typescript", code: "const ok = 1;\nconst x: = 2;"})
		js := b.runStep(t, step{language: "javascript", code: "const ok = 1;\nconst x = ;"})
		for _, out := range []pageRun{ts, js} {
			out.wantState(t, "failed")
			if !strings.HasPrefix(out.Outcome, "✗ VALIDATION") {
				t.Errorf("outcome %q, want ✗ VALIDATION", out.Outcome)
			}
			for _, want := range []string{"codeVALIDATION", "positionline 2, column"} {
				if !strings.Contains(out.Error, want) {
					t.Errorf("error %q lacks %q", out.Error, want)
				}
			}
			if strings.Contains(out.Error, "message2:") || strings.Contains(out.Error, "(line") {
				t.Errorf("error %q repeats the position", out.Error)
			}
		}
		if !strings.Contains(ts.Error, "diagnostics2:") {
			t.Errorf("error %q lacks the diagnostics", ts.Error)
		}
		ts.wantErrorLines(t, "2")
		js.wantErrorLines(t, "2")
	})

	t.Run("python", func(t *testing.T) {
		out := b.runStep(t, step{
			language: "python",
			code: "user = await data_proxy.request(\"user\", {\"id\": input[\"id\"]})\nprint(\"py\", user[\"name\"])\n" +
				"return {\"double\": input[\"id\"] * 2, \"big\": await data_proxy.request(\"big\")}",
			input: `{"id": 21}`,
			// Python keeps integers beyond 2^53: the page must send the
			// fixture and show the result without rounding them.
			data: `{"user": {"name": "Ada"}, "big": [12345678901234567890123, 0.1]}`,
		})
		if strings.Contains(out.Outcome, "HTTP 501") && !testenv.RequireJail() {
			t.Skipf("Python is not available on this machine: %s", out.Outcome)
		}
		out.wantState(t, "ok")
		if want := "{\n  \"double\": 42,\n  \"big\": [\n    12345678901234567890123,\n    0.1\n  ]\n}"; out.Result != want {
			t.Errorf("result %q, want %q", out.Result, want)
		}
		out.wantEvents(t, `data request("user", {"id": 21})  → answered from the fixtures`, `console.log py Ada`)
		// Stats' heapMb is the run process's peak resident set for Python:
		// the heap is "not measured", the figure has its own row.
		if out.Stats["heapMb"] != "not measured" {
			t.Errorf("Python's heap shows %q, want \"not measured\"", out.Stats["heapMb"])
		}
		if _, err := strconv.ParseFloat(out.Stats["rssMb"], 64); err != nil {
			t.Errorf("Python's peak RSS growth %q is not a figure: %v", out.Stats["rssMb"], err)
		}
		for _, k := range []string{"wallMs", "cpuMs", "codeMs", "dataRequests"} {
			if _, err := strconv.ParseFloat(out.Stats[k], 64); err != nil {
				t.Errorf("Python's %s %q is not a figure", k, out.Stats[k])
			}
		}
	})

	t.Run("limits", func(t *testing.T) {
		out := b.runStep(t, step{language: "javascript", code: "while (true) {}", wallMs: "200"})
		out.wantState(t, "failed")
		if !strings.Contains(out.Outcome, "TIMEOUT") && !strings.Contains(out.Outcome, "LIMIT_EXCEEDED") {
			t.Errorf("outcome %q, want TIMEOUT", out.Outcome)
		}
	})

	t.Run("stop", func(t *testing.T) {
		accepted := strings.Count(ts.logs.String(), `"msg":"run accepted"`)
		aborted := strings.Count(ts.logs.String(), `"outcome":"ABORTED"`)
		b.eval(t, `(() => {
			const lang = document.getElementById("language");
			lang.value = "javascript"; lang.dispatchEvent(new Event("change"));
			document.getElementById("code").value = "console.log('spinning'); while (true) {}";
			document.getElementById("wallMs").value = "";
			document.getElementById("run").click();
		})()`)
		b.waitFor(t, `document.getElementById("outcome").dataset.state === "running"`, 15*time.Second)
		// Wait for the run to be executing, then press Stop: the browser
		// closes the connection and the server aborts the run.
		eventually(t, 15*time.Second, func() string {
			if strings.Count(ts.logs.String(), `"msg":"run accepted"`) == accepted {
				return "the run was not accepted"
			}
			return ""
		})
		b.eval(t, `document.getElementById("stop").click()`)
		b.waitFor(t, `document.getElementById("outcome").dataset.state !== "running"`, 15*time.Second)
		if got := b.evalString(t, `document.getElementById("outcome").textContent`); !strings.Contains(got, "Stopped") {
			t.Errorf("outcome %q", got)
		}
		eventually(t, 15*time.Second, func() string {
			if strings.Count(ts.logs.String(), `"outcome":"ABORTED"`) == aborted {
				return "the server did not abort the run:\n" + ts.logs.String()
			}
			return ""
		})
	})

	t.Run("editor keys", func(t *testing.T) {
		b.eval(t, `(() => {
			const lang = document.getElementById("language");
			lang.value = "javascript"; lang.dispatchEvent(new Event("change"));
			const c = document.getElementById("code");
			c.value = "if (x) {\nreturn 1\n}"; c.focus(); c.setSelectionRange(9, 17);
		})()`)
		b.key(t, "Tab", false) // indents the selected line
		if got := b.evalString(t, `document.getElementById("code").value`); got != "if (x) {\n  return 1\n}" {
			t.Errorf("after Tab: %q", got)
		}
		b.key(t, "Tab", true) // Shift+Tab dedents it
		if got := b.evalString(t, `document.getElementById("code").value`); got != "if (x) {\nreturn 1\n}" {
			t.Errorf("after Shift+Tab: %q", got)
		}
		b.eval(t, `document.getElementById("code").setSelectionRange(8, 8)`)
		b.key(t, "Enter", false) // keeps the block's indentation
		if got := b.evalString(t, `document.getElementById("code").value`); got != "if (x) {\n  \nreturn 1\n}" {
			t.Errorf("after Enter: %q", got)
		}
		b.key(t, "Escape", false)
		b.key(t, "Tab", false) // Esc, Tab: leaves the editor
		if got := b.evalString(t, `document.activeElement.id`); got == "code" {
			t.Errorf("Esc then Tab kept the focus in the editor")
		}
	})

	t.Run("validation before sending", func(t *testing.T) {
		before := b.evalString(t, `document.body.dataset.runs || "0"`)
		out := b.runStep(t, step{language: "javascript", code: "return input", input: `{"a": 1,}`, data: `[1]`, wallMs: "-5"})
		out.wantState(t, "invalid")
		if after := b.evalString(t, `document.body.dataset.runs || "0"`); after != before {
			t.Errorf("a request was sent: runs %s, then %s", before, after)
		}
		problems := b.evalString(t, `[...document.querySelectorAll(".problem:not([hidden])")].map(p => p.id + ": " + p.textContent).join("\n")`)
		for _, want := range []string{"input-problem: Input is not valid JSON", "data-problem: Data fixtures must be a JSON object", "limits-problem: wallMs must be a whole number"} {
			if !strings.Contains(problems, want) {
				t.Errorf("problems shown:\n%s\nlack %q", problems, want)
			}
		}
	})

	t.Run("api key", func(t *testing.T) {
		const key = "playground-test-key"
		ts := start(t, server.Config{Plans: slowLimits, Tenants: []server.Tenant{{Name: "acme", Keys: []string{server.HashKey(key)}}}})
		b.open(t, ts.url+"/")
		if got := b.evalString(t, `document.getElementById("auth").hidden ? "hidden" : "shown"`); got != "shown" {
			t.Fatalf("API key field %s on a server with keys", got)
		}
		b.eval(t, `(() => { const k = document.getElementById("apiKey"); k.value = ""; k.dispatchEvent(new Event("input")); })()`)
		out := b.runStep(t, step{language: "javascript", code: "return 1"})
		out.wantState(t, "refused")
		if !strings.Contains(out.Outcome, "HTTP 401 unauthenticated") || !strings.Contains(out.Error, "enter it above") {
			t.Errorf("outcome %q, error %q", out.Outcome, out.Error)
		}
		b.eval(t, `(() => { const k = document.getElementById("apiKey"); k.value = `+jsString(key)+`; k.dispatchEvent(new Event("input")); })()`)
		out = b.runStep(t, step{language: "javascript", code: "console.log('in'); return 'with a key'"})
		out.wantState(t, "ok")
		if out.Result != `"with a key"` {
			t.Errorf("result %q", out.Result)
		}
		if got := b.evalString(t, `sessionStorage.getItem("stepbox.playground.apiKey") + "|" + localStorage.length`); got != key+"|0" {
			t.Errorf("storage: %q, want the key in sessionStorage and nothing in localStorage", got)
		}
	})

	if problems := b.pageProblems(t); len(problems) > 0 {
		t.Errorf("the page reported problems:\n%s", strings.Join(problems, "\n"))
	}
}

// config.json tells the page the built-in modules some plan of the server
// allows and whether fetch is on, and nothing of the egress policy.
func TestPlaygroundConfig(t *testing.T) {
	limits := slowLimits["default"]
	for _, c := range []struct {
		name string
		cfg  server.Config
		want string
	}{
		{"defaults", server.Config{}, `{"auth":"none","modules":["duckdb","glpk"],"fetch":false}`},
		{"plan modules", server.Config{
			Plans:       map[string]sandbox.Limits{"default": limits, "free": limits},
			PlanModules: map[string][]string{"default": {"glpk", "simple-statistics"}, "free": {}},
		}, `{"auth":"none","modules":["glpk"],"fetch":false}`},
		{"no modules, fetch on", server.Config{
			PlanModules: map[string][]string{"default": {}},
			Egress:      &sandbox.Egress{Policy: sandbox.EgressPolicy{Hosts: []string{"secret-internal.example"}}},
		}, `{"auth":"none","modules":[],"fetch":true}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := start(t, c.cfg)
			status, body := ts.get(t, "/playground/config.json")
			var got map[string]any
			if err := json.Unmarshal([]byte(body), &got); err != nil || status != 200 {
				t.Fatalf("%d %s: %v", status, body, err)
			}
			delete(got, "version")
			b, _ := json.Marshal(got)
			var want map[string]any
			_ = json.Unmarshal([]byte(c.want), &want)
			w, _ := json.Marshal(want)
			if string(b) != string(w) {
				t.Errorf("config.json %s, want %s", b, w)
			}
			if strings.Contains(body, "secret-internal") {
				t.Errorf("config.json names the egress policy's hosts: %s", body)
			}
		})
	}
}

// The playground's choices in headless Chromium: the modules checked reach
// the run, the egress preset narrows the server's policy (never widens
// it), and both survive a reload with the rest of the draft.
func TestPlaygroundModulesAndEgress(t *testing.T) {
	var hits atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("hello from the backend"))
	}))
	defer backend.Close()
	port, _ := strconv.Atoi(backend.URL[strings.LastIndexByte(backend.URL, ':')+1:])
	ts := start(t, server.Config{Egress: &sandbox.Egress{Policy: sandbox.EgressPolicy{
		Schemes: []string{"http"}, Hosts: []string{"127.0.0.1"}, Ports: []int{port},
		UnsafeAllowAddresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	}}})
	b := launchChromium(t)
	b.open(t, ts.url+"/")
	if got := b.evalString(t, `[...document.querySelectorAll("#modules input")].map(b => b.value + (b.checked ? "+" : "")).join(",")`); got != "duckdb,glpk" {
		t.Errorf("modules offered %q, want duckdb and glpk, unchecked", got)
	}
	if got := b.evalString(t, `document.getElementById("egress").value + (document.getElementById("egress").disabled ? " disabled" : "")`); got != "none" {
		t.Errorf("egress preset %q, want none, enabled", got)
	}

	t.Run("modules", func(t *testing.T) {
		const duck = "const db = await duckdb.open();\nconst rows = await db.query(\"SELECT 40 + 2 AS n\");\nreturn rows[0].n;"
		out := b.runStep(t, step{language: "javascript", code: duck})
		out.wantState(t, "failed")
		if !strings.Contains(out.Error, "'duckdb' is not defined") {
			t.Errorf("without the module: %s", out.Error)
		}
		out = b.runStep(t, step{language: "javascript", code: duck, modules: []string{"duckdb"}})
		out.wantState(t, "ok")
		if out.Result != "42" {
			t.Errorf("with duckdb: result %q", out.Result)
		}
		// Python gets the same module from the same box.
		out = b.runStep(t, step{language: "python", code: "db = await duckdb.open()\nrows = await db.query(\"SELECT 6 * 7 AS n\")\nreturn rows[0][\"n\"]",
			modules: []string{"duckdb", "glpk"}})
		out.wantState(t, "ok")
		if out.Result != "42" {
			t.Errorf("Python with duckdb: result %q", out.Result)
		}
	})

	t.Run("egress", func(t *testing.T) {
		fetchStep := fmt.Sprintf("const r = await fetch(%s);\nreturn await r.text();", jsString(backend.URL+"/"))
		before := hits.Load()
		out := b.runStep(t, step{language: "javascript", code: fetchStep}) // "no network", the default
		out.wantState(t, "failed")
		if !strings.Contains(out.Error, "fetch failed") {
			t.Errorf("no network: error %q", out.Error)
		}
		out.wantEvents(t, "fetch deny GET "+backend.URL+"/")
		if hits.Load() != before {
			t.Errorf("the backend was reached with no network")
		}

		out = b.runStep(t, step{language: "javascript", code: fetchStep, egress: "hosts", hosts: fmt.Sprintf("127.0.0.1:%d", port)})
		out.wantState(t, "ok")
		if out.Result != `"hello from the backend"` {
			t.Errorf("allowed host: result %q", out.Result)
		}
		out.wantEvents(t, "fetch allow GET "+backend.URL+"/ → 200")
		if hits.Load() != before+1 {
			t.Errorf("the backend saw %d requests, want 1", hits.Load()-before)
		}

		// A list without the backend narrows it away; a URL counts for
		// its host and port.
		out = b.runStep(t, step{language: "javascript", code: fetchStep, egress: "hosts", hosts: "api.example.com, http://127.0.0.2:" + strconv.Itoa(port) + "/x"})
		out.wantState(t, "failed")
		out.wantEvents(t, "fetch deny GET "+backend.URL+"/")

		out = b.runStep(t, step{language: "javascript", code: fetchStep, egress: "server"})
		out.wantState(t, "ok")

		// A host list the page cannot read is refused before sending.
		runs := b.evalString(t, `document.body.dataset.runs`)
		out = b.runStep(t, step{language: "javascript", code: fetchStep, egress: "hosts", hosts: "127.0.0.1:99999"})
		out.wantState(t, "invalid")
		if got := b.evalString(t, `document.getElementById("egress-problem").textContent`); !strings.Contains(got, "99999 is not a port") {
			t.Errorf("egress problem %q", got)
		}
		if after := b.evalString(t, `document.body.dataset.runs`); after != runs {
			t.Errorf("a request was sent: runs %s, then %s", runs, after)
		}
		out = b.runStep(t, step{language: "javascript", code: fetchStep, egress: "hosts", hosts: " "})
		out.wantState(t, "invalid")
	})

	t.Run("draft", func(t *testing.T) {
		b.eval(t, `(() => {
			for (const box of document.querySelectorAll("#modules input")) if (box.checked !== (box.value === "glpk")) box.click();
			const eg = document.getElementById("egress"); eg.value = "hosts"; eg.dispatchEvent(new Event("change"));
			const h = document.getElementById("egressHosts"); h.value = "api.example.com"; h.dispatchEvent(new Event("input"));
		})()`)
		b.waitFor(t, `(JSON.parse(sessionStorage.getItem("stepbox.playground.draft")) || {}).egressHosts === "api.example.com"`, 5*time.Second)
		b.open(t, ts.url+"/")
		got := b.evalString(t, `[...document.querySelectorAll("#modules input:checked")].map(b => b.value).join(",") + "|" +
			document.getElementById("egress").value + "|" + document.getElementById("egressHosts").value + "|" + document.getElementById("egressHosts").hidden`)
		if got != "glpk|hosts|api.example.com|false" {
			t.Errorf("after a reload: %q, want glpk|hosts|api.example.com|false", got)
		}
	})

	if problems := b.pageProblems(t); len(problems) > 0 {
		t.Errorf("the page reported problems:\n%s", strings.Join(problems, "\n"))
	}
}

// step is what the test types into the playground: the fields, the
// modules checked, the egress preset (empty: "none") and its hosts.
type step struct {
	language, code, input, data, wallMs string
	modules                             []string
	egress, hosts                       string
}

// pageRun is what the playground shows after a run, read from the DOM.
type pageRun struct {
	State   string            `json:"state"`
	Outcome string            `json:"outcome"`
	Result  string            `json:"result"`
	Error   string            `json:"error"`
	Events  []string          `json:"events"`
	Stats   map[string]string `json:"stats"`
	// ErrorLines are the editor's lines marked as the error's, as the
	// editor says (data-error-lines), the gutter shows them and the bands
	// over the code are placed: each must agree, or the test fails.
	ErrorLines string `json:"errorLines"`
	Gutter     string `json:"gutter"`
	Bands      string `json:"bands"`
}

// wantErrorLines checks that the editor marks these lines, and only
// these, in the gutter and with a band each.
func (r pageRun) wantErrorLines(t *testing.T, lines string) {
	t.Helper()
	if r.ErrorLines != lines || r.Gutter != lines || r.Bands != lines {
		t.Errorf("error lines: editor %q, gutter %q, bands %q; want %q (error: %s)", r.ErrorLines, r.Gutter, r.Bands, lines, r.Error)
	}
}

func (r pageRun) wantState(t *testing.T, state string) {
	t.Helper()
	if r.State != state {
		t.Fatalf("state %q, want %q\noutcome: %s\nerror: %s\nresult: %s\nevents:\n%s", r.State, state, r.Outcome, r.Error, r.Result, strings.Join(r.Events, "\n"))
	}
}

// wantEvents checks that the event list holds each line, in this order.
func (r pageRun) wantEvents(t *testing.T, lines ...string) {
	t.Helper()
	i := 0
	for _, ev := range r.Events {
		if i < len(lines) && strings.Contains(ev, lines[i]) {
			i++
		}
	}
	if i < len(lines) {
		t.Errorf("events lack %q (in order); they are:\n%s", lines[i], strings.Join(r.Events, "\n"))
	}
}

// runStep fills the form as a user would, presses Run, waits for the
// outcome and reads it from the DOM.
func (b *browser) runStep(t *testing.T, s step) pageRun {
	t.Helper()
	if s.egress == "" {
		s.egress = "none"
	}
	modules, _ := json.Marshal(append([]string{}, s.modules...))
	b.eval(t, fmt.Sprintf(`(() => {
		const set = (id, v) => { const el = document.getElementById(id); el.value = v; el.dispatchEvent(new Event("input", {bubbles: true})); };
		const lang = document.getElementById("language");
		lang.value = %s; lang.dispatchEvent(new Event("change"));
		set("code", %s); set("input", %s); set("data", %s); set("wallMs", %s); set("memoryMb", "");
		const modules = %s;
		for (const box of document.querySelectorAll("#modules input")) {
			if (box.checked !== modules.includes(box.value)) box.click();
		}
		const offered = [...document.querySelectorAll("#modules input")].map((b) => b.value);
		const missing = modules.filter((m) => !offered.includes(m));
		if (missing.length) throw new Error("the page offers no module " + missing + " (offered: " + offered + ")");
		const eg = document.getElementById("egress");
		if (!eg.disabled) { eg.value = %s; eg.dispatchEvent(new Event("change")); }
		set("egressHosts", %s);
		document.getElementById("run").click();
	})()`, jsString(s.language), jsString(s.code), jsString(s.input), jsString(s.data), jsString(s.wallMs),
		modules, jsString(s.egress), jsString(s.hosts)))
	b.waitFor(t, `document.getElementById("outcome").dataset.state !== "running"`, 30*time.Second)
	var out pageRun
	raw := b.eval(t, `(() => {
		const text = (id) => document.getElementById(id + "-box").hidden ? "" : document.getElementById(id).innerText;
		return JSON.stringify({
			state: document.getElementById("outcome").dataset.state,
			outcome: document.getElementById("outcome").textContent,
			result: text("result"),
			error: document.getElementById("error-box").hidden ? "" : document.getElementById("error").textContent,
			events: [...document.querySelectorAll("#events li")].map(li => [...li.children].map(c => c.textContent).slice(1).join(" ")),
			stats: Object.fromEntries([...document.querySelectorAll("#stats tr")].map(tr => [tr.dataset.stat, tr.cells[1].textContent])),
			errorLines: document.getElementById("editor").dataset.errorLines || "",
			gutter: [...document.querySelectorAll("#gutter .error-line")].map(s => s.textContent).join(","),
			bands: [...document.querySelectorAll("#error-marks div")].map(d => d.dataset.line).join(","),
		});
	})()`)
	var js string
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatalf("page state %s: %v", raw, err)
	}
	if err := json.Unmarshal([]byte(js), &out); err != nil {
		t.Fatalf("page state %s: %v", js, err)
	}
	if dir := os.Getenv("STEPBOX_PLAYGROUND_SCREENSHOTS"); dir != "" {
		b.screenshot(t, filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".png"))
	}
	return out
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// chromiumBinary finds headless Chromium: $STEPBOX_CHROMIUM, or Debian's
// chromium package.
func chromiumBinary() (string, error) {
	if p := os.Getenv("STEPBOX_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("not found")
}

// browser is a headless Chromium driven over the Chrome DevTools Protocol
// (its websocket, one page target, one command at a time).
type browser struct {
	ws     *websocket.Conn
	nextID int

	mu       sync.Mutex
	problems []string // exceptions, console errors, CSP violations
}

// launchChromium starts headless Chromium with its own profile and stops
// it when the test ends. A machine without Chromium fails the test: the
// playground is tested end to end or not at all.
func launchChromium(t *testing.T) *browser {
	t.Helper()
	bin, err := chromiumBinary()
	if err != nil {
		t.Fatal("headless Chromium is needed to test the playground: install Debian's chromium package " +
			"(apt-get install -y chromium; scripts/test should do it), or set STEPBOX_CHROMIUM to a Chromium or Chrome binary")
	}
	dir, err := os.MkdirTemp("", "stepbox-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-extensions", "--mute-audio", "--window-size=1400,1000",
		"--user-data-dir="+dir, "--remote-debugging-port=0",
		// The test's websocket client sends this Origin; Chromium refuses
		// DevTools connections from any origin it was not told to allow.
		"--remote-allow-origins=http://127.0.0.1",
		"about:blank")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_CACHE_HOME="+dir)
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // to stop its helpers with it
	// A helper outside the group must not hold stderr open for ever.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	b := &browser{}
	t.Cleanup(func() {
		if b.ws != nil {
			b.ws.Close()
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		// Helpers of the process group may still write to the profile for
		// a moment as they go; nothing tells when the last has gone.
		deadline := time.Now().Add(testenv.ScaleDuration(5 * time.Second))
		for err := os.RemoveAll(dir); err != nil; err = os.RemoveAll(dir) {
			if time.Now().After(deadline) {
				t.Logf("chromium's profile %s is left behind: %v", dir, err)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if t.Failed() {
			t.Logf("chromium stderr (last 4 kB):\n%s", tail(stderr.String(), 4096))
		}
	})

	// Chromium writes the port it chose to DevToolsActivePort: nothing
	// tells when, so the test polls the file (and the target list below).
	var port string
	deadline := time.Now().Add(testenv.ScaleDuration(15 * time.Second))
	for {
		if bs, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort")); err == nil {
			if p, _, ok := strings.Cut(string(bs), "\n"); ok && p != "" {
				port = p
				break
			}
		}
		select {
		case <-exited:
			t.Fatalf("chromium exited at start:\n%s", tail(stderr.String(), 4096))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromium did not open its DevTools port in time:\n%s", tail(stderr.String(), 4096))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := strconv.Atoi(port); err != nil {
		t.Fatalf("DevToolsActivePort: %q", port)
	}

	// The page target Chromium opened for about:blank.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: testenv.ScaleDuration(10 * time.Second)}
	var targets []struct{ Type, WebSocketDebuggerURL string }
	for {
		resp, err := hc.Get("http://127.0.0.1:" + port + "/json/list")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
		}
		var ws string
		for _, tg := range targets {
			if tg.Type == "page" && tg.WebSocketDebuggerURL != "" {
				ws = tg.WebSocketDebuggerURL
			}
		}
		if ws != "" {
			if b.ws, err = websocket.Dial(ws, "", "http://127.0.0.1"); err != nil {
				t.Fatalf("connect to chromium's DevTools at %s: %v", ws, err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromium has no page target: %v %v", targets, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, domain := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		b.call(t, domain, nil)
	}
	return b
}

// call sends one DevTools command and returns its result, recording the
// events that arrive meanwhile.
func (b *browser) call(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	b.nextID++
	id := b.nextID
	if params == nil {
		params = struct{}{}
	}
	b.ws.SetDeadline(time.Now().Add(testenv.ScaleDuration(30 * time.Second)))
	if err := websocket.JSON.Send(b.ws, map[string]any{"id": id, "method": method, "params": params}); err != nil {
		t.Fatalf("devtools %s: %v", method, err)
	}
	for {
		var m struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := websocket.JSON.Receive(b.ws, &m); err != nil {
			t.Fatalf("devtools %s: %v", method, err)
		}
		if m.Method != "" {
			b.event(m.Method, m.Params)
			continue
		}
		if m.ID != id {
			continue
		}
		if m.Error != nil {
			t.Fatalf("devtools %s: %d %s", method, m.Error.Code, m.Error.Message)
		}
		return m.Result
	}
}

// event records what the page reports that a test should hear of.
func (b *browser) event(method string, params json.RawMessage) {
	var p struct {
		Type             string `json:"type"`
		Args             []struct{ Value any }
		ExceptionDetails struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
		Entry struct {
			Source, Level, Text, URL string
		} `json:"entry"`
	}
	_ = json.Unmarshal(params, &p)
	var problem string
	switch method {
	case "Runtime.exceptionThrown":
		problem = "exception: " + p.ExceptionDetails.Text + " " + p.ExceptionDetails.Exception.Description
	case "Runtime.consoleAPICalled":
		if p.Type == "error" || p.Type == "warning" || p.Type == "assert" {
			problem = fmt.Sprintf("console.%s: %v", p.Type, p.Args)
		}
	case "Log.entryAdded":
		// Failed requests are logged as errors: the test provokes 400 and
		// 401 on purpose. Anything else (a CSP violation above all) is a
		// problem.
		if p.Entry.Source != "network" && (p.Entry.Level == "error" || p.Entry.Level == "warning") ||
			strings.Contains(p.Entry.Text, "Content Security Policy") {
			problem = fmt.Sprintf("log %s %s: %s %s", p.Entry.Source, p.Entry.Level, p.Entry.Text, p.Entry.URL)
		}
	}
	if problem != "" {
		b.mu.Lock()
		b.problems = append(b.problems, problem)
		b.mu.Unlock()
	}
}

func (b *browser) pageProblems(t *testing.T) []string {
	b.call(t, "Runtime.evaluate", map[string]any{"expression": "0"}) // collect events still on the wire
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.problems
}

// eval evaluates a JavaScript expression in the page and returns its value
// as JSON.
func (b *browser) eval(t *testing.T, expr string) json.RawMessage {
	t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	raw := b.call(t, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("evaluate: %v: %s", err, raw)
	}
	if e := r.ExceptionDetails; e != nil {
		t.Fatalf("evaluate %.200s: %s %s", expr, e.Text, e.Exception.Description)
	}
	return r.Result.Value
}

func (b *browser) evalString(t *testing.T, expr string) string {
	t.Helper()
	var s string
	raw := b.eval(t, expr)
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("evaluate %.200s: %s is not a string", expr, raw)
	}
	return s
}

// waitFor polls a JavaScript condition on the page's state until it is
// true, for within on the reference machine, scaled to this one.
func (b *browser) waitFor(t *testing.T, cond string, within time.Duration) {
	t.Helper()
	within = testenv.ScaleDuration(within)
	deadline := time.Now().Add(within)
	for {
		if string(b.eval(t, "Boolean("+cond+")")) == "true" {
			return
		}
		if time.Now().After(deadline) {
			body := b.evalString(t, `document.body ? document.body.innerText : ""`)
			t.Fatalf("still not %s after %v; the page shows:\n%s", cond, within, tail(body, 4096))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// open loads url and waits until the playground's script has started.
func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	b.call(t, "Page.navigate", map[string]any{"url": url})
	b.waitFor(t, `location.href === `+jsString(url)+` && document.body && document.body.dataset.ready === "1"`, 15*time.Second)
}

// key presses a key in the page, as a user would.
func (b *browser) key(t *testing.T, key string, shift bool) {
	t.Helper()
	codes := map[string]int{"Tab": 9, "Enter": 13, "Escape": 27}
	mods := 0
	if shift {
		mods = 8
	}
	for _, typ := range []string{"rawKeyDown", "keyUp"} {
		p := map[string]any{"type": typ, "key": key, "code": key, "windowsVirtualKeyCode": codes[key], "modifiers": mods}
		if key == "Enter" && typ == "rawKeyDown" {
			p["type"], p["text"] = "keyDown", "\r"
		}
		b.call(t, "Input.dispatchKeyEvent", p)
	}
}

func (b *browser) screenshot(t *testing.T, path string) {
	t.Helper()
	var r struct {
		Data []byte `json:"data"`
	}
	if err := json.Unmarshal(b.call(t, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}), &r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, r.Data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
