//go:build linux

package pool

import (
	"os"
	"strings"
	"testing"
)

// TestSendPassWhileReaped passes a descriptor to a worker while its reaper
// closes the descriptor socket, as a Python run starting a zygote does
// when the worker dies under it (the soak found the race). The send is
// either made or refused as the worker's being gone, never made on a
// closed socket's number, which another descriptor may have taken by
// then; -race sees an unguarded close. After the reaper, it is refused.
func TestSendPassWhileReaped(t *testing.T) {
	host, child, err := socketpair()
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	out, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := &proc{process: &process{pid: 1}, in: in, out: out, pass: host, readerDone: make(chan struct{})}
	close(w.readerDone)
	p := &Pool{}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		w.reaped(p)
	}()
	if err := w.sendPass(f); err != nil && !strings.Contains(err.Error(), "worker 1 is gone") {
		t.Errorf("a send racing the reaper: %v", err)
	}
	<-reaped
	p.procs.Wait()
	if err := w.sendPass(f); err == nil || !strings.Contains(err.Error(), "worker 1 is gone") {
		t.Errorf("a send after the reaper: %v, want the worker gone", err)
	}
}
