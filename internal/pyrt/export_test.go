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
