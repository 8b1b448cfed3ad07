//go:build !(386 || arm)

package jsrt

import (
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"

	"github.com/stepbox/stepbox/internal/modules/duckdb"
)

// db.load(table, rows) with an array of plain objects does not serialize
// the rows to JSON: the host reads them from the VM, here, into a
// duckdb.Rows, on the VM goroutine, while the guest waits. JSON.stringify
// and the Go-side JSON parse were two thirds of the time of a run loading
// 10,000 rows (issue #7).
//
// The reading must give exactly what JSON.stringify would, and must not run
// any of the step's code: a getter, a Proxy trap or a toJSON method would
// see its effects happen twice if the JSON path ran after it. So the walker
// reads only own data properties of ordinary objects (class Object or
// Array, no Proxy), with prototypes that have no toJSON anywhere, and gives
// up at the first thing it cannot read that way: an accessor, a hole, a
// Date, a BigInt, a function, a lone surrogate, a bad key, a structure
// nested deeper than maxNested, more than the run's memory in Go. Giving up
// costs nothing but the time spent: the bootstrap then takes the JSON path,
// which does what it always did (and reports what it always reported).
// Nothing in the walk allocates in the VM except what QuickJS's own API
// does (a property list per object, UTF-8 of non-ASCII strings); running
// out of memory there gives up too, and the JSON path then meets the limit.

// maxNested is how deep the walker follows objects and arrays inside a
// row; deeper values (and cycles) go through JSON.stringify.
const maxNested = 64

// vmInternals locate what the walker and buildJSON need inside the
// quickjs wrapper, which does not export it: the VM's JSContext and its
// libc.TLS, and the fields of a quickjs.Value. The offsets are found by
// reflection once; if the wrapper's layout changes, ok is false and the
// engine's JSON does all the work (TestVMInternals fails).
var vmInternals = sync.OnceValue(func() (o struct {
	ok                       bool
	ctx, rt, tls, val, valVM uintptr
}) {
	vmType := reflect.TypeOf(quickjs.VM{})
	ctxF, ok1 := vmType.FieldByName("cContext")
	rtF, ok2 := vmType.FieldByName("runtime")
	if !ok1 || !ok2 || ctxF.Type.Kind() != reflect.Uintptr || rtF.Type.Kind() != reflect.Pointer {
		return o
	}
	tlsF, ok3 := rtF.Type.Elem().FieldByName("tls")
	if !ok3 || tlsF.Type != reflect.TypeOf((*libc.TLS)(nil)) {
		return o
	}
	valType := reflect.TypeOf(quickjs.Value{})
	vF, ok4 := valType.FieldByName("v")
	vmF, ok5 := valType.FieldByName("vm")
	if !ok4 || vF.Type != reflect.TypeOf(lib.TJSValue{}) || !ok5 || vmF.Type != reflect.TypeOf((*quickjs.VM)(nil)) {
		return o
	}
	o.ctx = fieldOffset(vmType, ctxF.Index)
	o.rt = fieldOffset(vmType, rtF.Index)
	o.tls = tlsF.Offset
	o.val = vF.Offset
	o.valVM = vmF.Offset
	o.ok = true
	return o
})

// fieldOffset is the offset of the (possibly promoted) field at index in t.
func fieldOffset(t reflect.Type, index []int) uintptr {
	var off uintptr
	for _, i := range index {
		f := t.Field(i)
		off += f.Offset
		t = f.Type
	}
	return off
}

// vmHandles returns vm's JSContext and TLS, ok false if they cannot be
// found.
func vmHandles(vm *quickjs.VM) (ctx uintptr, tls *libc.TLS, ok bool) {
	o := vmInternals()
	if !o.ok {
		return 0, nil, false
	}
	p := unsafe.Pointer(vm)
	ctx = *(*uintptr)(unsafe.Add(p, o.ctx))
	rt := *(*unsafe.Pointer)(unsafe.Add(p, o.rt))
	if ctx == 0 || rt == nil {
		return 0, nil, false
	}
	tls = *(**libc.TLS)(unsafe.Add(rt, o.tls))
	return ctx, tls, tls != nil
}

// rawValue returns the JSValue inside v, which stays v's.
func rawValue(v quickjs.Value) lib.TJSValue {
	return *(*lib.TJSValue)(unsafe.Add(unsafe.Pointer(&v), vmInternals().val))
}

// cmem is p, an address of C memory (the VM's, or tls's stack), as a
// pointer. The conversion goes through memory: vet flags a plain
// unsafe.Pointer(p), meant for Go memory that could move.
func cmem(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func jsTag(v lib.TJSValue) int32        { return int32(v.Ftag) }
func jsInt32(v lib.TJSValue) int32      { return int32(*(*uint64)(unsafe.Pointer(&v))) }
func jsFloat64(v lib.TJSValue) float64  { return *(*float64)(unsafe.Pointer(&v)) }
func jsPointer(v lib.TJSValue) uintptr  { return *(*uintptr)(unsafe.Pointer(&v)) }
func jsIsException(v lib.TJSValue) bool { return v.Ftag == lib.EJS_TAG_EXCEPTION }

// C strings for atoms the walker needs.
var (
	toJSONC = [...]byte{'t', 'o', 'J', 'S', 'O', 'N', 0}
	lengthC = [...]byte{'l', 'e', 'n', 'g', 't', 'h', 0}
)

// giveUp is what the walker panics with when it must leave the rows to
// the JSON path; readRows recovers it.
type giveUp struct{}

// rowWalker reads one db.load array.
type rowWalker struct {
	tls  *libc.TLS
	ctx  uintptr
	rows *duckdb.Rows

	// scratch is C memory from tls: a JSPropertyDescriptor, a
	// JSPropertyEnum pointer and a length.
	desc, ptab, plen uintptr

	toJSON, length uint32 // atoms

	cols   map[uint32]int       // key atom -> column
	keys   map[uint32]string    // key atom -> key, for nested objects
	protos map[uintptr]struct{} // prototypes known to have no toJSON
	intern map[string]string    // short strings
	buf    []byte               // nested JSON text

	shape uintptr  // the JSShape of the last row read, 0 for none
	atoms []uint32 // its keys
	slots []uint32 // where their values are, nil to use the API

	maxSize int    // bytes of Go memory the rows may take
	check   func() // see walkRows
	steps   int    // values read, for the periodic checks
}

// readRows reads v, the guest's db.load array, into the run's staged rows
// and reports whether it could; if not, the bootstrap takes the JSON path.
func (rn *run) readRows(v quickjs.Value) bool {
	if rn.reason() != nil || rn.result != nil {
		panic(stopPanic{})
	}
	rn.staged = nil
	if !rn.granted(ModuleDuckDB) {
		return false
	}

	rows, ok := walkRows(rn.m.vm, v, rn.job.Limits.MemoryMB<<20, func() {
		if rn.stopping() {
			panic(stopPanic{}) // the walk's deferred calls free what it holds
		}
	})
	rn.staged = rows
	if ok {
		rn.rt.rowsRead.Add(1)
	}
	return ok
}

// walkRows reads v, an array of plain objects, into Rows of at most
// maxSize bytes; ok is false if the JSON path must. check runs every few
// hundred values: no interrupt reaches Go code, so it must end the run
// (by panicking) when the run must stop.
func walkRows(vm *quickjs.VM, v quickjs.Value, maxSize int, check func()) (rows *duckdb.Rows, ok bool) {
	w, done, ok := newRowWalker(vm, maxSize, check)
	if !ok {
		return nil, false
	}
	defer done()
	if !w.walk(rawValue(v)) {
		return nil, false
	}
	return w.rows, true
}

// newRowWalker returns a walker for vm and the function that releases
// what it holds; ok is false if there can be none.
func newRowWalker(vm *quickjs.VM, maxSize int, check func()) (w *rowWalker, done func(), ok bool) {
	ctx, tls, ok := vmHandles(vm)
	if !ok {
		return nil, nil, false
	}
	w = &rowWalker{
		tls: tls, ctx: ctx, check: check,
		rows:    duckdb.NewRows(0),
		cols:    map[uint32]int{},
		keys:    map[uint32]string{},
		protos:  map[uintptr]struct{}{},
		intern:  map[string]string{},
		maxSize: maxSize,
	}
	const descSize = unsafe.Sizeof(lib.TJSPropertyDescriptor{})
	const scratch = int(descSize) + 16
	base := tls.Alloc(scratch)
	w.desc, w.ptab, w.plen = base, base+descSize, base+descSize+8
	w.toJSON = lib.XJS_NewAtomLen(tls, ctx, uintptr(unsafe.Pointer(&toJSONC[0])), 6)
	w.length = lib.XJS_NewAtomLen(tls, ctx, uintptr(unsafe.Pointer(&lengthC[0])), 6)
	done = func() {
		lib.XJS_FreeAtom(tls, ctx, w.toJSON) // JS_ATOM_NULL is a no-op
		lib.XJS_FreeAtom(tls, ctx, w.length)
		tls.Free(scratch)
	}
	if w.toJSON == 0 || w.length == 0 { // JS_ATOM_NULL: out of memory
		w.dropException()
		done()
		return nil, nil, false
	}
	return w, done, true
}

// walk reads the rows array; false means the JSON path must.
func (w *rowWalker) walk(arr lib.TJSValue) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			if _, give := p.(giveUp); !give {
				panic(p)
			}
			ok = false
		}
	}()
	n := w.arrayLength(arr)
	if n == 0 {
		w.fail() // the JSON path reports the empty array
	}
	values := w.fastArray(arr, n)
	for i := range n {
		if i%256 == 0 {
			w.check()
		}
		if values != nil {
			w.row(values[i]) // borrowed: the array holds it
		} else {
			w.ownRow(arr, i)
		}
		w.rows.EndRow()
		if i == 0 && uint64(n)*64*uint64(len(w.atoms)) <= uint64(w.maxSize) {
			w.rows.Grow(int(n) - 1) // the columns of the first row, for all
		}
		if w.rows.Size() > w.maxSize {
			w.fail()
		}
	}
	return true
}

func (w *rowWalker) fail() { panic(giveUp{}) }

func (w *rowWalker) free(v lib.TJSValue) {
	if jsTag(v) < 0 { // reference counted
		lib.XFreeValue(w.tls, w.ctx, v)
	}
}

// dropException discards the exception a failed API call left.
func (w *rowWalker) dropException() {
	e := lib.XJS_GetException(w.tls, w.ctx)
	w.free(e)
}

// plain checks that obj is an ordinary object of class cls (Object or
// Array) with no toJSON, its own or on its prototypes: JSON.stringify
// would call it.
func (w *rowWalker) plain(obj lib.TJSValue, cls uint32) {
	if jsTag(obj) != lib.EJS_TAG_OBJECT || lib.XJS_GetClassID(w.tls, obj) != cls {
		w.fail()
	}
	w.noOwnToJSON(obj)
	w.noToJSON(obj)
}

// noOwnToJSON checks that obj, an ordinary object, has no own toJSON,
// enumerable or not.
func (w *rowWalker) noOwnToJSON(obj lib.TJSValue) {
	switch lib.XJS_GetOwnProperty(w.tls, w.ctx, 0, obj, w.toJSON) {
	case 0:
	case -1:
		w.dropException()
		w.fail()
	default:
		w.fail()
	}
}

// noToJSON checks the prototypes of obj for a toJSON, without running
// anything: each must be an ordinary Object or Array.
func (w *rowWalker) noToJSON(obj lib.TJSValue) {
	proto := lib.XJS_GetPrototype(w.tls, w.ctx, obj)
	switch jsTag(proto) {
	case lib.EJS_TAG_NULL:
		return
	case lib.EJS_TAG_OBJECT:
	default:
		w.free(proto)
		w.dropException()
		w.fail()
	}
	defer w.free(proto)
	p := jsPointer(proto)
	if _, ok := w.protos[p]; ok {
		return
	}
	if cls := lib.XJS_GetClassID(w.tls, proto); cls != lib.EJS_CLASS_OBJECT && cls != lib.EJS_CLASS_ARRAY {
		w.fail()
	}
	w.noOwnToJSON(proto)
	w.noToJSON(proto)
	w.protos[p] = struct{}{} // and the prototypes after it
}

// arrayLength returns the length of arr, a plain array.
func (w *rowWalker) arrayLength(arr lib.TJSValue) uint32 {
	w.plain(arr, lib.EJS_CLASS_ARRAY)
	v := w.own(arr, w.length)
	var n float64
	switch jsTag(v) {
	case lib.EJS_TAG_INT:
		n = float64(jsInt32(v))
	case lib.EJS_TAG_FLOAT64:
		n = jsFloat64(v)
	default:
		w.free(v)
		w.fail()
	}
	if n < 0 || n > lib.MJS_ATOM_MAX_INT {
		w.fail()
	}
	return uint32(n)
}

// element returns arr[i], an own data property (a hole or an accessor
// gives up: JSON.stringify would look it up on the prototypes, or call it).
func (w *rowWalker) element(arr lib.TJSValue, i uint32) lib.TJSValue {
	return w.own(arr, lib.XJS_NewAtomUInt32(w.tls, w.ctx, i)) // an integer atom: nothing to free
}

// own returns the own data property prop of obj, an ordinary object.
func (w *rowWalker) own(obj lib.TJSValue, prop uint32) lib.TJSValue {
	d := (*lib.TJSPropertyDescriptor)(cmem(w.desc))
	switch lib.XJS_GetOwnProperty(w.tls, w.ctx, w.desc, obj, prop) {
	case 1:
	case 0:
		w.fail()
	default:
		w.dropException()
		w.fail()
	}
	if d.Fflags&lib.MJS_PROP_GETSET != 0 {
		w.free(d.Fgetter)
		w.free(d.Fsetter)
		w.fail()
	}
	return d.Fvalue
}

// properties returns obj's own enumerable string keys, in the order
// JSON.stringify takes them, and a function to release them.
func (w *rowWalker) properties(obj lib.TJSValue) ([]lib.TJSPropertyEnum, func()) {
	if lib.XJS_GetOwnPropertyNames(w.tls, w.ctx, w.ptab, w.plen, obj, lib.MJS_GPN_STRING_MASK|lib.MJS_GPN_ENUM_ONLY) < 0 {
		w.dropException()
		w.fail()
	}
	tab, n := *(*uintptr)(cmem(w.ptab)), *(*uint32)(cmem(w.plen))
	if n == 0 {
		lib.XJS_FreePropertyEnum(w.tls, w.ctx, tab, n)
		return nil, func() {}
	}
	props := unsafe.Slice((*lib.TJSPropertyEnum)(cmem(tab)), n)
	return props, func() { lib.XJS_FreePropertyEnum(w.tls, w.ctx, tab, n) }
}

// key returns the text of a key atom; a key that is not valid UTF-8 (a
// lone surrogate) gives up.
func (w *rowWalker) key(atom uint32) string {
	if k, ok := w.keys[atom]; ok {
		return k
	}
	p := lib.XJS_AtomToCStringLen(w.tls, w.ctx, w.plen, atom)
	if p == 0 {
		w.dropException()
		w.fail()
	}
	k := strings.Clone(unsafe.String((*byte)(cmem(p)), *(*uint64)(cmem(w.plen))))
	lib.XJS_FreeCString(w.tls, w.ctx, p)
	if !utf8.ValidString(k) {
		w.fail()
	}
	w.keys[atom] = k
	return k
}

// fastArray returns the n values of arr in place if it is a fast array
// (QuickJS's dense array: a JSValue vector), nil if it is not, or if what
// is read there is not what the API returns: the layout (the fast_array
// flag, u.array.u.values, u.array.count) is checked on every array.
func (w *rowWalker) fastArray(arr lib.TJSValue, n uint32) []lib.TJSValue {
	lay := arrayLayout()
	if !lay.ok || n == 0 {
		return nil
	}
	p := jsPointer(arr)
	o := (*lib.TJSObject)(cmem(p))
	if o.Fclass_id != lib.EJS_CLASS_ARRAY || o.F__ccgo16&0x10 == 0 {
		return nil
	}
	u := p + unsafe.Offsetof(o.Fu)
	if *(*uint32)(cmem(u + lay.count)) != n {
		return nil
	}
	vp := *(*uintptr)(cmem(u + lay.values))
	if vp == 0 {
		return nil
	}
	values := unsafe.Slice((*lib.TJSValue)(cmem(vp)), n)
	for _, i := range []uint32{0, n - 1} {
		v := w.element(arr, i)
		same := v == values[i]
		w.free(v)
		if !same {
			return nil
		}
	}
	return values
}

// arrayLayout locates the vector of a fast array in JSObject.u.
var arrayLayout = sync.OnceValue(func() (l struct {
	ok            bool
	values, count uintptr
}) {
	u, ok := reflect.TypeOf(lib.TJSObject{}).FieldByName("Fu")
	if !ok {
		return l
	}
	a, ok := u.Type.FieldByName("Farray")
	if !ok || a.Type.Kind() != reflect.Array || a.Offset != 0 {
		return l
	}
	elem := a.Type.Elem()
	vu, ok1 := elem.FieldByName("Fu")
	c, ok2 := elem.FieldByName("Fcount")
	if !ok1 || !ok2 || c.Type.Kind() != reflect.Uint32 {
		return l
	}
	v, ok := vu.Type.FieldByName("Fvalues")
	if !ok || v.Type.Kind() != reflect.Uintptr {
		return l
	}
	l.values, l.count, l.ok = vu.Offset+v.Offset, c.Offset, true
	return l
})

// ownRow reads arr[i] through the API.
func (w *rowWalker) ownRow(arr lib.TJSValue, i uint32) {
	obj := w.element(arr, i)
	defer w.free(obj)
	w.row(obj)
}

// row reads obj, a row, which must be a plain object.
func (w *rowWalker) row(obj lib.TJSValue) {
	if jsTag(obj) != lib.EJS_TAG_OBJECT || lib.XJS_GetClassID(w.tls, obj) != lib.EJS_CLASS_OBJECT {
		w.fail()
	}
	// Objects with the same shape have the same prototype and the same
	// properties, in the same order, with the same attributes: rows made
	// alike (by JSON.parse, by one object literal) share one, and the
	// checks and the key list of the first serve them all.
	o := (*lib.TJSObject)(cmem(jsPointer(obj)))
	if o.Fshape != w.shape {
		w.shape = 0
		w.plain(obj, lib.EJS_CLASS_OBJECT)
		props, release := w.properties(obj)
		w.atoms = w.atoms[:0]
		for _, p := range props {
			w.atoms = append(w.atoms, p.Fatom) // the shape keeps them
		}
		release()
		w.slots = w.shapeSlots(obj, o.Fshape, w.slots[:0])
		w.shape = o.Fshape
	}
	if w.slots != nil {
		// The values in place, borrowed: nothing runs or is freed until
		// the row is read.
		for k, a := range w.atoms {
			w.field(a, *(*lib.TJSValue)(cmem(o.Fprop + uintptr(w.slots[k])*unsafe.Sizeof(lib.TJSProperty{}))))
		}
		return
	}
	for _, a := range w.atoms {
		w.ownField(obj, a)
	}
}

// shapeSlots returns where the values of obj's keys (w.atoms) are in its
// property array, read from its shape: so the rows that share the shape
// are read without a call per value. It returns nil, and the values are
// read through the API, unless every key is an enumerable data property
// and what is read there is what JS_GetOwnProperty returns: the layout is
// QuickJS's (JSShape, its hash table, its JSShapeProperty array with 6
// flag bits above 26 bits of hash link; JSProperty values), checked on
// every shape's first object.
func (w *rowWalker) shapeSlots(obj lib.TJSValue, shape uintptr, slots []uint32) []uint32 {
	sh := (*lib.TJSShape)(cmem(shape))
	n := int(sh.Fprop_count)
	if n > 1<<16 || sh.Fprop_hash_mask > 1<<20 {
		return nil
	}
	props := unsafe.Slice((*lib.TJSShapeProperty)(cmem(shape+unsafe.Sizeof(lib.TJSShape{})+uintptr(sh.Fprop_hash_mask+1)*4)), n)
	o := (*lib.TJSObject)(cmem(jsPointer(obj)))
	for _, a := range w.atoms {
		slot := -1
		for k := range props {
			if props[k].Fatom == a {
				slot = k
				break
			}
		}
		if slot < 0 {
			return nil
		}
		flags := props[slot].F__ccgo0 >> 26
		if flags&lib.MJS_PROP_TMASK != lib.MJS_PROP_NORMAL || flags&lib.MJS_PROP_ENUMERABLE == 0 {
			return nil
		}
		raw := *(*lib.TJSValue)(cmem(o.Fprop + uintptr(slot)*unsafe.Sizeof(lib.TJSProperty{})))
		v := w.own(obj, a)
		same := v == raw
		w.free(v)
		if !same {
			return nil
		}
		slots = append(slots, uint32(slot))
	}
	return slots
}

// ownField reads the property atom of obj, a row, through the API.
func (w *rowWalker) ownField(obj lib.TJSValue, atom uint32) {
	v := w.own(obj, atom)
	defer w.free(v)
	w.field(atom, v)
}

// field reads v, the value of the property atom of a row.
func (w *rowWalker) field(atom uint32, v lib.TJSValue) {
	val, present := w.value(v)
	if !present {
		return // undefined or a symbol: JSON.stringify leaves the key out
	}
	col, ok := w.cols[atom]
	if !ok {
		var err error
		if col, err = w.rows.Column(w.key(atom)); err != nil {
			w.fail() // the JSON path reports it
		}
		w.cols[atom] = col
	}
	w.rows.Set(col, val)
}

// value converts a property value of a row; present is false for the
// values JSON.stringify leaves out of an object.
func (w *rowWalker) value(v lib.TJSValue) (val duckdb.Value, present bool) {
	switch jsTag(v) {
	case lib.EJS_TAG_INT:
		return duckdb.NumberValue(float64(jsInt32(v))), true
	case lib.EJS_TAG_FLOAT64:
		return duckdb.NumberValue(jsFloat64(v)), true
	case lib.EJS_TAG_BOOL:
		return duckdb.BoolValue(jsInt32(v) != 0), true
	case lib.EJS_TAG_NULL:
		return duckdb.NullValue, true
	case lib.EJS_TAG_UNDEFINED, lib.EJS_TAG_SYMBOL:
		return duckdb.NullValue, false
	case lib.EJS_TAG_STRING, lib.EJS_TAG_STRING_ROPE:
		return duckdb.StringValue(w.string(v)), true
	case lib.EJS_TAG_OBJECT:
		w.buf = w.nested(w.buf[:0], v, 1)
		return duckdb.JSONValue(string(w.buf)), true
	}
	w.fail() // a BigInt: JSON.stringify throws, or calls its toJSON
	return
}

// string returns the string v; one with a lone surrogate gives up.
func (w *rowWalker) string(v lib.TJSValue) string {
	p := lib.XJS_ToCStringLen2(w.tls, w.ctx, w.plen, v, 0)
	if p == 0 {
		w.dropException()
		w.fail()
	}
	b := unsafe.String((*byte)(cmem(p)), *(*uint64)(cmem(w.plen)))
	var s string
	if len(b) <= 32 {
		if s = w.intern[b]; s == "" {
			s = strings.Clone(b)
			if len(w.intern) < 1<<12 {
				w.intern[s] = s
			}
		}
	} else {
		s = strings.Clone(b)
	}
	lib.XJS_FreeCString(w.tls, w.ctx, p)
	if !utf8.ValidString(s) {
		w.fail()
	}
	return s
}

// nested appends the JSON text of v, an object inside a row, as
// JSON.stringify writes it.
func (w *rowWalker) nested(b []byte, v lib.TJSValue, depth int) []byte {
	if depth > maxNested {
		w.fail() // or a cycle
	}
	if w.steps++; w.steps%4096 == 0 {
		w.check()
		if len(b) > w.maxSize {
			w.fail()
		}
	}
	switch jsTag(v) {
	case lib.EJS_TAG_INT:
		return duckdb.AppendNumber(b, float64(jsInt32(v)))
	case lib.EJS_TAG_FLOAT64:
		return duckdb.AppendNumber(b, jsFloat64(v))
	case lib.EJS_TAG_BOOL:
		if jsInt32(v) != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case lib.EJS_TAG_NULL, lib.EJS_TAG_UNDEFINED, lib.EJS_TAG_SYMBOL:
		return append(b, "null"...) // undefined and symbols only in arrays: objects skip them
	case lib.EJS_TAG_STRING, lib.EJS_TAG_STRING_ROPE:
		return duckdb.AppendQuoted(b, w.string(v))
	case lib.EJS_TAG_OBJECT:
	default:
		w.fail()
	}
	switch lib.XJS_GetClassID(w.tls, v) {
	case lib.EJS_CLASS_ARRAY:
		n := w.arrayLength(v)
		b = append(b, '[')
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = w.nestedElement(b, v, i, depth)
		}
		return append(b, ']')
	case lib.EJS_CLASS_OBJECT:
		w.plain(v, lib.EJS_CLASS_OBJECT)
		props, release := w.properties(v)
		defer release()
		b = append(b, '{')
		first := true
		for _, p := range props {
			b, first = w.nestedField(b, v, p.Fatom, depth, first)
		}
		return append(b, '}')
	}
	w.fail() // a function, a Date, a Map, a Proxy, …
	return nil
}

// nestedElement appends arr[i].
func (w *rowWalker) nestedElement(b []byte, arr lib.TJSValue, i uint32, depth int) []byte {
	e := w.element(arr, i)
	defer w.free(e)
	return w.nested(b, e, depth+1)
}

// nestedField appends the property atom of obj, unless JSON.stringify
// leaves it out; first is whether no property was appended before.
func (w *rowWalker) nestedField(b []byte, obj lib.TJSValue, atom uint32, depth int, first bool) ([]byte, bool) {
	e := w.own(obj, atom)
	defer w.free(e)
	switch jsTag(e) {
	case lib.EJS_TAG_UNDEFINED, lib.EJS_TAG_SYMBOL:
		return b, first
	}
	if !first {
		b = append(b, ',')
	}
	b = duckdb.AppendQuoted(b, w.key(atom))
	b = append(b, ':')
	return w.nested(b, e, depth+1), false
}
