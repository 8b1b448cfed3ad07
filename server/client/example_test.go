package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stepbox/stepbox/contract"
	"github.com/stepbox/stepbox/server/client"
)

// A step run on a Stepbox server, its data requests answered by a handler
// as with a local sandbox.Engine's Run: the same request, handler and
// result types. The run goes over the Execute stream, and each data
// request is answered by calling the handler.
func Example() {
	url := serverURL()
	ctx := context.Background()

	c := client.New(url, client.Options{})
	res, err := c.Run(ctx, contract.Request{
		Code: `const order = await dataProxy.request("order", { id: input.id });
reportStatus({ stage: "priced" });
return { id: input.id, total: order.total * 2 };`,
		Input: json.RawMessage(`{"id": 7}`),
	}, func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != "order" {
			return nil, fmt.Errorf("no method %q", method)
		}
		return map[string]any{"total": 21}, nil
	})
	if err != nil {
		panic(err)
	}
	for _, ev := range res.Events {
		if ev.Kind == contract.EventStatus {
			fmt.Println("status:", string(ev.Status))
		}
	}
	fmt.Println("result:", string(res.Value))
	// Output:
	// status: {"stage":"priced"}
	// result: {"id":7,"total":42}
}

// Answers known in advance travel with the request, by method name, in one
// unary call.
func ExampleClient_RunWithData() {
	url := serverURL()

	c := client.New(url, client.Options{})
	res, err := c.RunWithData(context.Background(), contract.Request{
		Code: `const rate = await dataProxy.request("rate");
try { await dataProxy.request("other") } catch (e) { console.log(e.message) }
return input.amount * rate;`,
		Input: json.RawMessage(`{"amount": 20}`),
	}, map[string]any{"rate": 2.1})
	if err != nil {
		panic(err)
	}
	for _, ev := range res.Events {
		if ev.Kind == contract.EventConsole {
			fmt.Println("console:", ev.Console.Text)
		}
	}
	fmt.Println("result:", string(res.Value))
	// Output:
	// console: no answer for data request "other": the request's data has none for this method
	// result: 42
}

// A run followed event by event, as with sandbox.Engine.Submit.
func ExampleClient_Submit() {
	url := serverURL()

	c := client.New(url, client.Options{})
	sess, err := c.Submit(context.Background(), contract.Request{
		Code: `console.log("hello from the step");
return (await dataProxy.request("double", 21));`,
	})
	if err != nil {
		panic(err)
	}
	for ev := range sess.Events() {
		switch ev.Kind {
		case contract.EventConsole:
			fmt.Println("console:", ev.Console.Text)
		case contract.EventDataRequest:
			var n int
			_ = json.Unmarshal(ev.DataRequest.Params, &n)
			_ = sess.Respond(ev.DataRequest.ID, n*2)
		}
	}
	res, err := sess.Wait()
	fmt.Println("result:", string(res.Value), err)
	// Output:
	// console: hello from the step
	// result: 42 <nil>
}

// A failed run's error is a *contract.Error, the same type as a local
// engine's *sandbox.Error.
func ExampleClient_Run_error() {
	url := serverURL()

	c := client.New(url, client.Options{})
	_, err := c.Run(context.Background(), contract.Request{Code: "const x = 1;\nnull.boom"}, nil)
	var se *contract.Error
	if errors.As(err, &se) {
		fmt.Println(se.Code, "at line", se.Position.Line)
	}
	fmt.Println(errors.Is(err, contract.ErrRuntime))
	// Output:
	// RUNTIME at line 2
	// true
}
