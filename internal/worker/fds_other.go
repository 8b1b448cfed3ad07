//go:build !unix

package worker

func closeInherited() {}
