package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
)

// Who may read /metrics. The metrics name every configured tenant with its
// outcome counts, so on a server with tenants they are not for its callers:
// they are served either on a listener of their own (MetricsEndpoint.Listen,
// an address only the scraper reaches), or to holders of a metrics key
// (MetricsEndpoint.Keys), or both. A server with tenants and neither
// serves them to nobody (403 naming the fields). A server without
// authentication serves them on its listener to anyone, as it runs code
// for anyone.

// MetricsEndpoint says where /metrics is served and to whom. The zero value
// serves /metrics on Listen: to anyone when the server authenticates no one
// (Auth "none"), and to no one when tenants are configured (403).
type MetricsEndpoint struct {
	// Listen, if set, is a second address (host:port) serving /metrics,
	// /healthz and /readyz, and nothing else; the main listener then
	// answers 404 for /metrics. With TLS configured, it serves HTTPS with
	// the same certificate. Bind it where only the scraper reaches it (a
	// port the Service does not expose, a private interface). Empty: none.
	Listen string `json:"listen,omitempty"`
	// Keys, if set, are the SHA-256 hashes of bearer keys for /metrics
	// ("sha256:HEX" or HEX, as Tenant.Keys; HashKey computes one): a scrape
	// must send "Authorization: Bearer KEY" with one of them, on whichever
	// listener serves /metrics, or gets 401. A tenant's key is not accepted
	// here (Validate refuses the same key in both). Empty: no key needed.
	Keys []string `json:"keys,omitempty"`
}

// metricsAccess is the decision of MetricsEndpoint for one listener.
type metricsAccess int

const (
	metricsOpen   metricsAccess = iota // anyone
	metricsKeyed                       // holders of a metrics key
	metricsClosed                      // nobody: tenants, and neither a listener nor keys
	metricsAbsent                      // not on this listener (404): it is on MetricsEndpoint.Listen
)

// metricsAccessOn returns who may read /metrics on the main listener
// (main) or on MetricsEndpoint.Listen.
//
// Preconditions: c has its defaults (withDefaults).
func (c Config) metricsAccessOn(main bool) metricsAccess {
	m := c.MetricsEndpoint
	switch {
	case main && m.Listen != "":
		return metricsAbsent
	case len(m.Keys) > 0:
		return metricsKeyed
	case !main || c.Auth == AuthNone:
		return metricsOpen
	}
	return metricsClosed
}

// metricsHandler serves the Prometheus text to those access lets through.
func (s *Server) metricsHandler(access metricsAccess) http.Handler {
	next := s.metrics.Handler()
	var hashes [][32]byte
	for _, k := range s.cfg.MetricsEndpoint.Keys {
		if h, err := parseKeyHash(k); err == nil { // Validate has refused the others
			hashes = append(hashes, h)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch access {
		case metricsClosed:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintln(w, "/metrics is not served here: it names every tenant of this server. "+
				"Configure metrics.listen (an address only the scraper reaches) or metrics.keys (a bearer key for the scraper).")
			return
		case metricsKeyed:
			if !metricsKeyOK(r.Header.Get("Authorization"), hashes) {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Header().Set("WWW-Authenticate", `Bearer realm="stepbox-metrics"`)
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintln(w, `/metrics needs a metrics key: send "Authorization: Bearer KEY" with a key of metrics.keys`)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// metricsKeyOK reports whether an Authorization header carries a bearer
// key whose hash is one of hashes, comparing with each in constant time.
func metricsKeyOK(authorization string, hashes [][32]byte) bool {
	scheme, token, _ := strings.Cut(authorization, " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return false
	}
	sum := sha256.Sum256([]byte(token))
	ok := 0
	for i := range hashes {
		ok |= subtle.ConstantTimeCompare(sum[:], hashes[i][:])
	}
	return ok == 1
}

// MetricsSummary says in a few words where /metrics is served and to whom
// ("on 0.0.0.0:9090, with a metrics key"), for the start-up log and
// `stepbox serve --check`.
func (c Config) MetricsSummary() string {
	c = c.withDefaults()
	main := c.MetricsEndpoint.Listen == ""
	where := "on " + c.Listen
	if !main {
		where = "on " + c.MetricsEndpoint.Listen
	}
	switch c.metricsAccessOn(main) {
	case metricsKeyed:
		return where + ", with a metrics key"
	case metricsClosed:
		return "not served (tenants are configured: set metrics.listen or metrics.keys)"
	}
	return where + ", to anyone"
}
