package sandbox

import (
	"context"
	"errors"
	"slices"
	"sync"
)

var (
	errQueueFull       = errors.New("queue full")
	errTenantQueueFull = errors.New("the tenant's share of the queue is full")
)

// scheduler hands out PoolSize execution slots. Runs that find no slot
// they may take wait in a bounded queue: FIFO within a tenant, round-robin
// across tenants, so one tenant's burst cannot starve the others.
//
// Once the share applies (sharing), a tenant holds at most share slots and
// at most queueShare places in the queue: its further runs wait (or, with
// its share of the queue full, are refused) while other tenants' runs take
// the free slots. The share applies from the start when it was configured,
// otherwise from the first run of a second tenant (see Config.TenantSlots).
//
// Invariant: while a slot is free, no waiter may take it (each waiting
// tenant holds its share), so a run that may take a free slot passes
// nobody.
type scheduler struct {
	max        int // most waiters
	share      int // most slots one tenant holds while sharing
	queueShare int // most waiters of one tenant while sharing

	mu      sync.Mutex
	free    int                  // guarded by mu
	queued  int                  // guarded by mu: waiters not gone
	sharing bool                 // guarded by mu: the share applies
	seen    bool                 // guarded by mu: first is set
	first   string               // guarded by mu: the one tenant seen while not sharing
	held    map[string]int       // guarded by mu: slots held, by tenant
	waiting map[string]int       // guarded by mu: waiters not gone, by tenant
	tenants map[string][]*waiter // guarded by mu; FIFO per tenant, gone waiters dropped lazily
	ring    []string             // guarded by mu; the tenants of tenants, in turn order
}

type waiter struct {
	tenant  string
	ch      chan struct{} // closed when granted a slot
	granted bool          // guarded by scheduler.mu
	gone    bool          // guarded by scheduler.mu: gave up waiting
}

// newScheduler returns a scheduler of slots slots and a queue of queue
// places. share is the most slots a tenant may hold once the share
// applies: from the start if sharing, else from the first run of a second
// tenant. A share of slots caps nothing.
func newScheduler(slots, queue, share int, sharing bool) *scheduler {
	share = min(max(share, 1), slots)
	return &scheduler{
		max:        queue,
		share:      share,
		queueShare: (queue*share + slots - 1) / slots, // the same fraction of the queue, rounded up
		free:       slots,
		sharing:    sharing,
		held:       map[string]int{},
		waiting:    map[string]int{},
		tenants:    map[string][]*waiter{},
	}
}

// enqueue asks for a slot for tenant: it returns a waiter that already
// holds one, or one that waits in the queue, or errQueueFull or
// errTenantQueueFull at once.
func (s *scheduler) enqueue(tenant string) (*waiter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.see(tenant)
	w := &waiter{tenant: tenant, ch: make(chan struct{})}
	if s.free > 0 && s.mayTake(tenant) {
		s.grant(w)
		return w, nil
	}
	if s.queued >= s.max {
		return nil, errQueueFull
	}
	if s.sharing && s.waiting[tenant] >= s.queueShare {
		return nil, errTenantQueueFull
	}
	if _, ok := s.tenants[tenant]; !ok {
		s.ring = append(s.ring, tenant)
	}
	s.tenants[tenant] = append(s.tenants[tenant], w)
	s.waiting[tenant]++
	s.queued++
	return w, nil
}

// see notes a run of tenant: the share applies from the second tenant on.
//
// Preconditions: s.mu is held.
func (s *scheduler) see(tenant string) {
	switch {
	case s.sharing:
	case !s.seen:
		s.seen, s.first = true, tenant
	case tenant != s.first:
		s.sharing = true
	}
}

// mayTake reports whether tenant may take one more slot.
//
// Preconditions: s.mu is held.
func (s *scheduler) mayTake(tenant string) bool {
	return !s.sharing || s.held[tenant] < s.share
}

// grant gives w a slot.
//
// Preconditions: s.mu is held; a slot is free.
func (s *scheduler) grant(w *waiter) {
	s.free--
	s.held[w.tenant]++
	w.granted = true
	close(w.ch)
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
			s.release(w) // the slot came just as we gave up: pass it on
		} else {
			w.gone = true
			s.queued--
			s.unwait(w.tenant)
			s.mu.Unlock()
		}
		return ctx.Err()
	}
}

// unwait counts one waiter of tenant less.
//
// Preconditions: s.mu is held.
func (s *scheduler) unwait(tenant string) {
	if s.waiting[tenant]--; s.waiting[tenant] == 0 {
		delete(s.waiting, tenant)
	}
}

// release returns w's slot and hands the free slots to the waiters that
// may take them, in turn.
func (s *scheduler) release(w *waiter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[w.tenant]--; s.held[w.tenant] == 0 {
		delete(s.held, w.tenant)
	}
	s.free++
	for s.free > 0 {
		next := s.next()
		if next == nil {
			return
		}
		s.queued--
		s.unwait(next.tenant)
		s.grant(next)
	}
}

// next takes the first waiter of the first tenant in turn that may take a
// slot, and sends that tenant to the back of the line. Tenants that hold
// their share keep their turn for when they may take one again.
//
// Preconditions: s.mu is held.
func (s *scheduler) next() *waiter {
	for i := 0; i < len(s.ring); {
		tenant := s.ring[i]
		q := s.tenants[tenant]
		for len(q) > 0 && q[0].gone {
			q = q[1:]
		}
		if len(q) == 0 {
			delete(s.tenants, tenant)
			s.ring = slices.Delete(s.ring, i, i+1)
			continue
		}
		s.tenants[tenant] = q
		if !s.mayTake(tenant) {
			i++
			continue
		}
		s.ring = slices.Delete(s.ring, i, i+1)
		if len(q) == 1 {
			delete(s.tenants, tenant)
		} else {
			s.tenants[tenant] = q[1:]
			s.ring = append(s.ring, tenant) // back of the line
		}
		return q[0]
	}
	return nil
}
