package sandbox

import "time"

// Meter receives one Usage record per run: for every run Submit accepted,
// when it ends, and for every request Submit refused. Record is called on the run's goroutine after its terminal
// event was delivered; it should return quickly (queue the record if it
// writes to a network). It must be safe for concurrent use.
type Meter interface {
	Record(Usage)
}

// Usage is the metering record of one run.
type Usage struct {
	RunID    string            `json:"runId"`
	Tenant   string            `json:"tenant,omitempty"`
	Plan     string            `json:"plan"`
	Language Language          `json:"language"`
	Start    time.Time         `json:"start"`
	Outcome  string            `json:"outcome"` // "ok" or an error Code
	Limit    string            `json:"limit,omitempty"`
	Stats    Stats             `json:"stats"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// MeterFunc adapts a function to a Meter.
type MeterFunc func(Usage)

// Record calls f(u).
func (f MeterFunc) Record(u Usage) { f(u) }

type noMeter struct{}

func (noMeter) Record(Usage) {}

func (u Usage) withDefaults(defaultPlan string) Usage {
	if u.Plan == "" {
		u.Plan = defaultPlan
	}
	if u.Language == "" {
		u.Language = JavaScript
	}
	return u
}
