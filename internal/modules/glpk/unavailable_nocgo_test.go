//go:build !cgo

package glpk_test

const built = "without cgo"
