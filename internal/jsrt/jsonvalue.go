//go:build !(386 || arm)

package jsrt

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

// A run's input, and the replies to its data requests, fetches and module
// calls, are JSON texts that the guest receives as values. JSON.parse builds them at about 25 MB/s in the
// transpiled engine, most of it tokenizing; buildJSON builds the same
// values from Go, calling the engine only to make objects, arrays, strings
// and property keys, about twice as fast (issue #7: 10,000 rows of input).
//
// The values are the ones JSON.parse makes, made the way it makes them:
// JS_NewObject and JS_DefinePropertyValue per member (so duplicate keys
// keep the first position and the last value, "__proto__" is an own
// property), JS_NewArray and element definitions, integers that fit
// int32 as int32 values and other numbers as doubles, strings and keys
// from UTF-8. Whatever the builder does not take on, it leaves to
// JSON.parse by giving up (ok false): text that is not JSON, a string
// with a lone surrogate escape or invalid UTF-8, nesting deeper than
// ipc.MaxJSONDepth, running out of memory in the VM. JSON.parse then
// reports what it always did.

// jsonBuilder builds one value.
type jsonBuilder struct {
	tls   *libc.TLS
	ctx   uintptr
	text  string
	i     int
	atoms map[string]uint32 // keys made so far; freed at the end
	buf   []byte            // a decoded string
	cbuf  uintptr           // C memory for strings and keys, ccap bytes
	ccap  int
	check func() bool
	// bigints: integers written without fraction or exponent beyond
	// ±(2^53-1) are BigInts (a DuckDB result); beyond int64 the builder
	// gives up, and JSON.parse's reviver makes them.
	bigints bool
	steps   int
	stop    bool // check said so

	// shapes holds, for each sequence of keys objects start with, an
	// object with those keys, so that the engine's shape for it lives
	// through the build. Otherwise each object makes and frees the shapes
	// between the empty one and its own (a shape lives while an object
	// has it), as JSON.parse's objects do: a tenth of the build.
	shapes shapeNode
	nodes  int
}

// shapeNode is an object with a sequence of keys (null values), and the
// nodes of the longer sequences.
type shapeNode struct {
	obj  lib.TJSValue
	keys []uint32
	next map[uint32]*shapeNode
}

// maxShapeNodes bounds the objects a build keeps for their shapes.
const maxShapeNodes = 512

// step returns the node of n's keys and atom, making its object if the
// bound allows, or nil.
func (n *shapeNode) step(b *jsonBuilder, atom uint32) *shapeNode {
	if n == nil {
		return nil
	}
	if c := n.next[atom]; c != nil {
		return c
	}
	if b.nodes >= maxShapeNodes {
		return nil
	}
	c := &shapeNode{keys: append(slices.Clip(n.keys), atom)}
	c.obj = lib.XJS_NewObject(b.tls, b.ctx)
	if jsIsException(c.obj) {
		b.dropException()
		return nil
	}
	for _, a := range c.keys {
		if lib.XJS_DefinePropertyValue(b.tls, b.ctx, c.obj, a, lib.TJSValue{Ftag: lib.EJS_TAG_NULL}, lib.MJS_PROP_C_W_E) < 0 {
			b.dropException()
			b.free(c.obj)
			return nil
		}
	}
	if n.next == nil {
		n.next = map[uint32]*shapeNode{}
	}
	n.next[atom] = c
	b.nodes++
	return c
}

// free releases the objects of n and of the nodes after it.
func (n *shapeNode) free(b *jsonBuilder) {
	for _, c := range n.next {
		c.free(b)
	}
	b.free(n.obj)
}

// buildJSON returns the value of text, a JSON text, made in vm; ok false
// means the caller must use JSON.parse, unless check, called every few
// thousand values, returned true: the run is stopping, and the build was
// abandoned (stopped is true). The caller frees the value.
func buildJSON(vm *quickjs.VM, text string, check func() bool, bigints bool) (v quickjs.Value, ok, stopped bool) {
	ctx, tls, ok := vmHandles(vm)
	if !ok {
		return quickjs.Value{}, false, false
	}
	b := &jsonBuilder{tls: tls, ctx: ctx, text: text, atoms: map[string]uint32{}, check: check, bigints: bigints}
	if b.shapes.obj = lib.XJS_NewObject(tls, ctx); jsIsException(b.shapes.obj) {
		b.dropException()
		return quickjs.Value{}, false, false
	}
	defer func() {
		if b.cbuf != 0 {
			libc.Xfree(tls, b.cbuf)
		}
		b.shapes.free(b)
		for _, a := range b.atoms {
			lib.XJS_FreeAtom(tls, ctx, a)
		}
	}()
	b.space()
	jv, ok := b.value(0)
	if !ok {
		return quickjs.Value{}, false, b.stop
	}
	b.space()
	if b.i != len(b.text) {
		b.free(jv)
		return quickjs.Value{}, false, false
	}
	return makeValue(vm, jv), true, false
}

func (b *jsonBuilder) free(v lib.TJSValue) {
	if jsTag(v) < 0 {
		lib.XFreeValue(b.tls, b.ctx, v)
	}
}

func (b *jsonBuilder) dropException() {
	b.free(lib.XJS_GetException(b.tls, b.ctx))
}

func (b *jsonBuilder) space() {
	for b.i < len(b.text) {
		switch b.text[b.i] {
		case ' ', '\t', '\n', '\r':
			b.i++
		default:
			return
		}
	}
}

// value builds the value at b.i, depth containers deep.
func (b *jsonBuilder) value(depth int) (lib.TJSValue, bool) {
	if b.steps++; b.steps&4095 == 0 && (b.stop || b.check()) {
		b.stop = true
		return lib.TJSValue{}, false
	}
	if b.i >= len(b.text) {
		return lib.TJSValue{}, false
	}
	switch c := b.text[b.i]; c {
	case '{':
		return b.object(depth + 1)
	case '[':
		return b.array(depth + 1)
	case '"':
		s, ok := b.string()
		if !ok {
			return lib.TJSValue{}, false
		}
		return b.newString(s)
	case 't':
		return jsBool(true), b.literal("true")
	case 'f':
		return jsBool(false), b.literal("false")
	case 'n':
		return lib.TJSValue{Ftag: lib.EJS_TAG_NULL}, b.literal("null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return b.number()
		}
	}
	return lib.TJSValue{}, false
}

func (b *jsonBuilder) literal(word string) bool {
	if len(b.text)-b.i < len(word) || b.text[b.i:b.i+len(word)] != word {
		return false
	}
	b.i += len(word)
	return true
}

// number reads a number as JSON.parse does: an integral value that fits
// int32 (not -0) is an int32, anything else a double.
func (b *jsonBuilder) number() (lib.TJSValue, bool) {
	start := b.i
	neg := b.text[b.i] == '-'
	if neg {
		b.i++
	}
	switch {
	case b.i < len(b.text) && b.text[b.i] == '0':
		b.i++
	case b.i < len(b.text) && b.text[b.i] >= '1' && b.text[b.i] <= '9':
		b.digits()
	default:
		return lib.TJSValue{}, false
	}
	integer := true
	if b.i < len(b.text) && b.text[b.i] == '.' {
		b.i++
		if !b.digits() {
			return lib.TJSValue{}, false
		}
		integer = false
	}
	if b.i < len(b.text) && (b.text[b.i] == 'e' || b.text[b.i] == 'E') {
		b.i++
		if b.i < len(b.text) && (b.text[b.i] == '+' || b.text[b.i] == '-') {
			b.i++
		}
		if !b.digits() {
			return lib.TJSValue{}, false
		}
		integer = false
	}
	s := b.text[start:b.i]
	if integer && len(s) <= 10 { // fits int64: a fast path for short integers
		n := int64(0)
		for _, c := range []byte(s) {
			if c != '-' {
				n = n*10 + int64(c-'0')
			}
		}
		if neg {
			n = -n
		}
		if n >= math.MinInt32 && n <= math.MaxInt32 && !(n == 0 && neg) {
			return jsInt(int32(n)), true
		}
	}
	if integer && b.bigints {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return lib.TJSValue{}, false // beyond int64: JSON.parse's reviver
		}
		if n > maxSafeInteger || n < -maxSafeInteger {
			v := lib.XJS_NewBigInt64(b.tls, b.ctx, n)
			if jsIsException(v) {
				b.dropException()
				return lib.TJSValue{}, false
			}
			return v, true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !isRange(err) {
		return lib.TJSValue{}, false
	}
	if f == math.Trunc(f) && f >= math.MinInt32 && f <= math.MaxInt32 && !(f == 0 && math.Signbit(f)) {
		return jsInt(int32(f)), true
	}
	return jsFloat(f), true
}

// maxSafeInteger is Number.MAX_SAFE_INTEGER.
const maxSafeInteger = 1<<53 - 1

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func (b *jsonBuilder) digits() bool {
	start := b.i
	for b.i < len(b.text) && b.text[b.i] >= '0' && b.text[b.i] <= '9' {
		b.i++
	}
	return b.i > start
}

// string reads a string literal and returns its UTF-8, valid (a lone
// surrogate gives up); the result may alias b.text or b.buf.
func (b *jsonBuilder) string() (string, bool) {
	b.i++ // the opening quote
	start := b.i
	for b.i < len(b.text) {
		c := b.text[b.i]
		switch {
		case c == '"':
			s := b.text[start:b.i]
			b.i++
			return s, true
		case c == '\\':
			return b.escaped(start)
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b.i++
		default:
			r, n := utf8.DecodeRuneInString(b.text[b.i:])
			if r == utf8.RuneError && n == 1 {
				return "", false
			}
			b.i += n
		}
	}
	return "", false
}

// escaped continues string at the first backslash, decoding into b.buf.
func (b *jsonBuilder) escaped(start int) (string, bool) {
	b.buf = append(b.buf[:0], b.text[start:b.i]...)
	for b.i < len(b.text) {
		c := b.text[b.i]
		switch {
		case c == '"':
			b.i++
			return unsafe.String(unsafe.SliceData(b.buf), len(b.buf)), true
		case c == '\\':
			if b.i+1 >= len(b.text) {
				return "", false
			}
			e := b.text[b.i+1]
			b.i += 2
			switch e {
			case '"', '\\', '/':
				b.buf = append(b.buf, e)
			case 'b':
				b.buf = append(b.buf, '\b')
			case 'f':
				b.buf = append(b.buf, '\f')
			case 'n':
				b.buf = append(b.buf, '\n')
			case 'r':
				b.buf = append(b.buf, '\r')
			case 't':
				b.buf = append(b.buf, '\t')
			case 'u':
				r, ok := b.hex4()
				if !ok {
					return "", false
				}
				if utf16.IsSurrogate(r) {
					if r >= 0xDC00 || b.i+1 >= len(b.text) || b.text[b.i] != '\\' || b.text[b.i+1] != 'u' {
						return "", false // a lone surrogate: UTF-8 has no form for it
					}
					b.i += 2
					r2, ok := b.hex4()
					if !ok {
						return "", false
					}
					if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
						return "", false
					}
				}
				b.buf = utf8.AppendRune(b.buf, r)
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b.buf = append(b.buf, c)
			b.i++
		default:
			r, n := utf8.DecodeRuneInString(b.text[b.i:])
			if r == utf8.RuneError && n == 1 {
				return "", false
			}
			b.buf = append(b.buf, b.text[b.i:b.i+n]...)
			b.i += n
		}
	}
	return "", false
}

func (b *jsonBuilder) hex4() (rune, bool) {
	if len(b.text)-b.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(b.text[b.i : b.i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	b.i += 4
	return r, true
}

// cstr copies s into C memory for the engine and returns its address,
// valid until the next cstr or the end of the build. The engine must not
// get Go memory: its pointer arithmetic is C's (the race detector's
// checkptr refuses it), and Go memory may move.
func (b *jsonBuilder) cstr(s string) uintptr {
	if len(s)+1 > b.ccap {
		if b.cbuf != 0 {
			libc.Xfree(b.tls, b.cbuf)
		}
		b.ccap = max(256, 2*len(s)+1)
		if b.cbuf = libc.Xmalloc(b.tls, uint64(b.ccap)); b.cbuf == 0 {
			b.ccap = 0
			return 0
		}
	}
	dst := unsafe.Slice((*byte)(cmem(b.cbuf)), len(s)+1)
	copy(dst, s)
	dst[len(s)] = 0
	return b.cbuf
}

func (b *jsonBuilder) newString(s string) (lib.TJSValue, bool) {
	p := b.cstr(s)
	if p == 0 {
		return lib.TJSValue{}, false
	}
	v := lib.XJS_NewStringLen(b.tls, b.ctx, p, uint64(len(s)))
	if jsIsException(v) {
		b.dropException()
		return lib.TJSValue{}, false
	}
	return v, true
}

// atom returns the key s as an atom, owned by b.
func (b *jsonBuilder) atom(s string) (uint32, bool) {
	if a, ok := b.atoms[s]; ok {
		return a, true
	}
	p := b.cstr(s)
	if p == 0 {
		return 0, false
	}
	a := lib.XJS_NewAtomLen(b.tls, b.ctx, p, uint64(len(s)))
	if a == 0 {
		b.dropException()
		return 0, false
	}
	b.atoms[string([]byte(s))] = a // s may alias b.buf
	return a, true
}

func (b *jsonBuilder) object(depth int) (lib.TJSValue, bool) {
	if depth > maxBuildDepth {
		return lib.TJSValue{}, false
	}
	b.i++ // {
	obj := lib.XJS_NewObject(b.tls, b.ctx)
	if jsIsException(obj) {
		b.dropException()
		return lib.TJSValue{}, false
	}
	b.space()
	if b.i < len(b.text) && b.text[b.i] == '}' {
		b.i++
		return obj, true
	}
	node := &b.shapes
	for {
		b.space()
		if b.i >= len(b.text) || b.text[b.i] != '"' {
			break
		}
		key, ok := b.string()
		if !ok {
			break
		}
		a, ok := b.atom(key)
		if !ok {
			break
		}
		b.space()
		if b.i >= len(b.text) || b.text[b.i] != ':' {
			break
		}
		b.i++
		b.space()
		v, ok := b.value(depth)
		if !ok {
			break
		}
		node = node.step(b, a)
		// JS_DefinePropertyValue takes v, also when it fails.
		if lib.XJS_DefinePropertyValue(b.tls, b.ctx, obj, a, v, lib.MJS_PROP_C_W_E) < 0 {
			b.dropException()
			break
		}
		if more, ok := b.separator('}'); more {
			continue
		} else if ok {
			return obj, true
		}
		break
	}
	b.free(obj)
	return lib.TJSValue{}, false
}

func (b *jsonBuilder) array(depth int) (lib.TJSValue, bool) {
	if depth > maxBuildDepth {
		return lib.TJSValue{}, false
	}
	b.i++ // [
	arr := lib.XJS_NewArray(b.tls, b.ctx)
	if jsIsException(arr) {
		b.dropException()
		return lib.TJSValue{}, false
	}
	b.space()
	if b.i < len(b.text) && b.text[b.i] == ']' {
		b.i++
		return arr, true
	}
	for n := uint32(0); ; n++ {
		b.space()
		v, ok := b.value(depth)
		if !ok {
			break
		}
		if lib.XJS_DefinePropertyValueUint32(b.tls, b.ctx, arr, n, v, lib.MJS_PROP_C_W_E) < 0 {
			b.dropException()
			break
		}
		if more, ok := b.separator(']'); more {
			continue
		} else if ok {
			return arr, true
		}
		break
	}
	b.free(arr)
	return lib.TJSValue{}, false
}

// separator reads what follows a member or an element: ',' when more
// follow, or close when the container ends (ok). Anything else is neither.
func (b *jsonBuilder) separator(close byte) (more, ok bool) {
	b.space()
	if b.i < len(b.text) {
		switch b.text[b.i] {
		case ',':
			b.i++
			return true, true
		case close:
			b.i++
			return false, true
		}
	}
	return false, false
}

// maxBuildDepth is the deepest nesting buildJSON builds; deeper text goes
// to JSON.parse (and the host refuses such JSON before it gets here).
const maxBuildDepth = 512

func jsInt(n int32) lib.TJSValue {
	var v lib.TJSValue
	*(*uint64)(unsafe.Pointer(&v)) = uint64(uint32(n))
	v.Ftag = lib.EJS_TAG_INT
	return v
}

func jsFloat(f float64) lib.TJSValue {
	var v lib.TJSValue
	*(*float64)(unsafe.Pointer(&v)) = f
	v.Ftag = lib.EJS_TAG_FLOAT64
	return v
}

func jsBool(t bool) lib.TJSValue {
	var v lib.TJSValue
	if t {
		*(*uint64)(unsafe.Pointer(&v)) = 1
	}
	v.Ftag = lib.EJS_TAG_BOOL
	return v
}

// makeValue wraps jv, whose reference it takes, as a quickjs.Value of vm.
func makeValue(vm *quickjs.VM, jv lib.TJSValue) quickjs.Value {
	var v quickjs.Value
	o := vmInternals()
	*(**quickjs.VM)(unsafe.Add(unsafe.Pointer(&v), o.valVM)) = vm
	*(*lib.TJSValue)(unsafe.Add(unsafe.Pointer(&v), o.val)) = jv
	return v
}
