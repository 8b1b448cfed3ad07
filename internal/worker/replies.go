package worker

import (
	"sync"

	"github.com/stepbox/stepbox/internal/ipc"
)

// replyBuffer is how many replies wait for the run in the channel itself.
const replyBuffer = 16

// replyQueue passes the host's replies from the frame reader, which must
// never block, to the run, which takes them when it waits. It holds as
// many as are actually waiting — at most one per data request the step
// made, which the host checks — and costs nothing per run for a large
// maxDataRequests (a channel sized by that limit cost 64 bytes per allowed
// request, zeroed on every run: 6 MB at 100,000).
//
// Replies go straight into out while it has room; past that they wait in
// overflow, which one goroutine, started on demand, feeds into out in order.
type replyQueue struct {
	out  chan ipc.Reply
	done <-chan struct{} // the run ended: drop what is left

	mu       sync.Mutex
	overflow []ipc.Reply // guarded by mu
	pumping  bool        // guarded by mu: a pump goroutine runs
}

func newReplyQueue(done <-chan struct{}) *replyQueue {
	return &replyQueue{out: make(chan ipc.Reply, replyBuffer), done: done}
}

// push queues r without blocking.
func (q *replyQueue) push(r ipc.Reply) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.overflow) == 0 {
		select {
		case q.out <- r:
			return
		default:
		}
	}
	q.overflow = append(q.overflow, r)
	if !q.pumping {
		q.pumping = true
		go q.pump()
	}
}

// pump moves overflow into out, oldest first, until overflow is empty or
// the run ends. Only pump removes from overflow.
func (q *replyQueue) pump() {
	for {
		q.mu.Lock()
		if len(q.overflow) == 0 {
			q.pumping = false
			q.overflow = nil
			q.mu.Unlock()
			return
		}
		r := q.overflow[0]
		q.mu.Unlock()
		select {
		case q.out <- r:
			q.mu.Lock()
			q.overflow = q.overflow[1:]
			q.mu.Unlock()
		case <-q.done:
			q.mu.Lock()
			q.pumping = false
			q.overflow = nil
			q.mu.Unlock()
			return
		}
	}
}
