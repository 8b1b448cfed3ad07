//go:build cgo && !stepbox_noglpk

package glpk

// GLPK is linked statically from Debian's libglpk-dev, with the static
// archives of the libraries it needs (SuiteSparse's COLAMD and AMD, GMP,
// zlib, libltdl); only the C library stays dynamic. Packages to build:
// libglpk-dev and libltdl-dev (see doc.go).

/*
#cgo CFLAGS: -O2 -Wall
#cgo LDFLAGS: -l:libglpk.a -l:libcolamd.a -l:libamd.a -l:libsuitesparseconfig.a -l:libgmp.a -l:libz.a -l:libltdl.a -ldl -lm
#include <stdlib.h>
#include <glpk.h>
#include "solve.h"

void sb_fail_for_test(sb_result *r);
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The exported constants (glpk.js's numbers) must be GLPK's own; each line
// fails to compile otherwise (a non-zero or negative index).
var (
	_ = [1]struct{}{}[GLPMin-C.GLP_MIN]
	_ = [1]struct{}{}[GLPMax-C.GLP_MAX]
	_ = [1]struct{}{}[GLPFR-C.GLP_FR]
	_ = [1]struct{}{}[GLPLO-C.GLP_LO]
	_ = [1]struct{}{}[GLPUP-C.GLP_UP]
	_ = [1]struct{}{}[GLPDB-C.GLP_DB]
	_ = [1]struct{}{}[GLPFX-C.GLP_FX]
	_ = [1]struct{}{}[GLPUndef-C.GLP_UNDEF]
	_ = [1]struct{}{}[GLPFeas-C.GLP_FEAS]
	_ = [1]struct{}{}[GLPInfeas-C.GLP_INFEAS]
	_ = [1]struct{}{}[GLPNoFeas-C.GLP_NOFEAS]
	_ = [1]struct{}{}[GLPOpt-C.GLP_OPT]
	_ = [1]struct{}{}[GLPUnbnd-C.GLP_UNBND]
)

// And so must the column kinds of model.go.
var (
	_ = [1]struct{}{}[kindContinuous-C.GLP_CV]
	_ = [1]struct{}{}[kindInteger-C.GLP_IV]
	_ = [1]struct{}{}[kindBinary-C.GLP_BV]
)

// available: GLPK is linked in, so there is no unavailableWhy.
const (
	available      = true
	unavailableWhy = ""
)

// serial is held around solves when this GLPK keeps its environment in a
// global instead of thread-local storage (a build without TLS); Debian's
// has TLS, so solves run in parallel.
var serial = sync.OnceValue(func() *sync.Mutex {
	tls := C.CString("TLS")
	defer C.free(unsafe.Pointer(tls))
	if C.glp_config(tls) == nil {
		return new(sync.Mutex)
	}
	return nil
})

// version is GLPK's version, "5.0" on Debian 12.
func version() string { return C.GoString(C.glp_version()) }

func (p *problem) ncols() int { return len(p.cols) }

// cancelFlag is a C int that Go sets while C reads it.
type cancelFlag struct{ p *C.int }

func newCancelFlag() cancelFlag {
	return cancelFlag{p: (*C.int)(C.calloc(1, C.size_t(unsafe.Sizeof(C.int(0)))))}
}

func (f cancelFlag) set()  { atomic.StoreInt32((*int32)(unsafe.Pointer(f.p)), 1) }
func (f cancelFlag) free() { C.free(unsafe.Pointer(f.p)) }

// cProblem is p for C, its slices pinned by pin; no names.
func (p *problem) cProblem(pin *runtime.Pinner) C.sb_problem {
	ptrD := func(s []float64) *C.double {
		if len(s) == 0 {
			return nil
		}
		pin.Pin(&s[0])
		return (*C.double)(unsafe.Pointer(&s[0]))
	}
	ptrI := func(s []int32) *C.int {
		if len(s) == 0 {
			return nil
		}
		pin.Pin(&s[0])
		return (*C.int)(unsafe.Pointer(&s[0]))
	}
	return C.sb_problem{
		dir:   C.int(p.dir),
		ncols: C.int(p.ncols()),
		nrows: C.int(len(p.rows)),
		nnz:   C.int(len(p.ar) - 1),
		obj:   ptrD(p.obj),
		ctype: ptrI(p.ctype),
		clb:   ptrD(p.clb),
		cub:   ptrD(p.cub),
		ckind: ptrI(p.ckind),
		rtype: ptrI(p.rtype),
		rlb:   ptrD(p.rlb),
		rub:   ptrD(p.rub),
		ia:    ptrI(p.ia),
		ja:    ptrI(p.ja),
		ar:    ptrD(p.ar),
	}
}

// run solves p in one C call.
func run(p *problem, presolve bool, mipGap float64, tmLimMs, memMB, each int, cancel cancelFlag) outcome {
	if mu := serial(); mu != nil {
		mu.Lock()
		defer mu.Unlock()
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	ptrD := func(s []float64) *C.double {
		if len(s) == 0 {
			return nil
		}
		pin.Pin(&s[0])
		return (*C.double)(unsafe.Pointer(&s[0]))
	}

	out := outcome{x: make([]float64, p.ncols()), dual: make([]float64, len(p.rows)), rows: make([]float64, len(p.rows))}
	stride := 3 + p.ncols() + 2*len(p.rows)
	maxSteps := 0
	var steps []float64
	if each > 0 {
		maxSteps = max(1, min(maxProgressSteps, maxProgressFloats/stride))
		steps = make([]float64, maxSteps*stride)
	}
	cp := p.cProblem(&pin)
	prm := C.sb_params{
		presolve:  C.GLP_OFF,
		mip_gap:   C.double(mipGap),
		tm_lim:    C.int(tmLimMs),
		mem_mb:    C.int(memMB),
		cancel:    cancel.p,
		each:      C.int(each),
		max_steps: C.int(maxSteps),
	}
	if presolve {
		prm.presolve = C.GLP_ON
	}
	var r C.sb_result
	r.x = ptrD(out.x)
	r.dual = ptrD(out.dual)
	r.rows = ptrD(out.rows)
	r.steps = ptrD(steps)
	C.sb_solve(&cp, &prm, &r)

	for k := range int(r.nsteps) {
		s := steps[k*stride : (k+1)*stride]
		n, m := p.ncols(), len(p.rows)
		out.steps = append(out.steps, step{status: int(s[0]), z: s[1], x: s[3 : 3+n], dual: s[3+n : 3+n+m], rows: s[3+n+m:]})
	}
	out.stepsFull = r.flags&C.SB_STEPS_FULL != 0

	out.status = int(r.status)
	out.z = float64(r.z)
	out.mip = r.flags&C.SB_MIP != 0
	out.timeout = r.ret == C.GLP_ETMLIM
	if r.flags&C.SB_FAILED != 0 {
		out.failed = C.GoString(&r.msg[0])
		if out.failed == "" {
			out.failed = "internal error"
		}
	}
	return out
}

// write writes p as text in one C call: CPLEX LP, or free MPS when mps.
func write(p *problem, mps bool) (string, string) {
	if mu := serial(); mu != nil {
		mu.Lock()
		defer mu.Unlock()
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	cstr := func(s string) *C.char { return C.CString(s) }
	var frees []unsafe.Pointer
	defer func() {
		for _, f := range frees {
			C.free(f)
		}
	}()
	names := func(list []string) **C.char {
		if len(list) == 0 {
			return nil
		}
		arr := (**C.char)(C.calloc(C.size_t(len(list)), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
		frees = append(frees, unsafe.Pointer(arr))
		s := unsafe.Slice(arr, len(list))
		for i, n := range list {
			s[i] = cstr(n)
			frees = append(frees, unsafe.Pointer(s[i]))
		}
		return arr
	}
	cp := p.cProblem(&pin)
	cp.name = cstr(p.name)
	frees = append(frees, unsafe.Pointer(cp.name))
	cp.colnames = names(p.cols)
	cp.rownames = names(p.rows)
	format := C.int(C.SB_WRITE_LP)
	if mps {
		format = C.SB_WRITE_MPS
	}
	var r C.sb_result
	var out *C.char
	var n C.size_t
	C.sb_write(&cp, format, &r, &out, &n)
	defer C.free(unsafe.Pointer(out))
	if r.flags&C.SB_FAILED != 0 {
		msg := C.GoString(&r.msg[0])
		if msg == "" {
			msg = "internal error"
		}
		return "", msg
	}
	return C.GoStringN(out, C.int(n)), ""
}

// failForTest makes GLPK report an internal error and returns the message
// sb_solve's recovery captured.
func failForTest() string {
	var r C.sb_result
	C.sb_fail_for_test(&r)
	if r.flags&C.SB_FAILED == 0 {
		return ""
	}
	return C.GoString(&r.msg[0])
}
