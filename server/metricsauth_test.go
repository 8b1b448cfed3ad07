package server_test

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/server"
)

const scrapeKey = "scrape-key-0123456789abcdef0123456789"

// TestMetricsEndpoint checks who may read /metrics, on which listener, for
// each way of configuring it. The metrics name every tenant: on a server
// with tenants, a caller of the API never reads them.
func TestMetricsEndpoint(t *testing.T) {
	tenants := []server.Tenant{{Name: "acme", Keys: []string{server.HashKey(acmeKey)}}}
	keys := []string{server.HashKey(scrapeKey)}
	// Who asks: nobody in particular, a tenant, the scraper.
	const anyone, tenant, scraper = "", acmeKey, scrapeKey
	type ask struct {
		key    string
		status int
	}
	for _, tc := range []struct {
		name     string
		cfg      server.Config
		main     []ask // /metrics on the API's listener
		separate []ask // /metrics on metrics.listen; nil: not configured
	}{
		{
			name: "no authentication: open, as the API is",
			cfg:  server.Config{},
			main: []ask{{anyone, 200}},
		},
		{
			name: "tenants, nothing configured: served to nobody",
			cfg:  server.Config{Tenants: tenants},
			main: []ask{{anyone, 403}, {tenant, 403}, {scraper, 403}},
		},
		{
			name: "tenants, keys",
			cfg:  server.Config{Tenants: tenants, MetricsEndpoint: server.MetricsEndpoint{Keys: keys}},
			main: []ask{{anyone, 401}, {tenant, 401}, {"not" + scraper, 401}, {scraper, 200}},
		},
		{
			name:     "tenants, a listener",
			cfg:      server.Config{Tenants: tenants, MetricsEndpoint: server.MetricsEndpoint{Listen: "127.0.0.1:0"}},
			main:     []ask{{anyone, 404}, {scraper, 404}},
			separate: []ask{{anyone, 200}},
		},
		{
			name:     "tenants, a listener and keys",
			cfg:      server.Config{Tenants: tenants, MetricsEndpoint: server.MetricsEndpoint{Listen: "127.0.0.1:0", Keys: keys}},
			main:     []ask{{anyone, 404}, {scraper, 404}},
			separate: []ask{{anyone, 401}, {tenant, 401}, {scraper, 200}},
		},
		{
			name:     "no authentication, a listener",
			cfg:      server.Config{MetricsEndpoint: server.MetricsEndpoint{Listen: "127.0.0.1:0"}},
			main:     []ask{{anyone, 404}},
			separate: []ask{{anyone, 200}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Plans = unreachable
			ts := startExact(t, tc.cfg)
			// A run, so that the metrics have a tenant to give away.
			if status, _, raw := ts.post(t, runPath, `{"code": "return 1"}`, "Authorization", "Bearer "+acmeKey); status != 200 {
				t.Fatalf("run: %d %s", status, raw)
			}
			check := func(where, url string, asks []ask) {
				t.Helper()
				for _, a := range asks {
					status, body := getURL(t, ts.h1, url+"/metrics", a.key)
					if status != a.status {
						t.Errorf("%s, key %q: status %d, want %d: %.300s", where, a.key, status, a.status, body)
						continue
					}
					leaks := strings.Contains(body, "stepbox_runs_total")
					if (status == 200) != leaks {
						t.Errorf("%s, key %q: status %d with metrics %v:\n%.300s", where, a.key, status, leaks, body)
					}
					if status == 403 && !strings.Contains(body, "metrics.listen") {
						t.Errorf("%s: the 403 does not say what to configure: %s", where, body)
					}
				}
			}
			check("the API's listener", ts.url, tc.main)
			if tc.separate == nil {
				return
			}
			ml, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			served := make(chan error, 1)
			go func() { served <- ts.srv.ServeMetrics(ml) }()
			t.Cleanup(func() {
				ts.shutdown(t, testenv.ScaleDuration(20*time.Second)) // before start's cleanup: ServeMetrics returns at Shutdown
				if err := <-served; !errors.Is(err, http.ErrServerClosed) {
					t.Errorf("ServeMetrics: %v", err)
				}
			})
			url := "http://" + ml.Addr().String()
			check("metrics.listen", url, tc.separate)
			// The probes are there too; the API is not.
			for _, p := range []string{"/healthz", "/readyz"} {
				if status, body := getURL(t, ts.h1, url+p, ""); status != 200 {
					t.Errorf("%s on metrics.listen: %d %s", p, status, body)
				}
			}
			req, _ := http.NewRequest("POST", url+runPath, strings.NewReader(`{"code": "return 1"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+acmeKey)
			if resp, err := ts.h1.Do(req); err != nil || resp.StatusCode != 404 {
				t.Errorf("Run on metrics.listen: %v %v", resp, err)
			} else {
				resp.Body.Close()
			}
		})
	}
}

// TestServeMetricsWithoutListener: ServeMetrics refuses to serve when
// metrics.listen is not configured (the metrics are on the main listener).
func TestServeMetricsWithoutListener(t *testing.T) {
	ts := start(t, server.Config{Plans: unreachable})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.srv.ServeMetrics(l); err == nil || !strings.Contains(err.Error(), "metrics.listen") {
		t.Fatalf("ServeMetrics: %v", err)
	}
}

func TestValidateMetricsEndpoint(t *testing.T) {
	tenantKey := server.HashKey(acmeKey)
	c := server.Config{
		Listen:  "0.0.0.0:8080",
		Tenants: []server.Tenant{{Name: "acme", Keys: []string{tenantKey}}},
		MetricsEndpoint: server.MetricsEndpoint{
			Listen: ":8080",
			Keys:   []string{server.HashKey(scrapeKey), "sha256:nothex", server.HashKey(scrapeKey), tenantKey},
		},
	}
	err := c.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`metrics.listen: ":8080" is the address of listen "0.0.0.0:8080": give the metrics a port of their own`,
		`metrics.keys[1]: want "sha256:" and 64 hex digits`,
		"metrics.keys[2]: the same key as metrics.keys[0]",
		"tenants[0].keys[0]: the same key as metrics.keys[3]: the tenant could read every tenant's metrics",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in:\n%v", want, err)
		}
	}
	for _, bad := range []string{"nowhere", "127.0.0.1:"} {
		c := server.Config{MetricsEndpoint: server.MetricsEndpoint{Listen: bad}}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "metrics.listen: ") {
			t.Errorf("metrics.listen %q: %v", bad, err)
		}
	}
	good := server.Config{Listen: "0.0.0.0:8080", Tenants: c.Tenants,
		MetricsEndpoint: server.MetricsEndpoint{Listen: "0.0.0.0:9090", Keys: []string{server.HashKey(scrapeKey)}}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := good.MetricsSummary(); got != "on 0.0.0.0:9090, with a metrics key" {
		t.Errorf("summary %q", got)
	}

	// From the file and the environment.
	fc, err := server.ParseConfig([]byte("metrics:\n  listen: 127.0.0.1:9090\n  keys: [\"" + server.HashKey(scrapeKey) + "\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fc.MetricsEndpoint.Listen != "127.0.0.1:9090" || len(fc.MetricsEndpoint.Keys) != 1 {
		t.Fatalf("%+v", fc.MetricsEndpoint)
	}
	if err := fc.ApplyEnv(func(k string) string { return map[string]string{"STEPBOX_METRICS_LISTEN": "127.0.0.1:9191"}[k] }); err != nil {
		t.Fatal(err)
	}
	if fc.MetricsEndpoint.Listen != "127.0.0.1:9191" {
		t.Fatalf("STEPBOX_METRICS_LISTEN: %+v", fc.MetricsEndpoint)
	}
}
