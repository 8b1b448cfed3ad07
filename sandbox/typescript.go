package sandbox

import (
	"errors"
	"strings"

	"github.com/stepbox/stepbox/contract"
	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/typescript"
)

// CompileTypeScript compiles a TypeScript step with esbuild: types are
// erased (there is no type checking); enums, namespaces, decorators,
// generics, satisfies and as const compile; top-level await and return keep
// working. On failure it returns a VALIDATION *Error whose Diagnostics list
// every problem and whose Position is the first.
//
//	c, err := sandbox.CompileTypeScript(src)
//	// store c.JS and c.Map; later: Request{Language: TypeScript, Compiled: &c}
func CompileTypeScript(source string) (Compiled, error) {
	out, err := typescript.Compile(source)
	if err != nil {
		return Compiled{}, compileError(err)
	}
	return Compiled{JS: out.JS, Map: out.Map}, nil
}

func compileError(err error) *Error {
	var ce *typescript.CompileError
	if !errors.As(err, &ce) {
		return newError(CodeValidation, err, "compile TypeScript: %v", err)
	}
	e := contract.NewError(CodeValidation, "", err)
	var msgs []string
	for i, d := range ce.Diagnostics {
		e.Diagnostics = append(e.Diagnostics, Diagnostic{Line: d.Line, Column: d.Column, Message: d.Message})
		if i == 0 && d.Line > 0 {
			// The first problem's position is the error's Position, as for
			// a JavaScript syntax error: the message does not repeat it.
			msgs = append(msgs, d.Message)
		} else {
			msgs = append(msgs, d.String())
		}
	}
	e.Message = strings.Join(msgs, "\n")
	if len(ce.Diagnostics) > 0 && ce.Diagnostics[0].Line > 0 {
		e.Position = &Position{Line: ce.Diagnostics[0].Line, Column: ce.Diagnostics[0].Column}
	}
	return e
}

// tsMapper maps a TypeScript run's JavaScript positions back to the
// TypeScript source. The map is parsed only when a position needs it.
type tsMapper struct {
	mapJSON string
	m       *typescript.SourceMap
	failed  bool
}

func (t *tsMapper) sourceMap() *typescript.SourceMap {
	if t.m == nil && !t.failed {
		m, err := typescript.ParseSourceMap(t.mapJSON)
		t.m, t.failed = m, err != nil
	}
	return t.m
}

// stack rewrites the step.js frames of a stack trace to step.ts.
func (t *tsMapper) stack(s string) string {
	if s == "" || !strings.Contains(s, typescript.StepFileName) {
		return s
	}
	if m := t.sourceMap(); m != nil {
		return m.RewriteStack(s, 0)
	}
	return s
}

// failure maps a failure's position and stack.
func (t *tsMapper) failure(f *ipc.Failure) {
	f.Stack = t.stack(f.Stack)
	f.Message = t.stack(f.Message)
	if p := f.Position; p != nil {
		if m := t.sourceMap(); m != nil {
			if l, c, ok := m.Original(p.Line, max(p.Column, 1)); ok {
				f.Position = &ipc.Position{Line: l, Column: c}
			}
		}
	}
}
