//go:build !linux

package jsrt

import "time"

// threadClock falls back to wall time where the kernel offers no per-thread
// CPU clock readable from another thread.
type threadClock struct{ start time.Time }

func currentThreadClock() threadClock { return threadClock{time.Now()} }

func (c threadClock) now() time.Duration { return time.Since(c.start) }
