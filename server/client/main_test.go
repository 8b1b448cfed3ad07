package client_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/stepbox/stepbox/internal/testenv"
	"github.com/stepbox/stepbox/sandbox"
	"github.com/stepbox/stepbox/server"
)

func TestMain(m *testing.M) { testenv.Main(m, stopServer) }

// The examples and tests share one real server, in-process on a loopback
// port, over a real engine (which the tests also run steps on locally). A
// program that only calls a server needs none of this: only the client.
var (
	serverOnce sync.Once
	engine     *sandbox.Engine
	srv        *server.Server
	served     chan error
	url        string
)

// serverURL starts the shared server on first use and returns its URL.
func serverURL() string {
	serverOnce.Do(func() {
		var err error
		engine, err = sandbox.New(sandbox.Config{})
		if err != nil {
			panic(err)
		}
		srv, err = server.New(engine, server.Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			panic(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		served = make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		url = "http://" + l.Addr().String()
	})
	return url
}

// localEngine returns the shared server's engine, for runs without the
// network.
func localEngine() *sandbox.Engine {
	serverURL()
	return engine
}

func stopServer() {
	if srv == nil {
		return
	}
	ctx := context.Background()
	if err := srv.Shutdown(ctx); err != nil {
		panic(err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		panic(err)
	}
	engine.Close(ctx)
}
