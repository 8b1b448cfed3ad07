//go:build cgo && stepbox_noglpk

package glpk_test

const built = "with the stepbox_noglpk tag"
