package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stepbox/stepbox/sandbox"
)

func ExampleEngine_Submit() {
	eng, err := sandbox.New(sandbox.Config{})
	if err != nil {
		panic(err)
	}
	defer eng.Close(context.Background())

	sess, err := eng.Submit(context.Background(), sandbox.Request{
		Code: `console.log("hello from the step");
reportStatus({done: 0.5});
return input.a + input.b;`,
		Input: json.RawMessage(`{"a": 40, "b": 2}`),
	})
	if err != nil {
		panic(err)
	}
	for ev := range sess.Events() {
		switch ev.Kind {
		case sandbox.EventConsole:
			fmt.Println("console:", ev.Console.Text)
		case sandbox.EventStatus:
			fmt.Println("status:", string(ev.Status))
		case sandbox.EventResult:
			fmt.Println("result:", string(ev.Result.Value))
		}
	}
	// Output:
	// console: hello from the step
	// status: {"done":0.5}
	// result: 42
}

func ExampleSession_Respond() {
	eng, err := sandbox.New(sandbox.Config{})
	if err != nil {
		panic(err)
	}
	defer eng.Close(context.Background())

	sess, err := eng.Submit(context.Background(), sandbox.Request{
		Code: `const user = await dataProxy.request("user", {id: 7});
let missing;
try { await dataProxy.request("user", {id: 8}) } catch (e) { missing = e.message }
return {name: user.name, missing};`,
	})
	if err != nil {
		panic(err)
	}
	users := map[int]string{7: "Ada"}
	for ev := range sess.Events() {
		if dr := ev.DataRequest; dr != nil {
			var p struct{ ID int }
			_ = json.Unmarshal(dr.Params, &p)
			if name, ok := users[p.ID]; ok {
				_ = sess.Respond(dr.ID, map[string]string{"name": name})
			} else {
				_ = sess.RespondError(dr.ID, fmt.Sprintf("no user %d", p.ID))
			}
		}
	}
	res, err := sess.Wait()
	fmt.Println(string(res.Value), err)
	// Output: {"name":"Ada","missing":"no user 8"} <nil>
}

func ExampleEngine_Run() {
	eng, err := sandbox.New(sandbox.Config{})
	if err != nil {
		panic(err)
	}
	defer eng.Close(context.Background())

	res, err := eng.Run(context.Background(),
		sandbox.Request{Code: `return (await dataProxy.request("double", 21))`},
		func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			var n int
			if err := json.Unmarshal(params, &n); err != nil {
				return nil, err
			}
			return n * 2, nil
		})
	fmt.Println(string(res.Value), err)
	// Output: 42 <nil>
}

func ExampleError() {
	eng, err := sandbox.New(sandbox.Config{
		Plans:       map[string]sandbox.Limits{"free": {MaxStatusEvents: 3}},
		DefaultPlan: "free",
	})
	if err != nil {
		panic(err)
	}
	defer eng.Close(context.Background())

	_, err = eng.Run(context.Background(), sandbox.Request{Code: `for (let i = 0; ; i++) reportStatus(i)`}, nil)
	var se *sandbox.Error
	if errors.As(err, &se) {
		fmt.Println(se.Code, se.Limit)
	}
	fmt.Println(errors.Is(err, sandbox.ErrLimitExceeded))

	_, err = eng.Run(context.Background(), sandbox.Request{Code: "const x = 1;\nnull.boom"}, nil)
	if errors.As(err, &se) {
		fmt.Println(se.Code, se.Message, "at line", se.Position.Line)
	}
	// Output:
	// LIMIT_EXCEEDED maxStatusEvents
	// true
	// RUNTIME TypeError: cannot read property 'boom' of null at line 2
}

func ExampleConfig_plans() {
	eng, err := sandbox.New(sandbox.Config{
		Plans: map[string]sandbox.Limits{
			"free": {MemoryMB: 32, WallMs: 2_000},
			"pro":  {MemoryMB: 256, WallMs: 30_000},
		},
		DefaultPlan: "free",
	})
	if err != nil {
		panic(err)
	}
	defer eng.Close(context.Background())

	// A request may lower its plan's limits...
	_, err = eng.Run(context.Background(), sandbox.Request{Code: "return 1", Plan: "pro", Limits: sandbox.Limits{MemoryMB: 64}}, nil)
	fmt.Println(err)
	// ...but never raise them.
	_, err = eng.Run(context.Background(), sandbox.Request{Code: "return 1", Limits: sandbox.Limits{MemoryMB: 64}}, nil)
	fmt.Println(errors.Is(err, sandbox.ErrValidation))
	// Output:
	// <nil>
	// true
}

func ExampleCompileTypeScript() {
	// Compile when the step is saved; store c.JS and c.Map.
	c, err := sandbox.CompileTypeScript(`enum Unit { Each = 1, Dozen = 12 }
const qty: number = input.dozens * Unit.Dozen;
return { qty } satisfies { qty: number };`)
	if err != nil {
		panic(err)
	}

	eng, err := sandbox.New(sandbox.Config{})
	if err != nil {
		panic(err)
	}
	defer eng.Close(context.Background())
	res, err := eng.Run(context.Background(), sandbox.Request{
		Language: sandbox.TypeScript,
		Compiled: &c, // runs the stored JavaScript: no recompilation
		Input:    json.RawMessage(`{"dozens": 3}`),
	}, nil)
	fmt.Println(string(res.Value), err)

	_, err = sandbox.CompileTypeScript("const a: number = ;")
	var se *sandbox.Error
	if errors.As(err, &se) {
		fmt.Println(se.Code, se.Diagnostics[0].Line, se.Diagnostics[0].Column)
	}
	// Output:
	// {"qty":36} <nil>
	// VALIDATION 1 19
}

// A readiness probe: ready once a worker is up, while the queue has room.
func ExampleEngine_Health() {
	eng, err := sandbox.New(sandbox.Config{PoolSize: 2})
	if err != nil {
		panic(err)
	}
	defer eng.Close(context.Background())
	if _, err := eng.Run(context.Background(), sandbox.Request{Code: "return 1"}, nil); err != nil {
		panic(err)
	}
	h := eng.Health()
	if ready, why := h.Ready(); !ready {
		fmt.Println("not ready:", why) // e.g. "no worker is up yet" while the pool starts
		return
	}
	fmt.Println("ready; pool:", h.PoolSize, "restarts:", h.Workers.Restarts)
	// Output:
	// ready; pool: 2 restarts: 0
}
