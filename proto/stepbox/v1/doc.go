// Package stepboxv1 is the generated Go code of the Stepbox wire schema,
// proto/stepbox/v1/stepbox.proto: the run contract's messages, and in
// stepboxv1connect the Connect client and handler of StepboxService.
//
// Nothing here but this file is written by hand. Edit the .proto, then
// regenerate and commit both:
//
//	go generate ./proto/...   (runs proto/generate.sh)
//
// Go callers usually want github.com/stepbox/stepbox/server/client, which
// speaks this schema and answers with the sandbox package's types.
package stepboxv1

//go:generate bash ../../generate.sh
