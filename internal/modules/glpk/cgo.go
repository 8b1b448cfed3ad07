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

// run solves p in one C call.
func run(p *problem, presolve bool, mipGap float64, tmLimMs, memMB int, cancel cancelFlag) outcome {
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
	ptrI := func(s []int32) *C.int {
		if len(s) == 0 {
			return nil
		}
		pin.Pin(&s[0])
		return (*C.int)(unsafe.Pointer(&s[0]))
	}

	out := outcome{x: make([]float64, p.ncols()), dual: make([]float64, len(p.rows))}
	cp := C.sb_problem{
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
	prm := C.sb_params{
		presolve: C.GLP_OFF,
		mip_gap:  C.double(mipGap),
		tm_lim:   C.int(tmLimMs),
		mem_mb:   C.int(memMB),
		cancel:   cancel.p,
	}
	if presolve {
		prm.presolve = C.GLP_ON
	}
	var r C.sb_result
	r.x = ptrD(out.x)
	r.dual = ptrD(out.dual)
	C.sb_solve(&cp, &prm, &r)

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
