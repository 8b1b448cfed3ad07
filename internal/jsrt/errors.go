package jsrt

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/stepbox/stepbox/internal/ipc"
)

// StepFile is the file name stack traces give the user's code.
const StepFile = "step.js"

// headerLines is how many lines the AsyncFunction constructor puts before the
// body it compiles: "(async function anonymous(\n) {\n". Positions reported
// by the engine are that much below the user's.
const headerLines = 2

// userFrame matches a location in code compiled from the user's step; the
// engine names it "<input>". The bootstrap's own code has no location (its
// bytecode keeps no debug information: compiledBootstrap), so its frames
// are "at name" alone; code the bootstrap evaluates from source is "<eval>".
var userFrame = regexp.MustCompile(`<input>:(\d+)(?::(\d+))?`)

// thrown turns the bootstrap's description of a thrown value into a failure
// with the user's positions.
func (rn *run) thrown(payload string, code ipc.Code) *ipc.Failure {
	var info struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Stack   string `json:"stack"`
	}
	if err := json.Unmarshal([]byte(payload), &info); err != nil {
		if rn.m.watch.exhausted() {
			return rn.unnamedOOM()
		}
		return &ipc.Failure{Code: code, Message: "the step threw a value that could not be described"}
	}
	f := &ipc.Failure{Code: code, Name: info.Name, Message: info.Message}
	switch {
	case info.Name == "InternalError" && info.Message == "interrupted":
		// The engine's own deadline interrupted the step and the
		// exception reached its promise: the wall limit, unless a stop
		// came first.
		if r := rn.reason(); r != nil {
			return r
		}
		return rn.timeout(ipc.LimitWall)
	case info.Name == "InternalError" && info.Message == "out of memory":
		return rn.oom()
	case info.Name == "InternalError" && info.Message == "stack overflow":
		f.Name, f.Message, f.Limit = "RangeError", "Maximum call stack size exceeded", ipc.LimitStackDepth
	case rn.m.watch.exhausted() && outOfMemoryValue(info.Name, info.Message):
		// Near the limit the engine throws null when it cannot even
		// allocate the out-of-memory error, or an error whose message it
		// could not allocate, and the bootstrap may fail to describe what
		// was thrown; a failed allocation in this run (allocWatch) tells
		// that from a step that threw such a value itself.
		return rn.unnamedOOM()
	case info.Name == "Uncaught":
		f.Name, f.Message = "", "Uncaught "+info.Message
	}
	f.Stack, f.Position = RewriteStack(info.Stack)

	if f.Name != "" {
		f.Message = f.Name + ": " + f.Message
	}
	return f
}

// outOfMemoryValue reports whether a thrown value, as the bootstrap
// describes it, is one the engine or the bootstrap makes when an
// allocation fails: null, an error without its message, a value the
// bootstrap could not format.
func outOfMemoryValue(name, message string) bool {
	switch {
	case name == "Uncaught" && (message == "null" || message == "[unformattable thrown value]"):
		return true
	case name == "InternalError" && message == "":
		return true
	}
	return false
}

// maxFrames is the most stack frames a reported stack trace keeps; deep
// recursion would otherwise report thousands of identical lines.
const maxFrames = 30

// RewriteStack keeps the frames of a QuickJS stack trace that are in the
// user's code or native, names the user's file StepFile with the user's line
// numbers, drops the bootstrap's frames, and returns the position of the
// first user frame.
func RewriteStack(stack string) (string, *ipc.Position) {
	var b strings.Builder
	var pos *ipc.Position
	frames := 0
	lines := strings.Split(stack, "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if strings.Contains(line, "<eval>") || !strings.HasSuffix(line, ")") {
			continue // the bootstrap's
		}
		if frames++; frames > maxFrames {
			fmt.Fprintf(&b, "    ... %d more frames\n", len(lines)-i)
			break
		}
		m := userFrame.FindStringSubmatchIndex(line)
		if m == nil {
			b.WriteString(line)
			b.WriteByte('\n')
			continue
		}
		ln, _ := strconv.Atoi(line[m[2]:m[3]])
		ln -= headerLines
		if ln < 1 {
			// Code compiled from a string inside the step (eval, new
			// Function): its lines are not the step's.
			b.WriteString(line[:m[0]] + "<eval code>" + line[m[1]:] + "\n")
			continue
		}
		col := 0
		loc := StepFile + ":" + strconv.Itoa(ln)
		if m[4] >= 0 {
			col, _ = strconv.Atoi(line[m[4]:m[5]])
			loc += ":" + strconv.Itoa(col)
		}
		if pos == nil {
			pos = &ipc.Position{Line: ln, Column: col}
		}
		b.WriteString(line[:m[0]])
		b.WriteString(loc)
		b.WriteString(line[m[1]:])
		b.WriteByte('\n')
	}
	return b.String(), pos
}

// syntaxPosition returns the user's position of a syntax error the engine
// reported at line:col of the compiled body. An error at the end of input is
// reported by the engine on the line of the closing brace it appends; the
// user sees it at the end of their last line.
func syntaxPosition(code string, line, col int) *ipc.Position {
	if line < 1 {
		return nil
	}
	lines := strings.Count(code, "\n") + 1
	if line > lines {
		last := code[strings.LastIndexByte(code, '\n')+1:]
		return &ipc.Position{Line: lines, Column: len([]rune(last)) + 1}
	}
	return &ipc.Position{Line: line, Column: col}
}
