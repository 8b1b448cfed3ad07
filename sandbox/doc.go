// Package sandbox runs untrusted code steps: short JavaScript (or
// TypeScript) programs that the users of a product write, executed with
// limits, talking to the host only through a bridge of JSON values.
//
// # A tour
//
// Create one Engine per process and share it:
//
//	eng, err := sandbox.New(sandbox.Config{})
//	if err != nil { ... }
//	defer eng.Close(context.Background())
//
// A step is the body of an async function: it may await at top level and
// return a value, which becomes the result as JSON. The host's data reaches
// it as `input` and through `await dataProxy.request(method, params)`:
//
//	sess, err := eng.Submit(ctx, sandbox.Request{
//		Code:  `const u = await dataProxy.request("user", {id: input.id}); return u.name`,
//		Input: json.RawMessage(`{"id": 7}`),
//	})
//
// Read the session's events in order until the channel closes (a run
// whose events wait unread for Config.StallTimeout ends ABORTED); answer
// data requests with Respond or RespondError:
//
//	for ev := range sess.Events() {
//		switch ev.Kind {
//		case sandbox.EventConsole:     log.Print(ev.Console.Text)
//		case sandbox.EventStatus:      progress(ev.Status)
//		case sandbox.EventDataRequest: sess.Respond(ev.DataRequest.ID, lookup(ev.DataRequest))
//		}
//	}
//	res, err := sess.Wait()
//
// Exactly one terminal event (EventResult or EventError) ends every accepted
// run, whatever happens: the step returns or throws, crosses a limit, the
// caller aborts (Session.Abort, or ctx ends), or the engine closes. Callers
// who need no events use Engine.Run with a DataHandler.
//
// # Limits and plans
//
// Every run has the limits of the run contract (Limits): memory, CPU and
// wall-clock time, code and result size, data requests and bytes, status and
// console events, fetches. Config.Plans is a catalogue of named limit sets;
// a Request names a plan and may lower its limits, never raise them.
// Config.Caps clamp every plan. See Limits for what crossing each one does.
//
// # Errors
//
// Every failure is an *Error with a Code. Test codes with errors.Is against
// the sentinels (ErrTimeout, ErrOOM, ...) and read details with errors.As:
// Limit names the limit crossed, Position the user's line and column, Stack
// the guest stack trace with the user's line numbers.
//
// # Isolation
//
// By default (IsolationProcess) JavaScript and TypeScript steps run in a
// pool of jailed worker processes that re-execute the host's own binary;
// the package takes such a process over in its init, so a host program
// needs no line of its own. Each worker keeps fresh QuickJS runtimes
// (modernc.org/quickjs, pure Go) pre-bootstrapped and closes each after its
// run: nothing of one run is visible to the next. IsolationInProcess runs
// the same runtime on goroutines of the host, for tests and trusted
// embeddings. Python steps run in jailed CPython processes forked from a
// warm zygote that belongs to a worker. The guest sees the language's
// built-ins and the bridge API (input, dataProxy, reportStatus, console,
// timers, fetch) and nothing of the host: no require, no process, no file
// system, no sockets.
//
// A worker, with its zygote, serves the runs of one tenant (Request.Tenant)
// until it is retired, so no process serves two tenants. Config.Workers
// lets tenants of equal trust share workers, starts a process per run, or
// shares every worker, and says how many unbound workers are kept started,
// when a worker is retired and which host uids the workers run as.
package sandbox
