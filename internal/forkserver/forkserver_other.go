//go:build !linux

package forkserver

import (
	"errors"
	"fmt"
	"os"
)

// EnvServe is the environment variable of a fork server (Linux only).
const EnvServe = "STEPBOX_FORKSERVER"

// ErrGone is returned by StartProcess once the server has exited.
var ErrGone = errors.New("forkserver: server gone")

// Server is a running fork server; there are none off Linux.
type Server struct{}

// Start fails off Linux: nothing here needs a fork server.
func Start(exe string) (*Server, error) {
	return nil, fmt.Errorf("forkserver: %w", errors.ErrUnsupported)
}

// Done is never closed: there is no server.
func (s *Server) Done() <-chan struct{} { return nil }

// Pid is 0.
func (s *Server) Pid() int { return 0 }

// StartProcess fails off Linux.
func (s *Server) StartProcess(name string, argv []string, attr *os.ProcAttr) (*os.Process, error) {
	return nil, ErrGone
}

// Close does nothing.
func (s *Server) Close() error { return nil }

// MaybeServe returns at once off Linux.
func MaybeServe() {}
