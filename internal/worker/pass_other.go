//go:build !linux

package worker

import (
	"errors"
	"os"
)

// passFile returns nil: descriptors are passed on Linux only, where the
// Python zygotes are.
func passFile() *os.File { return nil }

// recvFile fails: descriptors are passed on Linux only.
func recvFile(sock *os.File) (*os.File, error) { return nil, errors.ErrUnsupported }
