package sandbox_test

// The Go blocks of the top-level README are the bodies of these examples,
// byte for byte (internal/docs checks it): change both together.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/stepbox/stepbox/sandbox"
)

// An engine with two plans runs a step for a tenant, reads its events and
// answers its data request.
func ExampleEngine() {
	ctx := context.Background()
	eng, err := sandbox.New(sandbox.Config{
		Plans: map[string]sandbox.Limits{
			"free": {MemoryMB: 32, WallMs: 2_000},
			"pro":  {MemoryMB: 256, WallMs: 30_000},
		},
		DefaultPlan: "free",
	})
	if err != nil {
		log.Fatal(err) // every problem of the Config at once
	}
	defer eng.Close(context.Background())

	sess, err := eng.Submit(ctx, sandbox.Request{
		Code: `reportStatus({stage: "lookup"});
const user = await dataProxy.request("user", {id: input.id});
console.log("found", user.name);
return user.name;`,
		Input:  json.RawMessage(`{"id": 7}`),
		Plan:   "pro",
		Tenant: "acme",
	})
	if err != nil {
		log.Fatal(err) // VALIDATION or UNAVAILABLE: not accepted, no events
	}
	for ev := range sess.Events() { // closed after the one terminal event
		switch ev.Kind {
		case sandbox.EventConsole:
			fmt.Println("console:", ev.Console.Text)
		case sandbox.EventStatus:
			fmt.Println("status:", string(ev.Status))
		case sandbox.EventDataRequest:
			if err := sess.Respond(ev.DataRequest.ID, map[string]string{"name": "Ada"}); err != nil {
				log.Print(err) // not a pending request, or the run is over
			}
		}
	}
	res, err := sess.Wait() // res.Value is JSON; err is a *sandbox.Error
	fmt.Println(string(res.Value), err)
	// Output:
	// status: {"stage":"lookup"}
	// console: found Ada
	// "Ada" <nil>
}

// Every failure is a *sandbox.Error; errors.Is compares codes, and the
// causes of an abort.
func ExampleError_is() {
	eng, err := sandbox.New(sandbox.Config{})
	if err != nil {
		log.Fatal(err)
	}
	_, err = eng.Run(context.Background(), sandbox.Request{Code: "const x = 1;\nnull.boom"}, nil)
	var se *sandbox.Error
	if errors.As(err, &se) {
		fmt.Println(se.Code, se.Message, "at line", se.Position.Line)
		// also se.Limit (the limit crossed), se.Stack, se.Stats
	}
	fmt.Println(errors.Is(err, sandbox.ErrRuntime)) // compares codes only

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = eng.Run(ctx, sandbox.Request{Code: "return 1"}, nil)
	fmt.Println(errors.Is(err, context.Canceled)) // the caller's ctx ended the run

	eng.Close(context.Background())
	_, err = eng.Run(context.Background(), sandbox.Request{Code: "return 1"}, nil)
	fmt.Println(errors.Is(err, sandbox.ErrClosed)) // Submit after Close, or a run Close aborted
	// errors.Is(err, sandbox.ErrStalled): a run whose caller stopped reading its events

	// Output:
	// RUNTIME TypeError: cannot read property 'boom' of null at line 2
	// true
	// true
	// true
}

// Fetch is off unless Config.Egress is set; its policy decides every
// request, and secrets are added to the requests of their origin only.
func ExampleEgress() {
	token := "s3cr3t-example-token" // a credential the step never sees (from the environment, a vault, ...)
	eng, err := sandbox.New(sandbox.Config{Egress: &sandbox.Egress{
		Policy:   sandbox.EgressPolicy{Hosts: []string{"api.example.com", "*.githubusercontent.com"}},
		Secrets:  []sandbox.Secret{{Origin: "https://api.example.com", Header: "Authorization", Value: "Bearer " + token}},
		AuditLog: os.Stderr, // one JSON line per attempt, allowed or denied
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close(context.Background())

	res, err := eng.Run(context.Background(), sandbox.Request{
		Code: `try { await fetch("http://169.254.169.254/latest/meta-data/") } catch (e) { return e.message }`,
	}, nil)
	fmt.Println(string(res.Value), err)
	// Output: "fetch failed: blocked by egress policy: scheme \"http\" is not allowed (allowed: https)" <nil>
}

// A request asks for the built-in modules its step uses; its plan must
// allow them (Config.PlanModules; a plan not listed may use all).
func ExampleRequest_modules() {
	eng, err := sandbox.New(sandbox.Config{
		Plans:       map[string]sandbox.Limits{"free": {}, "pro": {MemoryMB: 256}},
		DefaultPlan: "free",
		PlanModules: map[string][]string{"free": {}, "pro": {sandbox.ModuleDuckDB, sandbox.ModuleGLPK}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close(context.Background())

	res, err := eng.Run(context.Background(), sandbox.Request{
		Code: `const db = await duckdb.open();
const [{ n }] = await db.query("SELECT count(*) AS n FROM range(10)");
const lp = await glpk.solve({ name: "lp",
  objective: { direction: glpk.GLP_MAX, name: "z", vars: [{ name: "x", coef: 3 }] },
  subjectTo: [{ name: "c", vars: [{ name: "x", coef: 1 }], bnds: { type: glpk.GLP_UP, ub: n } }] });
return { n, z: lp.result.z };`,
		Modules: []string{sandbox.ModuleDuckDB, sandbox.ModuleGLPK}, // "duckdb", "glpk"
		Plan:    "pro",
	}, nil)
	fmt.Println(string(res.Value), err)
	// Output: {"n":10,"z":30} <nil>
}
