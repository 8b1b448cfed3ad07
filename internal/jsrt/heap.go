package jsrt

import (
	"reflect"
	"sync"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

// heapOffsets locate the engine's JSRuntime pointer inside a quickjs.VM. The
// wrapper does not export JS_ComputeMemoryUsage, and calling it walks the
// whole heap; the allocator's running total is one field read away. The
// offsets are found by reflection once, so a change in the wrapper's layout
// turns the heap statistic into zero (and fails TestHeapStat) rather than
// reading the wrong memory.
var heapOffsets = sync.OnceValue(func() (o struct{ toRT, toC uintptr }) {
	vmType := reflect.TypeOf(quickjs.VM{})
	f, found := vmType.FieldByName("runtime")
	if !found || len(f.Index) != 2 || f.Type.Kind() != reflect.Pointer {
		return o
	}
	outer := vmType.Field(f.Index[0])
	c, found := f.Type.Elem().FieldByName("cRuntime")
	if !found || c.Type.Kind() != reflect.Uintptr {
		return o
	}
	o.toRT, o.toC = outer.Offset+f.Offset, c.Offset
	return o
})

type heapReader struct {
	rt *lib.TJSRuntime
}

// newHeapReader returns a reader of vm's allocated bytes. It must be used on
// the VM's goroutine while vm is open.
func newHeapReader(vm *quickjs.VM) heapReader {
	o := heapOffsets()
	if o.toRT == 0 {
		return heapReader{}
	}
	rtp := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(vm), o.toRT))
	if rtp == nil {
		return heapReader{}
	}
	c := *(*unsafe.Pointer)(unsafe.Add(rtp, o.toC))
	return heapReader{rt: (*lib.TJSRuntime)(c)}
}

// bytes returns the bytes the engine has allocated.
func (h heapReader) bytes() uint64 {
	if h.rt == nil {
		return 0
	}
	return uint64(h.rt.Fmalloc_ctx.Fmalloc_state.Fmalloc_size)
}

// deferGC keeps the engine's cycle collector from running while a value
// of about expect bytes is built, all of it reachable: a collection during
// the build would scan every object made so far and find none of them to
// free. If the build would start a collection, one runs now instead,
// before the new objects exist, and resume then sets the next one as the
// engine does after a collection (at 1.5 times the allocated bytes, now
// all reachable); if not, resume puts the threshold back.
func (h heapReader) deferGC(tls *libc.TLS, expect int) (resume func()) {
	if h.rt == nil || tls == nil {
		return func() {}
	}
	rt := h.rt
	prev := rt.Fmalloc_gc_threshold
	collected := false
	if size := rt.Fmalloc_ctx.Fmalloc_state.Fmalloc_size; size+lib.Tsize_t(expect) > prev {
		lib.XJS_RunGC(tls, uintptr(unsafe.Pointer(rt)))
		collected = true
	}
	rt.Fmalloc_gc_threshold = ^lib.Tsize_t(0)
	return func() {
		rt.Fmalloc_gc_threshold = prev
		if collected {
			size := rt.Fmalloc_ctx.Fmalloc_state.Fmalloc_size
			rt.Fmalloc_gc_threshold = size + size>>1
		}
	}
}
