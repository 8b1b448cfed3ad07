// Package cli implements the stepbox command. All OS access comes in through
// State, so tests run the whole command in-process with their own stdio,
// environment and files.
package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
)

// State is the process state the CLI may touch.
type State struct {
	Args   []string // without the program name
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// ReadFile reads a file named on the command line.
	ReadFile func(name string) ([]byte, error)
	// WriteFile writes a file named on the command line.
	WriteFile func(name string, data []byte) error
	// Signals, if set, delivers interrupt requests (Ctrl-C) to a running
	// command, which aborts its run.
	Signals <-chan os.Signal
}

// OSState returns the State of the real process.
func OSState() *State {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	return &State{
		Args:     os.Args[1:],
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Getenv:   os.Getenv,
		ReadFile: os.ReadFile,
		WriteFile: func(name string, data []byte) error {
			return os.WriteFile(name, data, 0o644)
		},
		Signals: sig,
	}
}

// Version is the stepbox version, set at build time with
// -ldflags "-X github.com/stepbox/stepbox/internal/cli.Version=...".
var Version = "0.1.0-dev"

const usage = `stepbox runs untrusted code steps in a sandbox.

Usage:
  stepbox run STEP.js [flags]   run a step (.js, .ts or .py) and print its result as JSON
  stepbox compile STEP.ts       compile a TypeScript step to JavaScript
  stepbox packages install|list install or check the npm package catalogue
  stepbox serve [flags]         serve the API (gRPC, Connect, HTTP+JSON)
  stepbox version               print the version and which modules this binary has
  stepbox help [COMMAND]        show help

Run 'stepbox help COMMAND' (or 'stepbox COMMAND --help') for a command's
flags; 'stepbox help run' also lists the exit codes.
`

// Main runs the command line in st and returns the exit status.
func Main(ctx context.Context, st *State) int {
	if len(st.Args) == 0 {
		fmt.Fprint(st.Stderr, usage)
		return ExitUsage
	}
	switch cmd, args := st.Args[0], st.Args[1:]; cmd {
	case "run":
		return runCommand(ctx, st, args)
	case "compile":
		return compileCommand(st, args)
	case "packages":
		return packagesCommand(ctx, st, args)
	case "serve":
		return serveCommand(ctx, st, args)
	case "version", "--version":
		return versionCommand(ctx, st)
	case "help", "-h", "--help":
		if len(args) > 0 && args[0] == "run" {
			fmt.Fprint(st.Stdout, runUsage)
		} else if len(args) > 0 && args[0] == "compile" {
			fmt.Fprint(st.Stdout, compileUsage)
		} else if len(args) > 0 && args[0] == "serve" {
			fmt.Fprint(st.Stdout, serveHelp())
		} else if len(args) > 0 && args[0] == "packages" {
			fmt.Fprint(st.Stdout, packagesUsage)
		} else {
			fmt.Fprint(st.Stdout, usage)
		}
		return ExitOK
	default:
		fmt.Fprintf(st.Stderr, "stepbox: unknown command %q\n\n%s", cmd, usage)
		return ExitUsage
	}
}

func readArg(st *State, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(st.Stdin)
	}
	b, err := st.ReadFile(name)
	if err != nil {
		var pe *fs.PathError
		if ok := asPathError(err, &pe); ok {
			return nil, fmt.Errorf("read %s: %w", name, pe.Err)
		}
		return nil, err
	}
	return b, nil
}
