package sandbox

import (
	"context"
	"errors"
	"testing"
)

// granted reports whether w holds a slot, without waiting.
func granted(w *waiter) bool {
	select {
	case <-w.ch:
		return true
	default:
		return false
	}
}

func mustEnqueue(t *testing.T, s *scheduler, tenant string) *waiter {
	t.Helper()
	w, err := s.enqueue(tenant)
	if err != nil {
		t.Fatalf("enqueue %q: %v", tenant, err)
	}
	return w
}

func expectGranted(t *testing.T, what string, w *waiter, want bool) {
	t.Helper()
	if got := granted(w); got != want {
		t.Fatalf("%s: granted=%v, want %v", what, got, want)
	}
}

func TestSchedulerLoneTenantUsesEverySlot(t *testing.T) {
	s := newScheduler(2, 8, DefaultTenantSlots(2), false)
	a1, a2, a3 := mustEnqueue(t, s, "a"), mustEnqueue(t, s, "a"), mustEnqueue(t, s, "a")
	expectGranted(t, "a's first run", a1, true)
	expectGranted(t, "a's second run, nobody else seen", a2, true)
	expectGranted(t, "a's third run", a3, false)
	s.release(a1)
	expectGranted(t, "a's third run after a release", a3, true)
}

func TestSchedulerShareFromTheSecondTenant(t *testing.T) {
	s := newScheduler(2, 8, DefaultTenantSlots(2), false)
	a1, a2 := mustEnqueue(t, s, "a"), mustEnqueue(t, s, "a") // a alone: both slots
	a3 := mustEnqueue(t, s, "a")                             // waits, first in line
	b1 := mustEnqueue(t, s, "b")                             // a second tenant: the share applies now
	expectGranted(t, "b's run, the pool full", b1, false)
	s.release(a1)
	// a3 is ahead in line, but a holds its share (a2): b1 passes it.
	expectGranted(t, "a's waiting run, a at its share", a3, false)
	expectGranted(t, "b's run after a release", b1, true)
	b2 := mustEnqueue(t, s, "b")
	expectGranted(t, "b's second run, b at its share", b2, false)
	s.release(b1)
	expectGranted(t, "a's waiting run, a at its share", a3, false)
	expectGranted(t, "b's second run after b's release", b2, true)
	s.release(b2)
	// The share is a hard cap: a's run may not take the free slot, which
	// stays idle for another tenant.
	expectGranted(t, "a's waiting run, a at its share", a3, false)
	if s.free != 1 {
		t.Fatalf("free=%d, want 1", s.free)
	}
	b3 := mustEnqueue(t, s, "b")
	expectGranted(t, "b's third run, at once", b3, true)
	s.release(a2)
	expectGranted(t, "a's waiting run, a under its share", a3, true)
}

func TestSchedulerShareFromTheStart(t *testing.T) {
	s := newScheduler(4, 16, 2, true)
	var as []*waiter
	for range 5 {
		as = append(as, mustEnqueue(t, s, "a"))
	}
	for i, w := range as {
		expectGranted(t, "a's runs in order", w, i < 2)
	}
	b := mustEnqueue(t, s, "b")
	expectGranted(t, "b's run beside a's share", b, true)
	// FIFO within the tenant: each slot a frees goes to its oldest waiter.
	s.release(as[0])
	expectGranted(t, "a's third run", as[2], true)
	expectGranted(t, "a's fourth run", as[3], false)
	s.release(as[1])
	expectGranted(t, "a's fourth run", as[3], true)
	expectGranted(t, "a's fifth run", as[4], false)
	if s.free != 1 || s.queued != 1 {
		t.Fatalf("free=%d queued=%d, want 1 and 1", s.free, s.queued)
	}
}

func TestSchedulerQueueShare(t *testing.T) {
	s := newScheduler(2, 4, 1, true) // a tenant may fill half the queue: 2 places
	mustEnqueue(t, s, "a")           // runs
	mustEnqueue(t, s, "a")
	a3 := mustEnqueue(t, s, "a")
	if _, err := s.enqueue("a"); !errors.Is(err, errTenantQueueFull) {
		t.Fatalf("a's fourth run: %v, want errTenantQueueFull", err)
	}
	mustEnqueue(t, s, "b") // runs
	mustEnqueue(t, s, "b")
	mustEnqueue(t, s, "b")
	if _, err := s.enqueue("c"); !errors.Is(err, errQueueFull) {
		t.Fatalf("c's run with the queue full: %v, want errQueueFull", err)
	}
	// A waiter that gives up frees its place in a's share.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.wait(ctx, a3); err == nil {
		t.Fatal("wait with a cancelled context succeeded")
	}
	mustEnqueue(t, s, "a")
}

func TestSchedulerRoundRobinSkipsGoneWaiters(t *testing.T) {
	s := newScheduler(1, 8, 1, true)
	first := mustEnqueue(t, s, "x")
	g1, g2 := mustEnqueue(t, s, "g"), mustEnqueue(t, s, "g")
	p := mustEnqueue(t, s, "p")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.wait(ctx, g1)
	s.release(first)
	expectGranted(t, "g's second run, its first gone", g2, true)
	expectGranted(t, "p's run", p, false)
	s.release(g2)
	expectGranted(t, "p's run", p, true)
	s.release(p)
	if s.free != 1 || s.queued != 0 || len(s.ring) != 0 || len(s.tenants) != 0 || len(s.held) != 0 || len(s.waiting) != 0 {
		t.Fatalf("not empty at the end: free=%d queued=%d ring=%v tenants=%v held=%v waiting=%v", s.free, s.queued, s.ring, s.tenants, s.held, s.waiting)
	}
}

func TestSchedulerNoShare(t *testing.T) {
	s := newScheduler(2, 8, 2, true) // TenantSlots < 0: the share is the pool
	a1, a2 := mustEnqueue(t, s, "a"), mustEnqueue(t, s, "a")
	b := mustEnqueue(t, s, "b")
	expectGranted(t, "a's second run", a2, true)
	expectGranted(t, "b's run", b, false)
	s.release(a1)
	expectGranted(t, "b's run", b, true)
}
