package contract

// Limits are the per-run limits of the run contract. Every one is enforced
// and every one has a test that crosses it.
//
// In a Request a zero field means "as the plan says"; a non-zero field may
// only lower the plan's value. In a plan a zero field means "as
// sandbox.DefaultLimits says". Engine-wide caps (sandbox.Config.Caps) clamp
// every plan.
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
