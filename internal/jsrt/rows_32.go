//go:build 386 || arm

package jsrt

import (
	"modernc.org/libc"
	"modernc.org/quickjs"
)

// readRows never reads the rows on 32-bit platforms, whose JSValue layout
// rows.go does not know: db.load takes the JSON path.
func (rn *run) readRows(quickjs.Value) bool {
	if rn.reason() != nil || rn.result != nil {
		panic(stopPanic{})
	}
	rn.staged = nil
	return false
}

// buildJSON never builds on 32-bit platforms: the guest parses.
func buildJSON(*quickjs.VM, string, func() bool, bool) (v quickjs.Value, ok, stopped bool) {
	return quickjs.Value{}, false, false
}

// vmHandles finds nothing on 32-bit platforms.
func vmHandles(*quickjs.VM) (ctx uintptr, tls *libc.TLS, ok bool) { return 0, nil, false }
