package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/pyrt"
)

// Defaults for the zero values of Config.
const (
	DefaultGrace        = time.Second
	DefaultStartTimeout = 10 * time.Second
	DefaultStopTimeout  = time.Second
	DefaultPingInterval = 10 * time.Second
)

// Restart backoff of a slot whose workers keep failing to start: the first
// retry waits minRestartDelay, each further one twice as long, up to
// maxRestartDelay.
const (
	minRestartDelay = 50 * time.Millisecond
	maxRestartDelay = 5 * time.Second
	// failingAfter is how many failed starts in a row make a slot count as
	// failing; when every slot is failing, Run refuses at once.
	failingAfter = 3
)

// Config configures a Pool. It is plain data apart from its function
// fields: the zero value of each field means the documented default.
type Config struct {
	// Size is the number of worker processes, each running one run at a
	// time. Zero means runtime.NumCPU().
	Size int

	// Warm is how many pre-bootstrapped VMs each worker keeps ready
	// (jsrt.Config.Warm): zero means jsrt.DefaultWarm, negative none.
	Warm int

	// Locales are the locales beyond English the workers' Intl offers
	// (jsrt.Config.Locales): nil means every one jsrt.IntlLocales lists,
	// empty English alone.
	Locales []string

	// Grace is how long past a run's wall-clock limit (or past an abort)
	// the host waits for the worker's terminal frame before it SIGKILLs
	// the worker. Zero means DefaultGrace (1s).
	Grace time.Duration

	// StartTimeout bounds a worker's start, from exec to its hello. Zero
	// means DefaultStartTimeout (10s).
	StartTimeout time.Duration

	// StopTimeout is how long Close waits for a worker to exit after
	// closing its input before it SIGKILLs it. Zero means
	// DefaultStopTimeout (1s).
	StopTimeout time.Duration

	// PingInterval is how often an idle worker is pinged; one that has
	// not answered within Grace is killed and replaced. Zero means
	// DefaultPingInterval (10s); negative means never.
	PingInterval time.Duration

	// MaxFrameBytes is the largest frame body either side sends, in
	// bytes. A run's code and input, each event, each reply and the
	// result must fit in one frame with a few hundred bytes to spare; keep
	// the limits' byte caps below it. Zero means ipc.DefaultMaxFrameBytes
	// (64 MiB).
	MaxFrameBytes int

	// Command returns the command that starts one worker: a binary that
	// hands control to worker.Main when worker.EnvSwitch is set. Nil means
	// DefaultCommand (re-execute this binary). The pool adds the switch to
	// cmd.Env (a nil Env is empty: workers never inherit the host's
	// environment), its two pipes as ExtraFiles (Command must leave
	// ExtraFiles empty), standard error and SysProcAttr (Pdeathsig
	// SIGKILL and a process group of its own) unless Prepare set one.
	Command func() (*exec.Cmd, error)

	// Prepare, if set, confines a worker before it starts (see
	// internal/jail): it may set cmd.SysProcAttr, add to cmd.Env and append
	// to cmd.ExtraFiles. id is the host identity the worker's processes
	// get (see HostIDs). The pool calls the Handle's Started with the pid
	// after cmd.Start and Cleanup after the worker has been reaped. An
	// error counts as a failed start. On error it must return a nil
	// Handle.
	Prepare func(cmd *exec.Cmd, id HostID) (Handle, error)

	// ForkServer says who forks the jailed workers and zygotes (those in
	// new user and pid namespaces): the host itself, or a fork server (see
	// internal/forkserver). Such a fork copies the forking process's page
	// tables and leaves its memory copy-on-write, a cost that grows with
	// the host's memory; the server costs one process start. The zero
	// value, ForkServerAuto, starts the server at the first jailed start,
	// which the host forks itself while the server comes up, and forks
	// every later one through it.
	ForkServer ForkServerPolicy

	// Standby is how many started workers beyond Size the pool keeps,
	// so that a run whose group has no idle worker rarely waits for a
	// process start: a worker is bound to no group until its first run
	// (RunGroup), and serves that group's runs only until it is retired;
	// when a worker is bound, the pool retires the least recently used
	// idle worker of another group, if that keeps Standby unbound ones.
	// Zero means none; negative is an error.
	Standby int

	// MaxRuns retires a worker after this many runs (1: a fresh process
	// for every run). Zero means never.
	MaxRuns int

	// MaxAge retires a worker once it is this old, when it is idle or
	// at the end of its run. Zero means never.
	MaxAge time.Duration

	// RetireAfterLimit retires a worker after a run that crossed its
	// memory or a time limit, crashed, or was killed, so that whatever
	// such a run did to the process cannot accumulate.
	RetireAfterLimit bool

	// HostIDs, when Count is positive, gives each worker slot (Size +
	// Standby of them) a host uid and gid of its own, First + the slot's
	// index, for the worker and its zygote (used when the host is root;
	// see jail.Config.HostUID): workers cannot signal or trace each other
	// even past a pid-namespace escape. A slot reuses its id only once
	// every process of its previous worker is reaped. Count must cover
	// every slot. Zero means every worker gets the jail's default.
	HostIDs IDRange

	// Logger receives worker starts, deaths, kills and their standard
	// error. Nil means none.
	Logger *slog.Logger

	// Python, if set, returns the launcher of the Python zygotes of the
	// workers that run Python steps: a worker gets its own zygote, in a
	// jail of its own under the worker's host identity, at its first
	// Python run, and keeps it until it is retired. It is called at each such start, so it should cache its
	// answer (sync.OnceValues); an error makes those runs UNAVAILABLE
	// with its text. Nil means the pool runs no Python.
	Python func() (*pyrt.Launcher, error)
}

// IDRange is a range of host uids (and the same gids): First, First+1, ...,
// First+Count-1.
type IDRange struct {
	First int `json:"first,omitempty"`
	Count int `json:"count,omitempty"`
}

// HostID is the host identity of one worker's processes; zero fields mean
// the jail's default.
type HostID struct{ UID, GID int }

// Handle is a prepared worker's confinement; *jail.Handle is one.
type Handle interface {
	// Started is called with the worker's pid after cmd.Start. An error
	// kills the worker.
	Started(pid int) error
	// Cleanup is called once the worker has been reaped.
	Cleanup() error
}

// Log attribute names.
const (
	logSlot   = "slot"
	logPID    = "pid"
	logRun    = "run"
	logErr    = "err"
	logStatus = "status"
	logReason = "reason"
	logStderr = "stderr"
	logDelay  = "delay"
)

func (c Config) withDefaults() (Config, error) {
	var errs []error
	neg := func(name string, v int64) {
		if v < 0 {
			errs = append(errs, fmt.Errorf("pool: %s=%d is negative", name, v))
		}
	}
	neg("Size", int64(c.Size))
	neg("Grace", int64(c.Grace))
	neg("StartTimeout", int64(c.StartTimeout))
	neg("StopTimeout", int64(c.StopTimeout))
	neg("MaxFrameBytes", int64(c.MaxFrameBytes))
	neg("Standby", int64(c.Standby))
	neg("MaxRuns", int64(c.MaxRuns))
	neg("MaxAge", int64(c.MaxAge))
	neg("HostIDs.First", int64(c.HostIDs.First))
	neg("HostIDs.Count", int64(c.HostIDs.Count))
	if c.MaxFrameBytes > math.MaxUint32 {
		errs = append(errs, fmt.Errorf("pool: MaxFrameBytes=%d does not fit the 4-byte length prefix", c.MaxFrameBytes))
	} else if c.MaxFrameBytes > 0 && c.MaxFrameBytes < 64<<10 {
		errs = append(errs, fmt.Errorf("pool: MaxFrameBytes=%d is below the minimum of 64 KiB", c.MaxFrameBytes))
	}
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	if c.Size == 0 {
		c.Size = runtime.NumCPU()
	}
	if n := c.HostIDs.Count; n > 0 && n < c.Size+c.Standby {
		return c, fmt.Errorf("pool: HostIDs.Count=%d does not cover the %d worker slots (Size %d + Standby %d)", n, c.Size+c.Standby, c.Size, c.Standby)
	}
	if c.HostIDs.Count > 0 && c.HostIDs.First+c.HostIDs.Count > 1<<32-2 {
		return c, fmt.Errorf("pool: HostIDs %d+%d goes past the largest uid", c.HostIDs.First, c.HostIDs.Count)
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.StopTimeout == 0 {
		c.StopTimeout = DefaultStopTimeout
	}
	if c.PingInterval == 0 {
		c.PingInterval = DefaultPingInterval
	}
	if c.MaxFrameBytes == 0 {
		c.MaxFrameBytes = ipc.DefaultMaxFrameBytes
	}
	if c.Command == nil {
		c.Command = DefaultCommand
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c, nil
}

// ErrClosed is the cause of runs refused because the pool is closed.
var ErrClosed = errors.New("pool: closed")

// Pool runs steps in worker processes. It is safe for concurrent use.
//
// Run takes a free worker, waiting for one when all are busy: the caller
// (the engine's scheduler) bounds the runs in flight and queues the rest.
// Close stops the workers; it lets runs in flight finish first.
type Pool struct {
	cfg    Config
	log    *slog.Logger
	runSeq atomic.Uint64

	spawnc    chan spawnRequest // to the spawner goroutine
	spawnDone chan struct{}     // closed to stop the spawner
	spawnWG   sync.WaitGroup

	noForkServer bool         // owned by the spawner: the fork server could not start
	forkServers  atomic.Int64 // fork servers started
	serverForks  atomic.Int64 // processes the fork servers started
	serverPID    atomic.Int64 // the current fork server's pid, 0 for none

	abortAll chan struct{}  // closed when Close's ctx ended: abort the runs in flight
	stop     chan struct{}  // closed when the slots must stop their workers
	wg       sync.WaitGroup // slot supervisors
	procs    sync.WaitGroup // per-worker goroutines (reader, waiter)
	runs     sync.WaitGroup // runs in Run; Add only under mu while !closed

	abortOnce, stopOnce sync.Once

	mu          sync.Mutex
	closed      bool          // guarded by mu
	active      int           // guarded by mu: runs in Run, as counted by runs
	slots       []*slot       // guarded by mu
	idle        []*proc       // guarded by mu: started workers waiting for a run
	changed     chan struct{} // guarded by mu: closed and replaced when idle or the slots change
	restarts    int           // guarded by mu
	retired     int           // guarded by mu
	lastRetired string        // guarded by mu
	lastErr     error         // guarded by mu
	lastAt      time.Time     // guarded by mu
}

// slot is one place for a worker; its supervisor goroutine keeps it filled.
type slot struct {
	index    int
	w        *proc     // guarded by Pool.mu: the started worker, nil between workers
	failures int       // guarded by Pool.mu: failed starts in a row
	attempts int       // guarded by Pool.mu
	retryAt  time.Time // guarded by Pool.mu: when the next start is due
}

// New validates cfg and starts the workers in the background. Runs
// submitted before a worker is up wait for one; use Ready to wait for all.
func New(cfg Config) (*Pool, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Pool{
		cfg:       c,
		log:       c.Logger,
		spawnc:    make(chan spawnRequest),
		spawnDone: make(chan struct{}),
		abortAll:  make(chan struct{}),
		stop:      make(chan struct{}),
		changed:   make(chan struct{}),
	}
	p.spawnWG.Add(1) // Done when the spawner returns, at the end of Close.
	go p.spawner()
	for i := range c.Size + c.Standby {
		s := &slot{index: i}
		p.slots = append(p.slots, s)
		p.wg.Add(1) // Done when the supervisor returns, after stop.
		go p.supervise(s)
	}
	return p, nil
}

// notifyLocked wakes everyone waiting for a change.
//
// Preconditions: p.mu is held.
func (p *Pool) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Ready blocks until every worker has started, or ctx ends (returning its
// error), or the pool is closed (ErrClosed).
func (p *Pool) Ready(ctx context.Context) error {
	for {
		p.mu.Lock()
		up := 0
		for _, s := range p.slots {
			if s.w != nil {
				up++
			}
		}
		changed, closed := p.changed, p.closed
		p.mu.Unlock()
		switch {
		case closed:
			return ErrClosed
		case up == len(p.slots):
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops the pool: it refuses new runs, lets the runs in flight finish
// until ctx ends, then aborts them (each still returns its one terminal
// event, ABORTED unless it finished first), and then stops every worker:
// it closes its input, waits StopTimeout for it to exit, SIGKILLs it and
// reaps it. Close returns ctx's error if it had to abort runs. It is
// idempotent; later calls wait like the first.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.notifyLocked()
	p.mu.Unlock()

	done := make(chan struct{})
	go func() { p.runs.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		p.mu.Lock()
		if p.active > 0 {
			err = ctx.Err()
		}
		p.mu.Unlock()
		p.abortOnce.Do(func() { close(p.abortAll) })
		<-done
	}
	p.stopOnce.Do(func() { close(p.stop) })
	p.wg.Wait()
	p.procs.Wait()
	p.closeSpawner()
	return err
}

// ForkServerPolicy is Config.ForkServer.
type ForkServerPolicy int

const (
	ForkServerAuto   ForkServerPolicy = iota // the server from the second jailed start on
	ForkServerAlways                         // the server from the first (when it can start)
	ForkServerNever                          // the host forks
)

// Health is a snapshot of the pool's workers.
type Health struct {
	Size    int // configured workers: runs at once
	Standby int // configured workers beyond Size, bound to no group until used
	Up      int // started and alive
	Busy    int // running a step
	// Unbound counts the started workers bound to no group yet.
	Unbound int
	// Zygotes counts the workers' Python zygotes that are up.
	Zygotes int
	// Restarts counts the starts after each slot's first: replacements of
	// workers that died or were killed, and retries of failed starts.
	Restarts int
	// Failing counts the slots whose last failingAfter (3) or more starts
	// failed; they retry with exponential backoff.
	Failing     int
	LastError   string    // the last failed start, unexpected death or kill for misbehaviour
	LastErrorAt time.Time // when it happened
	// Retired counts the workers replaced because they must serve no
	// other run (MaxRuns, MaxAge, RetireAfterLimit, eviction for another
	// group or the standby, a zygote that could not prove a run's
	// leftovers gone or died), and LastRetired says why the last one was.
	Retired     int
	LastRetired string
	Workers     []WorkerHealth
}

// WorkerHealth describes one worker process.
type WorkerHealth struct {
	PID  int // the host's view of the worker's pid
	Busy bool
	// Bound is set once the worker has served a run; Group is the group
	// it serves from then on.
	Bound   bool
	Group   string
	Runs    int // runs completed with a terminal frame
	Started time.Time
	// Zygote is the worker's Python zygote, nil until its first Python
	// run.
	Zygote *ProcessHealth
}

// ProcessHealth describes a child process of a worker: its Python zygote.
type ProcessHealth struct {
	PID     int // the host's view
	Up      bool
	Started time.Time
}

// Health returns a snapshot of the pool's workers.
func (p *Pool) Health() Health {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := Health{Size: p.cfg.Size, Standby: p.cfg.Standby, Restarts: p.restarts, LastErrorAt: p.lastAt, Retired: p.retired, LastRetired: p.lastRetired}
	if p.lastErr != nil {
		h.LastError = p.lastErr.Error()
	}
	for _, s := range p.slots {
		if s.failures >= failingAfter {
			h.Failing++
		}
		w := s.w
		if w == nil {
			continue
		}
		h.Up++
		busy := w.busy.Load()
		if busy {
			h.Busy++
		}
		if !w.bound {
			h.Unbound++
		}
		wh := WorkerHealth{PID: w.pid, Busy: busy, Runs: int(w.runs.Load()), Started: w.started, Bound: w.bound, Group: w.group}
		if z := w.currentZygote(); z != nil {
			wh.Zygote = &ProcessHealth{PID: z.pid, Up: z.usable(), Started: z.started}
			if wh.Zygote.Up {
				h.Zygotes++
			}
		}
		h.Workers = append(h.Workers, wh)
	}
	return h
}

// supervise keeps slot s filled with a worker until the pool stops.
func (p *Pool) supervise(s *slot) {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		wait := time.Until(s.retryAt)
		p.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-p.stop:
				t.Stop()
				return
			}
		}
		select {
		case <-p.stop:
			return
		default:
		}
		w, err := p.startWorker(s.index)
		if errors.Is(err, ErrClosed) {
			return // Close interrupted the start: not a failure
		}
		p.mu.Lock()
		if s.attempts > 0 {
			p.restarts++
		}
		s.attempts++
		if err != nil {
			p.failedLocked(s, err)
			p.mu.Unlock()
			continue
		}
		s.w = w
		p.idle = append(p.idle, w)
		p.notifyLocked()
		p.mu.Unlock()
		p.log.Debug("worker started", logSlot, s.index, logPID, w.pid)

		stopped := p.watch(w)

		p.mu.Lock()
		s.w = nil
		p.removeIdleLocked(w)
		switch {
		case stopped:
		case w.runs.Load() > 0 || w.diedBusy || w.killedByHost():
			// It served, or its run (the guest) or the host ended it:
			// not a failure to start.
			s.failures = 0
			if r := w.killReason(); r != "" {
				p.lastErr, p.lastAt = fmt.Errorf("pool: worker %d killed: it %s", w.pid, r), time.Now()
			} else if !w.killedByHost() {
				p.lastErr, p.lastAt = fmt.Errorf("pool: worker %d died: %s", w.pid, w.exitStatus()), time.Now()
			}
		default:
			p.failedLocked(s, fmt.Errorf("pool: worker %d exited while idle: %s", w.pid, w.exitStatus()))
		}
		p.notifyLocked()
		p.mu.Unlock()
		if stopped {
			return
		}
	}
}

// failedLocked records a failed start of slot s and schedules the retry.
//
// Preconditions: p.mu is held.
func (p *Pool) failedLocked(s *slot, err error) {
	s.failures++
	delay := min(maxRestartDelay, minRestartDelay<<min(s.failures-1, 16))
	s.retryAt = time.Now().Add(delay)
	p.lastErr, p.lastAt = err, time.Now()
	p.notifyLocked()
	p.log.Warn("worker failed", logSlot, s.index, logErr, err, logDelay, delay)
}

// Preconditions: p.mu is held.
func (p *Pool) removeIdleLocked(w *proc) {
	if i := slices.Index(p.idle, w); i >= 0 {
		p.idle = slices.Delete(p.idle, i, i+1)
	}
}

// watch supervises a started worker until it exits (false) or the pool
// stops (true, after stopping the worker).
//
// Either way it returns only once the worker's zygote, if any, is reaped
// too: the slot's next worker has the same host identity, which no process
// of this one may still hold.
func (p *Pool) watch(w *proc) (stopped bool) {
	defer func() {
		w.zmu.Lock()
		w.zclosed = true // no zygote starts for w from now on
		z := w.zygote
		w.zmu.Unlock()
		if z != nil {
			z.kill("")
			<-z.exited
		}
	}()
	var tick <-chan time.Time
	if every := p.tickEvery(); every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	lastPing := time.Now()
	for {
		select {
		case <-w.exited:
			w.logWorkerExit()
			return false
		case <-p.stop:
			w.shutdown(p.cfg.StopTimeout)
			return true
		case <-tick:
			p.mu.Lock()
			i := slices.Index(p.idle, w)
			old := i >= 0 && p.cfg.MaxAge > 0 && time.Since(w.started) >= p.cfg.MaxAge
			if old {
				p.idle = slices.Delete(p.idle, i, i+1)
				p.retiredLocked(w, fmt.Sprintf("it is older than %v", p.cfg.MaxAge))
			}
			p.mu.Unlock()
			switch {
			case old:
				w.kill("")
			case i >= 0 && p.cfg.PingInterval > 0 && time.Since(lastPing) >= p.cfg.PingInterval-p.cfg.PingInterval/8:
				lastPing = time.Now()
				w.ping(p.cfg.Grace)
			}
		}
	}
}

// tickEvery is how often a worker's supervisor looks at it while it is
// idle: to ping it, and to retire it at MaxAge.
func (p *Pool) tickEvery() time.Duration {
	every := p.cfg.PingInterval
	if a := p.cfg.MaxAge; a > 0 && (every <= 0 || a/4 < every) {
		every = max(a/4, 10*time.Millisecond)
	}
	return every
}

// acquire takes an idle worker for a run of group, waiting for one until
// ctx ends: an idle worker bound to group, else an unbound one, which it
// binds. When there is neither and no worker is starting, it retires the
// least recently used idle worker of another group, whose slot then starts
// an unbound one. It fails at once when every slot is failing to start
// workers.
func (p *Pool) acquire(ctx context.Context, group string) (*proc, *ipc.Failure) {
	for {
		p.mu.Lock()
		if w := p.takeLocked(group); w != nil {
			p.mu.Unlock()
			return w, nil
		}
		changed := p.changed
		failing, starting := true, false
		for _, s := range p.slots {
			if s.w != nil || s.failures < failingAfter {
				failing = false
			}
			if s.w == nil {
				starting = true
			}
		}
		lastErr := p.lastErr
		if !starting {
			p.evictLocked(group, false, "another group needs a worker")
		}
		p.mu.Unlock()
		if failing {
			return nil, &ipc.Failure{Code: ipc.CodeUnavailable, Message: fmt.Sprintf("no worker process could be started: %v", lastErr)}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ipc.Aborted(ctx)
		case <-p.abortAll:
			return nil, ipc.AbortedBecause(errPoolClosing)
		}
	}
}

// takeLocked takes an idle, usable worker for group (bound to it, else
// unbound, binding it), or returns nil. Binding one that leaves fewer than
// Standby unbound retires the least recently used idle worker of another
// group, so that its slot starts an unbound one.
//
// Preconditions: p.mu is held.
func (p *Pool) takeLocked(group string) *proc {
	pick := -1
	for i := len(p.idle) - 1; i >= 0; i-- { // the most recently used first
		if w := p.idle[i]; w.bound && w.group == group && w.usable() {
			pick = i
			break
		}
	}
	if pick < 0 {
		for i, w := range p.idle {
			if !w.bound && w.usable() {
				pick = i
				break
			}
		}
	}
	if pick < 0 {
		return nil
	}
	w := p.idle[pick]
	p.idle = slices.Delete(p.idle, pick, pick+1)
	if !w.bound {
		w.bound, w.group = true, group
		if p.unboundLocked() < p.cfg.Standby {
			p.refillLaterLocked(group)
		}
	}
	return w
}

// refillDelay is how long a run that bound the standby runs before the
// pool makes room for a new standby anyway (see refillLaterLocked).
// Variable for tests.
var refillDelay = 25 * time.Millisecond

// refillLaterLocked restores the standby after binding it left fewer than
// Standby unbound: it retires the least recently used idle worker of a
// group other than group, whose slot starts an unbound worker. Not at
// once: a worker start costs some 100 ms of CPU on the host and in the
// child, and started beside the run that bound the standby it would
// compete with that run (the one the standby was kept for). It happens
// when that run releases its worker (release restores the standby), or
// after refillDelay for a longer run, whichever comes first; a run of
// another group that finds no worker meanwhile makes room itself
// (acquire).
//
// Preconditions: p.mu is held.
func (p *Pool) refillLaterLocked(group string) {
	time.AfterFunc(refillDelay, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if !p.closed && p.unboundLocked() < p.cfg.Standby {
			p.evictLocked(group, false, "the pool keeps a standby worker")
		}
	})
}

// unboundLocked counts the workers that are, or will be, bound to no
// group: the idle unbound ones and the slots starting (or waiting to
// retry) a worker, or whose worker is condemned.
//
// Preconditions: p.mu is held.
func (p *Pool) unboundLocked() int {
	n := 0
	for _, u := range p.idle {
		if !u.bound && u.usable() {
			n++
		}
	}
	for _, s := range p.slots {
		if s.w == nil || !s.w.usable() { // starting, or to be replaced
			n++
		}
	}
	return n
}

// evictLocked retires the least recently used idle bound worker of a group
// other than group (of any group when anyGroup), if there is one: its slot
// starts an unbound worker.
//
// Preconditions: p.mu is held.
func (p *Pool) evictLocked(group string, anyGroup bool, why string) {
	for i, w := range p.idle { // the least recently used first
		if w.bound && (anyGroup || w.group != group) && w.usable() {
			p.idle = slices.Delete(p.idle, i, i+1)
			p.retiredLocked(w, why)
			w.kill("")
			return
		}
	}
}

// retiredLocked counts the retirement of w.
//
// Preconditions: p.mu is held.
func (p *Pool) retiredLocked(w *proc, why string) {
	p.retired++
	p.lastRetired = why
	p.log.Debug("worker retired", logSlot, w.slot, logPID, w.pid, logReason, why)
}

// release returns w to the idle list after a run that ended with its
// terminal frame, unless it is to be retired (its run's outcome, its runs,
// its age, or a reason given during the run); any other worker is killed,
// and its slot replaces it. ev is the run's terminal event, or nil.
func (p *Pool) release(w *proc, ev *ipc.Event) {
	if why := p.retirement(w, ev); why != "" {
		w.retire(why)
	}
	if !w.reusable() {
		if r := w.retiredWhy(); r != "" && w.usable() {
			p.mu.Lock()
			p.retiredLocked(w, r)
			p.mu.Unlock()
		}
		w.kill("")
		return
	}
	p.mu.Lock()
	w.lastUsed = time.Now()
	p.idle = append(p.idle, w)
	if p.unboundLocked() < p.cfg.Standby {
		// The standby was bound, by this run (see refillLaterLocked) or
		// while every other worker was busy: the least recently used idle
		// one now makes room for an unbound worker.
		p.evictLocked("", true, "the pool keeps a standby worker")
	}
	p.notifyLocked()
	p.mu.Unlock()
}

// retirement says why w must serve no other run after the run that ended
// with ev (nil: none did), or "".
func (p *Pool) retirement(w *proc, ev *ipc.Event) string {
	c := p.cfg
	switch {
	case c.MaxRuns > 0 && w.runs.Load() >= int64(c.MaxRuns):
		return fmt.Sprintf("it served its %d runs", c.MaxRuns)
	case c.MaxAge > 0 && time.Since(w.started) >= c.MaxAge:
		return fmt.Sprintf("it is older than %v", c.MaxAge)
	case c.RetireAfterLimit && ev != nil && ev.Error != nil:
		switch f := ev.Error; {
		case f.Code == ipc.CodeOOM, f.Code == ipc.CodeTimeout, f.Code == ipc.CodeCrashed,
			f.Code == ipc.CodeLimitExceeded && f.Limit == ipc.LimitTime:
			return "its run ended " + string(f.Code)
		}
	}
	return ""
}

// enter admits a run unless the pool is closed.
func (p *Pool) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.active++
	p.runs.Add(1) // Done in leave, when Run returns.
	return true
}

// leave ends a run admitted by enter.
func (p *Pool) leave() {
	p.mu.Lock()
	p.active--
	p.mu.Unlock()
	p.runs.Done()
}
