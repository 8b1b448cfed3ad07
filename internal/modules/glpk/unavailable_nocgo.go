//go:build !cgo

package glpk

const unavailableWhy = "this binary was built without cgo; install build-essential, libglpk-dev and libltdl-dev and rebuild with cgo (scripts/stepbox does, as root)"
