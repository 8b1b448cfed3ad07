package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stepbox/stepbox/contract"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server/client"
)

const module = "github.com/stepbox/stepbox/"

// The stepbox packages the client may link: the contract, the egress rules
// that contract.Secret validates with (internal/egress/rule, standard
// library only; not the FetchProxy in internal/egress), the wire schema and
// its conversions. Everything else of the module is the engine (sandbox,
// internal/jsrt, pool, worker, jail, modules, pyrt, typescript, ipc,
// egress, ...), and internal/worker's takeover of child processes at init
// comes with sandbox.
var clientMayLink = map[string]bool{
	module + "contract":                          true,
	module + "internal/egress/rule":              true,
	module + "proto/stepbox/v1":                  true,
	module + "proto/stepbox/v1/stepboxv1connect": true,
	module + "server/internal/wire":              true,
	module + "server/client":                     true,
}

// TestClientLinksNoEngine is the light client's promise: a program that
// only calls a server links none of the engine and needs no C toolchain.
func TestClientLinksNoEngine(t *testing.T) {
	list := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}} {{len .CgoFiles}}", ".")
	list.Env = append(os.Environ(), "CGO_ENABLED=1") // so that cgo files are listed, compiler or not
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	n := 0
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		var path, std string
		var cgo int
		if _, err := fmt.Sscan(line, &path, &std, &cgo); err != nil {
			t.Fatalf("go list line %q: %v", line, err)
		}
		n++
		if strings.HasPrefix(path, module) && !clientMayLink[path] {
			t.Errorf("server/client links %s, a package of the engine", path)
		}
		// The standard library's net and runtime/cgo have optional cgo
		// parts; the build with CGO_ENABLED=0 below shows they stay so.
		if std == "false" && cgo > 0 {
			t.Errorf("server/client links %s, which uses cgo", path)
		}
	}
	if n < len(clientMayLink) {
		t.Fatalf("go list listed %d packages:\n%s", n, out)
	}
	t.Logf("server/client links %d packages", n)

	build := exec.Command("go", "build", ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build ./server/client: %v\n%s", err, out)
	}
}

// TestRunWithHandler runs over the Execute stream and answers each data
// request by calling the handler on its own goroutine: three requests in
// flight at once are all answered only once all three have arrived, which
// a handler called one request at a time could not do.
func TestRunWithHandler(t *testing.T) {
	c := client.New(serverURL(), client.Options{})
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	res, err := c.Run(context.Background(), contract.Request{Code: `
const got = await Promise.all([1, 2, 3].map(n => dataProxy.request("square", n)));
let failed, notJSON;
try { await dataProxy.request("fail") } catch (e) { failed = e.message }
try { await dataProxy.request("func") } catch (e) { notJSON = e.message }
return { got, failed, notJSON };`}, func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "square":
			mu.Lock()
			if arrived++; arrived == 3 {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			var n int
			if err := json.Unmarshal(params, &n); err != nil {
				return nil, err
			}
			return n * n, nil
		case "func":
			return func() {}, nil
		}
		return nil, errors.New("no such order")
	})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Got             []int
		Failed, NotJSON string
	}
	if err := json.Unmarshal(res.Value, &v); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(v.Got) != "[1 4 9]" || v.Failed != "no such order" || !strings.Contains(v.NotJSON, "unsupported type: func()") {
		t.Fatalf("%s", res.Value)
	}
	if res.RunID == "" || len(res.Events) != 5 || res.Stats.DataRequests != 5 {
		t.Fatalf("run %q, %d events, stats %+v", res.RunID, len(res.Events), res.Stats)
	}
	for _, ev := range res.Events {
		if ev.Kind != contract.EventDataRequest {
			t.Fatalf("event %+v", ev)
		}
	}
}

// TestRunContextEnds: a caller's context that ends while a handler works
// ends the handler's context and the run, with the same error locally and
// remotely: ABORTED, and errors.Is(err, context.Canceled).
func TestRunContextEnds(t *testing.T) {
	c := client.New(serverURL(), client.Options{})
	for name, run := range map[string]func(context.Context, contract.Request, contract.DataHandler) error{
		"local": func(ctx context.Context, req contract.Request, h contract.DataHandler) error {
			_, err := localEngine().Run(ctx, req, h)
			return err
		},
		"remote": func(ctx context.Context, req contract.Request, h contract.DataHandler) error {
			_, err := c.Run(ctx, req, h)
			return err
		},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		handlerDone := make(chan error, 1)
		err := run(ctx, contract.Request{Code: `return await dataProxy.request("wait")`},
			func(hctx context.Context, _ string, _ json.RawMessage) (any, error) {
				cancel()
				<-hctx.Done()
				handlerDone <- hctx.Err()
				return nil, hctx.Err()
			})
		var se *contract.Error
		if !errors.As(err, &se) || se.Code != contract.CodeAborted || se.Message != "the run was aborted" || !errors.Is(err, context.Canceled) {
			t.Errorf("%s: a cancelled run: %v", name, err)
		}
		if err := <-handlerDone; !errors.Is(err, context.Canceled) {
			t.Errorf("%s: the handler's context: %v", name, err)
		}
	}
}

// TestRunWithData sends the answers with the request, by method.
func TestRunWithData(t *testing.T) {
	c := client.New(serverURL(), client.Options{})
	res, err := c.RunWithData(context.Background(), contract.Request{Code: `
const a = await dataProxy.request("a"), raw = await dataProxy.request("raw");
let missing;
try { await dataProxy.request("b") } catch (e) { missing = e.message }
return { a, raw, missing };`}, map[string]any{"a": []int{1, 2}, "raw": json.RawMessage(`{"x":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	// A Value's object comes with its keys sorted (see "Precision" in the .proto).
	const want = `{"a":[1,2],"missing":"no answer for data request \"b\": the request's data has none for this method","raw":{"x":true}}`
	if string(res.Value) != want {
		t.Fatalf("got  %s\nwant %s", res.Value, want)
	}
	if len(res.Events) != 3 || res.RunID == "" {
		t.Fatalf("run %q, events %+v", res.RunID, res.Events)
	}

	// An answer that is not JSON is the caller's error, before any call.
	_, err = c.RunWithData(context.Background(), contract.Request{Code: "return 1"}, map[string]any{"bad": json.RawMessage(`{`)})
	if err == nil || !strings.Contains(err.Error(), `data["bad"]: not valid JSON`) {
		t.Fatalf("bad answer: %v", err)
	}
}

// TestRunNilHandler is one unary call in which data requests reject.
func TestRunNilHandler(t *testing.T) {
	c := client.New(serverURL(), client.Options{})
	res, err := c.Run(context.Background(), contract.Request{Code: `
try { await dataProxy.request("x") } catch (e) { return e.message }`}, nil)
	if err != nil || !strings.Contains(string(res.Value), `no answer for data request \"x\": this Run request has no data`) {
		t.Fatalf("%s %v", res.Value, err)
	}
}

// TestErrorsReadAlike: the same failures, run on a local engine and
// through the client, give errors that errors.As reads as *sandbox.Error
// and as *contract.Error (one type), with the same code, limit, message
// and position, and that errors.Is matches with either package's sentinel.
func TestErrorsReadAlike(t *testing.T) {
	c := client.New(serverURL(), client.Options{})
	handler := func(context.Context, string, json.RawMessage) (any, error) { return nil, errors.New("refused") }
	for _, tc := range []struct {
		name     string
		req      contract.Request
		sentinel error
	}{
		{"throw", contract.Request{Code: "const x = 1;\nthrow new TypeError('boom')"}, sandbox.ErrRuntime},
		{"handler error uncaught", contract.Request{Code: "await dataProxy.request('x')"}, contract.ErrRuntime},
		{"syntax", contract.Request{Code: "return (1"}, contract.ErrValidation},
		{"typescript", contract.Request{Language: contract.TypeScript, Code: "const x: number = ;"}, sandbox.ErrValidation},
		{"limit", contract.Request{Code: "for (;;) reportStatus(1)", Limits: contract.Limits{MaxStatusEvents: 2}}, contract.ErrLimitExceeded},
		{"unknown plan", contract.Request{Code: "return 1", Plan: "nope"}, sandbox.ErrValidation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, lerr := localEngine().Run(context.Background(), tc.req, handler)
			_, rerr := c.Run(context.Background(), tc.req, handler)
			var local *sandbox.Error
			var remote *contract.Error
			if !errors.As(lerr, &local) || !errors.As(rerr, &remote) {
				t.Fatalf("local %v, remote %v", lerr, rerr)
			}
			for _, err := range []error{lerr, rerr} {
				if !errors.Is(err, tc.sentinel) {
					t.Errorf("%v is not %v", err, tc.sentinel)
				}
			}
			if local.Code != remote.Code || local.Limit != remote.Limit || local.Message != remote.Message ||
				fmt.Sprint(local.Position) != fmt.Sprint(remote.Position) || len(local.Diagnostics) != len(remote.Diagnostics) {
				t.Errorf("local  %s %q %q at %v %v\nremote %s %q %q at %v %v",
					local.Code, local.Limit, local.Message, local.Position, local.Diagnostics,
					remote.Code, remote.Limit, remote.Message, remote.Position, remote.Diagnostics)
			}
		})
	}
}
