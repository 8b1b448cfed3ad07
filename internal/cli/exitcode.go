package cli

import (
	"errors"
	"io/fs"

	"github.com/stepbox/stepbox/sandbox"
)

// Exit statuses of the stepbox command: one per error code of the run
// contract, so scripts can tell failures apart without parsing messages.
const (
	ExitOK            = 0 // the step returned a value
	ExitRuntime       = 1 // RUNTIME: the step threw
	ExitUsage         = 2 // the command line is wrong, or a file cannot be read or is not what its flag wants
	ExitValidation    = 3 // VALIDATION: refused before running (syntax error, too large, ...)
	ExitTimeout       = 4 // TIMEOUT: cpu or wall-clock limit
	ExitOOM           = 5 // OOM: memory limit
	ExitLimitExceeded = 6 // LIMIT_EXCEEDED: another limit
	ExitAborted       = 7 // ABORTED: interrupted (Ctrl-C)
	ExitCrashed       = 8 // CRASHED: the worker died
	ExitUnavailable   = 9 // UNAVAILABLE: language not available, queue full
)

var exitCodes = map[sandbox.Code]int{
	sandbox.CodeRuntime:       ExitRuntime,
	sandbox.CodeValidation:    ExitValidation,
	sandbox.CodeTimeout:       ExitTimeout,
	sandbox.CodeOOM:           ExitOOM,
	sandbox.CodeLimitExceeded: ExitLimitExceeded,
	sandbox.CodeAborted:       ExitAborted,
	sandbox.CodeCrashed:       ExitCrashed,
	sandbox.CodeUnavailable:   ExitUnavailable,
}

// ExitCode returns the exit status for a run's error.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var se *sandbox.Error
	if errors.As(err, &se) {
		if c, ok := exitCodes[se.Code]; ok {
			return c
		}
	}
	return ExitRuntime
}

const exitTable = `Exit status:
  0  the step returned a value (printed as JSON on stdout)
  1  RUNTIME         the step threw
  2  usage           bad command line, unreadable or bad file (--data, --plans,
                     --egress, --catalogue)
  3  VALIDATION      refused before running: syntax error, code too large or not
                     UTF-8, bad or empty --input
  4  TIMEOUT         cpu or wall-clock limit
  5  OOM             memory limit
  6  LIMIT_EXCEEDED  another limit (the message names it)
  7  ABORTED         interrupted
  8  CRASHED         the worker process died
  9  UNAVAILABLE     language not available, queue full, engine closed, no jail
                     here, a package that is not installed and could not be
`

func asPathError(err error, target **fs.PathError) bool { return errors.As(err, target) }
