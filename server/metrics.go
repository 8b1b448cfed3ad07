package server

import (
	"encoding/json"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stepbox/stepbox/proto/stepbox/v1/stepboxv1connect"
	"github.com/stepbox/stepbox/sandbox"
)

// Metric names, in one place: dashboards and alerts match on them.
const (
	metricRuns          = "stepbox_runs_total"
	metricRunSeconds    = "stepbox_run_duration_seconds"
	metricQueueSeconds  = "stepbox_queue_duration_seconds"
	metricInFlight      = "stepbox_runs_in_flight"
	metricRequests      = "stepbox_rpc_requests_total"
	metricDataBytes     = "stepbox_data_bytes_total"
	metricFetches       = "stepbox_fetches_total"
	metricFetchBytes    = "stepbox_fetch_bytes_total"
	metricConsoleEvents = "stepbox_console_events_total"
	metricEngineRunning = "stepbox_engine_running"
	metricEngineQueued  = "stepbox_engine_queued"
	metricEngineQueue   = "stepbox_engine_queue_size"
	metricPoolSize      = "stepbox_pool_size"
	metricWorkersUp     = "stepbox_workers_up"
	metricWorkersBusy   = "stepbox_workers_busy"
	metricRestarts      = "stepbox_worker_restarts_total"
	metricPythonUp      = "stepbox_python_zygotes"
	metricProcesses     = "stepbox_worker_processes"
	metricUnbound       = "stepbox_workers_unbound"
	metricRetired       = "stepbox_workers_retired_total"
	metricReady         = "stepbox_ready"
	metricBuildInfo     = "stepbox_build_info"
)

// No label value comes from client text: a caller who could choose label
// values would grow the metrics (and the server's memory, since series are
// never deleted) without bound, with unique paths, languages or tenant
// names. Each label takes a value from a fixed set, or one of these.
const (
	tenantNone   = "none"    // no tenant: auth none, no tenant in the request
	tenantOther  = "other"   // a tenant name the configuration does not know
	labelUnknown = "unknown" // a procedure, language or outcome not in the label's set
)

// procedures are the values of the procedure label: the methods of
// StepboxService, by path.
var procedures = map[string]string{
	stepboxv1connect.StepboxServiceRunProcedure:               "Run",
	stepboxv1connect.StepboxServiceExecuteProcedure:           "Execute",
	stepboxv1connect.StepboxServiceCompileTypeScriptProcedure: "CompileTypeScript",
	stepboxv1connect.StepboxServiceHealthProcedure:            "Health",
}

// procedureLabel returns the procedure label of a request path: the
// method's name, or "unknown" for any other path.
func procedureLabel(path string) string {
	if m, ok := procedures[path]; ok {
		return m
	}
	return labelUnknown
}

// languageLabel returns the language label of a run: a language the
// engine knows, or "unknown" (a refused request may name any).
func languageLabel(l sandbox.Language) string {
	switch l {
	case "":
		return string(sandbox.JavaScript)
	case sandbox.JavaScript, sandbox.TypeScript, sandbox.Python:
		return string(l)
	}
	return labelUnknown
}

// outcomeLabel returns the outcome label of a run: "ok" or an error code.
func outcomeLabel(o string) string {
	switch sandbox.Code(o) {
	case "ok", sandbox.CodeValidation, sandbox.CodeRuntime, sandbox.CodeTimeout, sandbox.CodeOOM,
		sandbox.CodeLimitExceeded, sandbox.CodeAborted, sandbox.CodeCrashed, sandbox.CodeUnavailable:
		return o
	}
	return labelUnknown
}

// Metrics holds the server's Prometheus metrics and is the sandbox.Meter
// that counts finished runs into them. Create it with NewMetrics, give it to
// both the engine (sandbox.Config.Meter) and the server (Config.Metrics);
// Config.EngineConfig does the former.
//
// Metrics is safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	runs          *prometheus.CounterVec   // language, outcome, tenant
	runSeconds    *prometheus.HistogramVec // language, outcome
	queueSeconds  prometheus.Histogram
	inFlight      prometheus.Gauge
	requests      *prometheus.CounterVec // procedure, code
	dataBytes     prometheus.Counter
	fetches       *prometheus.CounterVec // decision
	fetchBytes    prometheus.Counter
	consoleEvents prometheus.Counter

	tenants atomic.Pointer[map[string]bool] // configured tenant names
}

// NewMetrics returns metrics registered in a new registry, with the Go
// runtime and process collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	latency := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
	m := &Metrics{
		reg: reg,
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricRuns,
			Help: "Runs ended, by language, outcome (ok or the error code; refusals included) and tenant.",
		}, []string{"language", "outcome", "tenant"}),
		runSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: metricRunSeconds, Help: "Wall-clock time of runs from start to terminal event, seconds.", Buckets: latency,
		}, []string{"language", "outcome"}),
		queueSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: metricQueueSeconds, Help: "Time runs waited in the engine's queue for a slot, seconds.", Buckets: latency,
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: metricInFlight, Help: "Runs accepted by this server and not yet ended (running or queued).",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricRequests, Help: "RPCs answered, by procedure and code (ok, unauthenticated, resource_exhausted, ...).",
		}, []string{"procedure", "code"}),
		dataBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: metricDataBytes, Help: "JSON bytes that crossed the data bridge (parameters, answers, status payloads).",
		}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricFetches, Help: "Fetch attempts of steps, by the FetchProxy's decision (allow, deny).",
		}, []string{"decision"}),
		fetchBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: metricFetchBytes, Help: "Response bytes read by steps' fetches.",
		}),
		consoleEvents: prometheus.NewCounter(prometheus.CounterOpts{
			Name: metricConsoleEvents, Help: "Console lines delivered by steps.",
		}),
	}
	reg.MustRegister(m.runs, m.runSeconds, m.queueSeconds, m.inFlight, m.requests, m.dataBytes, m.fetches, m.fetchBytes, m.consoleEvents)
	m.tenants.Store(&map[string]bool{})
	return m
}

// Record implements sandbox.Meter: it counts one finished (or refused) run.
func (m *Metrics) Record(u sandbox.Usage) {
	lang, outcome := languageLabel(u.Language), outcomeLabel(u.Outcome)
	m.runs.WithLabelValues(lang, outcome, m.tenantLabel(u.Tenant)).Inc()
	if u.Stats.WallMs > 0 || u.Outcome == "ok" {
		m.runSeconds.WithLabelValues(lang, outcome).Observe(u.Stats.WallMs / 1000)
		m.queueSeconds.Observe(u.Stats.QueueMs / 1000)
	}
	m.dataBytes.Add(float64(u.Stats.DataBytes))
	m.fetchBytes.Add(float64(u.Stats.FetchBytes))
	m.consoleEvents.Add(float64(u.Stats.ConsoleEvents))
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry returns the registry, for an embedder's own metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func (m *Metrics) tenantLabel(t string) string {
	switch {
	case t == "":
		return tenantNone
	case (*m.tenants.Load())[t]:
		return t
	}
	return tenantOther
}

func (m *Metrics) setTenants(ts []Tenant) {
	names := map[string]bool{}
	for _, t := range ts {
		names[t.Name] = true
	}
	m.tenants.Store(&names)
}

// fetch counts one fetch audit record seen on a run's stream.
func (m *Metrics) fetch(record json.RawMessage) {
	var r struct {
		Decision string `json:"decision"`
	}
	if json.Unmarshal(record, &r) != nil || (r.Decision != "allow" && r.Decision != "deny") {
		r.Decision = "unknown"
	}
	m.fetches.WithLabelValues(r.Decision).Inc()
}

// registerServer adds the gauges that read a server's state. A second
// server on the same Metrics keeps the first one's.
func (m *Metrics) registerServer(s *Server) {
	gauges := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricReady, Help: "1 while /readyz reports ready."}, func() float64 {
			if ok, _ := s.ready(); ok {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricEngineRunning, Help: "Runs executing in the engine."}, func() float64 {
			return float64(s.engine.Health().Running)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricEngineQueued, Help: "Runs waiting in the engine's queue."}, func() float64 {
			return float64(s.engine.Health().Queued)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricEngineQueue, Help: "How many runs the engine's queue holds."}, func() float64 {
			return float64(s.engine.Health().QueueSize)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricPoolSize, Help: "How many runs execute at once (worker slots)."}, func() float64 {
			return float64(s.engine.Health().PoolSize)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricWorkersUp, Help: "Worker processes started and alive (in-process: the pool size)."}, func() float64 {
			return float64(s.engine.Health().Workers.Up)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricWorkersBusy, Help: "Workers running a step."}, func() float64 {
			return float64(s.engine.Health().Workers.Busy)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: metricRestarts, Help: "Worker starts after each slot's first: replacements of workers that crashed or were killed, and retried starts.",
		}, func() float64 {
			return float64(s.engine.Health().Workers.Restarts)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricPythonUp, Help: "Python zygotes up: one per worker that has run a Python step, in a jail of its own."}, func() float64 {
			return float64(s.engine.Health().Python.Zygotes)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricUnbound, Help: "Started workers bound to no tenant yet (the standby), both languages'."}, func() float64 {
			h := s.engine.Health()
			return float64(h.Workers.Unbound + pythonWorkers(h).Unbound)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: metricRetired, Help: "Workers replaced because they must serve no other run: their run count or age, a run that hit a limit, a zygote that could not prove a run's traces gone.",
		}, func() float64 {
			h := s.engine.Health()
			return float64(h.Workers.Retired + pythonWorkers(h).Retired)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: metricProcesses, Help: "Jailed processes up that run steps: kind worker (JavaScript and Python runs) and zygote (one per worker that has run Python).", ConstLabels: prometheus.Labels{"kind": "worker"},
		}, func() float64 {
			h := s.engine.Health()
			return float64(len(h.Workers.Processes) + len(pythonWorkers(h).Processes))
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: metricProcesses, Help: "Jailed processes up that run steps: kind worker (JavaScript and Python runs) and zygote (one per worker that has run Python).", ConstLabels: prometheus.Labels{"kind": "zygote"},
		}, func() float64 {
			return float64(s.engine.Health().Python.Zygotes)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: metricBuildInfo, Help: "Always 1; the version label is the server's.", ConstLabels: prometheus.Labels{"version": s.cfg.Version},
		}, func() float64 { return 1 }),
	}
	for _, g := range gauges {
		_ = m.reg.Register(g) // AlreadyRegisteredError: another server registered it first
	}
}

// pythonWorkers is the in-process engine's pool of Python workers (with
// process isolation, Python runs in Health.Workers), or nothing.
func pythonWorkers(h sandbox.Health) sandbox.WorkerHealth {
	if h.Python.Workers == nil {
		return sandbox.WorkerHealth{}
	}
	return *h.Python.Workers
}
