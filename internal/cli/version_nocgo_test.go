//go:build !cgo

package cli_test

// built is how a build without GLPK says it was built.
const built = "without cgo"
