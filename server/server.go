package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	"github.com/stepbox/stepbox/proto/stepbox/v1/stepboxv1connect"
	"github.com/stepbox/stepbox/sandbox"
)

// Server serves a sandbox.Engine over the network: the StepboxService RPCs
// (Connect, gRPC and gRPC-Web on the same paths, and plain HTTP+JSON for the
// unary ones), /healthz, /readyz and /metrics (on a listener of its own
// with Config.MetricsEndpoint; see ServeMetrics).
//
//	eng, _ := sandbox.New(cfg.EngineConfig())
//	srv, _ := server.New(eng, cfg)
//	go srv.ListenAndServe()
//	// on SIGTERM:
//	srv.Shutdown(ctx) // drain runs in flight
//	eng.Close(ctx)
//
// Notes: a Server is safe for concurrent use. It does not own the engine:
// Shutdown stops serving and ends this server's runs, and the caller closes
// the engine afterwards.
type Server struct {
	cfg     Config
	engine  *sandbox.Engine
	log     *slog.Logger
	metrics *Metrics
	keys    []apiKey
	handler http.Handler
	ops     http.Handler // MetricsEndpoint.Listen: /metrics, /healthz, /readyz

	// abort ends every run of this server when Shutdown's deadline passes.
	abortCtx context.Context
	abort    context.CancelCauseFunc

	inFlight atomic.Int64   // runs accepted and not yet ended
	runs     sync.WaitGroup // one per RPC with a run in flight; Done when its handler no longer touches the run
	bg       sync.WaitGroup // one per stream reader goroutine; Done when it returns

	mu       sync.Mutex
	draining bool           // guarded by mu
	servers  []*http.Server // guarded by mu: those started by Serve
}

// errShuttingDown is the cause of runs ended by Shutdown's deadline.
var errShuttingDown = errors.New("stepbox: the server is shutting down")

// New validates cfg and returns a server for engine. cfg's engine fields
// should be those the engine was built with (EngineConfig): the server uses
// them for readiness until the engine reports its own load.
func New(engine *sandbox.Engine, cfg Config) (*Server, error) {
	if engine == nil {
		return nil, errors.New("server: no engine")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("server: invalid config:\n%w", err)
	}
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, engine: engine, log: cfg.Logger, metrics: cfg.Metrics}
	if s.log == nil {
		lvl, _ := parseLevel(cfg.LogLevel)
		s.log = NewLogger(os.Stderr, lvl)
	}
	s.log = bounded(s.log) // client text in records is cut, whatever the handler
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	s.metrics.setTenants(cfg.Tenants)
	s.metrics.registerServer(s)
	s.keys = newKeys(cfg.Tenants)
	s.abortCtx, s.abort = context.WithCancelCause(context.Background())
	if cfg.Auth == AuthNone && !isLoopback(cfg.Listen) {
		s.log.Warn("serving without authentication on a non-loopback address: anyone who reaches it can run code",
			slog.String(fieldListen, cfg.Listen))
	}

	path, rpc := stepboxv1connect.NewStepboxServiceHandler(&service{s: s},
		connect.WithInterceptors(&interceptor{s: s}),
		connect.WithCodec(strictJSON{"json"}),
		connect.WithCodec(strictJSON{"json; charset=utf-8"}),
		connect.WithReadMaxBytes(int(min(cfg.MaxRequestBytes, 1<<31-1))),
	)
	mux := http.NewServeMux()
	mux.Handle(path, jsonByDefault(readableErrors(s.limitBody(rpc))))
	s.mountGRPCStandard(mux)
	s.mountProbes(mux)
	if access := cfg.metricsAccessOn(true); access != metricsAbsent {
		mux.Handle("GET /metrics", s.metricsHandler(access))
	}
	s.mountPlayground(mux) // GET / and /playground/: see playground.go
	s.handler = mux
	if cfg.MetricsEndpoint.Listen != "" {
		ops := http.NewServeMux()
		s.mountProbes(ops)
		ops.Handle("GET /metrics", s.metricsHandler(cfg.metricsAccessOn(false)))
		s.ops = ops
	}
	if cfg.metricsAccessOn(true) == metricsClosed {
		s.log.Warn("/metrics is not served: it would show every tenant to every caller; set metrics.listen or metrics.keys to scrape it")
	}
	return s, nil
}

// mountProbes serves /healthz and /readyz on mux.
func (s *Server) mountProbes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", s.readyz)
}

// Handler returns the server's HTTP handler, to mount on a server of the
// caller's (which must allow HTTP/2 for Execute and gRPC).
func (s *Server) Handler() http.Handler { return s.handler }

// ListenAndServe listens on Config.Listen (and on MetricsEndpoint.Listen,
// if set) and serves until Shutdown, when it returns http.ErrServerClosed.
func (s *Server) ListenAndServe() error {
	l, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if addr := s.cfg.MetricsEndpoint.Listen; addr != "" {
		ml, err := net.Listen("tcp", addr)
		if err != nil {
			l.Close()
			return fmt.Errorf("server: metrics: %w", err)
		}
		s.bg.Add(1) // Done when ServeMetrics returns, at Shutdown (which waits for it).
		go func() {
			defer s.bg.Done()
			if err := s.ServeMetrics(ml); !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("serving metrics failed", slog.String(fieldError, err.Error()))
			}
		}()
	}
	return s.Serve(l)
}

// Serve serves on l until Shutdown, when it returns http.ErrServerClosed.
// Without TLS it speaks HTTP/1.1 and cleartext HTTP/2 (h2c), so gRPC
// clients connect without TLS; with Config.TLS, HTTPS with HTTP/2.
func (s *Server) Serve(l net.Listener) error {
	return s.serve(l, s.handler, "listening", slog.String(fieldAuth, s.cfg.Auth),
		slog.Int("poolSize", s.engine.Health().PoolSize), slog.Int("queueSize", s.engine.Health().QueueSize),
		slog.String("metrics", s.cfg.MetricsSummary()))
}

// ServeMetrics serves /metrics, /healthz and /readyz on l, the listener of
// Config.MetricsEndpoint.Listen, until Shutdown, when it returns
// http.ErrServerClosed. It fails at once if MetricsEndpoint.Listen is not
// set: then /metrics is on the main listener.
func (s *Server) ServeMetrics(l net.Listener) error {
	if s.ops == nil {
		l.Close()
		return errors.New("server: no metrics listener is configured (metrics.listen): /metrics is served by Serve")
	}
	return s.serve(l, s.ops, "serving metrics", slog.Bool("key", len(s.cfg.MetricsEndpoint.Keys) > 0))
}

// serve serves h on l until Shutdown, and logs msg with l's address, TLS
// and attrs once it does.
func (s *Server) serve(l net.Listener, h http.Handler, msg string, attrs ...slog.Attr) error {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(s.cfg.TLS.CertFile == "")
	hs := &http.Server{
		Handler:           h,
		Protocols:         &p,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.Background() },
	}
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		l.Close()
		return http.ErrServerClosed
	}
	s.servers = append(s.servers, hs)
	s.mu.Unlock()
	attrs = append([]slog.Attr{slog.String(fieldListen, l.Addr().String()), slog.Bool("tls", s.cfg.TLS.CertFile != "")}, attrs...)
	s.log.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...)
	if s.cfg.TLS.CertFile != "" {
		hs.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		return hs.ServeTLS(l, s.cfg.TLS.CertFile, s.cfg.TLS.KeyFile)
	}
	return hs.Serve(l)
}

// abortGrace is how long Shutdown waits, after its deadline, for aborted
// runs to deliver their terminal events before it closes connections.
const abortGrace = 5 * time.Second

// Shutdown stops the server gracefully: it stops accepting connections and
// runs (readyz turns 503, new runs get UNAVAILABLE), lets the runs in flight
// finish and deliver their results, and returns nil once they all have. If
// ctx ends first, it aborts the remaining runs, gives them a few seconds to
// deliver their terminal ABORTED events, closes every connection, and
// returns ctx's error. Close the engine afterwards.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining = true
	servers := s.servers
	s.mu.Unlock()
	s.log.Info("shutting down", slog.Int64(fieldInFlight, s.inFlight.Load()))

	httpCtx, stopHTTP := context.WithCancel(context.Background())
	defer stopHTTP()
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, hs := range servers {
			wg.Add(1) // Done when its Shutdown returns.
			go func() {
				defer wg.Done()
				if err := hs.Shutdown(httpCtx); err != nil {
					hs.Close()
				}
			}()
		}
		s.runs.Wait()
		wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		n := s.inFlight.Load()
		s.log.Warn("drain deadline passed: aborting runs in flight", slog.Int64(fieldInFlight, n))
		s.abort(errShuttingDown)
		t := time.NewTimer(abortGrace)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
		stopHTTP() // the HTTP servers close every connection
		<-done
	}
	s.bg.Wait()
	s.log.Info("stopped")
	return err
}

func (s *Server) isDraining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// ready reports whether the server should receive traffic, and why not:
// not while it drains, while no worker is up, or while every slot is busy
// and the engine's queue is full.
func (s *Server) ready() (bool, string) {
	if s.isDraining() {
		return false, "shutting down"
	}
	return s.engine.Health().Ready()
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if ok, why := s.ready(); !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not ready:", why)
		return
	}
	fmt.Fprintln(w, "ready")
}

// limitBody enforces MaxRequestBytes at the HTTP layer for unary calls: a
// body declared larger is refused at once with 413, one that turns out
// larger fails with RESOURCE_EXHAUSTED. Streams are limited per message
// (connect.WithReadMaxBytes), since a long Execute may carry many answers.
func (s *Server) limitBody(next http.Handler) http.Handler {
	maxBytes := s.cfg.MaxRequestBytes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/Execute") {
			// The stream's stall limit resets it through its ResponseWriter.
			ctx := context.WithValue(r.Context(), responseKey{}, http.NewResponseController(w))
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		if r.ContentLength > maxBytes && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			s.metrics.requests.WithLabelValues(procedureLabel(r.URL.Path), "too_large").Inc()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			fmt.Fprintf(w, `{"code":"resource_exhausted","message":"the request body is %d bytes, more than the server's limit of %d (maxRequestBytes)"}`+"\n",
				r.ContentLength, maxBytes)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
		next.ServeHTTP(w, r)
	})
}
