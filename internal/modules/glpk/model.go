package glpk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// The model as glpk.js reads it. Pointers tell a missing member from a
// zero one.
type jsModel struct {
	Name      string          `json:"name"`
	Objective *jsObjective    `json:"objective"`
	SubjectTo []jsConstraint  `json:"subjectTo"`
	Bounds    []jsBound       `json:"bounds"`
	Binaries  []string        `json:"binaries"`
	Generals  []string        `json:"generals"`
	Options   json.RawMessage `json:"options"`
}

type jsObjective struct {
	Direction *float64 `json:"direction"`
	Name      string   `json:"name"`
	Vars      []jsTerm `json:"vars"`
}

type jsTerm struct {
	Name *string `json:"name"`
	Coef *number `json:"coef"`
}

type jsConstraint struct {
	Name *string  `json:"name"`
	Vars []jsTerm `json:"vars"`
	Bnds *jsBnds  `json:"bnds"`
}

type jsBnds struct {
	Type *float64 `json:"type"`
	LB   *float64 `json:"lb"`
	UB   *float64 `json:"ub"`
}

type jsBound struct {
	Name *string  `json:"name"`
	Type *float64 `json:"type"`
	LB   *float64 `json:"lb"`
	UB   *float64 `json:"ub"`
}

// Column kinds, GLPK's GLP_CV, GLP_IV and GLP_BV.
const (
	kindContinuous = 1
	kindInteger    = 2
	kindBinary     = 3
)

// problem is a validated model in the arrays GLPK loads.
type problem struct {
	name    string
	dir     int
	cols    []string // variable names, in glpk.js's order of first appearance
	rows    []string // constraint names
	obj     []float64
	ctype   []int32
	clb     []float64
	cub     []float64
	ckind   []int32
	rtype   []int32
	rlb     []float64
	rub     []float64
	ia, ja  []int32   // 1-based; element 0 unused
	ar      []float64 // 1-based; element 0 unused
	options json.RawMessage
	// rowOrder is nil when the constraint names are distinct; else the
	// rows to write in an object keyed by name, as glpk.js's assignments
	// leave it: each name once, where it first appears, with the value of
	// its last row.
	rowOrder []int
}

// keyOrder returns the indexes an object keyed by names holds after
// obj[names[i]] = v[i] for each i in turn, in its key order; nil when the
// names are distinct.
func keyOrder(names []string) []int {
	last := make(map[string]int, len(names))
	for i, n := range names {
		last[n] = i
	}
	if len(last) == len(names) {
		return nil
	}
	order := make([]int, 0, len(last))
	for _, n := range names {
		if j, ok := last[n]; ok {
			order = append(order, j)
			delete(last, n)
		}
	}
	return order
}

// parseModel decodes and validates a model. Every error is a KindInvalid
// or KindLimit *Error naming the offending member.
func parseModel(raw json.RawMessage, lim Limits) (*problem, error) {
	var m jsModel
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, invalidf("%s", describeDecodeError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalidf("model: unexpected data after the model object")
	}
	if m.Objective == nil {
		return nil, invalidf("model: objective is missing")
	}
	p := &problem{name: m.Name, options: m.Options, ia: []int32{0}, ja: []int32{0}, ar: []float64{0}}

	dir, err := integer(m.Objective.Direction, "objective.direction")
	if err != nil {
		return nil, err
	}
	if dir != GLPMin && dir != GLPMax {
		return nil, invalidf("objective.direction: must be GLP_MIN (1) or GLP_MAX (2), got %d", dir)
	}
	p.dir = dir

	// Columns are numbered in order of first appearance: the objective's
	// variables, then those of the constraints (glpk.js's order, so that
	// result.vars lists them alike).
	index := map[string]int{}
	addCol := func(name string) (int, error) {
		if j, ok := index[name]; ok {
			return j, nil
		}
		if len(p.cols) == lim.MaxVars {
			return 0, limitf(LimitVars, "model: more than %d variables", lim.MaxVars)
		}
		j := len(p.cols)
		index[name] = j
		p.cols = append(p.cols, name)
		p.obj = append(p.obj, 0)
		return j, nil
	}
	seen := map[string]bool{}
	for k, t := range m.Objective.Vars {
		where := fmt.Sprintf("objective.vars[%d]", k)
		name, coef, err := term(t, where)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, invalidf("%s: variable %q appears twice in the objective", where, name)
		}
		seen[name] = true
		j, err := addCol(name)
		if err != nil {
			return nil, err
		}
		p.obj[j] = coef
	}

	for i, c := range m.SubjectTo {
		where := fmt.Sprintf("subjectTo[%d]", i)
		if c.Name == nil || *c.Name == "" {
			return nil, invalidf("%s.name: a constraint needs a non-empty name", where)
		}
		name := *c.Name
		if len(p.rows) == lim.MaxConstraints {
			return nil, limitf(LimitConstraints, "model: more than %d constraints", lim.MaxConstraints)
		}
		p.rows = append(p.rows, name)
		if c.Bnds == nil {
			return nil, invalidf("%s.bnds is missing", where)
		}
		typ, lb, ub, err := bounds(c.Bnds.Type, c.Bnds.LB, c.Bnds.UB, where+".bnds")
		if err != nil {
			return nil, err
		}
		p.rtype = append(p.rtype, int32(typ))
		p.rlb = append(p.rlb, lb)
		p.rub = append(p.rub, ub)
		inRow := map[int]bool{}
		for k, t := range c.Vars {
			twhere := fmt.Sprintf("%s.vars[%d]", where, k)
			vname, coef, err := term(t, twhere)
			if err != nil {
				return nil, err
			}
			j, err := addCol(vname)
			if err != nil {
				return nil, err
			}
			if inRow[j] {
				return nil, invalidf("%s: variable %q appears twice in constraint %q", twhere, vname, name)
			}
			inRow[j] = true
			if len(p.ar)-1 == lim.MaxNonzeros {
				return nil, limitf(LimitNonzeros, "model: more than %d constraint coefficients", lim.MaxNonzeros)
			}
			p.ia = append(p.ia, int32(i+1))
			p.ja = append(p.ja, int32(j+1))
			p.ar = append(p.ar, coef)
		}
	}
	// As in glpk.js, a name in bounds, generals or binaries is a variable
	// even if nothing else mentions it (its objective coefficient is 0).
	for k, b := range m.Bounds {
		if b.Name == nil || *b.Name == "" {
			return nil, invalidf("bounds[%d].name: a bound needs the name of a variable", k)
		}
		if _, err := addCol(*b.Name); err != nil {
			return nil, err
		}
	}
	for _, list := range []struct {
		field string
		names []string
	}{{"generals", m.Generals}, {"binaries", m.Binaries}} {
		for k, name := range list.names {
			if name == "" {
				return nil, invalidf("%s[%d]: a variable needs a non-empty name", list.field, k)
			}
			if _, err := addCol(name); err != nil {
				return nil, err
			}
		}
	}
	if len(p.cols) == 0 {
		return nil, invalidf("model: there are no variables: objective.vars and subjectTo name none")
	}
	p.rowOrder = keyOrder(p.rows)

	// Default bounds: x >= 0, as in glpk.js.
	n := len(p.cols)
	p.ctype = make([]int32, n)
	p.clb = make([]float64, n)
	p.cub = make([]float64, n)
	p.ckind = make([]int32, n)
	for j := range n {
		p.ctype[j] = GLPLO
		p.ckind[j] = kindContinuous
	}
	// A later bound of a variable replaces an earlier one, and a variable
	// in both generals and binaries is binary, as in glpk.js, which sets
	// them in that order.
	for k, b := range m.Bounds {
		where := fmt.Sprintf("bounds[%d]", k)
		j := index[*b.Name]
		typ, lb, ub, err := bounds(b.Type, b.LB, b.UB, where)
		if err != nil {
			return nil, err
		}
		p.ctype[j], p.clb[j], p.cub[j] = int32(typ), lb, ub
	}
	for _, name := range m.Generals {
		p.ckind[index[name]] = kindInteger
	}
	for _, name := range m.Binaries {
		p.ckind[index[name]] = kindBinary
	}
	return p, nil
}

// term validates one {name, coef}.
func term(t jsTerm, where string) (string, float64, error) {
	if t.Name == nil || *t.Name == "" {
		return "", 0, invalidf("%s.name: a variable needs a non-empty name", where)
	}
	if t.Coef == nil {
		return "", 0, invalidf("%s.coef is missing", where)
	}
	if err := finite(float64(*t.Coef), where+".coef"); err != nil {
		return "", 0, err
	}
	return *t.Name, float64(*t.Coef), nil
}

// bounds validates {type, lb, ub} and returns what GLPK is given. lb is
// needed by GLP_LO, GLP_DB and GLP_FX, ub by GLP_UP and GLP_DB; a member a
// type does not use is ignored, as in glpk.js. GLP_DB with lb == ub is
// GLP_FX (GLPK refuses such double bounds).
func bounds(typp, lbp, ubp *float64, where string) (typ int, lb, ub float64, err error) {
	typ, err = integer(typp, where+".type")
	if err != nil {
		return 0, 0, 0, err
	}
	if typ < GLPFR || typ > GLPFX {
		return 0, 0, 0, invalidf("%s.type: must be GLP_FR (1), GLP_LO (2), GLP_UP (3), GLP_DB (4) or GLP_FX (5), got %d", where, typ)
	}
	need := func(v *float64, member string) (float64, error) {
		if v == nil {
			return 0, invalidf("%s.%s is missing (type %s needs it)", where, member, boundName(typ))
		}
		return *v, finite(*v, where+"."+member)
	}
	switch typ {
	case GLPLO, GLPFX:
		lb, err = need(lbp, "lb")
	case GLPUP:
		ub, err = need(ubp, "ub")
	case GLPDB:
		if lb, err = need(lbp, "lb"); err == nil {
			ub, err = need(ubp, "ub")
		}
		if err == nil && lb > ub {
			err = invalidf("%s: lb %v is greater than ub %v", where, lb, ub)
		}
		if err == nil && lb == ub {
			typ = GLPFX
		}
	}
	if typ == GLPFX {
		ub = lb
	}
	return typ, lb, ub, err
}

func boundName(typ int) string {
	return [...]string{"", "GLP_FR", "GLP_LO", "GLP_UP", "GLP_DB", "GLP_FX"}[typ]
}

// number is a JSON number or, as glpk.js converts what it is given to a
// number, a string holding a decimal number ("3", " 1.5e2 ").
type number float64

func (n *number) UnmarshalJSON(b []byte) error {
	var f float64
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return &json.UnmarshalTypeError{Value: "string " + strconv.Quote(s), Type: reflect.TypeFor[float64]()}
		}
		*n = number(v)
		return nil
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = number(f)
	return nil
}

// integer reads a JSON number that must be a small integer.
func integer(v *float64, where string) (int, error) {
	if v == nil {
		return 0, invalidf("%s is missing", where)
	}
	if *v != math.Trunc(*v) || math.Abs(*v) > 1<<20 {
		return 0, invalidf("%s: %v is not an integer constant", where, *v)
	}
	return int(*v), nil
}

// maxMagnitude bounds every number of a model. GLPK treats ±DBL_MAX as
// infinite and has no use for numbers near it; a model that contains them
// is wrong, and they could overflow inside the solver.
const maxMagnitude = 1e300

func finite(v float64, where string) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > maxMagnitude {
		return invalidf("%s: %v is not a finite number of magnitude at most 1e300", where, v)
	}
	return nil
}

// describeDecodeError turns an encoding/json error into a message that
// names the member.
func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "model"
		}
		want := te.Type.Kind().String()
		switch want {
		case "float64":
			want = "a number"
		case "string":
			want = "a string"
		case "slice":
			want = "an array"
		case "struct", "ptr":
			want = "an object"
		}
		return fmt.Sprintf("%s: expected %s, got %s", field, want, te.Value)
	case errors.As(err, &se):
		return "model: not valid JSON: " + strings.TrimPrefix(se.Error(), "json: ")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "model: unknown member " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "model: not valid JSON: unexpected end of input"
	case errors.Is(err, io.EOF):
		return "model: empty input"
	}
	return "model: " + strings.TrimPrefix(err.Error(), "json: ")
}
