//go:build linux

package jsrt

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadClock identifies the CPU-time clock of one OS thread, readable from
// any thread of the process.
type threadClock int32

// currentThreadClock returns the CPU clock of the calling thread. The caller
// must have locked its goroutine to the thread.
func currentThreadClock() threadClock {
	// MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) from the kernel's
	// posix-timers.h: the thread's id, inverted, shifted, plus the
	// per-thread flag (4) and the scheduler clock (2).
	return threadClock(^int32(unix.Gettid())<<3 | 6)
}

// now returns the CPU time the thread has used.
func (c threadClock) now() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(c), &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
