package worker

import (
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/testenv"
)

// TestReplyQueue: pushes never block, whatever the reader does, and every
// reply arrives once, in order, including those past the channel's room.
func TestReplyQueue(t *testing.T) {
	done := make(chan struct{})
	q := newReplyQueue(done)
	const n = 10 * replyBuffer
	pushed := make(chan struct{})
	go func() {
		for i := range n {
			q.push(ipc.Reply{ID: int64(i + 1)})
		}
		close(pushed)
	}()
	select {
	case <-pushed: // nobody read yet: the pushes did not wait for a reader
	case <-time.After(testenv.ScaleDuration(10 * time.Second)):
		t.Fatal("push blocked")
	}
	for i := range n {
		select {
		case r := <-q.out:
			if r.ID != int64(i+1) {
				t.Fatalf("reply %d has id %d", i+1, r.ID)
			}
		case <-time.After(testenv.ScaleDuration(10 * time.Second)):
			t.Fatalf("reply %d never came", i+1)
		}
	}
	// The pump goroutine ends when the overflow is drained, and again when
	// the run ends with replies still queued.
	for i := range 2 * replyBuffer {
		q.push(ipc.Reply{ID: int64(i + 1)})
	}
	close(done)
	testenv.WaitFor(t, "the pump to stop after the run ended", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return !q.pumping
	})
}
