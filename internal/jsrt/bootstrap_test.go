package jsrt

import (
	"bytes"
	"context"
	"testing"
)

// TestUseBootstrap: a worker accepts the host's bootstrap bytecode only
// with this build's ID, and its VMs then run steps with it.
func TestUseBootstrap(t *testing.T) {
	id, code, err := Bootstrap()
	if err != nil || id == "" || len(code) == 0 {
		t.Fatalf("Bootstrap: %q, %d bytes, %v", id, len(code), err)
	}
	if UseBootstrap("another build", code) || UseBootstrap(id, nil) {
		t.Fatal("accepted a bootstrap of another build, or an empty one")
	}
	if presetBootstrap.Load() != nil {
		t.Skip("another test set the bootstrap")
	}
	if !UseBootstrap(id, code) {
		t.Fatal("refused this build's bootstrap")
	}
	defer presetBootstrap.Store(nil)
	if got, _ := bootstrapCode(); !bytes.Equal(got, code) || &got[0] == &code[0] {
		t.Fatal("the VMs do not load a copy of the bytecode handed over")
	}
	rt, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	h := &recorder{}
	ev := rt.Run(context.Background(), Job{Code: "return 1 + 1", Limits: testLimits, Host: h, Replies: h.replies})
	if ev.Result == nil || string(ev.Result.Value) != "2" {
		t.Fatalf("run: %+v", ev.Error)
	}
}
