// Command gohost is a Go program that embeds Stepbox: it runs a step file
// with Engine.Run and answers the step's data requests from its own data,
// here a map of orders by customer.
//
//	go run ./examples/gohost examples/hello.js '{"customer": "ada"}'
//
// prints {"customer":"ada","orders":3,"total":49.75}. The program needs no
// line for Stepbox's worker processes: package sandbox takes them over in
// its init, before main.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/stepbox/stepbox/sandbox"
)

type order struct {
	ID     int     `json:"id"`
	Amount float64 `json:"amount"`
}

var orders = map[string][]order{
	"ada":   {{1, 12.5}, {2, 30}, {3, 7.25}},
	"grace": {{4, 99}},
}

// answer is the data handler: it answers each dataProxy.request of the
// step, on a goroutine of its own. An error rejects the step's promise.
func answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "orders":
		var p struct{ Customer string }
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("orders: %w", err)
		}
		list, ok := orders[p.Customer]
		if !ok {
			return nil, fmt.Errorf("no customer %q", p.Customer)
		}
		return list, nil
	}
	return nil, fmt.Errorf("no method %q", method)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gohost STEP.js|STEP.ts|STEP.py INPUT_JSON")
		os.Exit(2)
	}
	code, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gohost:", err)
		os.Exit(2)
	}
	lang := map[string]sandbox.Language{".ts": sandbox.TypeScript, ".py": sandbox.Python}[filepath.Ext(os.Args[1])]

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt) // ^C aborts the run
	defer stop()
	eng, err := sandbox.New(sandbox.Config{PoolSize: 1})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gohost:", err)
		os.Exit(1)
	}
	defer eng.Close(context.Background())

	res, err := eng.Run(ctx, sandbox.Request{
		Language: lang, // "" is JavaScript
		Code:     string(code),
		Input:    json.RawMessage(os.Args[2]),
	}, answer)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gohost:", err) // a *sandbox.Error: code, message, position
		os.Exit(1)
	}
	fmt.Println(string(res.Value))
}
