package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
)

// waitEnd waits for s's run to end without reading its events, and fails
// t if it does not end within a bound that only a run no limit ends would
// reach.
func waitEnd(t *testing.T, s *sandbox.Session) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := s.Wait()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(testenv.ScaleDuration(10 * time.Second)):
		s.Abort()
		t.Fatal("the run did not end at its stall limit")
		return nil
	}
}

// TestStallTimeout: a run whose caller stops reading ends ABORTED at the
// stall limit, saying why, and frees its slot; its wall limit is out of
// reach. A caller that reads slowly, but reads, is never stalled.
func TestStallTimeout(t *testing.T) {
	const stall = 100 * time.Millisecond // crossed on purpose
	const buffer = 4
	e := newEngine(t, sandbox.Config{PoolSize: 1, EventBuffer: buffer, StallTimeout: stall})
	wantMsg := fmt.Sprintf("the run was aborted: the caller did not read its events for %v (stallTimeout)", stall)

	for _, tc := range []struct {
		name string
		req  sandbox.Request
	}{
		{"javascript", sandbox.Request{Code: chatty}},
		{"python", sandbox.Request{Language: sandbox.Python, Code: "i = 0\nwhile True:\n    print(i)\n    i += 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := e.Submit(context.Background(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			err = waitEnd(t, s)
			se := asError(t, err)
			if se.Code != sandbox.CodeAborted || se.Message != wantMsg {
				t.Fatalf("unread run: %v; want ABORTED: %s", err, wantMsg)
			}
			if !errors.Is(err, sandbox.ErrStalled) || errors.Is(err, context.Canceled) {
				t.Fatalf("errors.Is(err, ErrStalled) = %v, errors.Is(err, context.Canceled) = %v; want true and false",
					errors.Is(err, sandbox.ErrStalled), errors.Is(err, context.Canceled))
			}
			// The terminal event says the same, after the buffered lines.
			expectUnread(t, s, buffer, sandbox.CodeAborted)
			// The slot is free: the engine has one.
			if d := trivial(t, e, ""); d <= 0 {
				t.Fatal(d)
			}
		})
	}

	t.Run("slow reader", func(t *testing.T) {
		// The reader takes an event only every tenth of the stall limit,
		// so the run, blocked on its one-event buffer, waits for it at
		// every event, twenty times in all: twice its stall limit, in
		// pauses shorter than it. The limit need only leave the reader
		// room to wake between two pauses: scaled by the machine's
		// slow-down at QuickJS work (40 and more under -race), it made
		// the test wait over a minute, so it stops at 3 s.
		stall := min(testenv.ScaleDuration(200*time.Millisecond), 3*time.Second)
		e := newEngine(t, sandbox.Config{EventBuffer: 1, StallTimeout: stall})
		const events = 20
		s, err := e.Submit(context.Background(), sandbox.Request{Code: fmt.Sprintf("for (let i = 0; i < %d; i++) reportStatus(i); return 'read'", events)})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for ev := range s.Events() {
			if ev.Kind == sandbox.EventStatus {
				if string(ev.Status) != fmt.Sprint(n) {
					t.Fatalf("status %s, want %d", ev.Status, n)
				}
				n++
				time.Sleep(stall / 10) // the reader's own slowness, not a wait for something
			}
		}
		res, err := s.Wait()
		if err != nil || string(res.Value) != `"read"` || n != events {
			t.Fatalf("slow reader: %d events, %s %v", n, res.Value, err)
		}
		if wall := time.Duration(res.Stats.WallMs * float64(time.Millisecond)); wall < stall {
			t.Fatalf("the run took %v, less than its stall limit %v: the reader did not hold it back", wall, stall)
		}
	})
}
