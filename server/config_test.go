package server_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
)

func TestZeroConfigServesALocalDeveloper(t *testing.T) {
	var c server.Config
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Listen = "0.0.0.0:8080"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "auth: listen \"0.0.0.0:8080\" is not a loopback address") {
		t.Fatalf("no auth off loopback: %v", err)
	}
	c.Auth = server.AuthNone // written out: allowed
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestParseConfigREADME(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## Configuration.*?```yaml\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("no YAML example in README.md")
	}
	c, err := server.ParseConfig(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyEnv(func(k string) string { return map[string]string{"ACME_TOKEN": "Bearer t"}[k] }); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	eng, err := sandbox.New(c.EngineConfig()) // the engine takes it too
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	eng.Close(context.Background())
	if c.Listen != "0.0.0.0:8080" || c.PoolSize != 8 || c.DrainTimeout != 30*time.Second || c.Plans["free"].MemoryMB != 32 ||
		c.Tenants[0].MaxConcurrent != 4 || c.Tenants[0].Egress.Hosts[0] != "api.acme.example" || c.Egress.Plans["free"].MaxRequests != 2 {
		t.Fatalf("%+v", c)
	}
}

func TestParseConfigNamesEveryProblem(t *testing.T) {
	_, err := server.ParseConfig([]byte(`
listen: 127.0.0.1:9000
poolsize: 4
warm: lots
drainTimeout: 10
plans:
  free: {memorymb: 32, wallMs: [1]}
tenants:
  - name: acme
    maxConcurent: 2
    keys: sha256:abc
egress:
  policy: {unsafeAllowAddresses: [not-a-prefix]}
`))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`poolsize: unknown field: did you mean "poolSize"? (line 3)`,
		`warm: want an integer, got "lots" (line 4)`,
		`drainTimeout: want a duration such as "30s", got "10" (line 5)`,
		`plans.free.memorymb: unknown field: did you mean "memoryMb"? (line 7)`,
		`plans.free.wallMs: want an integer, got a list (line 7)`,
		`tenants[0].maxConcurent: unknown field; known fields: name, keys, plans, maxConcurrent, egress (line 10)`,
		`tenants[0].keys: want a list (line 11)`,
		`egress.policy.unsafeAllowAddresses[0]: `,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in:\n%v", want, err)
		}
	}
	if _, err := server.ParseConfig([]byte("listen: [")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("YAML syntax: %v", err)
	}
	if c, err := server.ParseConfig(nil); err != nil || c.Listen != "" {
		t.Fatalf("empty file: %+v %v", c, err)
	}
}

func TestValidateNamesEveryField(t *testing.T) {
	key := server.HashKey("k")
	c := server.Config{
		Listen:          "nowhere",
		TLS:             server.TLS{CertFile: "c.pem"},
		MetricsEndpoint: server.MetricsEndpoint{Listen: "127.0.0.1:99999"},
		PoolSize:        -1,
		LogLevel:        "loud",
		Tenants: []server.Tenant{
			{Name: "a", Keys: []string{key, "sha256:zz"}, Plans: []string{"gold"}, MaxConcurrent: -1},
			{Name: "a", Keys: []string{key}},
			{Keys: nil},
		},
		DrainTimeout: -time.Second,
	}
	err := c.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`listen: "nowhere" is not host:port`,
		`metrics.listen: "127.0.0.1:99999": port "99999" is not a number from 0 to 65535`,
		"tls: set both certFile and keyFile",
		"poolSize: -1 is negative",
		"drainTimeout: -1s is negative",
		`logLevel: "loud" is not debug, info, warn or error`,
		`tenants[0].keys[1]: want "sha256:" and 64 hex digits`,
		`tenants[0].plans[0]: "gold" is not in plans`,
		"tenants[0].maxConcurrent: -1 is negative",
		`tenants[1].name: "a" is also tenants[0]`,
		"tenants[1].keys[0]: the same key as tenants[0].keys[0]",
		"tenants[2].name: empty",
		"tenants[2].keys: no key",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in:\n%v", want, err)
		}
	}
	if err := (server.Config{Auth: server.AuthNone, Tenants: []server.Tenant{{Name: "a", Keys: []string{key}}}}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "auth: \"none\", but tenants are configured") {
		t.Fatalf("auth none with tenants: %v", err)
	}
	if err := (server.Config{Auth: server.AuthKeys}).Validate(); err == nil || !strings.Contains(err.Error(), "needs at least one tenant") {
		t.Fatalf("auth keys without tenants: %v", err)
	}
	if err := (server.Config{PoolSize: 2, TenantSlots: 3}).Validate(); err == nil || !strings.Contains(err.Error(), "tenantSlots: 3 is more than poolSize (2)") {
		t.Fatalf("tenantSlots above poolSize: %v", err)
	}
}

// TestEngineConfigShare: with two tenants configured, the engine's share
// applies from the first run; otherwise the engine's own default decides.
func TestEngineConfigShare(t *testing.T) {
	two := []server.Tenant{{Name: "a"}, {Name: "b"}}
	for _, tc := range []struct {
		name string
		cfg  server.Config
		want int
	}{
		{"two tenants", server.Config{PoolSize: 4, Tenants: two}, 2},
		{"two tenants, set", server.Config{PoolSize: 4, TenantSlots: 3, Tenants: two}, 3},
		{"two tenants, no share", server.Config{PoolSize: 4, TenantSlots: -1, Tenants: two}, -1},
		{"one tenant", server.Config{PoolSize: 4, Tenants: two[:1]}, 0},
		{"no tenants", server.Config{PoolSize: 4}, 0},
	} {
		if got := tc.cfg.EngineConfig().TenantSlots; got != tc.want {
			t.Errorf("%s: the engine's TenantSlots is %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := (server.Config{StallTimeout: time.Second}).EngineConfig().StallTimeout; got != time.Second {
		t.Errorf("the engine's StallTimeout is %v, want 1s", got)
	}
}

func TestApplyEnv(t *testing.T) {
	env := map[string]string{
		"STEPBOX_LISTEN":        "127.0.0.1:9999",
		"STEPBOX_POOL_SIZE":     "3",
		"STEPBOX_DRAIN_TIMEOUT": "5s",
		"STEPBOX_LOG_LEVEL":     "debug",
		"STEPBOX_TENANT_SLOTS":  "2",
		"STEPBOX_STALL_TIMEOUT": "2s",
	}
	c := server.Config{Listen: "127.0.0.1:1", PoolSize: 1}
	if err := c.ApplyEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:9999" || c.PoolSize != 3 || c.DrainTimeout != 5*time.Second || c.LogLevel != "debug" ||
		c.TenantSlots != 2 || c.StallTimeout != 2*time.Second {
		t.Fatalf("%+v", c)
	}
	env = map[string]string{"STEPBOX_POOL_SIZE": "many", "STEPBOX_DRAIN_TIMEOUT": "soon"}
	err := c.ApplyEnv(func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), `STEPBOX_POOL_SIZE (poolSize): "many" is not valid`) ||
		!strings.Contains(err.Error(), `STEPBOX_DRAIN_TIMEOUT (drainTimeout): "soon" is not valid`) {
		t.Fatalf("%v", err)
	}
}

// TestLocalesConfig: locales (YAML or STEPBOX_LOCALES) reach the engine's
// config; an unknown one is named with its index; none is English alone.
func TestLocalesConfig(t *testing.T) {
	c, err := server.ParseConfig([]byte("locales: [de, xx]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `locales[1]: "xx" is not one of en, en-GB`) {
		t.Fatalf("Validate: %v", err)
	}
	for v, want := range map[string][]string{"de, fr": {"de", "fr"}, "none": {}} {
		c := server.Config{}
		if err := c.ApplyEnv(func(k string) string { return map[string]string{"STEPBOX_LOCALES": v}[k] }); err != nil {
			t.Fatal(err)
		}
		if got := c.EngineConfig().Locales; !slices.Equal(got, want) || got == nil {
			t.Errorf("STEPBOX_LOCALES=%q: %#v", v, got)
		}
	}
	if got := (server.Config{}).EngineConfig().Locales; got != nil {
		t.Errorf("no locales: %#v, want nil (every locale)", got)
	}
}

// TestDeployConfigMapIsValid keeps the configuration shipped in
// deploy/k8s/configmap.yaml valid.
func TestDeployConfigMapIsValid(t *testing.T) {
	b, err := os.ReadFile("../deploy/k8s/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	c, err := server.ParseConfig([]byte(cm.Data["stepbox.yaml"]))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Auth != server.AuthKeys || len(c.Tenants) == 0 {
		t.Fatalf("%+v", c)
	}

	// The commented-out egress block is valid too, once uncommented.
	var block []string
	for _, line := range strings.Split(cm.Data["stepbox.yaml"], "\n") {
		if rest, ok := strings.CutPrefix(line, "# "); ok && (rest == "egress:" || len(block) > 0 && strings.HasPrefix(rest, "  ")) {
			block = append(block, rest)
		} else if len(block) > 0 {
			break
		}
	}
	eg, err := server.ParseConfig([]byte(strings.Join(block, "\n")))
	if err != nil || eg.Egress == nil || len(eg.Egress.Secrets) == 0 {
		t.Fatalf("the sample egress block: %v\n%s", err, strings.Join(block, "\n"))
	}
	if err := eg.ApplyEnv(func(k string) string { return map[string]string{"EXAMPLE_TOKEN": "Bearer example"}[k] }); err != nil {
		t.Fatal(err)
	}
	if err := eg.Validate(); err != nil {
		t.Fatalf("the sample egress block: %v", err)
	}
}

func TestSecretsFromEnvironment(t *testing.T) {
	c, err := server.ParseConfig([]byte(`
egress:
  policy: {hosts: ["api.example.com"]}
  secrets:
    - {origin: "https://api.example.com", header: Authorization, value: "${EXAMPLE_TOKEN}"}
    - {host: api.example.com, header: X-Literal, value: "plain-literal"}
`))
	if err != nil {
		t.Fatal(err)
	}
	// Missing in the environment: ApplyEnv leaves the reference, and
	// Validate names the field and the variable, once.
	missing := c
	if err := missing.ApplyEnv(func(string) string { return "" }); err != nil {
		t.Fatalf("ApplyEnv: %v", err)
	}
	const unset = `egress.secrets[0].value: "${EXAMPLE_TOKEN}" was not replaced: the environment variable EXAMPLE_TOKEN is not set, or is empty`
	if err := missing.Validate(); err == nil || err.Error() != unset {
		t.Fatalf("missing variable: %v\nwant %s", err, unset)
	}
	orig := c.Egress
	if err := c.ApplyEnv(func(k string) string {
		if k == "EXAMPLE_TOKEN" {
			return "Bearer s3cret"
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	if c.Egress.Secrets[0].Value != "Bearer s3cret" || c.Egress.Secrets[1].Value != "plain-literal" {
		t.Fatalf("secrets %+v", c.Egress.Secrets)
	}
	if orig.Secrets[0].Value != "${EXAMPLE_TOKEN}" {
		t.Fatal("ApplyEnv changed the caller's shared Egress")
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// The value never appears when the configuration is printed.
	b, _ := json.Marshal(c)
	if strings.Contains(string(b), "s3cret") {
		t.Fatalf("secret in %s", b)
	}
}

// TestSecretConfig: secrets in the file are bound to origins and checked
// by Validate as the engine will check them, every problem on its own line
// naming the entry and the field.
func TestSecretConfig(t *testing.T) {
	c, err := server.ParseConfig([]byte(`
egress:
  policy: {hosts: ["api.example.com"], schemes: [https, http], ports: [443, 8443, 8080]}
  secrets:
    - {origin: "https://api.example.com:8443", header: Authorization, value: "Bearer long-enough"}
    - {origin: "http://api.example.com:8080", header: X-Key, value: "long-enough", unsafeAllowHTTP: true}
    - {host: api.example.com, header: X-Old, value: "long-enough"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	ec := c.EngineConfig()
	ec.Isolation, ec.Warm = sandbox.IsolationInProcess, -1
	e, err := sandbox.New(ec)
	if err != nil {
		t.Fatalf("the engine refuses what Validate accepted: %v", err)
	}
	e.Close(context.Background())
	b, _ := json.Marshal(c.Egress.Secrets)
	if want := `[{"origin":"https://api.example.com:8443","header":"Authorization","value":"[REDACTED]"},` +
		`{"origin":"http://api.example.com:8080","header":"X-Key","value":"[REDACTED]","unsafeAllowHTTP":true},` +
		`{"host":"api.example.com","header":"X-Old","value":"[REDACTED]"}]`; string(b) != want {
		t.Errorf("printed secrets\n%s\nwant\n%s", b, want)
	}

	c, err = server.ParseConfig([]byte(`
egress:
  policy: {hosts: ["api.example.com"]}
  secrets:
    - {header: Authorization, value: "Bearer long-enough"}
    - {origin: "http://api.example.com", header: Authorization, value: "Bearer long-enough"}
    - {host: "api.example.com:8443", header: Authorization, value: "${TOKEN}"}
    - {origin: "https://*", header: "Bad Header", value: "short"}
    - {origin: "https://api.example.com", header: X-Key, value: "long-enough", unsafeAlowHTTP: true}
`))
	if err == nil || !strings.Contains(err.Error(), "egress.secrets[4].unsafeAlowHTTP: unknown field") {
		t.Fatalf("a misspelt key: %v", err)
	}
	c, err = server.ParseConfig([]byte(`
egress:
  policy: {hosts: ["api.example.com"]}
  secrets:
    - {header: Authorization, value: "Bearer long-enough"}
    - {origin: "http://api.example.com", header: Authorization, value: "Bearer long-enough"}
    - {host: "api.example.com:8443", header: Authorization, value: "${TOKEN}"}
    - {origin: "https://*", header: "Bad Header", value: "short"}
`))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	if err == nil {
		t.Fatal("Validate accepted bad secrets")
	}
	want := []string{
		`egress.secrets[0]: origin: required: the scheme, host and port the secret is for, e.g. "https://api.example.com"`,
		`egress.secrets[1]: origin: "http://api.example.com" is plain http: the secret would travel in clear text; use an https origin, or set unsafeAllowHTTP`,
		`egress.secrets[2].value: "${TOKEN}" was not replaced: the environment variable TOKEN is not set, or is empty`,
		`egress.secrets[2]: host: "api.example.com:8443" has a port, and host means https on port 443: write origin: "https://api.example.com:8443"`,
		`egress.secrets[3]: origin: "https://*": a secret for every host ("*") would go to any server the policy allows`,
		`egress.secrets[3]: header: "Bad Header" is not a valid header name`,
		`egress.secrets[3]: value: shorter than 8 bytes`,
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d:\n%s\nwant it to start\n%s", i, lines[i], w)
		}
	}
}

func TestModulesAndAuditConfig(t *testing.T) {
	c, err := server.ParseConfig([]byte(`
plans:
  free: {memoryMb: 64}
  pro: {memoryMb: 256}
defaultPlan: free
planModules:
  free: []
  pro: [duckdb, glpk, simple-statistics]
  gold: [duckdb]
packages:
  cacheDir: /var/cache/stepbox
  autoInstall: false
python:
  disabled: true
auditFile: /tmp/audit.jsonl
`))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	for _, want := range []string{`planModules.gold: "gold" is not in plans`, "auditFile: set, but egress is off"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
	ec := c.EngineConfig()
	if len(ec.PlanModules["pro"]) != 3 || ec.PlanModules["free"] == nil || ec.Packages.CacheDir != "/var/cache/stepbox" || !ec.Python.Disabled {
		t.Fatalf("engine config %+v", ec)
	}
}

// TestPythonConfig: the interpreter, the packages and the preload list,
// from the file and the environment, checked with the other fields.
func TestPythonConfig(t *testing.T) {
	c, err := server.ParseConfig([]byte("python:\n  interpreter: /opt/venv/bin/python\n  packages: dirs\n  sitePackages: [/opt/site]\n  preload: [numpy, pandas]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if p := c.EngineConfig().Python; p.Interpreter != "/opt/venv/bin/python" || p.Packages != "dirs" || p.SitePackages[0] != "/opt/site" || p.Preload[1] != "pandas" {
		t.Fatalf("%+v", p)
	}
	env := map[string]string{"STEPBOX_PYTHON": "/usr/bin/python3", "STEPBOX_PYTHON_PACKAGES": "auto,/opt/extra", "STEPBOX_PYTHON_PRELOAD": "numpy, pandas,json"}
	if err := c.ApplyEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if p := c.Python; p.Interpreter != "/usr/bin/python3" || p.Packages != "auto" || !slices.Equal(p.SitePackages, []string{"/opt/extra"}) ||
		!slices.Equal(p.Preload, []string{"numpy", "pandas", "json"}) {
		t.Fatalf("%+v", p)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	env = map[string]string{"STEPBOX_PYTHON_PACKAGES": "site-packages", "STEPBOX_PYTHON_PRELOAD": "numpy,os;x"}
	if err := c.ApplyEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "STEPBOX_PYTHON_PACKAGES (python.packages)") {
		t.Fatalf("bad packages: %v", err)
	}
	err = c.Validate()
	if err == nil || !strings.Contains(err.Error(), `python.preload[1]: "os;x" is not a module name`) {
		t.Fatalf("bad preload: %v", err)
	}
	c = server.Config{Python: sandbox.PythonConfig{Packages: "none", SitePackages: []string{"lib"}}}
	err = c.Validate()
	if err == nil || !strings.Contains(err.Error(), `python.packages: "none" (the standard library only), but sitePackages are set`) ||
		!strings.Contains(err.Error(), `python.sitePackages[0]: "lib" is not an absolute path`) {
		t.Fatalf("bad packages: %v", err)
	}
}
