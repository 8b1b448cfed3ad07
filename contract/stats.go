package contract

// Stats describe a finished run. They come with every terminal event.
// Durations are milliseconds with a fractional part.
type Stats struct {
	// WallMs is the time from the start of execution to the terminal event.
	WallMs float64 `json:"wallMs"`
	// CPUMs is the CPU time of the thread that ran the guest.
	CPUMs float64 `json:"cpuMs"`
	// CodeMs is the wall time spent inside guest code (metered time).
	CodeMs float64 `json:"codeMs"`
	// QueueMs is the time the run waited for a free runtime.
	QueueMs float64 `json:"queueMs"`
	// HeapMB is the peak guest heap: JavaScript's engine allocator (every
	// allocation is seen), or a Python run process's peak resident set.
	HeapMB float64 `json:"heapMb"`
	// DataRequests and DataBytes count the data bridge's use.
	DataRequests int `json:"dataRequests"`
	DataBytes    int `json:"dataBytes"`
	// FetchRequests and FetchBytes count fetch use.
	FetchRequests int `json:"fetchRequests"`
	FetchBytes    int `json:"fetchBytes"`
	// ConsoleEvents counts console lines delivered; ConsoleDropped those
	// dropped over the console limits.
	ConsoleEvents  int `json:"consoleEvents"`
	ConsoleDropped int `json:"consoleDropped,omitempty"`
	// StatusEvents counts reportStatus calls.
	StatusEvents int `json:"statusEvents"`
}
