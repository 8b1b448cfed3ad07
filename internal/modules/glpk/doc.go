// Package glpk is the glpk module of DESIGN decision 7: linear and mixed
// integer programmes solved by the GLPK C library (5.0, through cgo),
// with glpk.js's model and result shapes as JSON, so that a step written
// for glpk.js runs unchanged. It runs in the worker, never in the host.
//
// # Use
//
//	opts, err := glpk.ParseOptions(optionsJSON) // the guest's second argument, may be empty
//	opts.Limits = glpk.Limits{MemoryLimitBytes: glpkShareOfRunMemory}
//	out, err := glpk.Solve(ctx, modelJSON, opts) // ctx: the run's, with its deadline
//
// The guest's glpk.solve(model, options) is ParseOptions and Solve; the
// constants glpk.GLP_MIN … glpk.GLP_UNBND are those below (GLPMin …
// GLPUnbnd), which are GLPK's own numbers.
//
// # Model
//
//	{
//	  "name": "royalties",
//	  "objective": {"direction": 2, "name": "profit",            // GLP_MIN 1, GLP_MAX 2
//	                "vars": [{"name": "x", "coef": 9}, …]},
//	  "subjectTo": [{"name": "budget",
//	                 "vars": [{"name": "x", "coef": 3}, …],
//	                 "bnds": {"type": 3, "ub": 40, "lb": 0}}, …],  // GLP_FR 1, GLP_LO 2, GLP_UP 3, GLP_DB 4, GLP_FX 5
//	  "bounds":    [{"name": "x", "type": 4, "lb": 0, "ub": 5}, …],
//	  "generals":  ["x", …],                                      // integer variables
//	  "binaries":  ["y", …],                                      // 0/1 variables
//	  "options":   {…}                                            // under the call's options, as in glpk.js 5
//	}
//
// Semantics are glpk.js 5's: variables are the names in the objective,
// the constraints, bounds, generals and binaries, in that order of first
// appearance (one that appears only in bounds or a list has objective
// coefficient 0); every variable is x ≥ 0 unless bounds says otherwise, and
// a later bound of a variable replaces an earlier one; a binary is bounded
// to [0, 1] whatever bounds says, and a name in both generals and binaries
// is binary; a bound type uses lb (GLP_LO, GLP_FX), ub (GLP_UP) or both
// (GLP_DB) and ignores the other member; GLP_DB with lb = ub is GLP_FX; a
// coef may be a numeric string ("2"); constraint names may repeat (the
// result's dual and rows then hold, under the first one's key, the last
// one's value, as glpk.js's assignments leave them).
//
// Validation is stricter than glpk.js, which passes mistakes to GLPK
// (where some abort the process) or ignores them. Each of these is a
// KindInvalid error naming the member, e.g. "subjectTo[3].bnds.type: must
// be GLP_FR (1) … got 7":
//
//   - a missing objective or direction, a direction other than 1 or 2;
//   - a member glpk.js does not know ("constraints", "weight"); names are
//     matched case-insensitively, as encoding/json does;
//   - a value of the wrong JSON type (a coef string that is not a
//     decimal number); a missing name or coef; an empty name;
//   - a number of magnitude above 1e300 (GLPK's infinity is DBL_MAX);
//   - a bound type outside 1-5, a missing lb or ub that the type needs,
//     lb > ub for GLP_DB;
//   - a constraint without bnds, a variable twice in one constraint or in
//     the objective (GLPK itself aborts on those);
//   - a model without variables.
//
// The README lists every difference from glpk.js 5.0.0, and
// internal/differential checks that there is no other.
//
// Limits caps variables, constraints and coefficients (KindLimit; 100,000,
// 100,000 and 1,000,000 by default) and GLPK's memory (glp_mem_limit,
// KindMemory; 256 MiB by default).
//
// # Result
//
//	{"name": "royalties", "time": 0.002,
//	 "result": {"vars": {"x": 5, …}, "dual": {"budget": 1.5, …}, "z": 61, "status": 5}}
//
// "time" is the wall time of Solve in seconds; "vars" and "dual" list the
// variables and constraints in model order; "dual" (row duals) is present
// for LPs only, as in glpk.js; "rows", the constraints' activities, with
// Options.Rows. Status is GLP_UNDEF 1, GLP_FEAS 2,
// GLP_INFEAS 3, GLP_NOFEAS 4, GLP_OPT 5 or GLP_UNBND 6. An infeasible or
// unbounded model is a result, not an error. Where glpk.js reports
// GLP_UNDEF because the presolver stopped early, Solve reports what is
// known:
//
//   - LP, presolver on, presolver finds no primal (dual) feasible
//     solution: solved again without it, so the status is GLPK's own
//     GLP_NOFEAS or GLP_UNBND and vars hold a basic solution;
//   - MIP, presolver on: no feasible solution → GLP_NOFEAS, LP relaxation
//     unbounded → GLP_UNBND;
//   - MIP, presolver off: the LP relaxation is solved first (glp_intopt
//     needs it); if it is infeasible or unbounded, that is the status.
//
// A time limit or a MIP gap ends the search with the best solution found,
// GLP_FEAS (or GLP_UNDEF if there is none), as in glpk.js.
//
// # Options
//
// ParseOptions takes glpk.js's options: msglev (accepted, ignored:
// GLPK never prints), presol (default true), mipgap (default 0), tmlim in
// seconds (glpk.js 4) or tmLim in milliseconds (glpk.js 3), rows, and cb
// (Options.Progress: an LP solved in steps, with glpk.js's reports in the
// output for the guest to pass to cb.call); an unknown member is an error.
// A tmlim of 0 means no limit (glpk.js's stops at once). Write gives the
// model as GLPK's CPLEX LP or free MPS text, glpk.js's write.
//
// # Time, cancellation and concurrency
//
// GLPK has no asynchronous cancel. Solve turns the earlier of ctx's
// deadline and Options.TimeLimit into GLPK's tm_lim, which both the
// simplex and the branch and bound check as they go; a MIP search also
// stops within moments of ctx being canceled (a glp_intopt callback reads
// a flag that Solve sets). When the deadline ends a solve, Solve fails
// with KindCanceled (context.DeadlineExceeded); when Options.TimeLimit
// does, it returns the result as glpk.js would. A simplex run on a ctx
// that is canceled without a deadline continues to its end or its time
// limit: the run's ctx always has its wall deadline.
//
// A solve is one cgo call, so it runs on one OS thread from start to end.
// GLPK keeps its environment (memory accounting, hooks, error state) in
// thread-local storage; Debian's build has TLS, so solves on different
// goroutines run in parallel (TestConcurrentSolves, under -race). Each
// solve frees its thread's environment (glp_free_env) before returning:
// nothing of one solve is visible to the next. On a build without TLS,
// solves are serialised.
//
// # Output and internal errors
//
// GLPK never writes to the worker's standard output or error: terminal
// output is off, message levels are GLP_MSG_OFF, and a terminal hook
// swallows what GLPK prints anyway (TestSilent captures descriptors 1 and
// 2 around failing solves). GLPK handles an internal error (a failed
// assertion, exhausted memory, the memory limit) by printing a message
// and calling abort(). Solve installs glp_error_hook, whose hook longjmps
// back into the C function that called GLPK, which frees the environment
// and reports GLPK's message: KindMemory for memory, KindSolver otherwise.
// This is the recovery the GLPK manual describes; it is safe because no Go
// frame lies between the setjmp and the longjmp (the whole solve is one C
// function, solve.c). The validation above keeps GLPK's input within what
// it accepts, so KindSolver should not occur; a crash inside GLPK that
// does not go through its error handler (a segmentation fault) still kills
// the worker, which the pool reports as CRASHED.
//
// # Building
//
// GLPK is linked statically from Debian's libglpk-dev, with the static
// archives of its dependencies: libcolamd.a, libamd.a and
// libsuitesparseconfig.a (libsuitesparse-dev), libgmp.a (libgmp-dev),
// libz.a (zlib1g-dev) and libltdl.a (libltdl-dev, which libglpk-dev does
// not pull in). Only libc and libm stay dynamic: the binary needs no GLPK
// package at run time, and GLPK adds about 1 MB to it. To build:
//
//	apt-get install -y build-essential libglpk-dev libltdl-dev
//
// GLPK is GPL-3, so a binary that links it is GPL-3 as a whole. The build
// tag stepbox_noglpk leaves it out even with cgo on (go build -tags
// stepbox_noglpk), for embedders who keep their binary under Stepbox's
// Apache-2.0 licence. In such a build, and in one without cgo, the package
// compiles, Available and every Solve fail with KindUnavailable, wrapping
// errors.ErrUnsupported, and the message says why and how to build a
// binary with GLPK.
package glpk
