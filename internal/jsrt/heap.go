package jsrt

import (
	"reflect"
	"sync"
	"unsafe"

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
