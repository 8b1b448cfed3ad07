package server_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
)

// TestWorkersConfig: the workers key is sandbox.Workers, field for field,
// and the engine gets it.
func TestWorkersConfig(t *testing.T) {
	c, err := server.ParseConfig([]byte(`
poolSize: 2
workers:
  scope: group
  groups: {acme: paid, globex: paid}
  standby: 3
  maxRuns: 500
  maxAge: 30m
  retireAfterLimit: false
  hostIDs: {first: 2000000000, count: 5}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	no := false
	want := sandbox.Workers{
		Scope: sandbox.ScopeGroup, Groups: map[string]string{"acme": "paid", "globex": "paid"}, Standby: 3, MaxRuns: 500,
		MaxAge: 30 * time.Minute, RetireAfterLimit: &no, HostIDs: sandbox.IDRange{First: 2_000_000_000, Count: 5},
	}
	if got := c.EngineConfig().Workers; !reflect.DeepEqual(got, want) {
		t.Fatalf("the engine's Workers is %+v, want %+v", got, want)
	}

	_, err = server.ParseConfig([]byte(`
workers:
  scpe: run
  maxruns: 5
  maxAge: 10
`))
	for _, want := range []string{
		`workers.scpe: unknown field; known fields: scope, groups, standby, maxRuns, maxAge, retireAfterLimit, hostIDs (line 3)`,
		`workers.maxruns: unknown field: did you mean "maxRuns"? (line 4)`,
		`workers.maxAge: want a duration such as "30s", got "10" (line 5)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in:\n%v", want, err)
		}
	}

	err = server.Config{PoolSize: 2, Workers: sandbox.Workers{Scope: "pool", Groups: map[string]string{"a": ""}, HostIDs: sandbox.IDRange{First: 2_000_000_000, Count: 2}}}.Validate()
	for _, want := range []string{
		`workers.scope: "pool" is not "tenant", "group", "run" or "shared"`,
		`workers.groups: set, but scope is "pool"`,
		`workers.groups["a"]: empty group name`,
		"workers.hostIDs.count: 2 does not cover the 3 worker slots (poolSize 2 + standby 1)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in:\n%v", want, err)
		}
	}
}

// TestWorkersOverTheNetwork: the tenant of a run is its API key's, and the
// server's workers policy decides whether two tenants' runs share a
// worker process: by default not, with scope shared they do.
func TestWorkersOverTheNetwork(t *testing.T) {
	for _, c := range []struct {
		name   string
		yaml   string
		shared bool
	}{{"default", "", false}, {"shared", "workers: {scope: shared}", true}} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := server.ParseConfig([]byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			cfg.PoolSize = 1
			cfg.Tenants = []server.Tenant{
				{Name: "acme", Keys: []string{server.HashKey(acmeKey)}},
				{Name: "other", Keys: []string{server.HashKey(otherKey)}},
			}
			ts := start(t, cfg)
			// runAs runs a step with key and returns the pid of the worker
			// that has served one run more since.
			runs := map[int]int{}
			runAs := func(key string) int {
				t.Helper()
				if status, _, raw := ts.post(t, runPath, `{"code": "return 1"}`, "Authorization", "Bearer "+key); status != 200 {
					t.Fatalf("%d %s", status, raw)
				}
				var h sandbox.WorkerHealth
				testenv.WaitFor(t, "every worker slot up", func() bool {
					h = ts.eng.Health().Workers
					return h.Up == h.Size+h.Standby && h.Unbound >= h.Standby
				})
				pid := 0
				for _, p := range h.Processes {
					if p.Runs > runs[p.PID] {
						pid = p.PID
					}
					runs[p.PID] = p.Runs
				}
				if pid == 0 {
					t.Fatalf("no worker up served the run: %+v", h.Processes)
				}
				return pid
			}
			acme := runAs(acmeKey)
			other := runAs(otherKey)
			if (acme == other) != c.shared {
				t.Fatalf("acme ran in %d, other in %d: want shared=%v", acme, other, c.shared)
			}
			if h := ts.eng.Health().Workers; (h.Standby == 0) != c.shared {
				t.Errorf("standby %d", h.Standby)
			}
		})
	}
}
