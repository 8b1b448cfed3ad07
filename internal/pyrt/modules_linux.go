package pyrt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/stepbox/stepbox/internal/ipc"
	"github.com/stepbox/stepbox/internal/jsrt"
)

// kindModule marks a module call in run.pending; it never leaves pyrt.
const kindModule ipc.Kind = "module"

// kindQuery marks a db.query call: its reply line starts with
// queryReply, for the prelude's decoder of DuckDB results.
const kindQuery ipc.Kind = "module.query"

// queryReply opens the reply line of a db.query: the prelude reads its
// numbers as DuckDB wrote them (an exponent without a fraction is a
// DECIMAL: decimal.Decimal).
const queryReply = `{"rows":1,`

// moduleFrame opens every module call the run's process sends: the host
// finds module calls by it before decoding them.
var moduleFrame = []byte(`{"k":"module",`)

// maxModuleFrameDepth bounds the nesting of a module call line. Python's
// json cannot write deeper under its default recursion limit; arguments
// deeper than ipc.MaxJSONDepth are refused one by one, as in JavaScript.
const maxModuleFrameDepth = 4 * ipc.MaxJSONDepth

// jobModules tells the run's process which module globals to make and
// the bounds of their calls.
type jobModules struct {
	Names []string `json:"names"`
	// MaxCallBytes bounds one module call line: its rows, model or SQL.
	MaxCallBytes int `json:"maxCallBytes"`
	// MaxCalls bounds the calls in flight.
	MaxCalls int `json:"maxCalls"`
}

func (rn *run) jobModules() *jobModules {
	if len(rn.job.Modules) == 0 {
		return nil
	}
	return &jobModules{Names: rn.job.Modules, MaxCallBytes: rn.moduleBytes(), MaxCalls: jsrt.MaxModuleCalls}
}

// moduleBytes is the most a module call of the run may carry: as much as
// one query result may (jsrt.ModuleResultBytes: memoryMb/4, from 1 to
// 16 MiB).
func (rn *run) moduleBytes() int { return jsrt.ModuleResultBytes(rn.job.Limits.MemoryMB) }

// moduleCall checks a module call of the step and passes it to the run's
// module session, opening the session at the first call. Malformed
// arguments are the step's exception, with JavaScript's messages.
func (rn *run) moduleCall(f *frame) {
	if f.ID != rn.nextID+1 {
		rn.stop(rn.protocol("request id out of sequence"))
		return
	}
	if rn.modPending+int(rn.modQueued.Load()) >= jsrt.MaxModuleCalls {
		rn.stop(rn.protocol(fmt.Sprintf("more than %d module calls in flight", jsrt.MaxModuleCalls)))
		return
	}
	rn.nextID++
	rn.pending[f.ID] = kindModule
	if f.Op == ipc.OpDuckDBQuery || f.Op == ipc.OpDuckDBTable {
		rn.pending[f.ID] = kindQuery
	}
	rn.modPending++
	c := ipc.ModuleCall{ID: f.ID, Op: f.Op, Handle: max(f.Handle, 0), Table: f.Table, SQL: f.SQL,
		Rows: f.Rows, Params: f.Params, Model: f.Model, Options: f.Options}
	if msg := rn.checkCall(&c, f.RowsText); msg != "" {
		rn.deliverModule(ipc.ModuleReply{ID: f.ID, Error: msg})
		return
	}
	if rn.mods == nil {
		rn.mods = rn.modHost(rn.stopCtx, rn.job.Limits, rn.job.Modules, rn.wall)
	}
	rn.mods.Call(c)
}

// checkCall checks c as jsrt's moduleCall would, and what the frame adds
// to it; it returns the message the step's call fails with, if any.
func (rn *run) checkCall(c *ipc.ModuleCall, rowsText *string) string {
	if !slices.Contains(ipc.ModuleOps, c.Op) {
		return fmt.Sprintf("unknown module operation %q", cut(c.Op, 40))
	}
	module := ipc.ModuleOf(c.Op)
	if !slices.Contains(rn.job.Modules, module) {
		return fmt.Sprintf("%s: the module %q was not requested for this run", c.Op, module)
	}
	if rowsText != nil {
		// Rows given as JSON text: they travel on as they are, so they
		// must be JSON (the message is DuckDB's).
		if len(c.Rows) > 0 {
			return "db.load: give rows or their JSON text, not both"
		}
		if !json.Valid([]byte(*rowsText)) {
			return "duckdb: load: rows is not valid JSON"
		}
		c.Rows = json.RawMessage(*rowsText)
	}
	if err := c.Check(); err != nil {
		return fmt.Sprintf("%s: malformed call: %v", cut(c.Op, 40), err)
	}
	query := "db.query"
	if c.Op == ipc.OpDuckDBTable {
		query = "c.query"
	}
	for _, a := range []struct {
		v    json.RawMessage
		what string
	}{{c.Rows, "db.load: the rows are "}, {c.Params, query + ": the parameters are "},
		{c.Model, c.Op + ": the model is "}, {c.Options, c.Op + ": the options are "}} {
		if err := ipc.CheckJSONDepth(a.v, ipc.MaxJSONDepth); err != nil {
			return a.what + err.Error()
		}
	}
	return ""
}

// deliverModule passes a module call's outcome to the step, or ends the run
// when the outcome says so.
func (rn *run) deliverModule(rep ipc.ModuleReply) {
	kind, ok := rn.pending[rep.ID]
	if !ok || kind != kindModule && kind != kindQuery {
		return
	}
	delete(rn.pending, rep.ID)
	rn.modPending--
	if rep.Failure != nil {
		f := *rep.Failure
		f.Stats = ipc.Stats{}
		rn.stop(&f)
		return
	}
	var line []byte
	if rep.Error != "" {
		line = replyError(rep.ID, rep.Error)
	} else {
		value := []byte(rep.Value)
		if bytes.IndexByte(value, '\n') >= 0 || bytes.IndexByte(value, '\r') >= 0 {
			var compact bytes.Buffer
			if err := json.Compact(&compact, value); err != nil {
				rn.stop(&ipc.Failure{Code: ipc.CodeCrashed, Message: "pyrt: a module result is not valid JSON"})
				return
			}
			value = compact.Bytes()
		}
		line = make([]byte, 0, len(value)+48)
		if kind == kindQuery {
			line = append(line, queryReply...)
		} else {
			line = append(line, '{')
		}
		line = fmt.Appendf(line, `"id":%d,"ok":true,"value":`, rep.ID)
		line = append(append(line, value...), "}\n"...)
	}
	rn.modQueued.Add(1)
	rn.replies.push(outLine{b: line, module: true})
}
