package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
	"github.com/stepbox/stepbox/server/client"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// A step run on a Stepbox server: the client sends the step, its input and
// the answers to its data requests by method, and gets the result. (The
// server here is started in-process on loopback for the example; a
// program that only calls a server needs only the client.)
func Example() {
	ctx := context.Background()
	eng, err := sandbox.New(sandbox.Config{})
	if err != nil {
		panic(err)
	}
	defer eng.Close(ctx)
	srv, err := server.New(eng, server.Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(l)
	defer srv.Shutdown(ctx)

	c := client.New("http://"+l.Addr().String(), client.Options{})
	res, err := c.Run(ctx, sandbox.Request{
		Code: `const order = await dataProxy.request("order", { id: input.id });
reportStatus({ stage: "priced" });
return { id: input.id, total: order.total * 2 };`,
		Input: json.RawMessage(`{"id": 7}`),
	}, map[string]any{"order": map[string]any{"total": 21}})
	if err != nil {
		panic(err)
	}
	for _, ev := range res.Events {
		if ev.Kind == sandbox.EventStatus {
			fmt.Println("status:", string(ev.Status))
		}
	}
	fmt.Println("result:", string(res.Value))
	// Output:
	// status: {"stage":"priced"}
	// result: {"id":7,"total":42}
}
