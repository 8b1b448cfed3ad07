package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// chatty logs forever: a run of it that nobody reads fills its event
// buffer and then blocks on its reader, holding its slot. It never ends by
// itself, so a worker process cannot finish it into its pipe meanwhile.
const chatty = "for (let i = 0; ; i++) console.log(i)"

// hog is a run of chatty that is never read.
type hog struct {
	s    *sandbox.Session
	done chan struct{} // closed when the run has ended
	err  error         // Wait's error, set before done is closed
}

func startHog(t *testing.T, e *sandbox.Engine, tenant string) *hog {
	t.Helper()
	s, err := e.Submit(context.Background(), sandbox.Request{Code: chatty, Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // if the test fails first: the engine's Close waits for the run
		s.Abort()
		for range s.Events() {
		}
	})
	h := &hog{s: s, done: make(chan struct{})}
	go func() {
		_, h.err = s.Wait()
		close(h.done)
	}()
	return h
}

func (h *hog) ended() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// blocked reports whether the run holds a slot, blocked on its reader: its
// buffer is full and it has not ended.
func (h *hog) blocked() bool { return len(h.s.Events()) == cap(h.s.Events()) && !h.ended() }

// waiting reports whether the run has not started: no event, not ended.
func (h *hog) waiting() bool { return len(h.s.Events()) == 0 && !h.ended() }

// abort ends the run and checks that it ends ABORTED.
func (h *hog) abort(t *testing.T) {
	t.Helper()
	h.s.Abort()
	select {
	case <-h.done:
	case <-time.After(testenv.ScaleDuration(10 * time.Second)):
		t.Fatal("an aborted run did not end")
	}
	if !errors.Is(h.err, sandbox.ErrAborted) {
		t.Fatalf("aborted run: %v", h.err)
	}
	for range h.s.Events() { // the terminal event waits for its reader
	}
}

// trivial runs a trivial step of tenant to its end and returns how long it
// took. It fails t if the run does not end within a bound that only a run
// waiting behind other runs would reach.
func trivial(t *testing.T, e *sandbox.Engine, tenant string) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(10*time.Second))
	defer cancel()
	start := time.Now()
	res, err := e.Run(ctx, sandbox.Request{Code: "return 1", Tenant: tenant}, nil)
	if err != nil || string(res.Value) != "1" {
		t.Fatalf("%s's trivial run: %s %v (did it wait behind another tenant's runs?)", tenant, res.Value, err)
	}
	return time.Since(start)
}

func expectLoad(t *testing.T, e *sandbox.Engine, running, queued int) {
	t.Helper()
	if r, q, _, _ := e.Load(); r != running || q != queued {
		t.Fatalf("%d runs running and %d queued; want %d and %d", r, q, running, queued)
	}
}

// TestTenantShare: one tenant's runs that never read their events hold
// at most its share of the pool (one slot of two); another tenant's
// trivial runs keep completing on the rest while those runs stay blocked,
// and the tenant's runs over its share wait in the queue.
func TestTenantShare(t *testing.T) {
	// No stall limit: the hogs stay blocked until the test aborts them.
	cfg := sandbox.Config{PoolSize: 2, EventBuffer: 4, StallTimeout: -1}

	// hogsThenOthers saturates a's share with hogs, one running and one
	// waiting, and checks that b's runs complete meanwhile.
	hogsThenOthers := func(t *testing.T, e *sandbox.Engine) []time.Duration {
		h1 := startHog(t, e, "a")
		testenv.WaitFor(t, "a's first run to block on its reader", h1.blocked)
		h2 := startHog(t, e, "a")
		testenv.WaitFor(t, "a's second run to wait in the queue, a holding its share", func() bool {
			_, queued, _, _ := e.Load()
			return queued == 1 && h2.waiting()
		})
		var took []time.Duration
		for range 5 {
			took = append(took, trivial(t, e, "b"))
			if !h1.blocked() || !h2.waiting() {
				t.Fatalf("a's runs moved while b's ran: first blocked=%v, second waiting=%v", h1.blocked(), h2.waiting())
			}
			expectLoad(t, e, 1, 1)
		}
		h1.abort(t)
		// a's waiting run takes the slot its first run freed.
		testenv.WaitFor(t, "a's second run to start once its first ended", h2.blocked)
		h2.abort(t)
		return took
	}

	t.Run("default share from the second tenant", func(t *testing.T) {
		e := newEngine(t, cfg)
		var alone []time.Duration
		for range 3 {
			alone = append(alone, trivial(t, e, "b"))
		}
		beside := hogsThenOthers(t, e)
		// Logged, not asserted: the state checks above are the test.
		t.Logf("b's trivial runs took %v alone, %v beside a's blocked runs", alone, beside)
	})
	t.Run("configured share from the first run", func(t *testing.T) {
		c := cfg
		c.TenantSlots = 1
		hogsThenOthers(t, newEngine(t, c))
	})
	t.Run("a lone tenant uses every slot until another comes", func(t *testing.T) {
		e := newEngine(t, cfg)
		h1, h2 := startHog(t, e, "a"), startHog(t, e, "a")
		testenv.WaitFor(t, "a's two runs to hold both slots", func() bool { return h1.blocked() && h2.blocked() })
		h3 := startHog(t, e, "a")
		testenv.WaitFor(t, "a's third run to wait in the queue", h3.waiting)
		expectLoad(t, e, 2, 1)
		ctx, cancel := context.WithTimeout(context.Background(), testenv.ScaleDuration(10*time.Second))
		defer cancel()
		b, err := e.Submit(ctx, sandbox.Request{Code: "return 'b'", Tenant: "b"})
		if err != nil {
			t.Fatal(err)
		}
		expectLoad(t, e, 2, 2)
		// The first slot a frees goes to b, though a's run waited longer:
		// a second tenant is here, and a still holds its share.
		h1.abort(t)
		for range b.Events() {
		}
		if res, err := b.Wait(); err != nil || string(res.Value) != `"b"` {
			t.Fatalf("b's run: %s %v", res.Value, err)
		}
		if !h3.waiting() || !h2.blocked() {
			t.Fatalf("a's third run started before b's run (waiting=%v), or a's second ended", h3.waiting())
		}
		expectLoad(t, e, 1, 1)
		h2.abort(t)
		testenv.WaitFor(t, "a's third run to start once a is under its share", h3.blocked)
		h3.abort(t)
	})
	t.Run("no share", func(t *testing.T) {
		c := cfg
		c.TenantSlots = -1
		e := newEngine(t, c)
		trivial(t, e, "b")
		h1, h2 := startHog(t, e, "a"), startHog(t, e, "a")
		testenv.WaitFor(t, "a's two runs to hold both slots", func() bool { return h1.blocked() && h2.blocked() })
		h1.abort(t)
		h2.abort(t)
	})
	t.Run("share of the queue", func(t *testing.T) {
		c := cfg
		c.QueueSize = 2 // a may fill one place of two
		e := newEngine(t, c)
		trivial(t, e, "b")
		h1 := startHog(t, e, "a")
		h2 := startHog(t, e, "a")
		s, err := e.Submit(context.Background(), sandbox.Request{Code: chatty, Tenant: "a"})
		if err == nil {
			s.Abort()
		}
		if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "the tenant's share of the queue is full") {
			t.Fatalf("a's third run: %v, want UNAVAILABLE: the tenant's share of the queue is full", err)
		}
		trivial(t, e, "b")
		h1.abort(t)
		h2.abort(t)
	})
}

func TestTenantSlotsConfig(t *testing.T) {
	_, err := sandbox.New(sandbox.Config{PoolSize: 2, TenantSlots: 3})
	if err == nil || !strings.Contains(err.Error(), "tenantSlots=3 is more than poolSize=2") {
		t.Fatalf("tenantSlots above poolSize: %v", err)
	}
	for _, tc := range []struct{ pool, want int }{{1, 1}, {2, 1}, {3, 2}, {4, 2}, {8, 4}} {
		if got := sandbox.DefaultTenantSlots(tc.pool); got != tc.want {
			t.Errorf("DefaultTenantSlots(%d) = %d, want %d", tc.pool, got, tc.want)
		}
	}
}
