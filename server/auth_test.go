package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"

	pb "github.com/stepbox/stepbox/proto/stepbox/v1"
)

const (
	acmeKey  = "acme-test-key-0123456789abcdef0123456789abcdef"
	otherKey = "other-test-key-0123456789abcdef0123456789abcde"
)

func authConfig() server.Config {
	return server.Config{
		Listen: "0.0.0.0:8080", // not loopback: auth is required
		Plans: map[string]sandbox.Limits{
			"free":    slowLimits["default"],
			"pro":     slowLimits["default"],
			"default": slowLimits["default"],
		},
		Tenants: []server.Tenant{
			{Name: "acme", Keys: []string{server.HashKey(acmeKey)}, Plans: []string{"free"}, MaxConcurrent: 1},
			{Name: "other", Keys: []string{strings.TrimPrefix(server.HashKey(otherKey), "sha256:")}, Plans: []string{"pro", "free"}},
		},
	}
}

func TestAuth(t *testing.T) {
	ts := start(t, authConfig())
	body := `{"code": "return 1", "tenant": "someone-else"}`
	for _, tc := range []struct {
		name   string
		header []string
		status int
		code   string
	}{
		{"no key", nil, 401, "unauthenticated"},
		{"not bearer", []string{"Authorization", "Basic " + acmeKey}, 401, "unauthenticated"},
		{"bad key", []string{"Authorization", "Bearer nope"}, 401, "unauthenticated"},
		{"almost the key", []string{"Authorization", "Bearer " + acmeKey[:len(acmeKey)-1]}, 401, "unauthenticated"},
		{"good key", []string{"Authorization", "Bearer " + acmeKey}, 200, ""},
		{"other tenant's key", []string{"Authorization", "bearer " + otherKey}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, resp, raw := ts.post(t, runPath, body, tc.header...)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, raw)
			}
			if tc.code != "" && dig(resp, "code") != tc.code {
				t.Fatalf("body %s", raw)
			}
			if tc.code == "" && jsonOf(dig(resp, "result", "value")) != "1" {
				t.Fatalf("body %s", raw)
			}
		})
	}

	// gRPC: the same over the other protocol.
	_, err := ts.rpc(connect.WithGRPC()).Run(context.Background(), connect.NewRequest(&pb.RunRequest{Code: "return 1"}))
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("gRPC without a key: %v", err)
	}
	_, err = ts.client(client.Options{GRPC: true, APIKey: "wrong"}).Submit(context.Background(), sandbox.Request{Code: "return 1"})
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("Execute with a bad key: %v", err)
	}
	res, err := ts.client(client.Options{GRPC: true, APIKey: acmeKey}).Run(context.Background(), sandbox.Request{Code: "return 2"}, nil)
	if err != nil || string(res.Value) != "2" {
		t.Fatalf("gRPC with the key: %s %v", res.Value, err)
	}

	// Health needs no key.
	if _, err := ts.client(client.Options{}).Health(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The key's tenant replaced the request's in metering.
	_, m := ts.get(t, "/metrics")
	if !strings.Contains(m, `stepbox_runs_total{language="javascript",outcome="ok",tenant="acme"} 2`) ||
		!strings.Contains(m, `stepbox_runs_total{language="javascript",outcome="ok",tenant="other"} 1`) || strings.Contains(m, "someone-else") {
		t.Fatalf("metrics:\n%s", grep(m, "stepbox_runs_total"))
	}
	if !strings.Contains(m, `stepbox_rpc_requests_total{code="unauthenticated",procedure="Run"} 5`) {
		t.Fatalf("metrics:\n%s", grep(m, "stepbox_rpc_requests_total"))
	}
}

func TestTenantPlans(t *testing.T) {
	ts := start(t, authConfig())
	acme := []string{"Authorization", "Bearer " + acmeKey}
	status, resp, raw := ts.post(t, runPath, `{"code": "return 1", "plan": "pro"}`, acme...)
	if status != 403 || dig(resp, "code") != "permission_denied" || !strings.Contains(raw, `may not use plan \"pro\"`) {
		t.Fatalf("%d %s", status, raw)
	}
	// No plan: the tenant's first.
	if status, _, raw := ts.post(t, runPath, `{"code": "return 1"}`, acme...); status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	if status, _, raw := ts.post(t, runPath, `{"code": "return 1", "plan": "pro"}`, "Authorization", "Bearer "+otherKey); status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
}

func TestQuota(t *testing.T) {
	ts := start(t, authConfig())
	acme := ts.client(client.Options{APIKey: acmeKey})
	// acme's one slot: a run waiting for its data.
	st, err := acme.Submit(context.Background(), sandbox.Request{Code: "return await dataProxy.request('go')"})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-st.Events()

	status, resp, raw := ts.post(t, runPath, `{"code": "return 1"}`, "Authorization", "Bearer "+acmeKey)
	if status != 429 || dig(resp, "code") != "resource_exhausted" || !strings.Contains(raw, "maxConcurrent") {
		t.Fatalf("over quota over HTTP: %d %s", status, raw)
	}
	_, err = ts.rpc(connect.WithGRPC(), connect.WithInterceptors(bearer(acmeKey))).Run(context.Background(), connect.NewRequest(&pb.RunRequest{Code: "return 1"}))
	if connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("over quota over gRPC: %v", err)
	}
	_, err = ts.client(client.Options{GRPC: true, APIKey: acmeKey}).Run(context.Background(), sandbox.Request{Code: "return 1"}, nil)
	if !errors.Is(err, sandbox.ErrUnavailable) {
		t.Fatalf("over quota through the client: %v, want UNAVAILABLE", err)
	}
	// Another tenant is not affected.
	if status, _, raw := ts.post(t, runPath, `{"code": "return 1"}`, "Authorization", "Bearer "+otherKey); status != 200 {
		t.Fatalf("other tenant: %d %s", status, raw)
	}

	if err := st.Respond(ev.DataRequest.ID, "done"); err != nil {
		t.Fatal(err)
	}
	for range st.Events() {
	}
	if res, err := st.Wait(); err != nil || string(res.Value) != `"done"` {
		t.Fatalf("%s %v", res.Value, err)
	}
	// The slot is free again.
	eventually(t, 5*time.Second, func() string {
		if status, _, raw := ts.post(t, runPath, `{"code": "return 1"}`, "Authorization", "Bearer "+acmeKey); status != 200 {
			return raw
		}
		return ""
	})
}

// bearer is a client interceptor that sends an API key.
func bearer(key string) connect.Interceptor {
	return connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", "Bearer "+key)
			return next(ctx, req)
		}
	})
}

func TestTenantEgressNarrowsPolicy(t *testing.T) {
	cfg := authConfig()
	cfg.Egress = &sandbox.Egress{Policy: sandbox.EgressPolicy{Hosts: []string{"*"}}}
	cfg.Tenants[0].Egress = &sandbox.EgressPolicy{Hosts: []string{"a.example"}}
	ts := start(t, cfg)
	res, err := ts.client(client.Options{APIKey: acmeKey}).Run(context.Background(), sandbox.Request{
		Code: "try { await fetch('https://b.example/') } catch (e) { return e.message }",
	}, nil)
	if err != nil || !strings.Contains(string(res.Value), `host \"b.example\" is not allowed`) {
		t.Fatalf("%s %v", res.Value, err)
	}
	if len(res.Events) != 1 || res.Events[0].Kind != sandbox.EventFetch {
		t.Fatalf("events %+v", res.Events)
	}
	_, m := ts.get(t, "/metrics")
	if !strings.Contains(m, `stepbox_fetches_total{decision="deny"} 1`) {
		t.Fatalf("metrics:\n%s", grep(m, "fetch"))
	}
}
