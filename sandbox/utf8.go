package sandbox

import (
	"unicode/utf8"
)

// checkStepText refuses a step whose text is not valid UTF-8, or whose
// StepName could not appear in a stack trace. A step with an invalid byte
// used to run with U+FFFD in its place, so a string literal came back
// changed without a word; the error names the first invalid byte by its
// offset, and its position by line and column (in characters, as the
// engines count them).
func checkStepText(req Request) *Error {
	if err := checkUTF8("the step", req.Code); err != nil {
		return err
	}
	if c := req.Compiled; c != nil {
		if err := checkUTF8("the compiled step (Compiled.JS)", c.JS); err != nil {
			err.Position = nil // a line of the JavaScript, not of the step's source
			return err
		}
	}
	return checkStepName(req.StepName)
}

// checkUTF8 returns the VALIDATION error of text that is not valid UTF-8,
// or nil.
func checkUTF8(what, text string) *Error {
	if utf8.ValidString(text) {
		return nil
	}
	line, col := 1, 1
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && n <= 1 {
			e := newError(CodeValidation, nil, "%s is not valid UTF-8: byte 0x%02x at offset %d", what, text[i], i)
			e.Position = &Position{Line: line, Column: col}
			return e
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += n
	}
	return nil // not reached: ValidString said there is an invalid byte
}
