package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/stepbox/stepbox/sandbox"
)

const compileUsage = `Usage: stepbox compile STEP.ts [-o OUT.js]

Compiles a TypeScript step to JavaScript with esbuild (types are erased; there
is no type checking). Writes the JavaScript to OUT.js and its source map to
OUT.js.map, or the JavaScript to stdout without -o. Problems are printed as
FILE:LINE:COLUMN: MESSAGE, one per line, and the exit status is 3.
`

func compileCommand(st *State, args []string) int {
	fs := flag.NewFlagSet("compile", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "")
	file, exit, ok := oneFile(st, fs, args, "compile", "file", compileUsage)
	if !ok {
		return exit
	}
	src, err := readArg(st, file)
	if err != nil {
		fmt.Fprintf(st.Stderr, "stepbox compile: %v\n", err)
		return ExitUsage
	}
	c, err := sandbox.CompileTypeScript(string(src))
	if err != nil {
		var se *sandbox.Error
		if errors.As(err, &se) && len(se.Diagnostics) > 0 {
			for _, d := range se.Diagnostics {
				fmt.Fprintf(st.Stderr, "%s:%d:%d: %s\n", file, d.Line, d.Column, d.Message)
			}
		} else {
			fmt.Fprintf(st.Stderr, "%s: %v\n", file, err)
		}
		return ExitCode(err)
	}
	if *out == "" {
		fmt.Fprint(st.Stdout, c.JS)
		return ExitOK
	}
	if err := st.WriteFile(*out, []byte(c.JS)); err != nil {
		fmt.Fprintf(st.Stderr, "stepbox compile: %v\n", err)
		return ExitUsage
	}
	if err := st.WriteFile(*out+".map", []byte(c.Map)); err != nil {
		fmt.Fprintf(st.Stderr, "stepbox compile: %v\n", err)
		return ExitUsage
	}
	return ExitOK
}
