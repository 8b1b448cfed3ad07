//go:build linux

package pyrt

// NewLeakyLauncher is NewLauncher with zygotes whose cleaner leaves
// /tmp/<keep> behind, so that their proof fails: no other way to make it
// fail is known.
func NewLeakyLauncher(cfg Config, keep string) (*Launcher, error) { return newLauncher(cfg, keep) }

// NamedUnixSockets is the parser of /proc/net/unix.
var NamedUnixSockets = namedUnixSockets
