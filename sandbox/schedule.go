package sandbox

import (
	"context"
	"errors"
	"sync"
)

var errQueueFull = errors.New("queue full")

// scheduler hands out PoolSize execution slots. Runs that find none wait in
// a bounded queue: FIFO within a tenant, round-robin across tenants, so one
// tenant's burst cannot starve the others.
type scheduler struct {
	mu      sync.Mutex
	free    int                  // guarded by mu
	queued  int                  // guarded by mu
	max     int                  // most waiters
	tenants map[string][]*waiter // guarded by mu; FIFO per tenant
	ring    []string             // guarded by mu; tenants with waiters, in turn order
}

type waiter struct {
	ch      chan struct{} // closed when granted a slot
	granted bool          // guarded by scheduler.mu
	gone    bool          // guarded by scheduler.mu: gave up waiting
}

func newScheduler(slots, queue int) *scheduler {
	return &scheduler{free: slots, max: queue, tenants: map[string][]*waiter{}}
}

// enqueue asks for a slot for tenant: it returns a waiter that already
// holds one, or one that waits in the queue, or errQueueFull at once.
func (s *scheduler) enqueue(tenant string) (*waiter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &waiter{ch: make(chan struct{})}
	if s.free > 0 && s.queued == 0 {
		s.free--
		w.granted = true
		close(w.ch)
		return w, nil
	}
	if s.queued >= s.max {
		return nil, errQueueFull
	}
	if len(s.tenants[tenant]) == 0 {
		s.ring = append(s.ring, tenant)
	}
	s.tenants[tenant] = append(s.tenants[tenant], w)
	s.queued++
	return w, nil
}

// wait blocks until w holds a slot or ctx ends. On ctx's end it gives up
// its place (or the slot, if it came at the same moment) and returns the
// context's error.
func (s *scheduler) wait(ctx context.Context, w *waiter) error {
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		if w.granted {
			s.mu.Unlock()
			s.release() // the slot came just as we gave up: pass it on
		} else {
			w.gone = true
			s.queued--
			s.mu.Unlock()
		}
		return ctx.Err()
	}
}

// release returns a slot: to the next tenant in turn, or to the free count.
func (s *scheduler) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.ring) > 0 {
		tenant := s.ring[0]
		s.ring = s.ring[1:]
		q := s.tenants[tenant]
		var w *waiter
		for len(q) > 0 && w == nil {
			if !q[0].gone {
				w = q[0]
			}
			q = q[1:]
		}
		if len(q) > 0 {
			s.tenants[tenant] = q
			s.ring = append(s.ring, tenant) // back of the line
		} else {
			delete(s.tenants, tenant)
		}
		if w != nil {
			w.granted = true
			s.queued--
			close(w.ch)
			return
		}
	}
	s.free++
}
