//go:build cgo && !stepbox_noglpk

package differential

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// glpkCase is one solve, run through glpk.js and through Stepbox. The
// JSON members are what glpk.mjs and glpkStep read.
type glpkCase struct {
	Name    string `json:"-"`
	Model   any    `json:"model"`
	Options any    `json:"options,omitempty"`
	Each    *int   `json:"each,omitempty"`   // call glpk.solve with cb {call, each}
	AsText  bool   `json:"asText,omitempty"` // pass the model as its JSON text
	Write   bool   `json:"write,omitempty"`  // glpk.write the model instead
	// Differs is "" when both must give the same result and the same
	// cb.call reports, else the README's difference this case shows:
	//   "status": glpk.js says GLP_UNDEF (1), with zeros for the
	//             solution, where Stepbox gives Status and GLPK's basic
	//             solution (the presolver ends an infeasible or unbounded
	//             LP without a status; Stepbox solves again without it);
	//   "refused": Stepbox rejects with an Error containing Refusal,
	//             where glpk.js returns a result or throws;
	//   "refused-by-glpk.js": glpk.js throws where Stepbox solves.
	Differs string `json:"-"`
	Status  int    `json:"-"`
	Refusal string `json:"-"`
}

// glpkStep does in a Stepbox step what glpk.mjs does under Node.
const glpkStep = `const out = [];
for (const c of input) {
  const calls = [];
  try {
    if (c.write) {
      out.push({ text: await glpk.write(c.model) });
      continue;
    }
    let options = c.options;
    if (c.each !== undefined) options = { ...options, cb: { each: c.each, call: (s) => calls.push({ ...s, rows: "rows" in s ? s.rows : "absent" }) } };
    const r = await glpk.solve(c.asText ? JSON.stringify(c.model) : c.model, options);
    delete r.time;
    out.push({ result: r, calls });
  } catch (e) {
    out.push({ error: String(e && e.message) });
  }
}
return out;`

func lp(name string, dir int, obj map[string]float64, rows ...any) map[string]any {
	vars := []any{}
	for _, n := range sortedKeys(obj) {
		vars = append(vars, map[string]any{"name": n, "coef": obj[n]})
	}
	if rows == nil {
		rows = []any{}
	}
	return map[string]any{"name": name, "objective": map[string]any{"direction": dir, "name": "z", "vars": vars}, "subjectTo": rows}
}

func row(name string, typ int, lb, ub float64, coefs map[string]float64) map[string]any {
	vars := []any{}
	for _, n := range sortedKeys(coefs) {
		vars = append(vars, map[string]any{"name": n, "coef": coefs[n]})
	}
	return map[string]any{"name": name, "vars": vars, "bnds": map[string]any{"type": typ, "lb": lb, "ub": ub}}
}

func sortedKeys(m map[string]float64) []string { return slices.Sorted(maps.Keys(m)) }

// dense is an LP the simplex method needs several iterations for (glpk.js
// reports 3 times with cb.each 1).
func dense(n int) map[string]any {
	obj := map[string]float64{}
	var rows []any
	for j := range n {
		obj[fmt.Sprintf("x%02d", j)] = float64(j + 1)
	}
	for i := range n {
		c := map[string]float64{}
		for j := range n {
			c[fmt.Sprintf("x%02d", j)] = float64((7*i+3*j)%11 + 1)
		}
		rows = append(rows, row(fmt.Sprintf("c%02d", i), 3, 0, float64(10*(i%7+1)), c))
	}
	return lp("dense", 2, obj, rows...)
}

func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

func glpkCases() []glpkCase {
	const lo, up, db, fx = 2, 3, 4, 5
	off := map[string]any{"msglev": 0}
	one, three := 1, 3
	readme := lp("LP", 2, map[string]float64{"x1": 0.6, "x2": 0.5},
		row("cons1", up, 0, 1, map[string]float64{"x1": 1, "x2": 2}),
		row("cons2", up, 0, 2, map[string]float64{"x1": 3, "x2": 1}))
	knap := with(lp("knap", 2, map[string]float64{"a": 5, "b": 4, "c": 3},
		row("w", up, 0, 10, map[string]float64{"a": 6, "b": 4, "c": 2}),
		row("v", up, 0, 12, map[string]float64{"a": 3, "b": 5, "c": 4})), "generals", []string{"a", "b"}, "binaries", []string{"c"})
	obj := map[string]float64{"x": 2}
	infeasible := lp("inf", 2, obj, row("a", lo, 5, 0, map[string]float64{"x": 1}), row("b", up, 0, 3, map[string]float64{"x": 1}))
	unbounded := lp("unb", 2, obj, row("a", lo, 1, 0, map[string]float64{"x": 1}))
	return []glpkCase{
		{Name: "an LP", Model: readme, Options: off},
		{Name: "an LP with rows", Model: readme, Options: map[string]any{"msglev": 0, "rows": true}},
		{Name: "a MIP with rows", Model: knap, Options: map[string]any{"msglev": 0, "rows": true}},
		{Name: "cb on an LP of several iterations", Model: dense(30), Options: map[string]any{"msglev": 0, "rows": true}, Each: &one},
		{Name: "cb without rows, each 3", Model: dense(30), Options: off, Each: &three},
		{Name: "cb on a MIP is not called", Model: knap, Options: off, Each: &one},
		{Name: "model options under the call's", Model: with(readme, "options", map[string]any{"rows": true, "msglev": 3}), Options: off},
		{Name: "a bare message level ignores model options", Model: with(readme, "options", map[string]any{"rows": true}), Options: 0},
		{Name: "the model as JSON text", Model: with(readme, "options", map[string]any{"msglev": 0}), AsText: true},
		{Name: "a coef as a numeric string", Options: off, Model: lp("str", 2, nil,
			map[string]any{"name": "c", "vars": []any{map[string]any{"name": "x", "coef": "2"}}, "bnds": map[string]any{"type": up, "ub": 4}})},
		{Name: "variables only in bounds, generals and binaries", Options: off, Model: with(lp("extra", 2, obj, row("c", up, 0, 4, map[string]float64{"x": 1})),
			"bounds", []any{map[string]any{"name": "y", "type": fx, "lb": 3, "ub": 3}}, "generals", []string{"g"}, "binaries", []string{"b"})},
		{Name: "repeated constraint names", Options: map[string]any{"msglev": 0, "rows": true}, Model: lp("dup", 2, obj,
			row("c", up, 0, 4, map[string]float64{"x": 1}), row("d", up, 0, 9, map[string]float64{"x": 1}), row("c", up, 0, 6, map[string]float64{"x": 1}))},
		{Name: "a later bound replaces an earlier; binaries win over generals", Options: off, Model: with(lp("kinds", 2, obj),
			"bounds", []any{map[string]any{"name": "x", "type": db, "lb": 0, "ub": 9}, map[string]any{"name": "x", "type": db, "lb": 0, "ub": 7}},
			"generals", []string{"x"}, "binaries", []string{"x"})},
		{Name: "write an LP", Model: readme, Write: true},
		{Name: "write a MIP with bounds, generals and binaries", Model: with(knap, "bounds", []any{map[string]any{"name": "a", "type": db, "lb": 1, "ub": 3}}), Write: true},
		{Name: "write a model with names GLPK must change", Write: true, Model: lp("names", 1, map[string]float64{"x y": 1, "2z": 2},
			row("c 1", lo, 1, 0, map[string]float64{"x y": 1, "2z": 1}))},
		{Name: "an infeasible LP without the presolver", Model: infeasible, Options: map[string]any{"msglev": 0, "presol": false}},
		{Name: "an infeasible LP with the presolver", Model: infeasible, Options: off, Differs: "status", Status: 4},
		{Name: "an unbounded LP with the presolver", Model: unbounded, Options: off, Differs: "status", Status: 6},
		{Name: "tmlim 0 is no limit", Model: knap, Options: map[string]any{"msglev": 0, "tmlim": 0}, Differs: "status", Status: 5},
		{Name: "an unknown model member", Model: with(readme, "constraints", []any{}), Options: off, Differs: "refused",
			Refusal: `glpk: model: unknown member "constraints"`},
		{Name: "a model without subjectTo", Options: off, Differs: "refused-by-glpk.js",
			Model: map[string]any{"name": "bare", "objective": map[string]any{"direction": 1, "name": "z", "vars": []any{map[string]any{"name": "x", "coef": 1}}}}},
		{Name: "an unknown option", Model: readme, Options: map[string]any{"msglev": 0, "verbose": true}, Differs: "refused",
			Refusal: `glpk: options: unknown member "verbose"`},
		{Name: "a variable twice in a constraint", Options: off, Differs: "refused", Refusal: `appears twice in constraint "c"`,
			Model: lp("twice", 2, obj, map[string]any{"name": "c", "vars": []any{map[string]any{"name": "x", "coef": 1}, map[string]any{"name": "x", "coef": 2}}, "bnds": map[string]any{"type": up, "ub": 4}})},
	}
}

// glpkPyStep is glpkStep in Python: the mirror follows the same rules.
const glpkPyStep = `import json
out = []
for c in input:
    calls = []
    try:
        if c.get("write"):
            out.append({"text": await glpk.write(c["model"])})
            continue
        options = c.get("options")
        if "each" in c:
            options = dict(options or {}, cb={"each": c["each"], "call": lambda s, calls=calls: calls.append({k: v for k, v in s.items() if v is not None})})
        r = await glpk.solve(json.dumps(c["model"]) if c.get("asText") else c["model"], options)
        del r["time"]
        out.append({"result": r, "calls": calls})
    except Exception as e:
        out.append({"error": str(e)})
return out`

// TestGLPKAgainstGlpkJS runs every case through glpk.js 5.0.0 under Node
// and through Stepbox's glpk in one JavaScript step and one Python step,
// and checks that each pair is the same or differs exactly as the case
// says (and as the README lists).
func TestGLPKAgainstGlpkJS(t *testing.T) {
	cases := glpkCases()
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	b := runNode(t, "glpk.mjs", in)
	var theirs []map[string]any
	if err := json.Unmarshal(b, &theirs); err != nil {
		t.Fatal(err)
	}

	e, err := sandbox.New(sandbox.Config{Plans: map[string]sandbox.Limits{"default": {CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs}},
		Caps: sandbox.Limits{CPUMs: testenv.UnreachableCPUMs, WallMs: testenv.UnreachableWallMs}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	for _, lang := range []struct {
		lang sandbox.Language
		code string
	}{{sandbox.JavaScript, glpkStep}, {sandbox.Python, glpkPyStep}} {
		t.Run(string(lang.lang), func(t *testing.T) {
			res, err := e.Run(context.Background(), sandbox.Request{Language: lang.lang, Code: lang.code, Input: in, Modules: []string{"glpk"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var ours []map[string]any
			if err := json.Unmarshal(res.Value, &ours); err != nil {
				t.Fatal(err)
			}
			if len(ours) != len(cases) || len(theirs) != len(cases) {
				t.Fatalf("%d cases, %d results from Stepbox, %d from glpk.js", len(cases), len(ours), len(theirs))
			}
			for i, c := range cases {
				t.Run(c.Name, func(t *testing.T) { compareGLPK(t, c, ours[i], theirs[i]) })
			}
		})
	}
}

func compareGLPK(t *testing.T, c glpkCase, o, g map[string]any) {
	switch c.Differs {
	case "":
		if !same(o, g) {
			t.Errorf("Stepbox %s\nglpk.js %s", js(o), js(g))
		}
	case "status":
		ost, gst := dig(o, "result", "result", "status"), dig(g, "result", "result", "status")
		if gst != 1.0 || ost != float64(c.Status) {
			t.Errorf("status: Stepbox %v (want %d), glpk.js %v (want 1)\nStepbox %s\nglpk.js %s", ost, c.Status, gst, js(o), js(g))
		}
	case "refused":
		msg, _ := o["error"].(string)
		if !strings.Contains(msg, c.Refusal) {
			t.Errorf("Stepbox %s, want an error containing %q (glpk.js: %s)", js(o), c.Refusal, js(g))
		}
	case "refused-by-glpk.js":
		if g["error"] == nil || dig(o, "result", "result", "status") != 5.0 {
			t.Errorf("Stepbox %s, want a solution; glpk.js %s, want an error", js(o), js(g))
		}
	default:
		t.Fatalf("unknown difference %q", c.Differs)
	}
}
