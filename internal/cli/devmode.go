package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stepbox/stepbox/sandbox"
)

// unsafeDevWarning is printed on stderr by every run in development mode.
const unsafeDevWarning = "stepbox: UNSAFE development mode (--unsafe-dev): the step runs inside this process without the worker jail; never use it for code you do not trust"

// unsafeDev turns cfg into the development mode's in-process engine, with
// Python off, and warns; for a Python step it refuses instead, returning
// the exit status and false.
func unsafeDev(st *State, cfg *sandbox.Config, req sandbox.Request) (int, bool) {
	if req.Language == sandbox.Python {
		fmt.Fprintln(st.Stderr, "stepbox run: --unsafe-dev runs JavaScript and TypeScript only: Python steps never run without the jail")
		return ExitUnavailable, false
	}
	fmt.Fprintln(st.Stderr, unsafeDevWarning)
	cfg.Isolation = sandbox.IsolationInProcess
	cfg.Python.Disabled = true
	return 0, true
}

// engineFailed reports why the engine did not start. Where the jail cannot
// be set up it says why, what fixes it, and how to try the step anyway.
func engineFailed(st *State, err error, file string) int {
	var je *sandbox.JailUnavailableError
	if !errors.As(err, &je) {
		fmt.Fprintf(st.Stderr, "stepbox run: %v\n", err)
		return ExitUsage
	}
	refused := strings.ReplaceAll(fmt.Sprint(errors.Unwrap(je)), "\n", "; ")
	fmt.Fprintf(st.Stderr, "stepbox run: the worker jail cannot be set up here (%s): %s\n  to fix: %s\n", refused, je.Cause, je.Fix)
	fmt.Fprintf(st.Stderr, "  to try a JavaScript or TypeScript step in development anyway, inside this process and without the jail, add --unsafe-dev: stepbox run --unsafe-dev %s ...\n", file)
	return ExitUnavailable
}
