package sandbox

import "github.com/stepbox/stepbox/internal/worker"

// The engine starts helper processes by re-executing the host's own
// binary: the workers of the process pool, the Python zygotes of those
// workers and the jail's capability probe. They are taken over here,
// before the host's main runs, so that a host program needs no line of its
// own for them (RATIONALE.md: "Why does the process pool re-execute the
// host's own binary, and why does the sandbox package take over child
// processes in its init?").
func init() { worker.TakeOver() }
