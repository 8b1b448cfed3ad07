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

	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"
)

// A client calls a Stepbox server with a tenant's API key: Run sends the
// answers to the step's data requests with the step, Execute streams its
// events and takes the answers as they are asked for.
func ExampleClient() {
	ctx := context.Background()
	url, key, stop := startServer() // a server on loopback with one tenant, for this example
	defer stop()

	c := client.New(url, client.Options{APIKey: key}) // GRPC: true for gRPC
	res, err := c.Run(ctx, sandbox.Request{
		Code:  `return (await dataProxy.request("user", {id: input.id})).name`,
		Input: json.RawMessage(`{"id": 7}`),
	}, map[string]any{"user": map[string]string{"name": "Ada"}}) // answers by method
	if err != nil {
		log.Fatal(err) // the run's *sandbox.Error, as with a local engine
	}
	fmt.Println(res.RunID != "", string(res.Value))

	st, err := c.Execute(ctx, sandbox.Request{ // returns once the run is accepted
		Code: `const a = await dataProxy.request("price", {sku: "A"});
const b = await dataProxy.request("price", {sku: "B"});
return a + b;`,
	})
	if err != nil {
		log.Fatal(err)
	}
	prices := map[string]float64{"A": 1.5, "B": 2}
	for ev := range st.Events() {
		if dr := ev.DataRequest; dr != nil {
			var p struct{ SKU string }
			if err := json.Unmarshal(dr.Params, &p); err != nil {
				log.Fatal(err)
			}
			if err := st.Respond(dr.ID, prices[p.SKU]); err != nil {
				log.Fatal(err)
			}
		}
	}
	total, err := st.Wait()
	fmt.Println(string(total.Value), err)
	// Output:
	// true "Ada"
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
