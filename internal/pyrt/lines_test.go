package pyrt

import (
	"testing"
	"time"
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
		}
	}()
	time.Sleep(10 * time.Millisecond) // the writer waits on an empty queue
	q.push(outLine{b: []byte{byte(n)}})
	q.close()
	q.push(outLine{b: []byte{0}}) // after close: dropped
	select {
	case c := <-got:
		if c != n+1 {
			t.Fatalf("took %d lines, want %d", c, n+1)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("take did not end after close")
	}
}
