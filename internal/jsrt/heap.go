package jsrt

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

// heapOffsets locate the engine's JSRuntime pointer inside a quickjs.VM. The
// wrapper does not export JS_ComputeMemoryUsage, and calling it walks the
// whole heap; the allocator's running total is one field read away. The
// offsets are found by reflection once, so a change in the wrapper's layout
// turns the heap statistic into zero (and fails TestAllocWatch) rather than
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

// allocWatch sees every allocation the engine asks its allocator for:
// watchAllocator puts watchedMalloc and watchedRealloc in the runtime's
// table of allocator functions, in front of the engine's own, and points
// the allocator state's opaque word (unused by the engine's allocator) at
// the watch. It records two things no sampling can: the peak of the bytes
// allocated, and whether an allocation failed. Near its limit the engine
// cannot always say it ran out of memory (it throws null when it cannot
// allocate the error, and a promise job takes its error as a rejection
// that nothing may see), and by the time the host hears of the failure
// the step's objects are freed; a failed allocation is what tells a step
// that exhausted its memory from one that threw null itself, whatever
// the scheduler did meanwhile.
//
// The VM goroutine writes the watch (the engine allocates on it only);
// any goroutine may read it.
type allocWatch struct {
	state   *lib.TJSMallocState
	malloc  uintptr // the engine's own js_malloc and js_realloc
	realloc uintptr
	peak    atomic.Uint64 // most bytes allocated since reset
	failed  atomic.Int64  // allocations refused since reset
	// atLimit, if set, is called (on the VM goroutine, inside the
	// allocator) at the first refused allocation with the heap at its
	// limit; see note.
	atLimit func()
}

// watchAllocator installs an allocWatch on vm's runtime, or returns nil if
// the wrapper's layout is not the one heapOffsets knows. The watch must
// stay reachable (the machine keeps it) while vm is open: the engine holds
// its address where the garbage collector does not look.
func watchAllocator(h heapReader) *allocWatch {
	if h.rt == nil {
		return nil
	}
	ctx := &h.rt.Fmalloc_ctx
	if ctx.Fmf.Fjs_malloc == 0 || ctx.Fmf.Fjs_realloc == 0 || ctx.Fmalloc_state.Fopaque != 0 {
		return nil // not the engine's default allocator
	}
	w := &allocWatch{state: &ctx.Fmalloc_state, malloc: ctx.Fmf.Fjs_malloc, realloc: ctx.Fmf.Fjs_realloc}
	ctx.Fmalloc_state.Fopaque = uintptr(unsafe.Pointer(w))
	ctx.Fmf.Fjs_malloc = funcPointer(watchedMalloc)
	ctx.Fmf.Fjs_realloc = funcPointer(watchedRealloc)
	return w
}

// reset starts counting afresh, for a new run.
func (w *allocWatch) reset() {
	if w == nil {
		return
	}
	w.peak.Store(uint64(w.state.Fmalloc_size))
	w.failed.Store(0)
	w.atLimit = nil
}

// peakBytes returns the most bytes allocated since reset.
func (w *allocWatch) peakBytes() uint64 {
	if w == nil {
		return 0
	}
	return w.peak.Load()
}

// exhausted reports whether an allocation failed since reset.
func (w *allocWatch) exhausted() bool { return w != nil && w.failed.Load() > 0 }

// note records the outcome of one allocation. A refused allocation with
// the heap within a sixteenth of its limit means the step is out of
// memory, whatever it does next: at its limit the engine runs a full
// collection before every allocation, and a step whose promise jobs keep
// failing (each failure a rejection nothing sees) goes on so, at full
// CPU, until a time limit ends it. A refused allocation far below the
// limit (one large block) is the engine's catchable error, as before.
func (w *allocWatch) note(ok bool) {
	if !ok {
		w.failed.Add(1)
		size, limit := w.state.Fmalloc_size, w.state.Fmalloc_limit
		if f := w.atLimit; f != nil && (size >= limit || limit-size < limit/16) {
			w.atLimit = nil
			f()
		}
		return
	}
	if b := uint64(w.state.Fmalloc_size); b > w.peak.Load() {
		w.peak.Store(b) // only the VM goroutine writes
	}
}

// watchOf returns the watch of the allocator state at s.
func watchOf(s uintptr) *allocWatch {
	st := (*lib.TJSMallocState)(cmem(s))
	return (*allocWatch)(cmem(st.Fopaque))
}

// watchedMalloc and watchedRealloc have the signatures of the engine's
// JSMallocFunctions members, as the transpiler represents them.
func watchedMalloc(tls *libc.TLS, s uintptr, size lib.Tsize_t) uintptr {
	w := watchOf(s)
	p := (*(*func(*libc.TLS, uintptr, lib.Tsize_t) uintptr)(unsafe.Pointer(&struct{ uintptr }{w.malloc})))(tls, s, size)
	w.note(p != 0 || size == 0)
	return p
}

func watchedRealloc(tls *libc.TLS, s, ptr uintptr, size lib.Tsize_t) uintptr {
	w := watchOf(s)
	p := (*(*func(*libc.TLS, uintptr, uintptr, lib.Tsize_t) uintptr)(unsafe.Pointer(&struct{ uintptr }{w.realloc})))(tls, s, ptr, size)
	w.note(p != 0 || size == 0) // a realloc to zero frees
	return p
}

// funcPointer is f as the transpiled engine holds a function pointer: the
// data word of f in an interface, which points at f's static closure.
func funcPointer(f any) uintptr {
	return (*[2]uintptr)(unsafe.Pointer(&f))[1]
}
