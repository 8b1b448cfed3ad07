package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/stepbox/stepbox/internal/jsrt"
)

// RunDefaults are what a run gets where its Request leaves a field empty:
// Config.Defaults for every plan, Config.PlanDefaults per plan.
//
//	sandbox.Config{
//		Defaults:     sandbox.RunDefaults{TimeZone: "Europe/Paris", Locale: "fr-FR"},
//		PlanDefaults: map[string]sandbox.RunDefaults{"us": {TimeZone: "America/New_York", Locale: "en-US"}},
//	}
type RunDefaults struct {
	// TimeZone is an IANA time zone name (see Request.TimeZone). Empty
	// means the next default: the engine's, then "UTC".
	TimeZone string `json:"timeZone,omitempty"`
	// Locale is a BCP 47 language tag (see Request.Locale). Empty means
	// the next default: the engine's, then "en-US".
	Locale string `json:"locale,omitempty"`
}

// DefaultTimeZone is a run's time zone when neither its request, nor its
// plan, nor the engine names one.
const DefaultTimeZone = jsrt.DefaultTimeZone

// Validate reports every problem of d, joined with errors.Join, each
// naming its field ("timeZone: ..."): a zone the binary's time zone
// database does not have, a locale that is not a well-formed tag. New
// makes the same checks.
func (d RunDefaults) Validate() error {
	_, errs := d.problems("")
	return errors.Join(errs...)
}

// problems reports what is wrong with d, each naming its field under
// prefix ("defaults.timeZone: ..."), and returns d with its locale in
// canonical form.
func (d RunDefaults) problems(prefix string) (RunDefaults, []error) {
	if prefix != "" {
		prefix += "."
	}
	var errs []error
	if d.TimeZone != "" {
		if err := jsrt.CheckTimeZone(d.TimeZone); err != nil {
			errs = append(errs, fmt.Errorf("%stimeZone: %w", prefix, err))
		}
	}
	if d.Locale != "" {
		l, err := jsrt.CheckLocale(d.Locale)
		if err != nil {
			errs = append(errs, fmt.Errorf("%slocale: %w", prefix, err))
		}
		d.Locale = l
	}
	return d, errs
}

// resolveDefaults checks Defaults and PlanDefaults against the plans of
// r, and fills r.planDefaults: each plan's defaults, with the engine's
// where the plan has none.
func (c Config) resolveDefaults(r *resolved) []error {
	base, errs := c.Defaults.problems("defaults")
	if base.TimeZone == "" {
		base.TimeZone = DefaultTimeZone
	}
	r.planDefaults = make(map[string]RunDefaults, len(r.plans))
	for name := range r.plans {
		r.planDefaults[name] = base
	}
	for _, name := range slices.Sorted(maps.Keys(c.PlanDefaults)) {
		field := fmt.Sprintf("planDefaults[%q]", name)
		d, perrs := c.PlanDefaults[name].problems(field)
		errs = append(errs, perrs...)
		if _, ok := r.plans[name]; !ok {
			errs = append(errs, fmt.Errorf("%s: %q is not in plans", field, name))
			continue
		}
		if d.TimeZone == "" {
			d.TimeZone = base.TimeZone
		}
		if d.Locale == "" {
			d.Locale = base.Locale
		}
		r.planDefaults[name] = d
	}
	return errs
}

// runDefaults is what a request of plan runs with: its own time zone and
// locale where it gives them, else the plan's. A bad one is a VALIDATION
// error.
func (e *Engine) runDefaults(req Request, plan string) (RunDefaults, *Error) {
	d := e.cfg.planDefaults[plan]
	if req.TimeZone != "" {
		if err := jsrt.CheckTimeZone(req.TimeZone); err != nil {
			return d, newError(CodeValidation, err, "timeZone: %v", err)
		}
		d.TimeZone = req.TimeZone
	}
	if req.Locale != "" {
		l, err := jsrt.CheckLocale(req.Locale)
		if err != nil {
			return d, newError(CodeValidation, err, "locale: %v", err)
		}
		d.Locale = l
	}
	return d, nil
}
