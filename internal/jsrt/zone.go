package jsrt

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"golang.org/x/text/language"
	"modernc.org/quickjs"
)

// A run's time zone and default locale.
//
// QuickJS's Date takes its local time from the C library, for the whole
// process: in a worker that is UTC (the jail has no zone file and the
// worker's environment says TZ=UTC), in-process whatever the host's is.
// A run whose zone differs from the process's gets zone.js: the part
// replaces Date and the local-time methods of Date.prototype with ones
// that compute local time from the UTC methods and the run's zone
// (__sbx_zone_offset, over Go's time zone database), so that Date and
// Intl, whose default zone is the run's too (loadIntl), agree. A run in
// the process's own zone pays nothing.

//go:embed zone.js
var zoneSource string

// CheckTimeZone reports whether name is a time zone a run may have: an
// IANA name Go's time zone database (embedded in the binary) knows, such
// as "Europe/Paris" or "UTC". "Local" and the empty name are not zones.
func CheckTimeZone(name string) error {
	if len(name) > maxZoneName {
		return fmt.Errorf("%d bytes is too long for an IANA time zone name", len(name))
	}
	if _, err := loadZone(name); err != nil {
		return fmt.Errorf("%q is not an IANA time zone name", name)
	}
	return nil
}

// maxZoneName bounds a zone name: the longest IANA name is 32 bytes
// (America/Argentina/ComodRivadavia).
const maxZoneName = 64

// zones caches the zones loaded, by name: at most the database's few
// hundred names, since only a name that loads is kept.
var zones sync.Map

// loadZone returns the named zone of Go's time zone database.
func loadZone(name string) (*time.Location, error) {
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	if name == "" || name == "Local" || strings.ContainsAny(name, "\\\x00") || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return nil, fmt.Errorf("%q is not an IANA time zone name", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, loc)
	return loc, nil
}

// CheckLocale checks a run's default locale and returns its canonical
// form ("de-de" becomes "de-DE").
func CheckLocale(tag string) (string, error) {
	if len(tag) > maxLocaleTag {
		return "", fmt.Errorf("%d bytes is too long for a locale", len(tag))
	}
	t, err := language.Parse(tag)
	if err != nil || tag == "" {
		return "", fmt.Errorf("%q is not a well-formed BCP 47 language tag", tag)
	}
	return t.String(), nil
}

// maxLocaleTag bounds a locale tag: ECMA-402's locales are rarely more
// than 20 bytes, with Unicode extensions 40.
const maxLocaleTag = 128

// isUTC reports whether loc is UTC by another name: no offset and no
// transition, ever.
func isUTC(loc *time.Location) bool {
	t := time.Unix(0, 0).In(loc)
	_, off := t.Zone()
	start, end := t.ZoneBounds()
	return off == 0 && start.IsZero() && end.IsZero()
}

// processZoneIsUTC reports whether QuickJS's Date, in this process, has
// UTC as its local time: its offset at a sample of instants, past,
// present and future, summer and winter, is zero.
var processZoneIsUTC = sync.OnceValue(func() bool {
	vm, err := quickjs.NewVM()
	if err != nil {
		return false
	}
	defer vm.Close()
	v, err := vm.Eval(`[-2208988800000, -1e11, 0, 1.5e7, 9.5e11, 9.6e11, Date.now(), 1.79e12, 1.8e12, 2.3e12]
		.every(t => new Date(t).getTimezoneOffset() === 0)`, quickjs.EvalGlobal)
	b, ok := v.(bool)
	return err == nil && ok && b
})

// zoneOffset is __sbx_zone_offset(ms): for the instant ms milliseconds
// after the epoch, the zone's offset from UTC in milliseconds, and the
// interval [start, end) in which that offset holds (±Infinity where the
// database knows no transition), which zone.js caches.
func zoneOffset(loc *time.Location) func([]any) (any, error) {
	return func(args []any) (any, error) {
		ms, ok := argFloat(args, 0)
		if !ok || math.IsNaN(ms) || math.IsInf(ms, 0) {
			return nil, errors.New("zone: not a time value")
		}
		t := time.UnixMilli(int64(ms)).In(loc)
		_, off := t.Zone()
		lo, hi := math.Inf(-1), math.Inf(1)
		start, end := t.ZoneBounds()
		if !start.IsZero() {
			lo = float64(start.UnixMilli())
		}
		if !end.IsZero() {
			hi = float64(end.UnixMilli())
		}
		return []any{float64(off) * 1000, lo, hi}, nil
	}
}

// zoned reports whether a run in the time zone name (empty: UTC) needs
// zone.js: whether its zone is not the process's.
func zoned(name string) bool {
	if name == "" {
		name = DefaultTimeZone
	}
	if !processZoneIsUTC() {
		return true
	}
	loc, err := loadZone(name)
	return err != nil || !isUTC(loc)
}

// setZone gives the machine's run the time zone name (checked by the
// engine; empty is UTC) before its step runs, or any package loads: it
// evaluates zone.js. Call it only for a zoned one.
func (m *machine) setZone(name string) error {
	if name == "" {
		name = DefaultTimeZone
	}
	loc, err := loadZone(name)
	if err != nil {
		return fmt.Errorf("jsrt: time zone: %w", err)
	}
	if err := m.vm.RegisterHostFunc("__sbx_zone_offset", zoneOffset(loc)); err != nil {
		return fmt.Errorf("jsrt: time zone: %w", err)
	}
	code, err := bootstrapCode()
	if err != nil {
		return err
	}
	v, err := m.vm.EvalBytecodeValue(code.parts["zone"])
	if err != nil {
		return fmt.Errorf("jsrt: time zone: %w", err)
	}
	v.Free()
	return nil
}
