package server

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// LoadConfig reads a YAML configuration file. See ParseConfig.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	c, err := ParseConfig(b)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// ParseConfig decodes a YAML configuration. Keys are Config's JSON names
// (listen, poolSize, tenants, maxConcurrent, memoryMb, ...); durations are
// Go durations ("30s"). Every unknown key and every value of the wrong type
// is reported, together, with its path and line ("tenants[0].maxConcurent:
// unknown field (line 7)"). With such errors it still returns the rest of
// the configuration, each bad field left out, so that a check can
// validate what did decode and report every problem in one pass.
// ParseConfig does not validate values: call Config.Validate.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return c, err
	}
	if len(root.Content) == 0 {
		return c, nil // an empty file: every default
	}
	d := &yamlDecoder{}
	v := d.value(root.Content[0], reflect.TypeFor[Config](), "")
	b, err := json.Marshal(v)
	if err != nil {
		return Config{}, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, errors.Join(append(d.errs, err)...)
	}
	return c, errors.Join(d.errs...)
}

// yamlDecoder turns a YAML tree into the JSON-shaped value of a Go type,
// checking keys and scalar types against the type on the way, so that the
// errors can name the field and the line. encoding/json then fills the
// struct, honouring the json tags that the sandbox types already carry.
type yamlDecoder struct {
	errs []error
}

var (
	durationType  = reflect.TypeFor[time.Duration]()
	textUnmarshal = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func (d *yamlDecoder) fail(n *yaml.Node, path, format string, args ...any) {
	if path == "" {
		path = "(top level)"
	}
	d.errs = append(d.errs, fmt.Errorf("%s: %s (line %d)", path, fmt.Sprintf(format, args...), n.Line))
}

func (d *yamlDecoder) value(n *yaml.Node, t reflect.Type, path string) any {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		if n.Kind != yaml.ScalarNode {
			d.fail(n, path, "want a duration such as \"30s\"")
			return nil
		}
		dur, err := time.ParseDuration(n.Value)
		if err != nil {
			d.fail(n, path, "want a duration such as \"30s\", got %q", n.Value)
			return nil
		}
		return int64(dur)
	case t.Kind() != reflect.String && reflect.PointerTo(t).Implements(textUnmarshal):
		if n.Kind != yaml.ScalarNode {
			d.fail(n, path, "want a string")
			return nil
		}
		if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			d.fail(n, path, "%v", err)
			return nil
		}
		return n.Value
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			d.fail(n, path, "want a mapping of %s", fieldList(t))
			return nil
		}
		fields := jsonFields(t)
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				hint := ""
				for name := range fields {
					if strings.EqualFold(name, k.Value) {
						hint = fmt.Sprintf(": did you mean %q?", name)
					}
				}
				if hint == "" {
					hint = "; known fields: " + fieldList(t)
				}
				d.fail(k, join(path, k.Value), "unknown field%s", hint)
				continue
			}
			out[k.Value] = d.value(v, f.Type, join(path, k.Value))
		}
		return out
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.fail(n, path, "want a mapping")
			return nil
		}
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			out[k.Value] = d.value(v, t.Elem(), join(path, k.Value))
		}
		return out
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.fail(n, path, "want a list")
			return nil
		}
		out := make([]any, len(n.Content))
		for i, e := range n.Content {
			out[i] = d.value(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
		return out
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.fail(n, path, "want a string")
			return nil
		}
		return n.Value
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		if n.Kind != yaml.ScalarNode || n.Decode(&i) != nil {
			d.fail(n, path, "want an integer, got %s", describe(n))
			return nil
		}
		if reflect.New(t).Elem().OverflowInt(i) {
			d.fail(n, path, "%d is too large", i)
			return nil
		}
		return i
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var u uint64
		if n.Kind != yaml.ScalarNode || n.Decode(&u) != nil {
			d.fail(n, path, "want a non-negative integer, got %s", describe(n))
			return nil
		}
		return u
	case reflect.Float32, reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || n.Decode(&f) != nil {
			d.fail(n, path, "want a number, got %s", describe(n))
			return nil
		}
		return f
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
			d.fail(n, path, "want true or false, got %s", describe(n))
			return nil
		}
		return b
	}
	d.fail(n, path, "cannot be set from a file")
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return strconv.Quote(n.Value)
}

// jsonFields maps the JSON names of t's settable fields to them.
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

func fieldList(t reflect.Type) string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" {
			if name == "" {
				name = f.Name
			}
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// Environment variables that override the file, each naming a field.
var envVars = []struct {
	name, field string
	set         func(c *Config, v string) error
}{
	{"STEPBOX_LISTEN", "listen", func(c *Config, v string) error { c.Listen = v; return nil }},
	{"STEPBOX_AUTH", "auth", func(c *Config, v string) error { c.Auth = v; return nil }},
	{"STEPBOX_METRICS_LISTEN", "metrics.listen", func(c *Config, v string) error { c.MetricsEndpoint.Listen = v; return nil }},
	{"STEPBOX_TLS_CERT", "tls.certFile", func(c *Config, v string) error { c.TLS.CertFile = v; return nil }},
	{"STEPBOX_TLS_KEY", "tls.keyFile", func(c *Config, v string) error { c.TLS.KeyFile = v; return nil }},
	{"STEPBOX_POOL_SIZE", "poolSize", func(c *Config, v string) error { return setInt(&c.PoolSize, v) }},
	{"STEPBOX_QUEUE_SIZE", "queueSize", func(c *Config, v string) error { return setInt(&c.QueueSize, v) }},
	{"STEPBOX_WARM", "warm", func(c *Config, v string) error { return setInt(&c.Warm, v) }},
	{"STEPBOX_LOCALES", "locales", func(c *Config, v string) error {
		c.Locales = splitList(v) // validated as locales
		return nil
	}},
	{"STEPBOX_TENANT_SLOTS", "tenantSlots", func(c *Config, v string) error { return setInt(&c.TenantSlots, v) }},
	{"STEPBOX_STALL_TIMEOUT", "stallTimeout", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		c.StallTimeout = d
		return err
	}},
	{"STEPBOX_DEFAULT_PLAN", "defaultPlan", func(c *Config, v string) error { c.DefaultPlan = v; return nil }},
	{"STEPBOX_MAX_REQUEST_BYTES", "maxRequestBytes", func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		c.MaxRequestBytes = n
		return err
	}},
	{"STEPBOX_DRAIN_TIMEOUT", "drainTimeout", func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		c.DrainTimeout = d
		return err
	}},
	{"STEPBOX_LOG_LEVEL", "logLevel", func(c *Config, v string) error { c.LogLevel = v; return nil }},
	{"STEPBOX_PYTHON", "python.interpreter", func(c *Config, v string) error { c.Python.Interpreter = v; return nil }},
	{"STEPBOX_PYTHON_PACKAGES", "python.packages", func(c *Config, v string) error { return c.Python.SetPackages(v) }},
	{"STEPBOX_PYTHON_PRELOAD", "python.preload", func(c *Config, v string) error {
		c.Python.Preload = strings.Split(v, ",") // python.preload checks each name
		for i, m := range c.Python.Preload {
			c.Python.Preload[i] = strings.TrimSpace(m)
		}
		return nil
	}},
}

// splitList is a comma-separated list, each item trimmed; "none" is the
// empty list.
func splitList(v string) []string {
	out := []string{}
	if strings.TrimSpace(v) == "none" {
		return out
	}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func setInt(p *int, v string) error {
	n, err := strconv.Atoi(v)
	*p = n
	return err
}

// EnvVars lists the environment variables ApplyEnv reads, with the field
// each sets, for help texts.
func EnvVars() [][2]string {
	out := make([][2]string, len(envVars))
	for i, e := range envVars {
		out[i] = [2]string{e.name, e.field}
	}
	return out
}

// ApplyEnv overrides c's fields with the STEPBOX_* variables that getenv
// returns non-empty (see EnvVars), and replaces each secret value written
// "${NAME}" by the variable NAME. Every bad value is reported, naming the
// variable and the field. A "${NAME}" whose variable is not set or empty
// stays as it is: Validate reports it, once, with the other problems.
func (c *Config) ApplyEnv(getenv func(string) string) error {
	var errs []error
	for _, e := range envVars {
		v := getenv(e.name)
		if v == "" {
			continue
		}
		if err := e.set(c, v); err != nil {
			if ne, ok := err.(*strconv.NumError); ok {
				err = ne.Err
			}
			errs = append(errs, fmt.Errorf("%s (%s): %q is not valid: %v", e.name, e.field, v, err))
		}
	}
	if c.Egress != nil && len(c.Egress.Secrets) > 0 {
		// A copy: the caller's Egress may be shared.
		eg := *c.Egress
		eg.Secrets = slices.Clone(eg.Secrets)
		for i, sec := range eg.Secrets {
			name, ok := secretEnvName(sec.Value)
			if !ok {
				continue
			}
			if v := getenv(name); v != "" {
				eg.Secrets[i].Value = v
			}
		}
		c.Egress = &eg
	}
	return errors.Join(errs...)
}

// secretEnvName reports whether a secret's value is a reference to an
// environment variable, "${NAME}", and returns NAME. Configuration files
// name credentials this way instead of holding them (a Kubernetes Secret
// becomes the variable).
func secretEnvName(v string) (string, bool) {
	name, ok := strings.CutPrefix(v, "${")
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, "}")
	if !ok || name == "" || strings.ContainsAny(name, "${} ") {
		return "", false
	}
	return name, true
}
