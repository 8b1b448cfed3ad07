package client_test

// The Go block of server/README.md is the body of ExampleClient, byte for
// byte (internal/docs checks it): change both together.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"

	"github.com/stepbox/stepbox/contract"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"
)

// A client calls a Stepbox server with a tenant's API key: Run answers the
// step's data requests with a handler, as a local engine does; RunWithData
// sends fixed answers with the step; Submit streams the run's events and
// takes the answers as they are asked for.
func ExampleClient() {
	ctx := context.Background()
	url, key, stop := startServer() // a server on loopback with one tenant, for this example
	defer stop()

	c := client.New(url, client.Options{APIKey: key}) // GRPC: true for gRPC

	// As eng.Run: each data request is answered by calling the handler
	// (over Execute); a nil handler is one unary Run.
	res, err := c.Run(ctx, contract.Request{
		Code:  `return (await dataProxy.request("user", {id: input.id})).name`,
		Input: json.RawMessage(`{"id": 7}`),
	}, func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		return map[string]string{"name": "Ada"}, nil
	})
	if err != nil {
		log.Fatal(err) // the run's *contract.Error (= *sandbox.Error), as with a local engine
	}
	fmt.Println(res.RunID != "", string(res.Value))

	// Answers known in advance, by method, go with the request in one unary Run.
	res, err = c.RunWithData(ctx, contract.Request{
		Code: `return (await dataProxy.request("user", {})).name.length`,
	}, map[string]any{"user": map[string]string{"name": "Ada"}})
	fmt.Println(string(res.Value), err)

	// As eng.Submit: returns once the run is accepted.
	sess, err := c.Submit(ctx, contract.Request{
		Code: `const a = await dataProxy.request("price", {sku: "A"});
const b = await dataProxy.request("price", {sku: "B"});
return a + b;`,
	})
	if err != nil {
		log.Fatal(err)
	}
	prices := map[string]float64{"A": 1.5, "B": 2}
	for ev := range sess.Events() {
		if dr := ev.DataRequest; dr != nil {
			var p struct{ SKU string }
			if err := json.Unmarshal(dr.Params, &p); err != nil {
				log.Fatal(err)
			}
			if err := sess.Respond(dr.ID, prices[p.SKU]); err != nil {
				log.Fatal(err)
			}
		}
	}
	total, err := sess.Wait()
	fmt.Println(string(total.Value), err)
	// Output:
	// true "Ada"
	// 3 <nil>
	// 3.5 <nil>
}

// startServer starts a Stepbox server on loopback with one tenant, and
// returns its URL, the tenant's API key and a function that stops it.
func startServer() (url, key string, stop func()) {
	ctx := context.Background()
	eng, err := sandbox.New(sandbox.Config{})
	if err != nil {
		log.Fatal(err)
	}
	key = "example-key-0123456789abcdef"
	srv, err := server.New(eng, server.Config{
		Listen:  "127.0.0.1:0",
		Tenants: []server.Tenant{{Name: "acme", Keys: []string{server.HashKey(key)}}},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(l)
	return "http://" + l.Addr().String(), key, func() {
		srv.Shutdown(ctx)
		eng.Close(ctx)
	}
}
