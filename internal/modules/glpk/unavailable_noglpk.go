//go:build cgo && stepbox_noglpk

package glpk

const unavailableWhy = "this binary was built with the stepbox_noglpk tag, which leaves GPL-3 GLPK out; rebuild without the tag, with libglpk-dev and libltdl-dev installed, to have it"
