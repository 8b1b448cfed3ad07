package glpk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"time"
)

// glpk.js's constants, which are GLPK's.
const (
	// Objective direction.
	GLPMin = 1 // minimise
	GLPMax = 2 // maximise

	// Bound types of a constraint (bnds.type) or a variable (bounds[].type).
	GLPFR = 1 // free: -∞ < x < +∞
	GLPLO = 2 // lower bound: lb ≤ x < +∞
	GLPUP = 3 // upper bound: -∞ < x ≤ ub
	GLPDB = 4 // double bound: lb ≤ x ≤ ub
	GLPFX = 5 // fixed: x = lb

	// Solution status (result.status).
	GLPUndef  = 1 // undefined: no solution (time limit, numerical trouble)
	GLPFeas   = 2 // feasible, not proved optimal (time limit or MIP gap)
	GLPInfeas = 3 // infeasible (an LP stopped before feasibility)
	GLPNoFeas = 4 // no feasible solution exists
	GLPOpt    = 5 // optimal
	GLPUnbnd  = 6 // unbounded
)

// Defaults for the zero fields of Limits.
const (
	DefaultMaxVars          = 100_000
	DefaultMaxConstraints   = 100_000
	DefaultMaxNonzeros      = 1_000_000
	DefaultMemoryLimitBytes = 256 << 20
)

// Limits are the host's caps on one solve. The zero value means the
// defaults. Requests never set these directly; the engine derives them
// from the plan and the run's limits.
type Limits struct {
	// MaxVars caps the variables of a model (KindLimit, LimitVars). Zero
	// means DefaultMaxVars.
	MaxVars int
	// MaxConstraints caps the constraints (KindLimit, LimitConstraints).
	// Zero means DefaultMaxConstraints.
	MaxConstraints int
	// MaxNonzeros caps the coefficients of all constraints together
	// (KindLimit, LimitNonzeros). Zero means DefaultMaxNonzeros.
	MaxNonzeros int
	// MemoryLimitBytes caps the memory GLPK allocates for the solve
	// (glp_mem_limit, whole MiB, rounded up); crossing it fails the solve
	// with KindMemory. Bytes; zero means DefaultMemoryLimitBytes. The
	// engine derives it from the run's memoryMb.
	MemoryLimitBytes int64
}

func (l Limits) withDefaults() (Limits, error) {
	var errs []error
	check := func(v *int, def int, name string) {
		if *v == 0 {
			*v = def
		}
		if *v < 0 {
			errs = append(errs, fmt.Errorf("glpk: Limits.%s %d is negative", name, *v))
		}
	}
	check(&l.MaxVars, DefaultMaxVars, "MaxVars")
	check(&l.MaxConstraints, DefaultMaxConstraints, "MaxConstraints")
	check(&l.MaxNonzeros, DefaultMaxNonzeros, "MaxNonzeros")
	if l.MemoryLimitBytes == 0 {
		l.MemoryLimitBytes = DefaultMemoryLimitBytes
	}
	if l.MemoryLimitBytes < 0 {
		errs = append(errs, fmt.Errorf("glpk: Limits.MemoryLimitBytes %d is negative", l.MemoryLimitBytes))
	}
	return l, errors.Join(errs...)
}

// Options control one solve. The guest's part comes from ParseOptions;
// the host sets Limits. The zero value is glpk.js's default: presolver on,
// MIP gap 0, no time limit of its own.
type Options struct {
	// NoPresolve turns GLPK's presolver off (glpk.js: presol: false).
	NoPresolve bool
	// MIPGap is the relative gap at which the branch-and-bound search
	// stops with the best solution found (status GLP_FEAS, or GLP_OPT if
	// it is proved optimal); zero searches to optimality.
	MIPGap float64
	// TimeLimit stops the solver after this long with the best solution
	// so far (status GLP_FEAS or GLP_UNDEF), as GLPK's tm_lim does. Zero
	// means none. Solve also stops at ctx's deadline, whichever comes
	// first, and then fails with KindCanceled.
	TimeLimit time.Duration
	// Rows adds result.rows, each constraint's activity (the value of its
	// row, glpk.js's rows: true).
	Rows bool
	// Progress, when positive, solves an LP as glpk.js 5 does for
	// options.cb {call, each} with each = Progress: without the presolver,
	// in steps of a growing iteration limit, recording after each step
	// what glpk.js passes to cb.call. The steps are in the output's
	// "progress" member; the guest calls cb.call with each before its
	// promise settles. A MIP ignores it, as glpk.js does.
	Progress int
	// Limits are the host's caps; the guest cannot set them.
	Limits Limits

	// given is the guest's options object as ParseOptions read it, so that
	// Solve can lay it over the model's options as glpk.js does; nil for
	// Options made in Go, and for a bare message level (which glpk.js
	// does not merge).
	given map[string]json.RawMessage
	level bool // the options were a bare message level
}

// The most progress snapshots one solve keeps, in number and in doubles;
// a solve that needs more fails, saying to raise cb.each.
const (
	maxProgressSteps  = 100_000
	maxProgressFloats = 4 << 20 // 32 MiB
)

// ParseOptions reads the guest's options argument, glpk.js's shape:
//
//	undefined, null      defaults
//	a number             a message level, as in glpk.solve(lp, glpk.GLP_MSG_OFF)
//	an object:
//	  msglev, msgLev     message level 0-4: accepted and ignored, GLPK never prints
//	  presol, presolve   boolean, default true
//	  mipgap, mipGap     relative MIP gap ≥ 0, default 0
//	  tmlim              time limit in seconds (glpk.js 4)
//	  tmLim              time limit in milliseconds (glpk.js 3 and earlier)
//	  rows               boolean: add result.rows, the constraints' activities
//	  cb                 {call, each}: glpk.js's progress callback; the guest
//	                     sends call as true when it is a function, and each
//	                     (default 1) becomes Progress
//
// Any other member is an error, so that a misspelt option does not go
// unnoticed. The result has no Limits: the host sets them.
func ParseOptions(raw json.RawMessage) (Options, error) {
	var o Options
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return o, nil
	}
	if raw[0] != '{' {
		var lev float64
		if err := json.Unmarshal(raw, &lev); err != nil {
			return o, invalidf("options: expected an object or a message level, got %s", raw)
		}
		o.level = true
		return o, checkMsgLevel(lev)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return o, invalidf("options: %s", describeDecodeError(err))
	}
	o.given = m
	number := func(key string) (float64, bool, error) {
		v, ok := m[key]
		if !ok || string(v) == "null" {
			return 0, false, nil
		}
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return 0, false, invalidf("options.%s: expected a number, got %s", key, v)
		}
		return f, true, nil
	}
	for key, v := range m {
		switch key {
		case "msglev", "msgLev":
			if lev, ok, err := number(key); err != nil {
				return o, err
			} else if ok {
				if err := checkMsgLevel(lev); err != nil {
					return o, err
				}
			}
		case "presol", "presolve":
			var b *bool
			if err := json.Unmarshal(v, &b); err != nil {
				return o, invalidf("options.%s: expected true or false, got %s", key, v)
			}
			if b != nil {
				o.NoPresolve = !*b
			}
		case "mipgap", "mipGap":
			gap, ok, err := number(key)
			if err != nil {
				return o, err
			}
			if ok && (gap < 0 || gap > 1e6) {
				return o, invalidf("options.%s: %v is not a gap between 0 and 1e6", key, gap)
			}
			o.MIPGap = gap
		case "tmlim", "tmLim":
			t, ok, err := number(key)
			if err != nil {
				return o, err
			}
			unit := time.Second
			if key == "tmLim" {
				unit = time.Millisecond
			}
			if ok && (t < 0 || t*float64(unit) > float64(24*time.Hour)) {
				return o, invalidf("options.%s: %v is not a time limit between 0 and a day", key, t)
			}
			o.TimeLimit = time.Duration(t * float64(unit))
		case "rows":
			var b *bool
			if err := json.Unmarshal(v, &b); err != nil {
				return o, invalidf("options.rows: expected true or false, got %s", v)
			}
			o.Rows = b != nil && *b
		case "cb":
			each, err := parseCallback(v)
			if err != nil {
				return o, err
			}
			o.Progress = each
		default:
			return o, invalidf("options: unknown member %q (known: msglev, presol, mipgap, tmlim, rows, cb)", key)
		}
	}
	return o, nil
}

// parseCallback reads options.cb as the guest sends it: {"call": true,
// "each": n} when cb.call is a function. As in glpk.js, a cb without a
// function is ignored (0), and each is 1 unless it is a number above 0.
func parseCallback(v json.RawMessage) (int, error) {
	if string(v) == "null" {
		return 0, nil
	}
	var cb map[string]json.RawMessage
	if err := json.Unmarshal(v, &cb); err != nil {
		return 0, invalidf("options.cb: expected an object {call, each}, got %s", v)
	}
	for key := range cb {
		if key != "call" && key != "each" {
			return 0, invalidf("options.cb: unknown member %q (known: call, each)", key)
		}
	}
	if string(cb["call"]) != "true" {
		return 0, nil
	}
	each := 1
	var f float64
	if json.Unmarshal(cb["each"], &f) == nil && f >= 1 {
		each = int(min(f, math.MaxInt32))
	}
	return each, nil
}

func checkMsgLevel(lev float64) error {
	if lev != math.Trunc(lev) || lev < 0 || lev > 4 {
		return invalidf("options.msglev: %v is not a message level (GLP_MSG_OFF 0 .. GLP_MSG_DBG 4)", lev)
	}
	return nil
}

// Available returns nil when this binary has GLPK, else the error every
// Solve returns: KindUnavailable, wrapping errors.ErrUnsupported, with a
// message that says why the binary has none (built without cgo, or with
// the stepbox_noglpk tag) and how to build one that has.
func Available() error {
	if available {
		return nil
	}
	return &Error{Kind: KindUnavailable, Message: "GLPK is not available: " + unavailableWhy, err: errors.ErrUnsupported}
}

// Version is the linked GLPK's version ("5.0" on Debian 12), "" in a
// build without GLPK.
func Version() string { return version() }

// Solve validates model, a glpk.js model, solves it with GLPK and returns
// glpk.js's result:
//
//	{"name": "…", "time": 0.003, "result": {"vars": {"x": 1, …}, "dual": {"c1": 0.5, …}, "z": 42, "status": 5}}
//
// "time" is in seconds. "dual" (the constraints' dual values, GLPK's
// row duals) is there for LPs only. A model with generals or binaries is
// a MIP, solved with branch and bound (glp_intopt); any other is an LP,
// solved with the simplex method (glp_simplex).
//
//	out, err := glpk.Solve(ctx, modelJSON, opts)
//
// Solve runs on the calling goroutine, which it keeps on one OS thread
// for the solve (one cgo call). Solves on different goroutines run in
// parallel: GLPK's state is thread-local and freed after each solve.
//
// The solve stops at ctx's deadline (as a GLPK time limit) and, for a MIP
// search, within moments of ctx being canceled; Solve then fails with
// KindCanceled. A simplex run cannot be interrupted except by its time
// limit: a canceled ctx without a deadline waits for it.
func Solve(ctx context.Context, model json.RawMessage, opts Options) (json.RawMessage, error) {
	start := time.Now()
	if err := Available(); err != nil {
		return nil, err
	}
	lim, err := opts.Limits.withDefaults()
	if err != nil {
		return nil, err
	}
	p, err := parseModel(model, lim)
	if err != nil {
		return nil, err
	}
	if opts, err = withModelOptions(opts, p.options); err != nil {
		return nil, err
	}
	if opts.MIPGap < 0 || math.IsNaN(opts.MIPGap) || math.IsInf(opts.MIPGap, 0) {
		return nil, invalidf("options.mipgap: %v is not a gap ≥ 0", opts.MIPGap)
	}

	tmLim := math.MaxInt32 // GLPK's "no limit"
	if opts.TimeLimit > 0 {
		tmLim = millis(opts.TimeLimit)
	}
	// byDeadline: the time limit is the run's deadline, not the guest's.
	byDeadline := false
	if deadline, ok := ctx.Deadline(); ok {
		if left := millis(time.Until(deadline)); left <= tmLim {
			tmLim, byDeadline = left, true
		}
	}
	if err := context.Cause(ctx); err != nil {
		return nil, canceled(err)
	}

	cancel := newCancelFlag()
	defer cancel.free()
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		cancel.set()
		close(done)
	})
	memMB := min((lim.MemoryLimitBytes+(1<<20)-1)>>20, math.MaxInt32)
	out := run(p, !opts.NoPresolve, opts.MIPGap, tmLim, int(memMB), opts.Progress, cancel)
	if !stop() {
		<-done // the flag is freed only after the AfterFunc is done with it
	}

	if out.failed != "" {
		msg := strings.TrimSpace(out.failed)
		if i := strings.Index(msg, "\nError detected in file"); i >= 0 {
			msg = msg[:i]
		}
		if strings.Contains(msg, "memory allocation limit exceeded") || strings.Contains(msg, "no memory available") {
			return nil, &Error{Kind: KindMemory, Message: "solve: the model needs more memory than the limit of " +
				strconv.FormatInt(memMB, 10) + " MiB (GLPK: " + msg + ")"}
		}
		return nil, &Error{Kind: KindSolver, Message: "solve: GLPK failed: " + msg}
	}
	if err := context.Cause(ctx); err != nil {
		return nil, canceled(err)
	}
	if out.timeout && byDeadline {
		// GLPK stopped at the time limit that the deadline set; ctx's
		// own timer may not have fired yet.
		return nil, canceled(context.DeadlineExceeded)
	}
	if out.stepsFull {
		return nil, invalidf("options.cb.each: %d makes more progress reports than one solve keeps for this model (%d); raise each", opts.Progress, len(out.steps))
	}
	return encodeResult(p, out, opts, time.Since(start)), nil
}

// withModelOptions lays the guest's options over the model's, as glpk.js
// 5 does ({...lp.options, ...opt}); a bare message level replaces them.
// Options made in Go (not by ParseOptions) use the model's only when they
// are the zero value.
func withModelOptions(opts Options, model json.RawMessage) (Options, error) {
	if model == nil || opts.level {
		return opts, nil
	}
	if opts.given == nil {
		if opts.NoPresolve || opts.MIPGap != 0 || opts.TimeLimit != 0 || opts.Rows || opts.Progress != 0 {
			return opts, nil
		}
		o, err := ParseOptions(model)
		o.Limits = opts.Limits
		return o, err
	}
	var merged map[string]json.RawMessage
	if err := json.Unmarshal(model, &merged); err != nil || merged == nil {
		// Not an object: ParseOptions says what is wrong with it.
		if _, err := ParseOptions(model); err != nil {
			return opts, err
		}
		return opts, nil
	}
	maps.Copy(merged, opts.given)
	b, _ := json.Marshal(merged) // cannot fail: raw messages that parsed
	o, err := ParseOptions(b)
	o.Limits = opts.Limits
	return o, err
}

// Write returns model, a glpk.js model, as the text GLPK writes for it:
// CPLEX LP (glpk.js's write) for format "lp" or "", free MPS for "mps".
// The model is validated as Solve validates it, and built as Solve and
// glpk.js build it (terms sorted by column, as glp_sort_matrix leaves
// them), so the text is what glpk.js's write gives.
func Write(model json.RawMessage, format string, lim Limits) (string, error) {
	if err := Available(); err != nil {
		return "", err
	}
	if format != "" && format != "lp" && format != "mps" {
		return "", invalidf("write: format must be \"lp\" or \"mps\", got %q", format)
	}
	lim, err := lim.withDefaults()
	if err != nil {
		return "", err
	}
	p, err := parseModel(model, lim)
	if err != nil {
		return "", err
	}
	text, failed := write(p, format == "mps")
	if failed != "" {
		return "", &Error{Kind: KindSolver, Message: "write: GLPK failed: " + strings.TrimSpace(failed)}
	}
	return text, nil
}

// outcome is what a solve produced.
type outcome struct {
	status  int
	z       float64
	x, dual []float64
	rows    []float64 // the constraints' activities
	steps   []step    // Options.Progress: the snapshots, in order
	// stepsFull: the solve needed more snapshots than it could keep
	stepsFull bool
	mip       bool
	timeout   bool   // the time limit stopped the solver
	failed    string // GLPK's message for an internal error, "" if none
}

// step is one snapshot of an LP solved with Options.Progress.
type step struct {
	status        int
	z             float64
	x, dual, rows []float64
}

// millis converts d to GLPK's tm_lim: whole milliseconds, rounded up, at
// least 1.
func millis(d time.Duration) int {
	ms := (d + time.Millisecond - 1).Milliseconds()
	switch {
	case ms < 1:
		return 1
	case ms > math.MaxInt32-1:
		return math.MaxInt32 - 1
	}
	return int(ms)
}

func canceled(cause error) error {
	msg := "solve: canceled"
	if errors.Is(cause, context.DeadlineExceeded) {
		msg = "solve: stopped at the deadline"
	}
	return &Error{Kind: KindCanceled, Message: msg, err: cause}
}

// encodeResult writes glpk.js's result, variables and constraints in model
// order.
//
// With Options.Rows, result.rows follows status, as in glpk.js. With
// Options.Progress, the output has a "progress" member after "result":
// the snapshots in order, each as glpk.js passes it to cb.call
// ({status, z, vars, dual, rows}), which the guest removes.
func encodeResult(p *problem, out outcome, opts Options, took time.Duration) json.RawMessage {
	b := make([]byte, 0, 64+32*(len(p.cols)+len(p.rows))*(1+len(out.steps)))
	b = append(b, `{"name":`...)
	b = appendString(b, p.name)
	b = append(b, `,"time":`...)
	b = appendNumber(b, took.Seconds())
	b = append(b, `,"result":{"vars":`...)
	b = appendValues(b, p.cols, out.x, nil)
	if !out.mip {
		b = append(b, `,"dual":`...)
		b = appendValues(b, p.rows, out.dual, p.rowOrder)
	}
	b = append(b, `,"z":`...)
	b = appendNumber(b, out.z)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(out.status), 10)
	if opts.Rows {
		b = append(b, `,"rows":`...)
		b = appendValues(b, p.rows, out.rows, p.rowOrder)
	}
	b = append(b, '}')
	if opts.Progress > 0 && !out.mip {
		b = append(b, `,"progress":[`...)
		for k, s := range out.steps {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"status":`...)
			b = strconv.AppendInt(b, int64(s.status), 10)
			b = append(b, `,"z":`...)
			b = appendNumber(b, s.z)
			b = append(b, `,"vars":`...)
			b = appendValues(b, p.cols, s.x, nil)
			b = append(b, `,"dual":`...)
			b = appendValues(b, p.rows, s.dual, p.rowOrder)
			if opts.Rows {
				b = append(b, `,"rows":`...)
				b = appendValues(b, p.rows, s.rows, p.rowOrder)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	return b
}

// appendValues writes {"name": value, ...} in names' order, or the
// indexes of order when it is not nil (see problem.rowOrder).
func appendValues(b []byte, names []string, values []float64, order []int) []byte {
	b = append(b, '{')
	n := len(names)
	if order != nil {
		n = len(order)
	}
	for k := range n {
		i := k
		if order != nil {
			i = order[k]
		}
		if k > 0 {
			b = append(b, ',')
		}
		b = appendString(b, names[i])
		b = append(b, ':')
		b = appendNumber(b, values[i])
	}
	return append(b, '}')
}

// appendNumber writes f as encoding/json does; -0 is written 0, and the
// non-finite values GLPK should never produce are written null.
func appendNumber(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0')
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // cannot fail for a string
	return append(b, q...)
}
