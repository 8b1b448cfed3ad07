package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stepbox/stepbox/sandbox"
)

const runUsage = `Usage: stepbox run STEP.js|STEP.ts|STEP.py [flags]

Runs one step (use - to read it from stdin; a .ts file is TypeScript, a .py
file Python, anything else JavaScript, unless --lang says otherwise).
Console output and status events go to stderr, the result goes to stdout as
JSON. Stack traces and error positions name the step's file (from stdin:
step.js, step.ts or step.py).

Flags:
  --lang LANGUAGE      javascript, typescript or python: the step's language,
                       whatever its file is called (for stdin, the default is
                       javascript)
  --input JSON|@FILE   the step's input (default null); JSON that is not valid,
                       or empty, is refused with status 3 and where it fails
  --data FILE          answer dataProxy.request(method, params) from a JSON file,
                       an object mapping method names to answers
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
  --catalogue FILE     the npm packages steps may import, as for stepbox
                       packages: a JSON array of {"name", "version",
                       "integrity"} (default: the built-in catalogue)
  --cache DIR          the package cache, as for stepbox packages (default
                       $XDG_CACHE_HOME/stepbox/packages, or
                       ~/.cache/stepbox/packages); a package of the catalogue
                       that the step imports and the cache lacks is installed
                       on first use with npm, its integrity checked, with
                       progress on stderr
  --no-install         do not install: a missing package is UNAVAILABLE (9)
  --npm PATH           the npm command that installs (default "npm")
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
  --tz ZONE            the step's time zone, an IANA name such as Europe/Paris:
                       its local time (Date, Intl; Python's time and datetime);
                       default UTC, whatever this machine's zone
  --locale TAG         the step's default locale for Intl and toLocaleString,
                       a BCP 47 tag such as de-DE (default en-US)
  --locales LIST       the locales beyond English that Intl offers the step,
                       comma-separated, e.g. --locales de,fr (a language brings
                       its regions: de is de, de-AT, de-CH); none: English
                       alone (default: every one the binary has; an unknown
                       one is refused with the list)
  --json               print every event as one JSON line on stdout
  --unsafe-dev         UNSAFE development mode: run a JavaScript or TypeScript
                       step inside this process, without the worker jail (for
                       machines where the jail cannot be set up); never for
                       code you do not trust; Python is refused

` + exitTable

type runFlags struct {
	input, data, plan, plans string
	inputSet                 bool
	lang                     string
	zone, locale             string
	catalogue, cache, npm    string
	noInstall                bool
	egress                   string
	memory                   int
	cpu, timeout             string
	json                     bool
	modules                  listFlag
	unsafeDev                bool
	python, pythonPackages   string
	pythonPreload            listFlag
	pythonPreloadSet         bool
	locales                  []string // nil: every locale
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
	fs.Func("input", "", func(s string) error {
		f.input, f.inputSet = s, true
		return nil
	})
	fs.StringVar(&f.lang, "lang", "", "")
	fs.StringVar(&f.zone, "tz", "", "")
	fs.StringVar(&f.locale, "locale", "", "")
	fs.StringVar(&f.catalogue, "catalogue", "", "")
	fs.StringVar(&f.cache, "cache", "", "")
	fs.StringVar(&f.npm, "npm", "", "")
	fs.BoolVar(&f.noInstall, "no-install", false, "")
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
	fs.Func("locales", "", func(s string) error {
		if strings.TrimSpace(s) == "none" {
			f.locales = []string{}
			return nil
		}
		var l listFlag
		if err := l.Set(s); err != nil {
			return err
		}
		f.locales = append(f.locales, l...)
		return nil
	})
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
		if errors.As(err, new(inputError)) {
			return ExitValidation // as the engine refuses bad input
		}
		return ExitUsage
	}
	if err := f.installImports(ctx, st, req, cfg.Packages); err != nil {
		fmt.Fprintf(st.Stderr, "stepbox run: %v\n", err)
		return ExitUnavailable
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
	if f.lang != "" {
		switch l := sandbox.Language(f.lang); l {
		case sandbox.JavaScript, sandbox.TypeScript, sandbox.Python:
			req.Language = l
		default:
			return req, cfg, nil, fmt.Errorf("--lang %q: want javascript, typescript or python", f.lang)
		}
	}
	if file != "-" {
		req.StepName = stepName(file)
	}
	req.Modules = f.modules // the engine checks the names, the zone and the locale
	req.TimeZone, req.Locale = f.zone, f.locale
	if f.inputSet {
		what, in := "--input", []byte(f.input)
		if strings.HasPrefix(f.input, "@") {
			what = "--input " + f.input
			if in, err = readArg(st, f.input[1:]); err != nil {
				return req, cfg, nil, err
			}
		}
		if err := checkJSON(in); err != nil {
			return req, cfg, nil, inputError{fmt.Errorf("%s: %w", what, err)}
		}
		req.Input = in
	}
	var data map[string]json.RawMessage
	if f.data != "" {
		b, err := readArg(st, f.data)
		if err != nil {
			return req, cfg, nil, err
		}
		if err := decodeJSON("--data "+f.data, b, &data, "a JSON object mapping method names to answers"); err != nil {
			return req, cfg, nil, err
		}
	}
	cfg.Plans = map[string]sandbox.Limits{"default": {}}
	if f.plans != "" {
		b, err := readArg(st, f.plans)
		if err != nil {
			return req, cfg, nil, err
		}
		// Plan by plan, so that an error names its plan: encoding/json's
		// paths leave out map keys.
		var plans map[string]json.RawMessage
		if err := decodeJSON("--plans "+f.plans, b, &plans, `a JSON object of named plans, {"name": {"memoryMb": 64, ...}}`); err != nil {
			return req, cfg, nil, err
		}
		for name, raw := range plans {
			var lim sandbox.Limits
			if err := decodeJSON(fmt.Sprintf("--plans %s: plan %q", f.plans, name), raw, &lim, `an object of limits, {"memoryMb": 64, ...}`); err != nil {
				return req, cfg, nil, err
			}
			cfg.Plans[name] = lim
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
		if err := decodeJSON("--egress "+f.egress, b, cfg.Egress, `a JSON object {"policy": {...}, "secrets": [...]}`); err != nil {
			return req, cfg, nil, err
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
	if cfg.Packages, err = packagesConfig(st, f.catalogue, f.cache); err != nil {
		return req, cfg, nil, err
	}
	cfg.Packages.NPM = f.npm
	cfg.Locales = f.locales
	cfg.PoolSize = 1
	cfg.Warm = -1 // one run: a warm pool would only cost a second VM
	return req, cfg, data, nil
}

// inputError is a bad --input: VALIDATION, as the engine would refuse it.
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }

// stepName is the name a step read from file gets in its stack traces:
// the file as named on the command line, or its base name when that is
// too long for the engine (Request.StepName); empty, the engine's default,
// when neither is a name the engine takes.
func stepName(file string) string {
	for _, n := range []string{file, filepath.Base(file)} {
		if len(n) <= 255 && utf8.ValidString(n) && !strings.ContainsFunc(n, unicode.IsControl) {
			return n
		}
	}
	return ""
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
		return report(st, err, asJSON, positionFile(req))
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
		return report(st, err, false, positionFile(req))
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

// positionFile is the file name an error's position names: the step's
// file, or for a step from stdin the name its stack frames carry (step.js,
// step.ts or step.py), so that the headline and the stack agree.
func positionFile(req sandbox.Request) string {
	if req.StepName != "" {
		return req.StepName
	}
	return sandbox.DefaultStepName(req.Language)
}

// report prints a run's error; file names the step in the position ("at
// step.ts:5:3", as compilers and editors write it).
func report(st *State, err error, asJSON bool, file string) int {
	var se *sandbox.Error
	if asJSON && errors.As(err, &se) {
		_ = json.NewEncoder(st.Stdout).Encode(sandbox.Event{Kind: sandbox.EventError, Error: se})
		return ExitCode(err)
	}
	if errors.As(err, &se) {
		where := ""
		if p := se.Position; p != nil {
			where = fmt.Sprintf(" at %s:%d", file, p.Line)
			if p.Column > 0 {
				where += fmt.Sprintf(":%d", p.Column)
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
