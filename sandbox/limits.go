package sandbox

import (
	"fmt"
	"reflect"

	"github.com/stepbox/stepbox/internal/ipc"
)

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

// limitFields returns pointers to l's fields with their JSON names, in
// order.
func limitFields(l *Limits) []limitField {
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

// limitsOrDefault returns l with zero fields taken from d.
func limitsOrDefault(l, d Limits) Limits {
	df := limitFields(&d)
	for i, f := range limitFields(&l) {
		if *f.p == 0 {
			*f.p = *df[i].p
		}
	}
	return l
}

// clampLimits returns l with every field at most the one in caps.
func clampLimits(l, caps Limits) Limits {
	cf := limitFields(&caps)
	for i, f := range limitFields(&l) {
		*f.p = min(*f.p, *cf[i].p)
	}
	return l
}

// lowerLimits applies the non-zero fields of req to l, the limits of
// plan. A field above the plan's is an error naming it: a request may only
// lower limits.
func lowerLimits(l, req Limits, plan string) (Limits, error) {
	rf := limitFields(&req)
	for i, f := range limitFields(&l) {
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

// validateLimits reports the first negative field of l, named what.
func validateLimits(l Limits, what string) error {
	for _, f := range limitFields(&l) {
		if *f.p < 0 {
			return fmt.Errorf("%s.%s=%d is negative", what, f.name, *f.p)
		}
	}
	return nil
}

// limitsWire converts limits for a worker.
func limitsWire(l Limits) ipc.Limits { return ipc.Limits(l) }
