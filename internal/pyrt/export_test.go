//go:build linux

package pyrt

import "context"

// ZygotePID returns the host pid of the runtime's zygote, or 0.
func ZygotePID(r *Runtime) int {
	r.turn <- struct{}{}
	defer func() { <-r.turn }()
	if r.z == nil {
		return 0
	}
	return r.z.pid
}

// WaitSpare waits until the zygote has forked the spare for the next run:
// then the spare is the only process it has besides itself.
func WaitSpare(r *Runtime) error {
	r.turn <- struct{}{}
	defer func() { <-r.turn }()
	if r.z == nil {
		return nil
	}
	spare, err := r.z.takeSpare(context.Background(), r.closeCtx, r.cfg.StartTimeout)
	if err != nil {
		return err
	}
	r.z.held = spare
	return nil
}

// NewLeakyCleaner is New with a zygote whose cleaner leaves /tmp/<keep>
// behind, so that its proof fails: no other way to make it fail is known.
func NewLeakyCleaner(cfg Config, keep string) (*Runtime, error) { return newRuntime(cfg, keep) }

// Retired returns how many zygotes the runtime replaced because what a run
// left could not be proven gone, and why it replaced the last one.
func Retired(r *Runtime) (int, string) {
	r.turn <- struct{}{}
	defer func() { <-r.turn }()
	return r.retired, r.retiredWhy
}

// SocketLister returns a function that lists the named unix sockets in
// the network namespace of the runtime's current zygote, as the host's
// check after each run does; it may be called while a run is in progress.
func SocketLister(r *Runtime) func() ([]string, error) {
	r.turn <- struct{}{}
	defer func() { <-r.turn }()
	return r.z.namedSockets
}

// NamedUnixSockets is the parser of /proc/net/unix.
var NamedUnixSockets = namedUnixSockets
