package pool

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
