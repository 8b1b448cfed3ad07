//go:build !linux

package pool

import (
	"errors"
	"os"
)

// socketpair returns no socket: descriptors are passed on Linux only, where
// the workers' Python zygotes are.
func socketpair() (host, child *os.File, err error) { return nil, nil, nil }

// sendFile fails: descriptors are passed on Linux only.
func sendFile(sock, f *os.File) error { return errors.ErrUnsupported }
