package intl

import "fmt"

// Error is an error of the Intl API: the JavaScript error a step gets,
// by its constructor's name (RangeError, TypeError) and message.
type Error struct {
	Name    string
	Message string
}

func (e *Error) Error() string { return e.Name + ": " + e.Message }

func rangeError(format string, args ...any) error {
	return &Error{"RangeError", fmt.Sprintf(format, args...)}
}

func typeError(format string, args ...any) error {
	return &Error{"TypeError", fmt.Sprintf(format, args...)}
}
