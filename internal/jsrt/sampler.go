package jsrt

import (
	"sync"
	"time"
)

// sampleEvery is how often the sampler reads the heap of running VMs.
const sampleEvery = 2 * time.Millisecond

// sampler records the peak heap of every running VM. Reading a VM's
// allocator total between calls into JavaScript misses what a step
// allocated and dropped in between, and an out-of-memory failure frees the
// step's objects before the host hears of it; the peak is what tells a step
// that exhausted its memory from one that threw null. The sampler runs only
// while some run is active.
type sampler struct {
	mu     sync.Mutex
	active map[*run]struct{} // guarded by mu
	wake   chan struct{}
	done   chan struct{}
}

func newSampler() *sampler {
	return &sampler{active: map[*run]struct{}{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

func (s *sampler) add(rn *run) {
	s.mu.Lock()
	s.active[rn] = struct{}{}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// remove stops sampling rn. After it returns the sampler no longer reads
// rn's VM, which may then be closed.
func (s *sampler) remove(rn *run) {
	s.mu.Lock()
	delete(s.active, rn)
	s.mu.Unlock()
}

func (s *sampler) loop() {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		s.mu.Lock()
		n := len(s.active)
		for rn := range s.active {
			rn.notePeak(rn.m.heap.bytes())
		}
		s.mu.Unlock()
		if n == 0 {
			select {
			case <-s.wake:
			case <-s.done:
				return
			}
			continue
		}
		select {
		case <-t.C:
		case <-s.done:
			return
		}
	}
}

func (rn *run) notePeak(b uint64) {
	for {
		old := rn.peak.Load()
		if b <= old || rn.peak.CompareAndSwap(old, b) {
			return
		}
	}
}
