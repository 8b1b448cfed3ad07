package ipc

import (
	"fmt"
)

// LimitError reports that a run crossed one of its limits.
type LimitError struct {
	Limit string // a Limit* name
	Max   int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("limit exceeded: %s=%d", e.Limit, e.Max)
}

// Budget counts what a run consumes against its limits. Both sides of a
// process boundary keep one: the worker to stop the guest, the host to stop a
// worker that lies. A Budget is not safe for concurrent use.
type Budget struct {
	Limits Limits
	Stats  Stats

	consoleBytes int
}

// NewBudget returns a Budget for the effective limits l.
func NewBudget(l Limits) *Budget { return &Budget{Limits: l} }

// DataRequest counts one data request whose parameters are n bytes.
func (b *Budget) DataRequest(n int) error {
	if b.Stats.DataRequests >= b.Limits.MaxDataRequests {
		return &LimitError{LimitDataRequests, b.Limits.MaxDataRequests}
	}
	b.Stats.DataRequests++
	return b.DataBytes(n)
}

// DataBytes counts n bytes crossing the data bridge in either direction.
func (b *Budget) DataBytes(n int) error {
	b.Stats.DataBytes += n
	if b.Stats.DataBytes > b.Limits.MaxDataBytes {
		return &LimitError{LimitDataBytes, b.Limits.MaxDataBytes}
	}
	return nil
}

// Status counts one status event.
func (b *Budget) Status() error {
	if b.Stats.StatusEvents >= b.Limits.MaxStatusEvents {
		return &LimitError{LimitStatusEvents, b.Limits.MaxStatusEvents}
	}
	b.Stats.StatusEvents++
	return nil
}

// Console decides what to do with a console line of text: it returns the text
// to deliver (possibly cut to the bytes left), and whether the line is
// delivered at all. Console output over the limits is dropped rather than
// failing the run: a log line in a loop should not cost the user the result.
// The first line dropped returns notice=true so that the caller can tell the
// user once.
func (b *Budget) Console(text string) (out string, ok, notice bool) {
	left := b.Limits.MaxConsoleBytes - b.consoleBytes
	if b.Stats.ConsoleEvents >= b.Limits.MaxConsoleEvents || left <= 0 {
		b.Stats.ConsoleDropped++
		return "", false, b.Stats.ConsoleDropped == 1
	}
	if len(text) > left {
		text = cutUTF8(text, left)
	}
	b.Stats.ConsoleEvents++
	b.consoleBytes += len(text)
	return text, true, false
}

// Fetch counts one fetch request.
func (b *Budget) Fetch() error {
	if b.Stats.FetchRequests >= b.Limits.MaxFetchRequests {
		return &LimitError{LimitFetchRequests, b.Limits.MaxFetchRequests}
	}
	b.Stats.FetchRequests++
	return nil
}

// FetchBytes counts n response bytes of a fetch.
func (b *Budget) FetchBytes(n int) error {
	b.Stats.FetchBytes += n
	if b.Stats.FetchBytes > b.Limits.MaxFetchBytes {
		return &LimitError{LimitFetchBytes, b.Limits.MaxFetchBytes}
	}
	return nil
}

// cutUTF8 returns at most n bytes of s without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
