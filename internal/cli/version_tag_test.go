//go:build cgo && stepbox_noglpk

package cli_test

// built is how a build without GLPK says it was built.
const built = "with the stepbox_noglpk tag"
