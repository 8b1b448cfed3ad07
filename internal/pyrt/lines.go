//go:build linux

package pyrt

import "sync"

// lineQueue holds the lines for a run's process (the job, then replies)
// until its writer takes them. push never blocks and the queue holds only
// what is waiting: a channel sized for every reply the limits allow cost
// 32 bytes per allowed data request on every run (3 MB at 100,000).
type lineQueue struct {
	mu     sync.Mutex
	items  []outLine // guarded by mu
	closed bool      // guarded by mu
	ready  chan struct{}
}

func newLineQueue() *lineQueue { return &lineQueue{ready: make(chan struct{}, 1)} }

// push queues l; after close it drops it.
func (q *lineQueue) push(l outLine) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, l)
	}
	q.mu.Unlock()
	q.signal()
}

// close ends the queue: the writer returns once it has taken what is
// queued.
func (q *lineQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *lineQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take waits for lines and returns all those queued, oldest first; ok is
// false once the queue is closed and empty.
func (q *lineQueue) take() (lines []outLine, ok bool) {
	for {
		q.mu.Lock()
		lines, q.items = q.items, nil
		closed := q.closed
		q.mu.Unlock()
		if len(lines) > 0 {
			return lines, true
		}
		if closed {
			return nil, false
		}
		<-q.ready
	}
}
