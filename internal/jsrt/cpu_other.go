//go:build !linux

package jsrt

import "time"

// threadClock falls back to the wall clock where the kernel offers no
// per-thread CPU clock readable from another thread: a run's CPU time is
// then the wall time of its calls into JavaScript.
type threadClock int64

func currentThreadClock() threadClock { return 1 }

func (threadClock) now() time.Duration { return time.Duration(time.Now().UnixNano()) }
