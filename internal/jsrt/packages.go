package jsrt

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/quickjs"

	"github.com/stepbox/stepbox/internal/ipc"
)

// A package bundle (ipc.Package.Source, made by package npm) is compiled to
// QuickJS bytecode once per process and evaluated, from that bytecode, in
// each run that imports it: the bytecode is Stepbox's own, compiled here
// from source the host sent, never bytecode from elsewhere.

// maxCompiledPackages bounds the bytecode kept. A catalogue holds a few
// packages; more distinct sources than this mean versions have changed
// under a long-lived process, and starting over is fine.
const maxCompiledPackages = 64

// compiledPackage is a bundle's bytecode. id is unique in the process: two
// compilations never share one, so ids name package sets safely.
type compiledPackage struct {
	code []byte
	id   uint64
}

var compiled struct {
	mu     sync.Mutex
	nextID uint64 // guarded by mu
	// code maps a bundle's source to its bytecode. Keying by the source
	// itself (hashed by the map, compared on a hit) costs microseconds
	// and cannot confuse two versions. Guarded by mu.
	code map[string]*compiledPackage
}

// packageCode returns the bytecode of a package bundle, compiling it on
// first use.
func packageCode(p ipc.Package) (*compiledPackage, error) {
	compiled.mu.Lock()
	c, ok := compiled.code[p.Source]
	compiled.mu.Unlock()
	if ok {
		return c, nil
	}
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("compile package %s@%s: %w", p.Name, p.Version, err)
	}
	defer vm.Close()
	code, err := vm.Compile(p.Source, quickjs.EvalGlobal)
	if err != nil {
		return nil, fmt.Errorf("compile package %s@%s: %w", p.Name, p.Version, err)
	}
	compiled.mu.Lock()
	defer compiled.mu.Unlock()
	if c, ok := compiled.code[p.Source]; ok {
		return c, nil // compiled meanwhile by another run
	}
	if compiled.code == nil || len(compiled.code) >= maxCompiledPackages {
		compiled.code = map[string]*compiledPackage{}
	}
	compiled.nextID++
	c = &compiledPackage{code: code, id: compiled.nextID}
	compiled.code[p.Source] = c
	return c, nil
}

// loadPackages evaluates packages in m's VM and hands each namespace to
// the guest's package table. For a run, it runs inside the run's first
// call into JavaScript, under the run's limits.
func (m *machine) loadPackages(pkgs []ipc.Package, codes []*compiledPackage) error {
	for i, p := range pkgs {
		ns, err := m.vm.EvalBytecodeValue(codes[i].code)
		if err != nil {
			return fmt.Errorf("package %s@%s failed to load: %w", p.Name, p.Version, err)
		}
		_, err = m.dispatch.Call(quickjs.UndefinedValue, "package", p.Name, ns)
		ns.Free()
		if err != nil {
			return err
		}
	}
	return nil
}

// Evaluating a bundle costs milliseconds (simple-statistics: about 2 ms),
// more than the rest of a small run. So after a run with packages, the
// Runtime prepares a VM with the same packages already evaluated, for the
// next run that imports them: it pays nothing for them. Such a VM serves
// one run, like any other, and is made only for package sets that runs
// have used, at most maxPackageSets of them, the least recently used
// dropped first.
const maxPackageSets = 4

// packageSet is a set of packages runs have imported, with a VM ready for
// the next one.
type packageSet struct {
	key   string
	pkgs  []ipc.Package
	codes []*compiledPackage
	ready chan *machine // at most one
	used  uint64        // when it was last used; guarded by Runtime.pkgMu
	gone  bool          // evicted, or failed to preload; guarded by Runtime.pkgMu
}

// Bounds of a preload, which no run's limits cover yet. A set that
// crosses them is loaded by each run instead, under the run's limits.
const (
	preloadMemory  = 64 << 20
	preloadTimeout = 2 * time.Second
)

func packageKey(codes []*compiledPackage) string {
	var b strings.Builder
	for _, c := range codes {
		b.WriteString(strconv.FormatUint(c.id, 36))
		b.WriteByte(',')
	}
	return b.String()
}

// acquireWith returns a VM for a run that imports pkgs: one with them
// evaluated already (true) when one is ready, else a plain one (false),
// and asks the filler for a ready one for the next run.
func (r *Runtime) acquireWith(pkgs []ipc.Package, codes []*compiledPackage) (*machine, bool, error) {
	if len(codes) == 0 || cap(r.warm) == 0 {
		m, err := r.acquire()
		return m, false, err
	}
	key := packageKey(codes)
	r.pkgMu.Lock()
	ps := r.pkgSets[key]
	if ps == nil {
		ps = &packageSet{key: key, pkgs: pkgs, codes: codes, ready: make(chan *machine, 1)}
		if len(r.pkgSets) >= maxPackageSets {
			var old *packageSet
			for _, s := range r.pkgSets {
				if old == nil || s.used < old.used {
					old = s
				}
			}
			old.gone = true
			delete(r.pkgSets, old.key)
			select {
			case m := <-old.ready:
				r.release(m)
			default:
			}
		}
		r.pkgSets[key] = ps
	}
	r.pkgSeq++
	ps.used = r.pkgSeq

	gone := ps.gone
	r.pkgMu.Unlock()

	var m *machine
	select {
	case m = <-ps.ready:
	default:
	}
	if !gone {
		select {
		case r.pkgNeed <- ps:
		default: // the filler has enough to do; a later run asks again
		}
	}
	if m != nil {
		r.preloaded.Add(1)
		return m, true, nil
	}
	m, err := r.acquire()
	return m, false, err
}

// preload makes a VM with ps's packages evaluated, unless ps has one.
// The filler calls it.
func (r *Runtime) preload(ps *packageSet) {
	r.pkgMu.Lock()
	gone := ps.gone
	r.pkgMu.Unlock()
	if gone || len(ps.ready) > 0 {
		return
	}
	m, err := newMachine()
	if err != nil {
		return
	}
	m.vm.SetMemoryLimit(preloadMemory)
	_ = m.vm.SetEvalTimeout(preloadTimeout)
	// Close does not wait for a preload to finish.
	stop := context.AfterFunc(r.closed, m.vm.Interrupt)
	err = m.loadPackages(ps.pkgs, ps.codes)
	stop()
	_ = m.vm.SetEvalTimeout(0)
	// The engine collects garbage when its heap grows past a threshold
	// that it sets to 1.5 times the heap at its last collection, and
	// marking a package's objects takes milliseconds. Without this, the
	// threshold would be where the package's evaluation left it, just
	// above the heap, and the run's first allocations would pay for a
	// collection; with it, the run starts as if one had just happened.
	m.vm.SetGCThreshold(uintptr(max(m.heap.bytes()*3/2, 256<<10)))
	if err != nil {
		// The runs that use the set load it themselves and report the
		// error.
		m.close()
		r.pkgMu.Lock()
		ps.gone = true
		r.pkgMu.Unlock()
		return
	}
	select {
	case ps.ready <- m:
	default:
		m.close()
	}
	r.pkgMu.Lock()
	defer r.pkgMu.Unlock()
	if ps.gone {
		select {
		case m := <-ps.ready:
			m.close()
		default:
		}
	}
}

// closePackageSets closes the ready VMs of every set. The filler calls it
// when the Runtime closes.
func (r *Runtime) closePackageSets() {
	r.pkgMu.Lock()
	defer r.pkgMu.Unlock()
	for k, ps := range r.pkgSets {
		ps.gone = true
		select {
		case m := <-ps.ready:
			m.close()
		default:
		}
		delete(r.pkgSets, k)
	}
}
