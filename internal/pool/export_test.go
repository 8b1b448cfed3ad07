package pool

import "time"

// LastPong returns the highest ping sequence number the pool's current
// workers have answered: it grows as each worker answers its pings, and a
// replacement starts again from zero.
func LastPong(p *Pool) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n uint64
	for _, s := range p.slots {
		if s.w != nil {
			n = max(n, s.w.pong.Load())
		}
	}
	return n
}

// SetRefillDelay sets how long a run that bound the standby runs before
// the pool refills it anyway. Tests that call it must not run in parallel.
func SetRefillDelay(d time.Duration) (restore func()) {
	old := refillDelay
	refillDelay = d
	return func() { refillDelay = old }
}

// ForkServer reports the fork servers the pool started, the processes
// they started, and the pid of the last one (0 for none).
func ForkServer(p *Pool) (servers, forks int64, pid int) {
	return p.forkServers.Load(), p.serverForks.Load(), int(p.serverPID.Load())
}
