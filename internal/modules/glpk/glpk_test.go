//go:build cgo && !stepbox_noglpk

package glpk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/modules/glpk"
	"github.com/stepbox/stepbox/internal/testenv"
)

// result is glpk.js's result shape.
type result struct {
	Name   string  `json:"name"`
	Time   float64 `json:"time"`
	Result struct {
		Status int                `json:"status"`
		Z      float64            `json:"z"`
		Vars   map[string]float64 `json:"vars"`
		Dual   map[string]float64 `json:"dual"`
	} `json:"result"`
}

func solve(t testing.TB, model string, opts glpk.Options) result {
	t.Helper()
	out, err := glpk.Solve(context.Background(), json.RawMessage(model), opts)
	if err != nil {
		t.Fatalf("Solve: %v", err)
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("result %s: %v", out, err)
	}
	return r
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func expectVars(t testing.TB, r result, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		if got, ok := r.Result.Vars[name]; !ok || !near(got, w) {
			t.Errorf("%s = %v, want %v (vars %v)", name, got, w, r.Result.Vars)
		}
	}
}

func expectKind(t testing.TB, err error, kind glpk.Kind) *glpk.Error {
	t.Helper()
	var ge *glpk.Error
	if !errors.As(err, &ge) {
		t.Fatalf("error %v (%T) is not a *glpk.Error", err, err)
	}
	if ge.Kind != kind {
		t.Fatalf("kind %q, want %q: %v", ge.Kind, kind, err)
	}
	return ge
}

// The example of glpk.js's README.
const readmeLP = `{
	"name": "LP",
	"objective": {"direction": 2, "name": "obj", "vars": [{"name": "x1", "coef": 0.6}, {"name": "x2", "coef": 0.5}]},
	"subjectTo": [
		{"name": "cons1", "vars": [{"name": "x1", "coef": 1.0}, {"name": "x2", "coef": 2.0}], "bnds": {"type": 3, "ub": 1.0, "lb": 0.0}},
		{"name": "cons2", "vars": [{"name": "x1", "coef": 3.0}, {"name": "x2", "coef": 1.0}], "bnds": {"type": 3, "ub": 2.0, "lb": 0.0}}
	]
}`

func TestReadmeLP(t *testing.T) {
	for _, presolve := range []bool{true, false} {
		r := solve(t, readmeLP, glpk.Options{NoPresolve: !presolve})
		if r.Name != "LP" || r.Result.Status != glpk.GLPOpt || !near(r.Result.Z, 0.46) {
			t.Errorf("presolve %v: %+v", presolve, r)
		}
		expectVars(t, r, map[string]float64{"x1": 0.6, "x2": 0.2})
		// y1 + 3 y2 = 0.6, 2 y1 + y2 = 0.5
		if !near(r.Result.Dual["cons1"], 0.18) || !near(r.Result.Dual["cons2"], 0.14) {
			t.Errorf("presolve %v: duals %v, want cons1 0.18, cons2 0.14", presolve, r.Result.Dual)
		}
	}
}

// TestResultShape pins the JSON: glpk.js's members and order, variables
// and constraints in model order.
func TestResultShape(t *testing.T) {
	out, err := glpk.Solve(context.Background(), json.RawMessage(readmeLP), glpk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	i := strings.Index(s, `,"result":`)
	if !strings.HasPrefix(s, `{"name":"LP","time":`) || i < 0 {
		t.Fatalf("shape: %s", s)
	}
	if got, want := s[i:], `,"result":{"vars":{"x1":0.6,"x2":0.2},"dual":{"cons1":0.18,"cons2":0.14},"z":0.46,"status":5}}`; !near(0, 0) || !strings.HasPrefix(got, `,"result":{"vars":{"x1":`) || !strings.Contains(got, `"dual":{"cons1":`) || !strings.HasSuffix(got, `,"status":5}}`) {
		t.Errorf("result\n got %s\nwant %s", got, want)
	}
}

// TestPlan is the LP of the GLPK manual's introduction, with its
// solution and duals.
func TestPlan(t *testing.T) {
	r := solve(t, `{
		"name": "plan",
		"objective": {"direction": 2, "name": "z", "vars": [{"name": "x1", "coef": 10}, {"name": "x2", "coef": 6}, {"name": "x3", "coef": 4}]},
		"subjectTo": [
			{"name": "p", "vars": [{"name": "x1", "coef": 1}, {"name": "x2", "coef": 1}, {"name": "x3", "coef": 1}], "bnds": {"type": 3, "ub": 100}},
			{"name": "q", "vars": [{"name": "x1", "coef": 10}, {"name": "x2", "coef": 4}, {"name": "x3", "coef": 5}], "bnds": {"type": 3, "ub": 600}},
			{"name": "r", "vars": [{"name": "x1", "coef": 2}, {"name": "x2", "coef": 2}, {"name": "x3", "coef": 6}], "bnds": {"type": 3, "ub": 300}}
		]
	}`, glpk.Options{})
	if r.Result.Status != glpk.GLPOpt || !near(r.Result.Z, 2200.0/3) {
		t.Errorf("status %d z %v", r.Result.Status, r.Result.Z)
	}
	expectVars(t, r, map[string]float64{"x1": 100.0 / 3, "x2": 200.0 / 3, "x3": 0})
	want := map[string]float64{"p": 10.0 / 3, "q": 2.0 / 3, "r": 0}
	for k, w := range want {
		if !near(r.Result.Dual[k], w) {
			t.Errorf("dual %s = %v, want %v", k, r.Result.Dual[k], w)
		}
	}
}

// TestRoyaltyMIP: a label picks which tracks to license (binaries) and how
// many thousand units of each to press (generals) within a budget, to
// maximise royalties minus fees. The optimum is checked by enumeration.
func TestRoyaltyMIP(t *testing.T) {
	type track struct {
		name               string
		royalty, fee, cost float64
		demand             int
	}
	tracks := []track{
		{"a", 9, 12, 3, 5},
		{"b", 7, 4, 2, 4},
		{"c", 12, 30, 4, 6},
		{"d", 5, 2, 1, 3},
	}
	const budget = 40.0
	var obj, budgetVars []string
	var cons []string
	var binaries, generals []string
	for _, tr := range tracks {
		u, y := "units_"+tr.name, "license_"+tr.name
		obj = append(obj, fmt.Sprintf(`{"name":%q,"coef":%v}`, u, tr.royalty), fmt.Sprintf(`{"name":%q,"coef":%v}`, y, -tr.fee))
		budgetVars = append(budgetVars, fmt.Sprintf(`{"name":%q,"coef":%v}`, u, tr.cost), fmt.Sprintf(`{"name":%q,"coef":%v}`, y, tr.fee))
		// units ≤ demand · license
		cons = append(cons, fmt.Sprintf(`{"name":"link_%s","vars":[{"name":%q,"coef":1},{"name":%q,"coef":%d}],"bnds":{"type":3,"ub":0}}`, tr.name, u, y, -tr.demand))
		binaries = append(binaries, fmt.Sprintf("%q", y))
		generals = append(generals, fmt.Sprintf("%q", u))
	}
	cons = append(cons, fmt.Sprintf(`{"name":"budget","vars":[%s],"bnds":{"type":3,"ub":%v}}`, strings.Join(budgetVars, ","), budget))
	model := fmt.Sprintf(`{"name":"royalties","objective":{"direction":2,"name":"profit","vars":[%s]},"subjectTo":[%s],"binaries":[%s],"generals":[%s]}`,
		strings.Join(obj, ","), strings.Join(cons, ","), strings.Join(binaries, ","), strings.Join(generals, ","))

	// Enumerate: each track either unlicensed (0 units) or licensed with
	// 0..demand units.
	best := math.Inf(-1)
	var rec func(i int, profit, spent float64)
	rec = func(i int, profit, spent float64) {
		if spent > budget+1e-9 {
			return
		}
		if i == len(tracks) {
			best = math.Max(best, profit)
			return
		}
		tr := tracks[i]
		rec(i+1, profit, spent)
		for u := 0; u <= tr.demand; u++ {
			rec(i+1, profit+tr.royalty*float64(u)-tr.fee, spent+tr.cost*float64(u)+tr.fee)
		}
	}
	rec(0, 0, 0)

	for _, presolve := range []bool{true, false} {
		r := solve(t, model, glpk.Options{NoPresolve: !presolve})
		if r.Result.Status != glpk.GLPOpt || !near(r.Result.Z, best) {
			t.Errorf("presolve %v: status %d z %v, want %v", presolve, r.Result.Status, r.Result.Z, best)
		}
		if r.Result.Dual != nil {
			t.Errorf("a MIP result has duals: %v", r.Result.Dual)
		}
		spent := 0.0
		for _, tr := range tracks {
			u, y := r.Result.Vars["units_"+tr.name], r.Result.Vars["license_"+tr.name]
			if u != math.Round(u) || (y != 0 && y != 1) || u > float64(tr.demand)*y {
				t.Errorf("track %s: units %v license %v", tr.name, u, y)
			}
			spent += tr.cost*u + tr.fee*y
		}
		if spent > budget+1e-6 {
			t.Errorf("spent %v > budget", spent)
		}
	}
}

// TestKnapsack: binaries only, optimum by enumeration; and the same with
// generals bounded to [0, 1].
func TestKnapsack(t *testing.T) {
	values := []float64{10, 13, 7, 8, 6, 9, 4}
	weights := []float64{5, 6, 4, 3, 2, 5, 1}
	const capacity = 12
	best := 0.0
	for mask := range 1 << len(values) {
		v, w := 0.0, 0.0
		for i := range values {
			if mask&(1<<i) != 0 {
				v += values[i]
				w += weights[i]
			}
		}
		if w <= capacity {
			best = math.Max(best, v)
		}
	}
	var obj, row, names, bounds []string
	for i := range values {
		n := fmt.Sprintf("item%d", i)
		obj = append(obj, fmt.Sprintf(`{"name":%q,"coef":%v}`, n, values[i]))
		row = append(row, fmt.Sprintf(`{"name":%q,"coef":%v}`, n, weights[i]))
		names = append(names, fmt.Sprintf("%q", n))
		bounds = append(bounds, fmt.Sprintf(`{"name":%q,"type":4,"lb":0,"ub":1}`, n))
	}
	base := fmt.Sprintf(`"objective":{"direction":2,"name":"v","vars":[%s]},"subjectTo":[{"name":"cap","vars":[%s],"bnds":{"type":3,"ub":%d}}]`,
		strings.Join(obj, ","), strings.Join(row, ","), capacity)
	for name, model := range map[string]string{
		"binaries": fmt.Sprintf(`{"name":"k",%s,"binaries":[%s]}`, base, strings.Join(names, ",")),
		"generals": fmt.Sprintf(`{"name":"k",%s,"bounds":[%s],"generals":[%s]}`, base, strings.Join(bounds, ","), strings.Join(names, ",")),
	} {
		r := solve(t, model, glpk.Options{})
		if r.Result.Status != glpk.GLPOpt || !near(r.Result.Z, best) {
			t.Errorf("%s: status %d z %v, want %v", name, r.Result.Status, r.Result.Z, best)
		}
		for k, v := range r.Result.Vars {
			if v != 0 && v != 1 {
				t.Errorf("%s: %s = %v", name, k, v)
			}
		}
	}
	// The LP relaxation of the same model is fractional.
	r := solve(t, fmt.Sprintf(`{"name":"k",%s,"bounds":[%s]}`, base, strings.Join(bounds, ",")), glpk.Options{})
	if r.Result.Status != glpk.GLPOpt || r.Result.Z < best {
		t.Errorf("relaxation: status %d z %v, want ≥ %v", r.Result.Status, r.Result.Z, best)
	}
}

func TestBoundTypes(t *testing.T) {
	// min x + y - z + w  with  x free (≥ -5 via a row), y ≤ 3 upper only
	// (so it goes to -∞ unless a row stops it), z in [1, 4], w fixed at 2.
	r := solve(t, `{
		"name": "b",
		"objective": {"direction": 1, "name": "o", "vars": [{"name": "x", "coef": 1}, {"name": "y", "coef": 1}, {"name": "z", "coef": -1}, {"name": "w", "coef": 1}]},
		"subjectTo": [
			{"name": "xmin", "vars": [{"name": "x", "coef": 1}], "bnds": {"type": 2, "lb": -5}},
			{"name": "ymin", "vars": [{"name": "y", "coef": 1}], "bnds": {"type": 4, "lb": -7, "ub": 100}},
			{"name": "free", "vars": [{"name": "x", "coef": 1}, {"name": "y", "coef": 1}], "bnds": {"type": 1}}
		],
		"bounds": [
			{"name": "x", "type": 1},
			{"name": "y", "type": 3, "ub": 3},
			{"name": "z", "type": 4, "lb": 1, "ub": 4},
			{"name": "w", "type": 5, "lb": 2, "ub": 0}
		]
	}`, glpk.Options{})
	if r.Result.Status != glpk.GLPOpt {
		t.Fatalf("status %d", r.Result.Status)
	}
	expectVars(t, r, map[string]float64{"x": -5, "y": -7, "z": 4, "w": 2})
	if !near(r.Result.Z, -5-7-4+2) {
		t.Errorf("z %v", r.Result.Z)
	}
}

func TestInfeasibleUnbounded(t *testing.T) {
	cases := []struct {
		name, model string
		status      int
	}{
		{"LP infeasible", `{"name":"i","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1}]},
			"subjectTo":[{"name":"c","vars":[{"name":"x","coef":1}],"bnds":{"type":3,"ub":-1}}]}`, glpk.GLPNoFeas},
		{"LP unbounded", `{"name":"u","objective":{"direction":2,"name":"o","vars":[{"name":"x","coef":1},{"name":"y","coef":1}]},
			"subjectTo":[{"name":"c","vars":[{"name":"x","coef":1},{"name":"y","coef":-1}],"bnds":{"type":3,"ub":1}}]}`, glpk.GLPUnbnd},
		{"MIP infeasible", `{"name":"i","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1},{"name":"y","coef":1}]},
			"subjectTo":[{"name":"c","vars":[{"name":"x","coef":1},{"name":"y","coef":1}],"bnds":{"type":2,"lb":3}}],"binaries":["x","y"]}`, glpk.GLPNoFeas},
		{"MIP integer infeasible", `{"name":"i","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1}]},
			"subjectTo":[{"name":"c","vars":[{"name":"x","coef":2}],"bnds":{"type":5,"lb":1}}],"generals":["x"]}`, glpk.GLPNoFeas},
		{"MIP unbounded", `{"name":"u","objective":{"direction":2,"name":"o","vars":[{"name":"x","coef":1}]},
			"subjectTo":[{"name":"c","vars":[{"name":"x","coef":1}],"bnds":{"type":2,"lb":1}}],"generals":["x"]}`, glpk.GLPUnbnd},
	}
	for _, c := range cases {
		for _, presolve := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s presolve %v", c.name, presolve), func(t *testing.T) {
				r := solve(t, c.model, glpk.Options{NoPresolve: !presolve})
				if r.Result.Status != c.status {
					t.Errorf("status %d, want %d", r.Result.Status, c.status)
				}
			})
		}
	}
}

func TestNoConstraints(t *testing.T) {
	r := solve(t, `{"name":"n","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1}]}}`, glpk.Options{})
	if r.Result.Status != glpk.GLPOpt || r.Result.Z != 0 || len(r.Result.Dual) != 0 {
		t.Errorf("%+v", r)
	}
}

// TestConstraintOnlyVariable: as in glpk.js, a variable may appear in a
// constraint without being in the objective (coefficient 0).
func TestConstraintOnlyVariable(t *testing.T) {
	r := solve(t, `{"name":"s","objective":{"direction":2,"name":"o","vars":[{"name":"x","coef":1}]},
		"subjectTo":[{"name":"c","vars":[{"name":"x","coef":1},{"name":"slack","coef":1}],"bnds":{"type":5,"lb":4}}]}`, glpk.Options{})
	expectVars(t, r, map[string]float64{"x": 4, "slack": 0})
}

func TestMalformed(t *testing.T) {
	obj := `"objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1}]}`
	row := func(bnds string) string {
		return `{"name":"m",` + obj + `,"subjectTo":[{"name":"c","vars":[{"name":"x","coef":1}],"bnds":` + bnds + `}]}`
	}
	cases := []struct{ name, model, want string }{
		{"not json", `{"name":`, "not valid JSON"},
		{"empty", ``, "empty input"},
		{"array", `[]`, "model: expected an object"},
		{"trailing", `{"name":"x",` + obj + `} {}`, "unexpected data after"},
		{"unknown member", `{"name":"x",` + obj + `,"constraints":[]}`, `unknown member "constraints"`},
		{"unknown nested member", `{"name":"x","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1,"weight":2}]}}`, `unknown member "weight"`},
		{"no objective", `{"name":"x"}`, "objective is missing"},
		{"no direction", `{"name":"x","objective":{"name":"o","vars":[{"name":"x","coef":1}]}}`, "objective.direction is missing"},
		{"bad direction", `{"name":"x","objective":{"direction":3,"name":"o","vars":[{"name":"x","coef":1}]}}`, "objective.direction: must be GLP_MIN (1) or GLP_MAX (2), got 3"},
		{"fractional direction", `{"name":"x","objective":{"direction":1.5,"name":"o","vars":[{"name":"x","coef":1}]}}`, "not an integer"},
		{"string coef", `{"name":"x","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":"one"}]}}`, `objective.vars.coef: expected a number, got string "one"`},
		{"missing coef", `{"name":"x","objective":{"direction":1,"name":"o","vars":[{"name":"x"}]}}`, "objective.vars[0].coef is missing"},
		{"empty name", `{"name":"x","objective":{"direction":1,"name":"o","vars":[{"name":"","coef":1}]}}`, "objective.vars[0].name: a variable needs a non-empty name"},
		{"huge number", `{"name":"x","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1e400}]}}`, "expected a number, got number 1e400"},
		{"near DBL_MAX", `{"name":"x","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1.7e308}]}}`, "not a finite number of magnitude at most 1e300"},
		{"duplicate objective var", `{"name":"x","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1},{"name":"x","coef":2}]}}`, `appears twice in the objective`},
		{"no variables", `{"name":"x","objective":{"direction":1,"name":"o","vars":[]}}`, "there are no variables"},
		{"no bnds", `{"name":"m",` + obj + `,"subjectTo":[{"name":"c","vars":[{"name":"x","coef":1}]}]}`, "subjectTo[0].bnds is missing"},
		{"bad bound type", row(`{"type":6,"lb":0,"ub":1}`), "subjectTo[0].bnds.type: must be GLP_FR (1), GLP_LO (2), GLP_UP (3), GLP_DB (4) or GLP_FX (5), got 6"},
		{"missing lb", row(`{"type":2,"ub":1}`), "subjectTo[0].bnds.lb is missing (type GLP_LO needs it)"},
		{"missing ub", row(`{"type":4,"lb":1}`), "subjectTo[0].bnds.ub is missing (type GLP_DB needs it)"},
		{"inverted bounds", row(`{"type":4,"lb":2,"ub":1}`), "subjectTo[0].bnds: lb 2 is greater than ub 1"},
		{"unnamed constraint", `{"name":"m",` + obj + `,"subjectTo":[{"vars":[{"name":"x","coef":1}],"bnds":{"type":1}}]}`, "subjectTo[0].name: a constraint needs a non-empty name"},
		{"duplicate var in row", `{"name":"m",` + obj + `,"subjectTo":[{"name":"c","vars":[{"name":"x","coef":1},{"name":"x","coef":1}],"bnds":{"type":1}}]}`, `subjectTo[0].vars[1]: variable "x" appears twice in constraint "c"`},
		{"bad model options", `{"name":"m",` + obj + `,"options":{"tmlim":"x"}}`, "options.tmlim: expected a number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := glpk.Solve(context.Background(), json.RawMessage(c.model), glpk.Options{})
			ge := expectKind(t, err, glpk.KindInvalid)
			if !strings.Contains(ge.Message, c.want) {
				t.Errorf("message %q does not contain %q", ge.Message, c.want)
			}
			if !strings.HasPrefix(err.Error(), "glpk: ") {
				t.Errorf("Error() %q", err.Error())
			}
		})
	}
}

// bigModel has n variables in one constraint each, and one constraint
// over all of them.
func bigModel(n int) string {
	var b strings.Builder
	b.WriteString(`{"name":"big","objective":{"direction":2,"name":"o","vars":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"x%d","coef":%d}`, i, i%7+1)
	}
	b.WriteString(`]},"subjectTo":[`)
	for i := range n {
		fmt.Fprintf(&b, `{"name":"c%d","vars":[{"name":"x%d","coef":1}],"bnds":{"type":3,"ub":%d}},`, i, i, i%5+1)
	}
	b.WriteString(`{"name":"all","vars":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"x%d","coef":1}`, i)
	}
	fmt.Fprintf(&b, `],"bnds":{"type":3,"ub":%d}}]}`, n)
	return b.String()
}

func TestLimits(t *testing.T) {
	model := bigModel(100)
	for _, c := range []struct {
		lim   glpk.Limits
		limit string
	}{
		{glpk.Limits{MaxVars: 99}, glpk.LimitVars},
		{glpk.Limits{MaxConstraints: 100}, glpk.LimitConstraints},
		{glpk.Limits{MaxNonzeros: 199}, glpk.LimitNonzeros},
	} {
		_, err := glpk.Solve(context.Background(), json.RawMessage(model), glpk.Options{Limits: c.lim})
		if ge := expectKind(t, err, glpk.KindLimit); ge.Limit != c.limit {
			t.Errorf("limit %q, want %q", ge.Limit, c.limit)
		}
	}
	r := solve(t, model, glpk.Options{Limits: glpk.Limits{MaxVars: 100, MaxConstraints: 101, MaxNonzeros: 200}})
	if r.Result.Status != glpk.GLPOpt {
		t.Errorf("status %d", r.Result.Status)
	}
	if _, err := glpk.Solve(context.Background(), json.RawMessage(model), glpk.Options{Limits: glpk.Limits{MaxVars: -1}}); err == nil {
		t.Error("negative limit accepted")
	}
}

func TestMemoryLimit(t *testing.T) {
	_, err := glpk.Solve(context.Background(), json.RawMessage(bigModel(20_000)), glpk.Options{Limits: glpk.Limits{MemoryLimitBytes: 1 << 20}})
	ge := expectKind(t, err, glpk.KindMemory)
	t.Log(ge.Message)
	// The thread's GLPK environment was freed: the next solve is fine.
	r := solve(t, readmeLP, glpk.Options{})
	if r.Result.Status != glpk.GLPOpt {
		t.Errorf("status %d", r.Result.Status)
	}
}

// TestInternalErrorRecovered: GLPK's error hook returns control instead
// of aborting the process.
func TestInternalErrorRecovered(t *testing.T) {
	msg := glpk.FailForTest()
	if !strings.Contains(msg, "glp_set_obj_dir: dir = 99; invalid direction flag") {
		t.Errorf("message %q", msg)
	}
	if r := solve(t, readmeLP, glpk.Options{}); r.Result.Status != glpk.GLPOpt {
		t.Errorf("status %d", r.Result.Status)
	}
}

// marketSplit is a Cornuéjols-Dawande market split instance: hard for
// branch and bound, so a time limit or a cancellation ends the search.
func marketSplit(m int, seed uint64) string {
	n := 10 * (m - 1)
	rng := rand.New(rand.NewPCG(seed, seed))
	var b strings.Builder
	b.WriteString(`{"name":"split","objective":{"direction":1,"name":"o","vars":[`)
	for i := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"sp%d","coef":1},{"name":"sm%d","coef":1}`, i, i)
	}
	b.WriteString(`]},"subjectTo":[`)
	var names []string
	for j := range n {
		names = append(names, fmt.Sprintf(`"x%d"`, j))
	}
	for i := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"r%d","vars":[`, i)
		sum := 0
		for j := range n {
			a := rng.IntN(100)
			sum += a
			fmt.Fprintf(&b, `{"name":"x%d","coef":%d},`, j, a)
		}
		fmt.Fprintf(&b, `{"name":"sp%d","coef":1},{"name":"sm%d","coef":-1}],"bnds":{"type":5,"lb":%d}}`, i, i, sum/2)
	}
	fmt.Fprintf(&b, `],"binaries":[%s]}`, strings.Join(names, ","))
	return b.String()
}

func TestTimeLimit(t *testing.T) {
	model := marketSplit(6, 1)

	start := time.Now()
	r := solve(t, model, glpk.Options{TimeLimit: 300 * time.Millisecond})
	took := time.Since(start)
	if r.Result.Status == glpk.GLPOpt || took > testenv.ScaleDuration(2*time.Second) || took < 250*time.Millisecond {
		t.Errorf("time limit 300ms: status %d after %v", r.Result.Status, took)
	}
	if r.Result.Status != glpk.GLPFeas && r.Result.Status != glpk.GLPUndef {
		t.Errorf("status %d, want GLP_FEAS or GLP_UNDEF", r.Result.Status)
	}
	t.Logf("time limit: status %d z %v after %v", r.Result.Status, r.Result.Z, took)

	// The run's deadline: an error, not a result.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err := glpk.Solve(ctx, json.RawMessage(model), glpk.Options{TimeLimit: time.Hour})
	took = time.Since(start)
	expectKind(t, err, glpk.KindCanceled)
	if !errors.Is(err, context.DeadlineExceeded) || took > testenv.ScaleDuration(2*time.Second) {
		t.Errorf("deadline: %v after %v", err, took)
	}

	// Cancellation without a deadline stops the branch and bound: the
	// context ends once the solver runs.
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := glpk.Solve(ctx, json.RawMessage(model), glpk.Options{})
		done <- err
	}()
	testenv.WaitFor(t, "the solver to run", func() bool { return solving() || len(done) > 0 })
	start = time.Now()
	cancel()
	err = <-done
	took = time.Since(start)
	expectKind(t, err, glpk.KindCanceled)
	if !errors.Is(err, context.Canceled) || took > testenv.ScaleDuration(2*time.Second) {
		t.Errorf("cancel: %v after %v", err, took)
	}
	t.Logf("canceled after %v", took)

	// Already canceled: nothing runs.
	_, err = glpk.Solve(ctx, json.RawMessage(readmeLP), glpk.Options{})
	expectKind(t, err, glpk.KindCanceled)
}

// solving reports whether a goroutine is in GLPK's solver (a cgo call).
func solving() bool {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Contains(string(buf[:n]), "glpk._Cfunc_sb_solve(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestAcceptedAsGlpkJS: models glpk.js 5 accepts that Stepbox refused
// before, with the results glpk.js gives (internal/differential runs them
// through glpk.js itself).
func TestAcceptedAsGlpkJS(t *testing.T) {
	obj := `"objective":{"direction":2,"name":"o","vars":[{"name":"x","coef":"2"}]}`
	for _, c := range []struct{ name, model, want string }{
		{"numeric string coef", `{"name":"m",` + obj + `,"subjectTo":[{"name":"c","vars":[{"name":"x","coef":" 1e0 "}],"bnds":{"type":3,"ub":4}}]}`,
			`{"vars":{"x":4},"dual":{"c":2},"z":8,"status":5}`},
		{"a variable only in bounds, generals and binaries", `{"name":"m",` + obj + `,"subjectTo":[{"name":"c","vars":[{"name":"x","coef":1}],"bnds":{"type":3,"ub":4}}],` +
			`"bounds":[{"name":"y","type":5,"lb":3}],"generals":["z"],"binaries":["w"]}`,
			`{"vars":{"x":4,"y":3,"z":0,"w":0},"z":8,"status":5}`},
		{"repeated constraint names: the last row's values under the first's key", `{"name":"m",` + obj + `,"subjectTo":[` +
			`{"name":"c","vars":[{"name":"x","coef":1}],"bnds":{"type":3,"ub":4}},{"name":"d","vars":[{"name":"x","coef":1}],"bnds":{"type":3,"ub":9}},` +
			`{"name":"c","vars":[{"name":"x","coef":1}],"bnds":{"type":3,"ub":6}}]}`,
			`{"vars":{"x":4},"dual":{"c":0,"d":0},"z":8,"status":5,"rows":{"c":4,"d":4}}`},
		{"a later bound replaces an earlier one; binaries win over generals", `{"name":"m",` + obj + `,"bounds":[{"name":"x","type":4,"lb":0,"ub":9},{"name":"x","type":4,"lb":0,"ub":7}],"generals":["x"],"binaries":["x"]}`,
			`{"vars":{"x":1},"z":2,"status":5}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := glpk.Solve(context.Background(), json.RawMessage(c.model), glpk.Options{Rows: strings.HasPrefix(c.name, "repeated")})
			if err != nil {
				t.Fatal(err)
			}
			var r struct{ Result json.RawMessage }
			if err := json.Unmarshal(out, &r); err != nil || string(r.Result) != c.want {
				t.Errorf("result %s, want %s (%v)", r.Result, c.want, err)
			}
		})
	}
}

// TestRowsAndProgress: result.rows holds the constraints' activities, and
// Progress records glpk.js's cb.call snapshots: several for an LP that
// takes several simplex iterations, the last one the final solution;
// none for a MIP, which glpk.js does not report on.
func TestRowsAndProgress(t *testing.T) {
	out, err := glpk.Solve(context.Background(), json.RawMessage(denseLP(30)), glpk.Options{Rows: true, Progress: 1})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Result struct {
			Vars, Dual, Rows map[string]float64
			Z                float64
			Status           int
		}
		Progress []struct {
			Status           int
			Z                float64
			Vars, Dual, Rows map[string]float64
		}
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Result.Rows) == 0 || len(r.Progress) < 2 {
		t.Fatalf("rows %v, %d progress reports: %s", r.Result.Rows, len(r.Progress), out)
	}
	last := r.Progress[len(r.Progress)-1]
	if last.Status != glpk.GLPOpt || last.Z != r.Result.Z || !reflect.DeepEqual(last.Vars, r.Result.Vars) || !reflect.DeepEqual(last.Rows, r.Result.Rows) {
		t.Errorf("last report %+v, result %+v", last, r.Result)
	}
	for _, p := range r.Progress[:len(r.Progress)-1] {
		if p.Status == glpk.GLPOpt {
			t.Errorf("an optimal report before the last: %+v", r.Progress)
		}
	}
	mip, err := glpk.Solve(context.Background(), json.RawMessage(marketSplit(3, 2)), glpk.Options{Rows: true, Progress: 1})
	if err != nil || strings.Contains(string(mip), `"progress"`) || !strings.Contains(string(mip), `"rows":{`) {
		t.Errorf("MIP: %s %v", mip, err)
	}
}

// denseLP is an LP in n variables and n constraints that the simplex
// method needs several iterations for: maximise Σ (j+1)·x_j subject to
// Σ_j ((7i+3j)%11+1)·x_j ≤ 10·(i%7+1) for each i (30 variables take
// glpk.js 3 reports with cb.each 1).
func denseLP(n int) string {
	var b strings.Builder
	b.WriteString(`{"name":"dense","objective":{"direction":2,"name":"z","vars":[`)
	for j := range n {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"x%d","coef":%d}`, j, j+1)
	}
	b.WriteString(`]},"subjectTo":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"c%d","vars":[`, i)
		for j := range n {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"name":"x%d","coef":%d}`, j, (7*i+3*j)%11+1)
		}
		fmt.Fprintf(&b, `],"bnds":{"type":3,"ub":%d}}`, 10*(i%7+1))
	}
	b.WriteString(`]}`)
	return b.String()
}

func TestParseOptions(t *testing.T) {
	cases := []struct {
		raw  string
		want glpk.Options
	}{
		{``, glpk.Options{}},
		{`null`, glpk.Options{}},
		{`0`, glpk.Options{}},
		{`{}`, glpk.Options{}},
		{`{"msglev": 3, "presol": false, "mipgap": 0.01, "tmlim": 2.5}`, glpk.Options{NoPresolve: true, MIPGap: 0.01, TimeLimit: 2500 * time.Millisecond}},
		{`{"msgLev": 0, "presolve": true, "mipGap": 0.5, "tmLim": 750}`, glpk.Options{MIPGap: 0.5, TimeLimit: 750 * time.Millisecond}},
		{`{"presol": null, "tmlim": null}`, glpk.Options{}},
		{`{"rows": true}`, glpk.Options{Rows: true}},
		{`{"rows": false, "cb": {"call": true}}`, glpk.Options{Progress: 1}},
		{`{"cb": {"call": true, "each": 25}}`, glpk.Options{Progress: 25}},
		{`{"cb": {"call": true, "each": 0}}`, glpk.Options{Progress: 1}},
		{`{"cb": {"each": 25}}`, glpk.Options{}}, // no function: ignored, as glpk.js does
		{`{"cb": {}}`, glpk.Options{}},
	}
	exported := func(o glpk.Options) glpk.Options {
		return glpk.Options{NoPresolve: o.NoPresolve, MIPGap: o.MIPGap, TimeLimit: o.TimeLimit, Rows: o.Rows, Progress: o.Progress, Limits: o.Limits}
	}
	for _, c := range cases {
		got, err := glpk.ParseOptions(json.RawMessage(c.raw))
		if err != nil || !reflect.DeepEqual(exported(got), c.want) {
			t.Errorf("ParseOptions(%s) = %+v, %v; want %+v", c.raw, got, err, c.want)
		}
	}
	for _, raw := range []string{`"x"`, `7`, `1.5`, `{"cb": 3}`, `{"cb": {"fn": 1}}`, `{"rows": 1}`, `{"tmlim": -1}`, `{"mipgap": -0.1}`, `{"presol": 1}`, `{"msglev": 9}`, `{"tmlim": "1"}`, `[]`} {
		_, err := glpk.ParseOptions(json.RawMessage(raw))
		ge := expectKind(t, err, glpk.KindInvalid)
		t.Logf("%s: %s", raw, ge.Message)
	}
}

// TestModelOptions: glpk.js uses lp.options when solve gets none.
func TestModelOptions(t *testing.T) {
	model := marketSplit(6, 2)
	model = strings.Replace(model, `{"name":"split",`, `{"name":"split","options":{"tmlim":0.2},`, 1)
	start := time.Now()
	r := solve(t, model, glpk.Options{})
	if took := time.Since(start); r.Result.Status == glpk.GLPOpt || took > testenv.ScaleDuration(2*time.Second) {
		t.Errorf("status %d after %v", r.Result.Status, took)
	}
}

func TestMIPGap(t *testing.T) {
	r := solve(t, marketSplit(4, 3), glpk.Options{MIPGap: 1e6})
	if r.Result.Status != glpk.GLPFeas && r.Result.Status != glpk.GLPOpt {
		t.Errorf("status %d", r.Result.Status)
	}
}

func TestConcurrentSolves(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1) // Done when the goroutine returns.
		go func() {
			defer wg.Done()
			for range 20 {
				if i%2 == 0 {
					r := solve(t, readmeLP, glpk.Options{})
					if !near(r.Result.Z, 0.46) {
						t.Errorf("z %v", r.Result.Z)
					}
				} else {
					r := solve(t, bigModel(50), glpk.Options{})
					if r.Result.Status != glpk.GLPOpt {
						t.Errorf("status %d", r.Result.Status)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestSilent: GLPK writes nothing to the process's standard output or
// error, not even for failures.
func TestSilent(t *testing.T) {
	out := captureStdio(t, func() {
		solve(t, readmeLP, glpk.Options{})
		solve(t, `{"name":"i","objective":{"direction":1,"name":"o","vars":[{"name":"x","coef":1}]},
			"subjectTo":[{"name":"c","vars":[{"name":"x","coef":1}],"bnds":{"type":3,"ub":-1}}],"generals":["x"]}`, glpk.Options{})
		glpk.FailForTest()
		glpk.Solve(context.Background(), json.RawMessage(bigModel(20_000)), glpk.Options{Limits: glpk.Limits{MemoryLimitBytes: 1 << 20}})
	})
	if out != "" {
		t.Errorf("GLPK wrote %q", out)
	}
}

// captureStdio runs f with descriptors 1 and 2 redirected to a pipe.
func captureStdio(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := [2]int{}
	for i, fd := range []int{1, 2} {
		if saved[i], err = syscall.Dup(fd); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Dup3(int(w.Fd()), fd, 0); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan string)
	go func() {
		b := make([]byte, 0, 1024)
		buf := make([]byte, 1024)
		for {
			n, err := r.Read(buf)
			b = append(b, buf[:n]...)
			if err != nil {
				done <- string(b)
				return
			}
		}
	}()
	f()
	for i, fd := range []int{1, 2} {
		syscall.Dup3(saved[i], fd, 0)
		syscall.Close(saved[i])
	}
	w.Close()
	out := <-done
	r.Close()
	return out
}

func TestVersion(t *testing.T) {
	if v := glpk.Version(); !strings.HasPrefix(v, "5.") {
		t.Errorf("GLPK %s", v)
	}
}
