package jsrt

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"

	"github.com/stepbox/stepbox/internal/intl"
	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/modules/duckdb"
	"github.com/stepbox/stepbox/internal/modules/glpk"
)

//go:embed bootstrap.js
var bootstrapSource string

//go:embed fetch.js
var fetchSource string

//go:embed headers.js
var headersSource string

//go:embed request.js
var requestSource string

//go:embed modules.js
var modulesSource string

//go:embed text.js
var textSource string

//go:embed bytes.js
var bytesSource string

//go:embed dom.js
var domSource string

//go:embed events.js
var eventsSource string

//go:embed abort.js
var abortSource string

//go:embed performance.js
var performanceSource string

//go:embed blob.js
var blobSource string

//go:embed form.js
var formSource string

//go:embed clone.js
var cloneSource string

//go:embed url.js
var urlSource string

//go:embed urlcore.js
var urlcoreSource string

//go:embed urlparse.js
var urlparseSource string

//go:embed params.js
var paramsSource string

//go:embed crypto.js
var cryptoSource string

//go:embed subtle.js
var subtleSource string

//go:embed keys.js
var keysSource string

// partSources are the parts of the guest API a VM evaluates when a step
// first uses them (bootstrap.js, loadPart), by name.
var partSources = map[string]string{
	"fetch":       fetchSource,
	"headers":     headersSource,
	"request":     requestSource,
	"modules":     strings.Replace(modulesSource, "__SBX_GLPK_VERSION__", strconv.Quote(glpk.Version()), 1),
	"intl":        intlSource,
	"text":        textSource,
	"bytes":       bytesSource,
	"dom":         domSource,
	"events":      eventsSource,
	"abort":       abortSource,
	"performance": performanceSource,
	"blob":        blobSource,
	"form":        formSource,
	"clone":       cloneSource,
	"url":         urlSource,
	"urlcore":     urlcoreSource,
	"urlparse":    urlparseSource,
	"params":      paramsSource,
	"crypto":      cryptoSource,
	"subtle":      subtleSource,
	"keys":        keysSource,
	"zone":        zoneSource,
}

// bundle is the bootstrap's bytecode: the part every VM evaluates, and
// the parts loaded on first use.
type bundle struct {
	boot  []byte
	parts map[string][]byte
}

// bootstrapCode is the bootstrap's bytecode: what the host handed over
// (UseBootstrap), else compiled once by this process. Only bytecode
// compiled here or by the host is ever loaded into a VM; a request carries
// source.
func bootstrapCode() (*bundle, error) {
	if b := presetBootstrap.Load(); b != nil {
		return b, nil
	}
	return compiledBootstrap()
}

// presetBootstrap is the bytecode UseBootstrap accepted, if any.
var presetBootstrap atomic.Pointer[bundle]

// compiledBootstrap is the bootstrap compiled to bytecode once per process.
//
// The bytecode keeps no source text and no debug information: every VM
// reads the bytecode, and the text of each function (comments included)
// was a third of the reading and of the bytes; the file name and line
// table of each function another 3% of a VM's making and 3–8% of a
// part's first use (scripts/firstuse). The bootstrap's functions then
// print as native code, and their stack frames have no location, which
// is how RewriteStack knows and drops them.
var compiledBootstrap = sync.OnceValues(func() (*bundle, error) {
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("jsrt: compile bootstrap: %w", err)
	}
	defer vm.Close()
	if ctx, tls, ok := vmHandles(vm); ok {
		lib.XJS_SetStripInfo(tls, lib.XJS_GetRuntime(tls, ctx), lib.MJS_STRIP_DEBUG)
	}
	b := &bundle{parts: make(map[string][]byte, len(partSources))}
	if b.boot, err = vm.Compile(bootstrapSource, quickjs.EvalGlobal); err != nil {
		return nil, fmt.Errorf("jsrt: compile bootstrap: %w", err)
	}
	for name, src := range partSources {
		if b.parts[name], err = vm.Compile(src, quickjs.EvalGlobal); err != nil {
			return nil, fmt.Errorf("jsrt: compile bootstrap part %s: %w", name, err)
		}
	}
	return b, nil
})

// encode returns b as one byte string: for the boot and then each part
// in name order, the name's length, the name, the code's length and the
// code (lengths as uvarints; the boot's name is empty).
func (b *bundle) encode() []byte {
	var out []byte
	add := func(name string, code []byte) {
		out = binary.AppendUvarint(out, uint64(len(name)))
		out = append(out, name...)
		out = binary.AppendUvarint(out, uint64(len(code)))
		out = append(out, code...)
	}
	add("", b.boot)
	for _, name := range slices.Sorted(maps.Keys(b.parts)) {
		add(name, b.parts[name])
	}
	return out
}

// decodeBundle reads what encode wrote, copying it. It fails unless the
// boot comes first and the parts are exactly partSources' names.
func decodeBundle(data []byte) (*bundle, error) {
	next := func() ([]byte, error) {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) {
			return nil, errors.New("jsrt: bootstrap bundle: truncated")
		}
		v := data[k : k+int(n)]
		data = data[k+int(n):]
		return v, nil
	}
	b := &bundle{parts: map[string][]byte{}}
	for first := true; len(data) > 0; first = false {
		name, err := next()
		if err != nil {
			return nil, err
		}
		code, err := next()
		if err != nil {
			return nil, err
		}
		switch _, known := partSources[string(name)]; {
		case first && len(name) == 0 && len(code) > 0:
			b.boot = slices.Clone(code)
		case !first && known && b.parts[string(name)] == nil && len(code) > 0:
			b.parts[string(name)] = slices.Clone(code)
		default:
			return nil, fmt.Errorf("jsrt: bootstrap bundle: unexpected piece %q", name)
		}
	}
	if b.boot == nil || len(b.parts) != len(partSources) {
		return nil, errors.New("jsrt: bootstrap bundle: incomplete")
	}
	return b, nil
}

// bootstrapID names the bootstrap's bytecode format: the bootstrap's
// sources, the engine's module version and the architecture. Two binaries
// with the same ID compile the bootstrap to interchangeable bytecode.
var bootstrapID = sync.OnceValue(func() string {
	h := sha256.New()
	h.Write([]byte(bootstrapSource))
	for _, name := range slices.Sorted(maps.Keys(partSources)) {
		fmt.Fprintf(h, "\x00%s\x00%s", name, partSources[name])
	}
	fmt.Fprintf(h, "\x00%s\x00%s", runtime.GOARCH, engineVersion())
	return hex.EncodeToString(h.Sum(nil))
})

// engineVersion is the versions of the QuickJS modules this binary was
// built with ("" when it carries no build information).
func engineVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var v strings.Builder
	for _, m := range info.Deps {
		if m.Path == "modernc.org/libquickjs" || m.Path == "modernc.org/quickjs" || m.Path == "modernc.org/libc" {
			if m.Replace != nil {
				m = m.Replace
			}
			fmt.Fprintf(&v, "%s@%s %s;", m.Path, m.Version, m.Sum)
		}
	}
	return v.String()
}

// Bootstrap returns the bootstrap's bytecode, compiled once per process,
// and its ID, for a host to hand to its workers (UseBootstrap): compiling
// it is most of a worker's start-up work in this package.
func Bootstrap() (id string, code []byte, err error) {
	b, err := bootstrapCode()
	if err != nil {
		return "", nil, err
	}
	return bootstrapID(), b.encode(), nil
}

// UseBootstrap makes this process's VMs load code, the bootstrap as
// Bootstrap returned it in a trusted process (the host), instead of
// compiling it, if id is this binary's bootstrap ID; it reports whether it
// did. Call it before New. A worker of another build ignores the offer and
// compiles its own.
func UseBootstrap(id string, code []byte) bool {
	if id != bootstrapID() {
		return false
	}
	b, err := decodeBundle(code)
	if err != nil {
		return false
	}
	return presetBootstrap.CompareAndSwap(nil, b)
}

// DefaultWarm is the number of runtimes a Runtime keeps ready when
// Config.Warm is zero.
const DefaultWarm = 2

// Config configures a Runtime.
type Config struct {
	// Warm is how many bootstrapped VMs are kept ready ahead of demand.
	// Zero means DefaultWarm; negative means none (every run creates its
	// own VM on its own goroutine).
	Warm int
	// Locales are the locales beyond English a run's Intl offers, each one
	// of IntlLocales (de, which brings de-AT and de-CH); a locale not
	// offered resolves as ECMA-402's lookup does, to its parent or to
	// en-US. Nil means every locale of IntlLocales, empty English alone;
	// an unknown one is an error of New.
	Locales []string
}

// IntlLocales are the locales the guest's Intl has data for (English
// first): what Config.Locales chooses from.
func IntlLocales() []string { return intl.Locales() }

// CheckLocales reports the names of Config.Locales that IntlLocales does
// not have (New would refuse them).
func CheckLocales(names []string) error {
	_, err := intl.NewSet(names)
	return err
}

// Runtime runs JavaScript steps, each in a fresh QuickJS VM taken from a pool
// of pre-bootstrapped ones. It is safe for concurrent use: each Run owns its
// VM on its own goroutine for the run's whole life, and a VM is closed after
// its run, never reused.
type Runtime struct {
	locales intl.Set        // what a run's Intl offers
	warm    chan *machine   // ready VMs; owned by whoever receives one
	refill  chan struct{}   // a nudge to the filler goroutine
	discard chan *machine   // used VMs for the filler goroutine to close
	done    chan struct{}   // closed by Close
	closed  context.Context // ends when Close starts
	stopAll context.CancelFunc
	wg      sync.WaitGroup

	closeOnce sync.Once

	duckMu sync.Mutex
	// duck keeps a DuckDB database ready for the runs that use the duckdb
	// module; made by the first such run, so that a process that never
	// runs one never starts DuckDB. Guarded by duckMu.
	duck *duckdb.Pool
	// duckClosed is set when Close starts; later databases close at
	// once. Guarded by duckMu.
	duckClosed bool
	// closing counts the databases being closed in the background.
	closing sync.WaitGroup

	pkgNeed chan *packageSet // to the filler: make a VM with these packages
	pkgMu   sync.Mutex
	pkgSets map[string]*packageSet // guarded by pkgMu; see acquireWith
	pkgSeq  uint64                 // guarded by pkgMu
	// preloaded counts the runs that got a VM with their packages
	// evaluated (for tests).
	preloaded atomic.Uint64
	// rowsRead counts the db.load arrays read without JSON (for tests).
	rowsRead atomic.Uint64
	// unnamedOOMs counts the runs found out of memory by a failed
	// allocation alone, the engine's exception not saying so (for tests).
	unnamedOOMs atomic.Uint64
}

// New returns a Runtime and starts filling its warm pool in the background.
func New(cfg Config) (*Runtime, error) {
	if _, err := bootstrapCode(); err != nil {
		return nil, err
	}
	locales := intl.AllLocales()
	if cfg.Locales != nil {
		var err error
		if locales, err = intl.NewSet(cfg.Locales); err != nil {
			return nil, fmt.Errorf("jsrt: locales: %w", err)
		}
	}
	n := cfg.Warm
	if n == 0 {
		n = DefaultWarm
	}
	if n < 0 {
		n = 0
	}
	r := &Runtime{
		locales: locales,
		warm:    make(chan *machine, n),
		refill:  make(chan struct{}, 1),
		discard: make(chan *machine, 64),
		done:    make(chan struct{}),
		pkgNeed: make(chan *packageSet, maxPackageSets),
		pkgSets: map[string]*packageSet{},
	}
	r.closed, r.stopAll = context.WithCancel(context.Background())
	r.wg.Add(1) // Done when filler returns, after Close.
	go r.filler()
	r.nudge()
	return r, nil
}

// Close closes the warm VMs and stops the background goroutine. Runs in
// progress are not affected: they own their VMs. Close is idempotent.
func (r *Runtime) Close() {
	r.closeOnce.Do(func() { r.stopAll(); close(r.done) })
	r.wg.Wait()
	r.duckMu.Lock()
	r.duckClosed = true
	r.duckMu.Unlock()
	r.closing.Wait()
	r.duckMu.Lock()
	if r.duck != nil {
		_ = r.duck.Close()
	}
	r.duckMu.Unlock()
}

// closeDB closes a run's database in the background: freeing DuckDB takes
// a few milliseconds that neither the guest's db.close() nor the run's end
// should wait for. Nothing can reach the database any more. Close waits
// for these.
func (r *Runtime) closeDB(db *duckdb.DB) {
	r.duckMu.Lock()
	if r.duckClosed {
		r.duckMu.Unlock()
		_ = db.Close()
		return
	}
	r.closing.Add(1) // Done when the database is closed; Close waits.
	r.duckMu.Unlock()
	go func() {
		defer r.closing.Done()
		_ = db.Close()
	}()
}

// duckPool returns the runtime's pool of DuckDB databases, starting it on
// first use. After Close it returns a closed pool, whose Open fails.
func (r *Runtime) duckPool() *duckdb.Pool {
	r.duckMu.Lock()
	defer r.duckMu.Unlock()
	if r.duck == nil {
		r.duck = duckdb.NewPool(1)
		select {
		case <-r.done:
			_ = r.duck.Close()
		default:
		}
	}
	return r.duck
}

func (r *Runtime) nudge() {
	select {
	case r.refill <- struct{}{}:
	default:
	}
}

// filler keeps the warm pool full and closes used VMs, off the runs' path.
func (r *Runtime) filler() {
	defer r.wg.Done()
	for {
		// A VM with packages first: the next run that imports them waits
		// for nothing else, while a used VM can wait to be closed.
		select {
		case ps := <-r.pkgNeed:
			r.preload(ps)
			continue
		default:
		}
		select {
		case <-r.done:
			r.closePackageSets()
			for {
				select {
				case m := <-r.warm:
					m.close()
				case m := <-r.discard:
					m.close()
				default:
					return
				}
			}
		case m := <-r.discard:
			m.close()
		case ps := <-r.pkgNeed:
			r.preload(ps)
		case <-r.refill:
			for len(r.warm) < cap(r.warm) {
				m, err := newMachine()
				if err != nil {
					break // the next acquire creates its own and reports the error
				}
				select {
				case r.warm <- m:
				default:
					m.close()
				}
				select {
				case <-r.done:
					continue
				default:
				}
			}
		}
	}
}

// acquire returns a fresh, bootstrapped VM.
func (r *Runtime) acquire() (*machine, error) {
	select {
	case m := <-r.warm:
		r.nudge()
		return m, nil
	default:
	}
	r.nudge()
	return newMachine()
}

// release hands a used VM to the filler to close, or closes it here when
// the filler is busy or gone.
func (r *Runtime) release(m *machine) {
	select {
	case <-r.done:
	default:
		select {
		case r.discard <- m:
			return
		default:
		}
	}
	m.close()
}

// firstCollection is what a run may allocate before the engine first
// collects garbage: the engine's own initial threshold.
const firstCollection = 256 << 10

// machine is one QuickJS VM with the bootstrap loaded.
type machine struct {
	vm       *quickjs.VM
	dispatch quickjs.Value
	heap     heapReader
	watch    *allocWatch // nil if the wrapper's layout is unknown
	run      *run        // the run that owns the VM; nil while warm
	// intl is the setup of the VM's Intl, read when a step first uses it:
	// the locales offered, the default locale (intl.DefaultLocale, en-US,
	// if empty) and time zone. The run that takes the VM sets it.
	intl intl.Env
}

func newMachine() (*machine, error) {
	code, err := bootstrapCode()
	if err != nil {
		return nil, err
	}
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("jsrt: new VM: %w", err)
	}
	vm.SetCanBlock(false) // Atomics.wait must never block the worker
	m := &machine{vm: vm, heap: newHeapReader(vm)}
	m.watch = watchAllocator(m.heap)
	if err := vm.RegisterHostFunc("__sbx_host", m.host); err != nil {
		vm.Close()
		return nil, fmt.Errorf("jsrt: register host: %w", err)
	}
	if err := vm.RegisterFunc("__sbx_rows", m.rows, false); err != nil {
		vm.Close()
		return nil, fmt.Errorf("jsrt: register rows: %w", err)
	}
	if err := vm.RegisterFunc("__sbx_part", m.part, false); err != nil {
		vm.Close()
		return nil, fmt.Errorf("jsrt: register part: %w", err)
	}
	// Everything the bootstrap makes stays reachable: a collection while
	// it runs (the engine's first comes at 256 KiB) would free nothing.
	vm.SetGCThreshold(^uintptr(0))
	m.dispatch, err = vm.EvalBytecodeValue(code.boot)
	if err != nil {
		vm.Close()
		return nil, fmt.Errorf("jsrt: bootstrap: %w", err)
	}
	// The engine collects garbage when its heap grows past a threshold:
	// 256 KiB at first, then 1.5 times the heap after each collection. The
	// bootstrap leaves the heap just below the first, so nearly every run
	// would begin with a collection of the bootstrap's objects (and the
	// cleanups of a FinalizationRegistry would run at its first
	// allocations). A run gets what a fresh engine gets: 256 KiB to
	// allocate before the first collection.
	vm.SetGCThreshold(uintptr(m.heap.bytes() + firstCollection))
	return m, nil
}

func (m *machine) host(args []any) (any, error) {
	if m.run == nil {
		return nil, errors.New("no run")
	}
	return m.run.host(args)
}

// rows is the bootstrap's __sbx_rows(array): it reads a db.load array
// for the next duckdb.load call and reports whether it could (rows.go).
func (m *machine) rows(v quickjs.Value) bool {
	if m.run == nil {
		return false
	}
	return m.run.readRows(v)
}

// part is the bootstrap's __sbx_part(name): it evaluates the named part
// of the guest API and returns its function, or undefined if it cannot
// (an unknown name; a failure, which only a limit causes and the run then
// reports).
func (m *machine) part(name string) quickjs.Value {
	code, err := bootstrapCode()
	if err != nil || code.parts[name] == nil {
		return quickjs.UndefinedValue
	}
	if partLoaded != nil {
		partLoaded(name)
	}
	if name == "intl" {
		if err := m.loadIntl(); err != nil {
			return quickjs.UndefinedValue
		}
	}
	v, err := m.vm.EvalBytecodeValue(code.parts[name])
	if err != nil {
		return quickjs.UndefinedValue
	}
	return v
}

// partLoaded, if set, is told the name of each part a VM evaluates: the
// tests' view of which parts a step's first use of a global loads. Set
// it only while no VM runs.
var partLoaded func(name string)

func (m *machine) close() {
	m.dispatch.Free()
	m.vm.Close()
}

// Job is one run's work and its line to the host.
type Job struct {
	// Language is the run's: ipc.LanguageJavaScript (or empty) or
	// ipc.LanguagePython. A Runtime runs JavaScript; the worker gives a
	// Python job to its pyrt.Runner, and the host's pool makes sure the
	// worker has a zygote first.
	Language string
	Code     string
	Input    json.RawMessage // JSON; empty means null
	Limits   ipc.Limits      // effective limits, every field positive
	// Modules are the built-in modules (BuiltinModules) the guest gets as
	// globals; no other module object exists in the run.
	Modules []string
	// Packages are the npm bundles the step imports (see ScanImports); the
	// step's imports of them are rewritten before it compiles.
	Packages []ipc.Package
	// TimeZone is the run's IANA time zone (CheckTimeZone): the local
	// time of the guest's Date and its Intl's default zone, and a Python
	// run's local time. Empty means UTC.
	TimeZone string
	// Locale is the run's default locale (CheckLocale), what Intl uses
	// when a step names none. Empty means en-US.
	Locale string
	Host   Host
	// Replies carries answers to the run's data requests. The sender must
	// not block on it: size its buffer for MaxDataRequests.
	Replies <-chan ipc.Reply
	// Overrun, if set, ends the run for its caller when the VM cannot be
	// stopped: the step is still inside one call into the engine (a long
	// built-in: JSON of a deep value, a big sort, a join of a huge sparse
	// array) when the run's CPU time is past OverrunCPU of its limit,
	// though the run was told to stop at the limit. Overrun is called at
	// most once, on a watchdog's goroutine, with the run's terminal event
	// (TIMEOUT cpuMs, or the limit that stopped the run first), and must
	// not block; Run does not return before Overrun has. Run returns the
	// same event when the call into the engine
	// ends, which may be much later or never: the VM's goroutine keeps
	// its CPU and the run's memory until then. The caller takes the event
	// as the run's end at once, and gives up on whatever Run holds (a
	// worker process exits; in-process, the runtime is abandoned).
	// Without Overrun, Run waits.
	Overrun func(*ipc.Event)
}

// Host receives a run's non-terminal events.
type Host interface {
	// Emit delivers one event. It may block to apply backpressure and must
	// return ctx.Err() promptly once ctx is done.
	Emit(ctx context.Context, ev *ipc.Event) error
}
