package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
)

const serveUsage = `Usage: stepbox serve [flags]

Serves the Stepbox API: Run, Execute, CompileTypeScript and Health over Connect,
gRPC, gRPC-Web and HTTP+JSON (h2c without TLS), plus /healthz, /readyz and
/metrics (on metrics.listen when set; with tenants, only there or with a
metrics key). Logs are JSON lines on stderr. SIGTERM or Ctrl-C drains the runs in
flight (up to drainTimeout, then aborts them); a second signal stops at once.

The configuration is layered: defaults (127.0.0.1:8080, no authentication),
then the YAML file, then STEPBOX_* environment variables, then flags.

Flags:
  --config FILE      the YAML configuration (default: $STEPBOX_CONFIG; none)
  --listen ADDR      the address to listen on, host:port
  --log-level LEVEL  debug, info, warn or error
  --check            validate the configuration, print every problem with its
                     field, and exit: 0 valid, 2 not
  --hash-key         read an API key on stdin, print the hash for tenants[].keys

Environment:
%s
Exit status: 0 after a shutdown, 1 if serving failed, 2 for a bad command
line or configuration.
`

func serveHelp() string {
	var b strings.Builder
	for _, e := range server.EnvVars() {
		fmt.Fprintf(&b, "  %-26s %s\n", e[0], e[1])
	}
	fmt.Fprintf(&b, "  %-26s %s\n", "STEPBOX_CONFIG", "--config")
	return fmt.Sprintf(serveUsage, b.String())
}

type serveFlags struct {
	config, listen, logLevel string
	check, hashKey           bool
}

func serveCommand(ctx context.Context, st *State, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f serveFlags
	fs.StringVar(&f.config, "config", "", "")
	fs.StringVar(&f.listen, "listen", "", "")
	fs.StringVar(&f.logLevel, "log-level", "", "")
	fs.BoolVar(&f.check, "check", false, "")
	fs.BoolVar(&f.hashKey, "hash-key", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(st.Stdout, serveHelp())
			return ExitOK
		}
		fmt.Fprintf(st.Stderr, "stepbox serve: %v\n\n%s", err, serveHelp())
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(st.Stderr, "stepbox serve: unexpected argument %q\n\n%s", fs.Arg(0), serveHelp())
		return ExitUsage
	}
	if f.hashKey {
		return hashKey(st)
	}

	cfg, problems := serveConfig(st, f)
	if f.check {
		if len(problems) > 0 {
			printProblems(st, problems)
			return ExitUsage
		}
		fmt.Fprintf(st.Stdout, "configuration OK: %s\n", summary(cfg))
		return ExitOK
	}
	if len(problems) > 0 {
		printProblems(st, problems)
		return ExitUsage
	}
	level, _ := server.ParseLogLevel(orDefault(cfg.LogLevel, server.DefaultLogLevel))
	log := server.NewLogger(st.Stderr, level)
	cfg.Logger, cfg.Version, cfg.Metrics = log, Version, server.NewMetrics()

	ecfg := cfg.EngineConfig()
	ecfg.Logger = log.With(slog.String("component", "engine"))
	if ecfg.Egress != nil {
		e := *ecfg.Egress
		e.AuditLogger = log.With(slog.String("component", "egress"))
		if cfg.AuditFile != "" {
			f, err := os.OpenFile(cfg.AuditFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				fmt.Fprintf(st.Stderr, "stepbox serve: auditFile: %v\n", err)
				return ExitUsage
			}
			defer f.Close()
			e.AuditLog = f
		}
		ecfg.Egress = &e
	}
	eng, err := sandbox.New(ecfg)
	if err != nil {
		fmt.Fprintf(st.Stderr, "stepbox serve: %v\n", err)
		return ExitUsage
	}
	srv, err := server.New(eng, cfg)
	if err != nil {
		eng.Close(context.Background())
		fmt.Fprintf(st.Stderr, "stepbox serve: %v\n", err)
		return ExitUsage
	}
	l, err := net.Listen("tcp", orDefault(cfg.Listen, server.DefaultListen))
	if err != nil {
		eng.Close(context.Background())
		log.Error("cannot listen", slog.String("error", err.Error()))
		return ExitRuntime
	}
	served := make(chan error, 2) // the main listener's Serve and the metrics listener's ServeMetrics
	serving := 1
	if addr := cfg.MetricsEndpoint.Listen; addr != "" {
		ml, err := net.Listen("tcp", addr)
		if err != nil {
			l.Close()
			eng.Close(context.Background())
			log.Error("cannot listen for metrics", slog.String("error", err.Error()))
			return ExitRuntime
		}
		serving++
		go func() { served <- srv.ServeMetrics(ml) }()
	}
	go func() { served <- srv.Serve(l) }()

	select {
	case err := <-served:
		log.Error("serving failed", slog.String("error", err.Error()))
		serving--
		cancelNow, stop := context.WithCancel(context.Background())
		stop()
		_ = srv.Shutdown(cancelNow) // the other listener, at once
		for ; serving > 0; serving-- {
			<-served
		}
		eng.Close(context.Background())
		return ExitRuntime
	case sig := <-st.Signals: // a nil channel: only ctx stops the server
		log.Info("signal received: draining", slog.String("signal", sig.String()))
	case <-ctx.Done():
		log.Info("stopping: draining")
	}

	drain := cfg.DrainTimeout
	if drain <= 0 {
		drain = server.DefaultDrainTimeout
	}
	dctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	go func() { // a second signal: stop now
		select {
		case <-st.Signals:
			log.Warn("second signal: aborting runs in flight")
			cancel()
		case <-dctx.Done():
		}
	}()
	status := ExitOK
	if err := srv.Shutdown(dctx); err != nil {
		log.Warn("drain incomplete: runs in flight were aborted", slog.String("error", err.Error()))
	}
	for ; serving > 0; serving-- {
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serving failed", slog.String("error", err.Error()))
			status = ExitRuntime
		}
	}
	_ = eng.Close(dctx)
	return status
}

// serveConfig layers the configuration: defaults, file, environment, flags.
// It returns every problem found, each naming its field.
func serveConfig(st *State, f serveFlags) (server.Config, []string) {
	var cfg server.Config
	var problems []string
	add := func(err error) {
		if err == nil {
			return
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				problems = append(problems, line)
			}
		}
	}
	path := f.config
	if path == "" {
		path = st.Getenv("STEPBOX_CONFIG")
	}
	if path != "" {
		b, err := readArg(st, path)
		if err != nil {
			add(fmt.Errorf("config: %w", err))
		} else {
			cfg, err = server.ParseConfig(b) // what decoded, and what did not
			add(err)
		}
	}
	add(cfg.ApplyEnv(st.Getenv))
	if f.listen != "" {
		cfg.Listen = f.listen
	}
	if f.logLevel != "" {
		cfg.LogLevel = f.logLevel
	}
	// Every problem in one pass: the fields that did not decode are left
	// out, and the rest is validated all the same.
	add(cfg.Validate())
	for _, tf := range []struct{ field, name string }{{"tls.certFile", cfg.TLS.CertFile}, {"tls.keyFile", cfg.TLS.KeyFile}} {
		if tf.name != "" {
			if _, err := st.ReadFile(tf.name); err != nil {
				add(fmt.Errorf("%s: %w", tf.field, err))
			}
		}
	}
	if cfg.AuditFile != "" {
		add(appendable("auditFile", cfg.AuditFile))
	}
	return cfg, problems
}

// appendable reports why the server could not open name to append to it,
// as it will at start, without creating it: an existing file must be
// writable, else its directory must exist and take a new file (tried with
// a temporary one, removed at once).
func appendable(field, name string) error {
	if f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0); err == nil {
		return f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", field, err)
	}
	dir := filepath.Dir(name)
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%s: the directory %s: %w", field, dir, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", field, dir)
	}
	probe, err := os.CreateTemp(dir, ".stepbox-check-*")
	if err != nil {
		return fmt.Errorf("%s: cannot create %s: %w", field, name, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

func printProblems(st *State, problems []string) {
	n := fmt.Sprintf("%d problems", len(problems))
	if len(problems) == 1 {
		n = "1 problem"
	}
	fmt.Fprintf(st.Stderr, "stepbox serve: invalid configuration (%s):\n", n)
	for _, p := range problems {
		fmt.Fprintf(st.Stderr, "  %s\n", p)
	}
}

func summary(c server.Config) string {
	auth := c.Auth
	if auth == "" {
		auth = server.AuthNone
		if len(c.Tenants) > 0 {
			auth = server.AuthKeys
		}
	}
	plans := slices.Sorted(maps.Keys(c.Plans))
	if len(plans) == 0 {
		plans = []string{orDefault(c.DefaultPlan, "default")}
	}
	out := fmt.Sprintf("listen %s, auth %s, %d tenants, plans %s", orDefault(c.Listen, server.DefaultListen), auth,
		len(c.Tenants), strings.Join(plans, ","))
	if c.MetricsEndpoint.Listen != "" || len(c.MetricsEndpoint.Keys) > 0 || auth != server.AuthNone {
		out += ", metrics " + c.MetricsSummary() // the default of a local developer goes without saying
	}
	return out
}

func hashKey(st *State) int {
	line, err := bufio.NewReader(st.Stdin).ReadString('\n')
	key := strings.TrimSpace(line)
	if key == "" {
		if err != nil && !errors.Is(err, io.EOF) {
			fmt.Fprintf(st.Stderr, "stepbox serve --hash-key: %v\n", err)
		} else {
			fmt.Fprintln(st.Stderr, "stepbox serve --hash-key: no key on stdin")
		}
		return ExitUsage
	}
	fmt.Fprintln(st.Stdout, server.HashKey(key))
	return ExitOK
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
