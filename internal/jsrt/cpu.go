package jsrt

import (
	"runtime"
	"sync/atomic"
	"time"
)

// cpuMeter measures the CPU time a run spends in JavaScript (and in the host
// functions JavaScript calls). Each call into JavaScript is pinned to its OS
// thread and measured on that thread's CPU clock; the time between calls,
// spent waiting for data or timers, costs nothing, and the goroutine moves
// freely between threads then, which keeps wake-ups cheap.
//
// enter and leave are called by the VM goroutine; used may be called from
// any goroutine, while a call is in progress too.
type cpuMeter struct {
	spent atomic.Int64 // nanoseconds of finished calls
	clock atomic.Int64 // thread clock of the call in progress; 0 if none (no clock is 0)
	start atomic.Int64 // that clock's reading when the call began
}

func (c *cpuMeter) enter() {
	runtime.LockOSThread()
	clk := currentThreadClock()
	c.start.Store(int64(clk.now()))
	c.clock.Store(int64(clk))
}

func (c *cpuMeter) leave() {
	if clk := threadClock(c.clock.Swap(0)); clk != 0 {
		c.spent.Add(int64(clk.now()) - c.start.Load())
	}
	runtime.UnlockOSThread()
}

// busy reports whether a call into JavaScript is in progress.
func (c *cpuMeter) busy() bool { return c.clock.Load() != 0 }

// used returns the CPU time spent so far.
func (c *cpuMeter) used() time.Duration {
	d := c.spent.Load()
	if clk := threadClock(c.clock.Load()); clk != 0 {
		d += int64(clk.now()) - c.start.Load()
	}
	return time.Duration(d)
}
