// Package server serves a sandbox.Engine over the network: the
// StepboxService of proto/stepbox/v1 (Run, Execute, CompileTypeScript,
// Health) through Connect, so that the same handlers answer gRPC, gRPC-Web,
// the Connect protocol and plain HTTP+JSON; plus /healthz, /readyz and
// Prometheus /metrics. `stepbox serve` is this package behind a command
// line; server/README.md shows the API with curl.
//
// # Serving
//
//	cfg, err := server.LoadConfig("stepbox.yaml") // or server.Config{} for the local defaults
//	cfg.Metrics = server.NewMetrics()
//	eng, err := sandbox.New(cfg.EngineConfig()) // the engine reports runs to cfg.Metrics
//	srv, err := server.New(eng, cfg)
//	go srv.ListenAndServe()                      // h2c: gRPC without TLS
//	...                                          // on SIGTERM:
//	srv.Shutdown(ctx)                            // drain runs in flight until ctx ends, then abort them
//	eng.Close(ctx)
//
// # Runs over the wire
//
// A request the engine does not accept fails the RPC (INVALID_ARGUMENT,
// UNAVAILABLE, ...) with the contract's Error attached as a detail; a run
// that was accepted ends with exactly one terminal event, delivered as data
// (RunResponse.error, or the last message of Execute). Run answers data
// requests from its request's data map; Execute streams them to the client,
// which answers on the same stream. When the client goes away, its run is
// aborted.
//
// # Tenants and quotas
//
// With Config.Auth "keys", every call but Health sends "Authorization:
// Bearer KEY". Keys are configured as SHA-256 hashes (HashKey) and compared
// in constant time; the key's tenant replaces the request's tenant, bounds
// its plans, narrows its egress policy and caps its runs in flight
// (MaxConcurrent; over it: RESOURCE_EXHAUSTED, HTTP 429). The default, for a
// developer with no configuration, is no authentication on 127.0.0.1 only;
// any other address without tenants must say `auth: none` explicitly.
//
// # Operations
//
// Logs are JSON lines (log/slog); every line about a run carries its run
// id, and each run ends with one "run" line. Metrics are documented in
// server/README.md; no label value comes from a client, and on a server
// with tenants /metrics is for the scraper only: on a listener of its own
// or behind a bearer key (Config.MetricsEndpoint, ServeMetrics). The Go
// client is server/client.
package server
