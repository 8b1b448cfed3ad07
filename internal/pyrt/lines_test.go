//go:build linux

package pyrt

import (
	"testing"
	"time"

	"github.com/stepbox/stepbox/internal/testenv"
)

// TestLineQueue: push never blocks, lines come out once and in order, and
// the writer's take ends after close, once the queue is drained.
func TestLineQueue(t *testing.T) {
	q := newLineQueue()
	const n = 200
	for i := range n {
		q.push(outLine{b: []byte{byte(i)}})
	}
	got := make(chan int)
	drained := make(chan struct{}) // closed when the first n lines are taken
	go func() {
		count := 0
		for {
			lines, ok := q.take()
			if !ok {
				got <- count
				return
			}
			for _, l := range lines {
				if l.b[0] != byte(count) {
					t.Errorf("line %d out of order", count)
				}
				count++
			}
			if count == n {
				close(drained)
			}
		}
	}()
	<-drained
	// The writer takes again: it consumes the signal the first pushes
	// left, then waits on the empty queue.
	testenv.WaitFor(t, "the writer to wait on an empty queue", func() bool { return len(q.ready) == 0 })
	q.push(outLine{b: []byte{byte(n)}})
	q.close()
	q.push(outLine{b: []byte{0}}) // after close: dropped
	select {
	case c := <-got:
		if c != n+1 {
			t.Fatalf("took %d lines, want %d", c, n+1)
		}
	case <-time.After(testenv.ScaleDuration(10 * time.Second)):
		t.Fatal("take did not end after close")
	}
}
