package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/stepbox/stepbox/sandbox"
)

const runUsage = `Usage: stepbox run STEP.js|STEP.ts|STEP.py [flags]

Runs one step (use - to read it from stdin; a .ts file is TypeScript, a .py
file Python). Console output and status
events go to stderr, the result goes to stdout as JSON.

Flags:
  --input JSON|@FILE   the step's input (default null)
  --data FILE          answer dataProxy.request(method, params) from a JSON file
                       mapping method names to responses
  --plan NAME          the plan whose limits apply (default "default"; more
                       plans come from --plans)
  --plans FILE         a JSON file of plans: {"name": {"memoryMb": 64, ...}}
  --memory MB          memory limit (sets the plan's memoryMb)
  --cpu DURATION       CPU time limit, e.g. 500ms or 2s (sets cpuMs)
  --timeout DURATION   wall-clock limit, e.g. 10s (sets wallMs)
  --egress FILE        enable fetch: a JSON file {"policy": {"hosts": [...], ...},
                       "secrets": [{"origin": "https://api.example.com:8443",
                       "header", "value"}]} (a secret goes to that scheme, host
                       and port only; "http://..." needs "unsafeAllowHTTP":
                       true); without it every fetch fails
  --modules LIST       the built-in modules the step gets, comma-separated (the
                       flag may repeat): duckdb and glpk become globals of that
                       name, e.g. --modules duckdb,glpk; npm packages need no
                       flag: the step imports them
  --python PATH        the python3 that runs a .py step (default /usr/bin/python3,
                       else python3 on PATH); a virtualenv's python brings the
                       venv's packages
  --python-packages P  what a .py step can import besides the standard library:
                       auto (default: what is installed for the interpreter,
                       e.g. Debian's python3-numpy and python3-pandas), none
                       (the standard library only), or a comma-separated list
                       of absolute directories (only those; "auto,DIR,..." adds
                       them to the interpreter's own)
  --python-preload LIST  modules imported once before the step, comma-separated,
                       instead of the default (json, re, datetime, ...), e.g.
                       --python-preload pandas
  --json               print every event as one JSON line on stdout
  --unsafe-dev         UNSAFE development mode: run a JavaScript or TypeScript
                       step inside this process, without the worker jail (for
                       machines where the jail cannot be set up); never for
                       code you do not trust; Python is refused

` + exitTable

type runFlags struct {
	input, data, plan, plans string
	egress                   string
	memory                   int
	cpu, timeout             string
	json                     bool
	modules                  listFlag
	unsafeDev                bool
	python, pythonPackages   string
	pythonPreload            listFlag
	pythonPreloadSet         bool
}

// listFlag is a flag of comma-separated names that may repeat.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return fmt.Errorf("empty name in %q", s)
		}
		*l = append(*l, name)
	}
	return nil
}

func runCommand(ctx context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f runFlags
	fs.StringVar(&f.input, "input", "", "")
	fs.StringVar(&f.data, "data", "", "")
	fs.StringVar(&f.plan, "plan", "", "")
	fs.StringVar(&f.plans, "plans", "", "")
	fs.IntVar(&f.memory, "memory", 0, "")
	fs.StringVar(&f.cpu, "cpu", "", "")
	fs.StringVar(&f.timeout, "timeout", "", "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.StringVar(&f.egress, "egress", "", "")
	fs.Var(&f.modules, "modules", "")
	fs.BoolVar(&f.unsafeDev, "unsafe-dev", false, "")
	fs.StringVar(&f.python, "python", "", "")
	fs.StringVar(&f.pythonPackages, "python-packages", "", "")
	fs.Func("python-preload", "", func(s string) error {
		f.pythonPreloadSet = true
		return f.pythonPreload.Set(s)
	})
	file, exit, ok := oneFile(st, fs, args, "run", "step file", runUsage)
	if !ok {
		return exit
	}
	req, cfg, data, err := f.build(st, file)
	if err != nil {
		fmt.Fprintf(st.Stderr, "stepbox run: %v\n", err)
		return ExitUsage
	}
	if f.unsafeDev {
		if code, ok := unsafeDev(st, &cfg, req); !ok {
			return code
		}
	}
	eng, err := sandbox.New(cfg)
	if err != nil {
		return engineFailed(st, err, file)
	}
	defer eng.Close(context.Background())
	return execute(ctx, st, eng, req, data, f.json)
}

func (f *runFlags) build(st *State, file string) (sandbox.Request, sandbox.Config, map[string]json.RawMessage, error) {
	var req sandbox.Request
	var cfg sandbox.Config
	code, err := readArg(st, file)
	if err != nil {
		return req, cfg, nil, err
	}
	req.Code = string(code)
	req.Language = languageOf(file)
	req.Modules = f.modules // the engine checks the names
	if f.input != "" {
		in := []byte(f.input)
		if strings.HasPrefix(f.input, "@") {
			if in, err = readArg(st, f.input[1:]); err != nil {
				return req, cfg, nil, err
			}
		}
		if !json.Valid(in) {
			return req, cfg, nil, errors.New("--input is not valid JSON")
		}
		req.Input = in
	}
	var data map[string]json.RawMessage
	if f.data != "" {
		b, err := readArg(st, f.data)
		if err != nil {
			return req, cfg, nil, err
		}
		if err := json.Unmarshal(b, &data); err != nil {
			return req, cfg, nil, fmt.Errorf("--data %s: want a JSON object mapping method names to responses: %w", f.data, err)
		}
	}
	cfg.Plans = map[string]sandbox.Limits{"default": {}}
	if f.plans != "" {
		b, err := readArg(st, f.plans)
		if err != nil {
			return req, cfg, nil, err
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		if err := d.Decode(&cfg.Plans); err != nil {
			return req, cfg, nil, fmt.Errorf("--plans %s: %w", f.plans, err)
		}
		if _, ok := cfg.Plans["default"]; !ok {
			cfg.Plans["default"] = sandbox.Limits{}
		}
	}
	req.Plan = f.plan
	if req.Plan == "" {
		req.Plan = "default"
	}
	plan, ok := cfg.Plans[req.Plan]
	if !ok {
		return req, cfg, nil, fmt.Errorf("--plan %q: no such plan", req.Plan)
	}
	// On the command line the user is the operator: the flags set the
	// plan's limits rather than lowering them.
	if f.memory < 0 {
		return req, cfg, nil, errors.New("--memory must be positive")
	}
	plan.MemoryMB = max(plan.MemoryMB, 0)
	if f.memory > 0 {
		plan.MemoryMB = f.memory
	}
	if f.cpu != "" {
		if plan.CPUMs, err = parseMs(f.cpu); err != nil {
			return req, cfg, nil, fmt.Errorf("--cpu: %w", err)
		}
	}
	if f.timeout != "" {
		if plan.WallMs, err = parseMs(f.timeout); err != nil {
			return req, cfg, nil, fmt.Errorf("--timeout: %w", err)
		}
	}
	cfg.Plans[req.Plan] = plan
	// The engine's default caps, which clamp every plan, do not lower the
	// operator's limits either.
	cfg.Caps = sandbox.Limits{
		MemoryMB: max(plan.MemoryMB, sandbox.DefaultCaps.MemoryMB),
		CPUMs:    max(plan.CPUMs, sandbox.DefaultCaps.CPUMs),
		WallMs:   max(plan.WallMs, sandbox.DefaultCaps.WallMs),
	}
	if f.egress != "" {
		b, err := readArg(st, f.egress)
		if err != nil {
			return req, cfg, nil, err
		}
		cfg.Egress = &sandbox.Egress{}
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		if err := d.Decode(cfg.Egress); err != nil {
			return req, cfg, nil, fmt.Errorf("--egress %s: %w", f.egress, err)
		}
	}
	cfg.Python.Interpreter = f.python
	if f.pythonPackages != "" {
		if err := cfg.Python.SetPackages(f.pythonPackages); err != nil {
			return req, cfg, nil, fmt.Errorf("--python-packages %w", err)
		}
	}
	if f.pythonPreloadSet {
		cfg.Python.Preload = f.pythonPreload
	}
	cfg.PoolSize = 1
	cfg.Warm = -1 // one run: a warm pool would only cost a second VM
	return req, cfg, data, nil
}

func languageOf(file string) sandbox.Language {
	switch {
	case strings.HasSuffix(file, ".ts"):
		return sandbox.TypeScript
	case strings.HasSuffix(file, ".py"):
		return sandbox.Python
	}
	return sandbox.JavaScript
}

// parseMs reads a duration with its unit ("500ms", "2s", "1m30s"). A bare
// number is refused: "--timeout 5" read as 5 ms ended steps at once.
func parseMs(s string) (int, error) {
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("%q has no unit: write %sms or %ss", s, s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Millisecond {
		return 0, fmt.Errorf("%q is not a positive duration such as 500ms or 2s", s)
	}
	return int(d / time.Millisecond), nil
}

func execute(ctx context.Context, st *State, eng *sandbox.Engine, req sandbox.Request, data map[string]json.RawMessage, asJSON bool) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := eng.Submit(ctx, req)
	if err != nil {
		return report(st, err, asJSON)
	}
	if st.Signals != nil {
		go func() {
			select {
			case <-st.Signals:
				s.Abort()
			case <-ctx.Done():
			}
		}()
	}
	enc := json.NewEncoder(st.Stdout)
	for ev := range s.Events() {
		if asJSON {
			_ = enc.Encode(ev)
		}
		switch ev.Kind {
		case sandbox.EventConsole:
			if !asJSON {
				printConsole(st.Stderr, ev.Console)
			}
		case sandbox.EventStatus:
			if !asJSON {
				fmt.Fprintf(st.Stderr, "status: %s\n", ev.Status)
			}
		case sandbox.EventFetch:
			if !asJSON {
				fmt.Fprintf(st.Stderr, "fetch: %s\n", ev.Fetch)
			}
		case sandbox.EventDataRequest:
			answer(s, ev.DataRequest, data)
		}
	}
	res, err := s.Wait()
	if err != nil {
		if asJSON {
			return ExitCode(err)
		}
		return report(st, err, false)
	}
	if !asJSON {
		fmt.Fprintf(st.Stdout, "%s\n", res.Value)
	}
	return ExitOK
}

func answer(s *sandbox.Session, dr *sandbox.DataRequest, data map[string]json.RawMessage) {
	v, ok := data[dr.Method]
	if !ok {
		_ = s.RespondError(dr.ID, fmt.Sprintf("no data for method %q (give one with --data)", dr.Method))
		return
	}
	_ = s.Respond(dr.ID, v)
}

func printConsole(w io.Writer, c *sandbox.ConsoleLine) {
	if c.Level == "log" || c.Level == "info" {
		fmt.Fprintln(w, c.Text)
		return
	}
	fmt.Fprintf(w, "[%s] %s\n", c.Level, c.Text)
}

func report(st *State, err error, asJSON bool) int {
	var se *sandbox.Error
	if asJSON && errors.As(err, &se) {
		_ = json.NewEncoder(st.Stdout).Encode(sandbox.Event{Kind: sandbox.EventError, Error: se})
		return ExitCode(err)
	}
	if errors.As(err, &se) {
		where := ""
		if se.Position != nil {
			where = fmt.Sprintf(" at line %d", se.Position.Line)
			if se.Position.Column > 0 {
				where += fmt.Sprintf(", column %d", se.Position.Column)
			}
		}
		limit := ""
		if se.Limit != "" {
			limit = " (" + se.Limit + ")"
		}
		fmt.Fprintf(st.Stderr, "stepbox: %s%s%s: %s\n", se.Code, limit, where, se.Message)
		if se.Stack != "" {
			fmt.Fprint(st.Stderr, se.Stack)
		}
	} else {
		fmt.Fprintf(st.Stderr, "stepbox: %v\n", err)
	}
	return ExitCode(err)
}

// oneFile parses args with fs, flags before or after the file name, and
// returns the one file named. On a bad command line it prints why, with
// the command's usage, and returns false.
func oneFile(st *State, fs *flag.FlagSet, args []string, cmd, what, usage string) (file string, exit int, ok bool) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) { // -h or --help: the help asked for
				fmt.Fprint(st.Stdout, usage)
				return "", ExitOK, false
			}
			fmt.Fprintf(st.Stderr, "stepbox %s: %v\n\n%s", cmd, err, usage)
			return "", ExitUsage, false
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(files) != 1 {
		fmt.Fprintf(st.Stderr, "stepbox %s: want one %s, got %d\n\n%s", cmd, what, len(files), usage)
		return "", ExitUsage, false
	}
	return files[0], ExitOK, true
}
