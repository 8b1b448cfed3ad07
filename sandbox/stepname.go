package sandbox

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
	"github.com/stepbox/stepbox/internal/typescript"
)

// maxStepName is the longest Request.StepName, in bytes.
const maxStepName = 255

// pythonStepFile is the file name the Python runtime gives a step's frames
// (STEP_FILE in internal/pyrt/prelude.py).
const pythonStepFile = "step.py"

// DefaultStepName returns the file name the frames and positions of a
// step of lang carry when its Request.StepName is empty: "step.js",
// "step.ts" or "step.py". An empty lang is JavaScript.
func DefaultStepName(lang Language) string {
	switch lang {
	case Python:
		return pythonStepFile
	case TypeScript:
		return typescript.TSFileName
	}
	return jsrt.StepFile
}

// checkStepName refuses a StepName that could not stand in a stack trace
// as one file name: too long, or with a control character (a newline
// would forge frames). The caller checked it is valid UTF-8.
func checkStepName(name string) *Error {
	if len(name) > maxStepName {
		return newError(CodeValidation, nil, "stepName is %d bytes, more than %d", len(name), maxStepName)
	}
	if i := strings.IndexFunc(name, unicode.IsControl); i >= 0 {
		return newError(CodeValidation, nil, "stepName %q has a control character at byte %d", name, i)
	}
	if err := checkUTF8("stepName", name); err != nil {
		err.Position = nil // not a position in the step
		return err
	}
	return nil
}

// explainFailure finishes a run's failure for its caller: the step's frames
// carry Request.StepName, and a step that used a built-in module its run
// did not ask for learns how to ask.
func explainFailure(f *ipc.Failure, req Request) {
	if f == nil {
		return
	}
	if req.StepName != "" {
		f.Stack = renameStep(f.Stack, req.Language, req.StepName)
	}
	if f.Code != ipc.CodeRuntime {
		return
	}
	for _, m := range jsrt.BuiltinModules {
		undefined := "ReferenceError: '" + m + "' is not defined"
		if req.Language == Python {
			undefined = "NameError: name '" + m + "' is not defined"
		}
		if f.Message == undefined && !slices.Contains(req.Modules, m) {
			f.Message += fmt.Sprintf(" (%s is a built-in module this run did not ask for: list %q in the request's modules; stepbox run: --modules %s)", m, m, m)
		}
	}
}

// renameStep gives the step's frames of a stack trace the file name name
// instead of the runtime's: "at f (step.js:3:5)" or, for a TypeScript step
// whose frames the source map rewrote, "at f (step.ts:2:1)", and Python's
// `File "step.py", line 3`.
func renameStep(stack string, lang Language, name string) string {
	from := DefaultStepName(lang)
	if lang == Python {
		return strings.ReplaceAll(stack, `File "`+from+`",`, `File "`+name+`",`)
	}
	return renameFrames(stack, from, name)
}

// renameFrames renames the locations "(from:..." and "at from:..." of a
// JavaScript stack trace.
func renameFrames(stack, from, to string) string {
	return strings.NewReplacer("("+from+":", "("+to+":", "at "+from+":", "at "+to+":").Replace(stack)
}
