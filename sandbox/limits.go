package sandbox

import (
	"fmt"
	"reflect"

	"github.com/stepbox/stepbox/internal/ipc"
)

// Limits are the per-run limits of the run contract. Every one is enforced
// and every one has a test that crosses it.
//
// In a Request a zero field means "as the plan says"; a non-zero field may
// only lower the plan's value. In a plan a zero field means "as
// DefaultLimits says". Engine-wide caps (Config.Caps) clamp every plan.
type Limits struct {
	// MemoryMB is the guest heap ceiling in MiB. Crossing it ends the run
	// with OOM (limit "memoryMb").
	MemoryMB int `json:"memoryMb,omitempty"`
	// CPUMs is the CPU time the guest may use, in milliseconds. Crossing it
	// ends the run with TIMEOUT (limit "cpuMs").
	CPUMs int `json:"cpuMs,omitempty"`
	// WallMs is the wall-clock time from start to result, in milliseconds,
	// time spent waiting for data requests and timers included. Crossing it
	// ends the run with TIMEOUT (limit "wallMs").
	WallMs int `json:"wallMs,omitempty"`
	// MaxCodeBytes is the largest step source accepted. A larger one is
	// refused with VALIDATION (limit "maxCodeBytes") before anything runs.
	MaxCodeBytes int `json:"maxCodeBytes,omitempty"`
	// MaxResultBytes is the largest JSON result. A larger one ends the run
	// with LIMIT_EXCEEDED (limit "maxResultBytes").
	MaxResultBytes int `json:"maxResultBytes,omitempty"`
	// MaxDataRequests is how many dataProxy.request calls a run may make.
	// One more ends the run with LIMIT_EXCEEDED (limit "maxDataRequests").
	MaxDataRequests int `json:"maxDataRequests,omitempty"`
	// MaxDataBytes is the JSON bytes that may cross the data bridge, request
	// parameters and replies added up. Crossing it ends the run with
	// LIMIT_EXCEEDED (limit "maxDataBytes").
	MaxDataBytes int `json:"maxDataBytes,omitempty"`
	// MaxStatusEvents is how many reportStatus calls a run may make. One
	// more ends the run with LIMIT_EXCEEDED (limit "maxStatusEvents").
	MaxStatusEvents int `json:"maxStatusEvents,omitempty"`
	// MaxConsoleEvents is how many console lines are delivered. Further
	// lines are dropped, not fatal: the first dropped line produces one
	// warning event, and Stats.ConsoleDropped counts the rest.
	MaxConsoleEvents int `json:"maxConsoleEvents,omitempty"`
	// MaxConsoleBytes is the console text delivered, in bytes; the line
	// that crosses it is cut, and later lines are dropped as above.
	MaxConsoleBytes int `json:"maxConsoleBytes,omitempty"`
	// MaxFetchRequests is how many fetch calls a run may make.
	MaxFetchRequests int `json:"maxFetchRequests,omitempty"`
	// MaxFetchBytes is the response bytes all of a run's fetches may read.
	MaxFetchBytes int `json:"maxFetchBytes,omitempty"`
}

// DefaultLimits fill the fields a plan leaves zero.
var DefaultLimits = Limits{
	MemoryMB:         128,
	CPUMs:            5_000,
	WallMs:           10_000,
	MaxCodeBytes:     256 << 10,
	MaxResultBytes:   1 << 20,
	MaxDataRequests:  100,
	MaxDataBytes:     8 << 20,
	MaxStatusEvents:  100,
	MaxConsoleEvents: 1_000,
	MaxConsoleBytes:  256 << 10,
	MaxFetchRequests: 20,
	MaxFetchBytes:    8 << 20,
}

// DefaultCaps fill the fields Config.Caps leaves zero.
var DefaultCaps = Limits{
	MemoryMB:         2_048,
	CPUMs:            300_000,
	WallMs:           900_000,
	MaxCodeBytes:     8 << 20,
	MaxResultBytes:   64 << 20,
	MaxDataRequests:  100_000,
	MaxDataBytes:     1 << 30,
	MaxStatusEvents:  100_000,
	MaxConsoleEvents: 100_000,
	MaxConsoleBytes:  64 << 20,
	MaxFetchRequests: 10_000,
	MaxFetchBytes:    1 << 30,
}

// fields returns pointers to l's fields with their JSON names, in order.
func (l *Limits) fields() []limitField {
	v := reflect.ValueOf(l).Elem()
	t := v.Type()
	out := make([]limitField, t.NumField())
	for i := range out {
		out[i] = limitField{name: jsonName(t.Field(i)), p: v.Field(i).Addr().Interface().(*int)}
	}
	return out
}

type limitField struct {
	name string
	p    *int
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	for i := 0; i < len(tag); i++ {
		if tag[i] == ',' {
			return tag[:i]
		}
	}
	return tag
}

// orDefault returns l with zero fields taken from d.
func (l Limits) orDefault(d Limits) Limits {
	df := d.fields()
	for i, f := range l.fields() {
		if *f.p == 0 {
			*f.p = *df[i].p
		}
	}
	return l
}

// clamp returns l with every field at most the one in caps.
func (l Limits) clamp(caps Limits) Limits {
	cf := caps.fields()
	for i, f := range l.fields() {
		*f.p = min(*f.p, *cf[i].p)
	}
	return l
}

// lower applies the non-zero fields of req to plan. A field above the
// plan's is an error naming it: a request may only lower limits.
func (l Limits) lower(req Limits, plan string) (Limits, error) {
	rf := req.fields()
	for i, f := range l.fields() {
		want := *rf[i].p
		switch {
		case want < 0:
			return l, fmt.Errorf("limits.%s=%d is negative", f.name, want)
		case want == 0:
		case want > *f.p:
			return l, fmt.Errorf("limits.%s=%d is above the %q plan's %d: a request may only lower its plan's limits", f.name, want, plan, *f.p)
		default:
			*f.p = want
		}
	}
	return l, nil
}

func (l Limits) validate(what string) error {
	for _, f := range l.fields() {
		if *f.p < 0 {
			return fmt.Errorf("%s.%s=%d is negative", what, f.name, *f.p)
		}
	}
	return nil
}

func (l Limits) wire() ipc.Limits { return ipc.Limits(l) }
