package jsrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"modernc.org/quickjs"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/modules/duckdb"
	"github.com/stepbox/stepbox/internal/modules/glpk"
)

// The built-in modules a Job may ask for (DESIGN decision 7). Each becomes
// a global of that name in the run's guest, and only in runs that ask.
const (
	ModuleDuckDB = "duckdb"
	ModuleGLPK   = "glpk"
)

// BuiltinModules lists the built-in modules.
var BuiltinModules = []string{ModuleDuckDB, ModuleGLPK}

// Memory of the native modules. The QuickJS heap (memoryMb) and the
// modules' memory are separate allocations, so each module gets a share
// of its own, in addition to the heap:
//
//	DuckDB memory_limit   memoryMb / 2, at least 16 MiB (per database; one open at a time)
//	GLPK glp_mem_limit    memoryMb / 2, at least 16 MiB (per solve; one at a time)
//	DuckDB result JSON    memoryMb / 4, at least 1 MiB, at most 16 MiB (it is parsed in the heap)
//
// A run that uses both may thus hold about twice memoryMb, which the
// worker's ceiling (twice the largest plan's memoryMb plus 1 GiB) allows
// for. Crossing a module's share ends the run with OOM, limit memoryMb.
const minModuleMemory = 16 << 20

// ModuleMemoryBytes is the memory share of DuckDB and of GLPK in a run
// whose memory limit is memoryMB.
func ModuleMemoryBytes(memoryMB int) int64 {
	return max(int64(memoryMB)<<20/2, minModuleMemory)
}

func duckResultBytes(memoryMB int) int {
	return min(duckdb.DefaultMaxResultBytes, max(1<<20, memoryMB<<20/4))
}

// maxModuleCalls bounds the module calls a run may have in flight; the
// calls of a run execute one at a time, in call order.
const maxModuleCalls = 64

// maxDatabases is how many DuckDB databases a run may have open at once:
// each has its own memory share.
const maxDatabases = 1

// kindModule marks a pending module call in run.pending. It never crosses
// the process boundary.
const kindModule ipc.Kind = "module"

// modReply is a module call's outcome, for the VM goroutine.
type modReply struct {
	id    int64
	value string       // JSON, on success
	rows  bool         // value is a DuckDB result: its big integers are BigInts
	err   string       // rejects the guest's promise with an Error
	fail  *ipc.Failure // ends the run
}

// modules is the module side of one run: a goroutine, started by the first
// module call, that executes the run's calls one at a time, off the VM's
// goroutine, so that timers and limits keep working while DuckDB or GLPK
// computes. Calls get the run's context, with the wall deadline: the end
// of the run interrupts DuckDB and stops GLPK.
type modules struct {
	ctx     context.Context      // the run's, with its wall deadline
	calls   chan func() modReply // to the goroutine; closed when the run ends
	replies chan modReply        // from the goroutine; room for every call in flight
	cancel  context.CancelFunc
	done    chan struct{} // closed when the goroutine has returned

	inflight int   // VM goroutine: calls not yet delivered
	nextID   int64 // VM goroutine: module calls have negative ids

	// dbs are the run's open databases by handle. Module goroutine only.
	dbs    map[int64]*duckdb.DB
	nextDB int64
	// pre is the database opened ahead of the step's first duckdb.open
	// (preopenDuckDB), until that call takes it. Module goroutine only.
	pre *preopened
}

// preopened is the outcome of opening a database ahead of time.
type preopened struct {
	db  *duckdb.DB
	err error
}

func (rn *run) startModules() *modules {
	if rn.mods != nil {
		return rn.mods
	}
	ctx, cancel := context.WithDeadline(rn.ctx, rn.wall)
	md := &modules{
		ctx:     ctx,
		calls:   make(chan func() modReply, maxModuleCalls+1), // and preopenDuckDB's
		replies: make(chan modReply, maxModuleCalls),
		cancel:  cancel,
		done:    make(chan struct{}),
		dbs:     map[int64]*duckdb.DB{},
	}
	rn.mods = md
	go func() { // stopModules, at the end of the run, waits for it
		defer close(md.done)
		for call := range md.calls {
			if r := call(); r.id != 0 { // 0: a call of the runtime's own, without reply
				md.replies <- r
			}
		}
		for h, db := range md.dbs {
			rn.rt.closeDB(db)
			delete(md.dbs, h)
		}
		if md.pre != nil && md.pre.db != nil {
			rn.rt.closeDB(md.pre.db)
		}
	}()
	return md
}

// stopModules ends the run's module calls: it cancels the one in progress,
// fails those queued and waits for that: DuckDB stops within milliseconds
// of the cancellation, a MIP search too; a simplex run stops at the latest
// at the run's wall deadline. The run's databases are then closed in the
// background (Runtime.closeDB).
func (rn *run) stopModules() {
	md := rn.mods
	if md == nil {
		return
	}
	md.cancel()
	close(md.calls)
	<-md.done
}

// granted reports whether the job asked for module name.
func (rn *run) granted(name string) bool {
	for _, m := range rn.job.Modules {
		if m == name {
			return true
		}
	}
	return false
}

// moduleCall starts a module operation for the guest and returns the id
// its reply will carry. Arguments are checked here, on the VM goroutine;
// the work happens on the run's module goroutine.
func (rn *run) moduleCall(op string, args []any) (any, error) {
	module, _, _ := strings.Cut(op, ".")
	if !rn.granted(module) {
		return nil, fmt.Errorf("%s: the module %q was not requested for this run", op, module)
	}
	md := rn.startModules()
	if md.inflight >= maxModuleCalls {
		return nil, fmt.Errorf("%s: too many module calls in flight (the limit is %d); await them", op, maxModuleCalls)
	}
	lim := rn.job.Limits
	ctx := md.ctx
	var call func() modReply
	handle, _ := argInt(args, 1)
	switch op {
	case "duckdb.open":
		call = func() modReply {
			if len(md.dbs) >= maxDatabases {
				return modReply{err: fmt.Sprintf("duckdb.open: a run may have %d database open at a time; close it first", maxDatabases)}
			}
			var db *duckdb.DB
			var err error
			if p := md.pre; p != nil {
				md.pre = nil
				db, err = p.db, p.err
			} else {
				db, err = rn.openDuckDB(ctx)
			}
			if err != nil {
				return rn.duckFailure(ctx, err)
			}
			md.nextDB++
			md.dbs[md.nextDB] = db
			return modReply{value: strconv.FormatInt(md.nextDB, 10)}
		}
	case "duckdb.load":
		table, _ := arg[string](args, 2)
		if read, _ := arg[bool](args, 3); read {
			// The rows __sbx_rows read (rows.go) just before.
			rows := rn.staged
			rn.staged = nil
			if rows == nil {
				return nil, errors.New("db.load: the rows were not read")
			}
			call = md.withDB(handle, "load", func(db *duckdb.DB) modReply {
				if err := db.LoadRows(ctx, table, rows); err != nil {
					return rn.duckFailure(ctx, err)
				}
				return modReply{value: "null"}
			})
			break
		}
		rows, _ := arg[string](args, 3)
		if err := ipc.CheckJSONDepth([]byte(rows), ipc.MaxJSONDepth); err != nil {
			return nil, fmt.Errorf("db.load: the rows are %w", err)
		}
		call = md.withDB(handle, "load", func(db *duckdb.DB) modReply {
			if err := db.Load(ctx, table, json.RawMessage(rows)); err != nil {
				return rn.duckFailure(ctx, err)
			}
			return modReply{value: "null"}
		})
	case "duckdb.query", "duckdb.table":
		sql, _ := arg[string](args, 2)
		text, _ := arg[string](args, 3)
		params, err := decodeParams(text)
		if err != nil {
			if op == "duckdb.table" {
				return nil, fmt.Errorf("c.query: %w", err)
			}
			return nil, fmt.Errorf("db.query: %w", err)
		}
		call = md.withDB(handle, "query", func(db *duckdb.DB) modReply {
			query := db.Query
			if op == "duckdb.table" {
				query = db.QueryTable
			}
			out, err := query(ctx, sql, params)
			if err != nil {
				return rn.duckFailure(ctx, err)
			}
			return modReply{value: string(out), rows: true}
		})
	case "duckdb.exec":
		sql, _ := arg[string](args, 2)
		call = md.withDB(handle, "exec", func(db *duckdb.DB) modReply {
			if err := db.Exec(ctx, sql); err != nil {
				return rn.duckFailure(ctx, err)
			}
			return modReply{value: "null"}
		})
	case "duckdb.close":
		call = func() modReply {
			if db := md.dbs[handle]; db != nil {
				delete(md.dbs, handle)
				rn.rt.closeDB(db)
			}
			return modReply{value: "null"}
		}
	case "glpk.solve", "glpk.write":
		model, _ := arg[string](args, 1)
		options, _ := arg[string](args, 2)
		for what, v := range map[string]string{"the model is": model, "the options are": options} {
			if err := ipc.CheckJSONDepth([]byte(v), ipc.MaxJSONDepth); err != nil {
				return nil, fmt.Errorf("%s: %s %w", op, what, err)
			}
		}
		if op == "glpk.write" {
			call = func() modReply {
				var o struct {
					Format string `json:"format"`
				}
				if options != "" {
					dec := json.NewDecoder(strings.NewReader(options))
					dec.DisallowUnknownFields()
					if err := dec.Decode(&o); err != nil {
						return rn.glpkFailure(ctx, &glpk.Error{Kind: glpk.KindInvalid, Message: "write: options: expected {format: \"lp\" or \"mps\"}, got " + options})
					}
				}
				text, err := glpk.Write(json.RawMessage(model), o.Format, glpk.Limits{MemoryLimitBytes: ModuleMemoryBytes(lim.MemoryMB)})
				if err != nil {
					return rn.glpkFailure(ctx, err)
				}
				b, _ := json.Marshal(text)
				return modReply{value: string(b)}
			}
			break
		}
		call = func() modReply {
			opts, err := glpk.ParseOptions(json.RawMessage(options))
			if err != nil {
				return rn.glpkFailure(ctx, err)
			}
			opts.Limits.MemoryLimitBytes = ModuleMemoryBytes(lim.MemoryMB)
			out, err := glpk.Solve(ctx, json.RawMessage(model), opts)
			if err != nil {
				return rn.glpkFailure(ctx, err)
			}
			return modReply{value: string(out)}
		}
	default:
		return nil, fmt.Errorf("unknown module operation %q", op)
	}
	md.nextID--
	id := md.nextID
	md.inflight++
	rn.pending[id] = kindModule
	md.calls <- func() modReply {
		r := call()
		r.id = id
		return r
	}
	return id, nil
}

// openDuckDB opens a database with the run's memory share and result cap,
// from the runtime's pool.
func (rn *run) openDuckDB(ctx context.Context) (*duckdb.DB, error) {
	lim := rn.job.Limits
	return rn.rt.duckPool().Open(ctx, duckdb.Config{
		MemoryLimitBytes: ModuleMemoryBytes(lim.MemoryMB),
		Threads:          1,
		MaxResultBytes:   duckResultBytes(lim.MemoryMB),
		ExactDecimals:    rn.exactDecimals,
	})
}

// preopenDuckDB opens the database of a run granted duckdb before the
// step asks for it, on the module goroutine, while the VM builds the
// input and starts the step: the open (1-2 ms of settings, and any wait
// for the pool's next database) is then off the step's path, and its
// first duckdb.open() takes this database. A step that never opens one
// leaves it unused; it is closed with the run, like any other.
func (rn *run) preopenDuckDB() {
	md := rn.startModules()
	md.calls <- func() modReply {
		db, err := rn.openDuckDB(md.ctx)
		md.pre = &preopened{db: db, err: err}
		return modReply{}
	}
}

// withDB runs f with the open database handle, or rejects the call.
func (md *modules) withDB(handle int64, op string, f func(*duckdb.DB) modReply) func() modReply {
	return func() modReply {
		db := md.dbs[handle]
		if db == nil {
			return modReply{err: "duckdb: " + op + ": the database is closed"}
		}
		return f(db)
	}
}

// decodeParams reads the guest's query parameters, a JSON array, keeping
// numbers exact (duckdb binds integers within ±(2^53-1) as BIGINT).
func decodeParams(text string) ([]any, error) {
	if text == "" {
		return nil, nil
	}
	if err := ipc.CheckJSONDepth([]byte(text), ipc.MaxJSONDepth); err != nil {
		return nil, fmt.Errorf("the parameters are %w", err)
	}
	d := json.NewDecoder(bytes.NewReader([]byte(text)))
	d.UseNumber()
	var params []any
	if err := d.Decode(&params); err != nil {
		return nil, fmt.Errorf("the parameters are not a JSON array: %w", err)
	}
	return params, nil
}

// deliverModule hands a module call's outcome to the guest, or ends the
// run when the outcome says so.
func (rn *run) deliverModule(rep modReply) {
	if _, ok := rn.pending[rep.id]; !ok {
		return
	}
	delete(rn.pending, rep.id)
	rn.mods.inflight--
	if rep.fail != nil {
		rn.stop(rep.fail)
		return
	}
	rn.js(func() error {
		if rep.err == "" {
			return rn.callJSONAs("reply", rep.value, rep.rows, rep.id, true)
		}
		_, err := rn.m.dispatch.Call(quickjs.UndefinedValue, "reply", rep.id, false, rep.err)
		return err
	})
}

// canceled is the failure of a module call that ctx ended: the deadline, or
// whatever stopped the run (which, having stopped first, is what the run
// reports).
func (rn *run) canceled(ctx context.Context) *ipc.Failure {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return rn.timeout(ipc.LimitWall)
	}
	return ipc.Aborted(context.Background())
}

// duckFailure maps a duckdb error to its outcome (see duckdb's errors.go):
// the guest's promise rejects for bad arguments and SQL errors; memory,
// result caps and a missing DuckDB end the run.
func (rn *run) duckFailure(ctx context.Context, err error) modReply {
	var de *duckdb.Error
	if !errors.As(err, &de) {
		return modReply{fail: &ipc.Failure{Code: ipc.CodeUnavailable, Message: "duckdb: " + err.Error()}}
	}
	switch de.Kind {
	case duckdb.KindMemory:
		return modReply{fail: &ipc.Failure{Code: ipc.CodeOOM, Limit: ipc.LimitMemory,
			Message: fmt.Sprintf("%s (DuckDB's memory limit is %d MiB, from memoryMb=%d)",
				de.Error(), ModuleMemoryBytes(rn.job.Limits.MemoryMB)>>20, rn.job.Limits.MemoryMB)}}
	case duckdb.KindLimit:
		return modReply{fail: &ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: de.Limit, Message: de.Error()}}
	case duckdb.KindCanceled:
		if ctx.Err() != nil {
			return modReply{fail: rn.canceled(ctx)}
		}
		return modReply{err: de.Error()}
	case duckdb.KindUnavailable:
		return modReply{fail: &ipc.Failure{Code: ipc.CodeUnavailable, Message: de.Error()}}
	}
	return modReply{err: de.Error()}
}

// glpkFailure maps a glpk error to its outcome (see glpk's errors.go).
func (rn *run) glpkFailure(ctx context.Context, err error) modReply {
	var ge *glpk.Error
	if !errors.As(err, &ge) {
		return modReply{err: "glpk: " + err.Error()}
	}
	switch ge.Kind {
	case glpk.KindMemory:
		return modReply{fail: &ipc.Failure{Code: ipc.CodeOOM, Limit: ipc.LimitMemory,
			Message: fmt.Sprintf("%s (from memoryMb=%d)", ge.Error(), rn.job.Limits.MemoryMB)}}
	case glpk.KindLimit:
		return modReply{fail: &ipc.Failure{Code: ipc.CodeLimitExceeded, Limit: ge.Limit, Message: ge.Error()}}
	case glpk.KindCanceled:
		if ctx.Err() == nil {
			// The solve stopped at the deadline just before ctx's own
			// timer fired.
			return modReply{fail: rn.timeout(ipc.LimitWall)}
		}
		return modReply{fail: rn.canceled(ctx)}
	case glpk.KindUnavailable:
		return modReply{fail: &ipc.Failure{Code: ipc.CodeUnavailable, Message: ge.Error()}}
	}
	return modReply{err: ge.Error()}
}

// modReplies is the channel of module replies, nil (never ready) before
// the first module call.
func (rn *run) modReplies() <-chan modReply {
	if rn.mods == nil {
		return nil
	}
	return rn.mods.replies
}

// prepareJob checks a job's modules and packages before a VM runs
// anything: it returns the step's code with its package imports rewritten
// and the packages' bytecode, or the failure that ends the run.
func prepareJob(job Job) (string, []*compiledPackage, *ipc.Failure) {
	for _, m := range job.Modules {
		if m != ModuleDuckDB && m != ModuleGLPK {
			return "", nil, &ipc.Failure{Code: ipc.CodeValidation, Message: fmt.Sprintf("unknown module %q", m)}
		}
	}
	if len(job.Packages) == 0 {
		return job.Code, nil, nil
	}
	codes := make([]*compiledPackage, len(job.Packages))
	have := make(map[string]bool, len(job.Packages))
	for i, p := range job.Packages {
		c, err := packageCode(p)
		if err != nil {
			return "", nil, &ipc.Failure{Code: ipc.CodeUnavailable, Message: err.Error()}
		}
		codes[i] = c
		have[p.Name] = true
	}
	return rewriteImports(job.Code, have), codes, nil
}
