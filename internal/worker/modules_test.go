package worker

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/testenv"
)

// TestWorkerModules holds a module session: calls are answered by return
// frames with their ids, in call order; the abort ends the session with a
// null result, and the worker then runs a step.
func TestWorkerModules(t *testing.T) {
	h := startWorker(t, &ipc.Hello{Protocol: ipc.ProtocolVersion, Warm: -1})
	h.send(&ipc.Frame{Type: ipc.FrameModules, RunID: 1, Modules: &ipc.ModuleSession{Limits: testLimits, Modules: []string{"duckdb"}, DeadlineMs: testenv.UnreachableWallMs}})
	for _, c := range []ipc.ModuleCall{
		{ID: 1, Op: ipc.OpDuckDBOpen},
		{ID: 2, Op: ipc.OpDuckDBQuery, Handle: 1, SQL: "SELECT ? + 1 AS x", Params: json.RawMessage(`[41]`)},
		{ID: 3, Op: ipc.OpDuckDBExec, Handle: 1, SQL: "SELEC"},
		{ID: 4, Op: ipc.OpGLPKSolve, Model: json.RawMessage(`{}`)},
	} {
		h.send(&ipc.Frame{Type: ipc.FrameCall, RunID: 1, Call: &c})
	}
	want := map[int64]string{1: `1`, 2: `[{"x":42}]`, 3: `duckdb: Parser Error`, 4: `glpk.solve: the module "glpk" was not requested for this run`}
	for n := len(want); n > 0; n-- {
		f := h.read()
		if f.Type != ipc.FrameReturn || f.RunID != 1 {
			t.Fatalf("frame %+v", f)
		}
		r := f.Return
		got := string(r.Value)
		if r.Error != "" {
			got = r.Error
		}
		if w := want[r.ID]; !strings.HasPrefix(got, w) || w == "" {
			t.Fatalf("reply %d: %q, want %q…", r.ID, got, w)
		}
		delete(want, r.ID)
	}
	h.send(&ipc.Frame{Type: ipc.FrameAbort, RunID: 1})
	if _, term := h.until(1); term.Result == nil || string(term.Result.Value) != "null" {
		t.Fatalf("terminal %+v", term)
	}
	// A call after the end is dropped; the worker is idle again.
	h.send(&ipc.Frame{Type: ipc.FrameCall, RunID: 1, Call: &ipc.ModuleCall{ID: 5, Op: ipc.OpDuckDBOpen}})
	h.execute(2, "return 2", testLimits)
	if _, term := h.until(2); term.Result == nil || string(term.Result.Value) != "2" {
		t.Fatalf("terminal %+v", term)
	}
	// A call to a step is the host's bug: the worker exits. (The step
	// waits for a timer that the test's -timeout outlasts: it is still
	// running when the call comes, on a machine of any speed.)
	h.execute(3, "await new Promise(r => setTimeout(r, 60 * 60 * 1000))", testLimits)
	h.send(&ipc.Frame{Type: ipc.FrameCall, RunID: 3, Call: &ipc.ModuleCall{ID: 1, Op: ipc.OpDuckDBOpen}})
	if code := <-h.exit; code != 1 {
		t.Fatalf("exit status %d", code)
	}
	h.exit <- 1 // for the cleanup
}
