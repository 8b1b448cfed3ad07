#!/usr/bin/env bash
# Regenerates the Go code beside proto/stepbox/v1/stepbox.proto. The output is
# checked in, so building Stepbox never needs protoc; run this after editing a
# .proto file and commit the .proto and the generated files together.
#
# Needs: protoc (Debian: apt-get install -y protobuf-compiler; 3.21 is what
# generated the checked-in code) and Go. The two plugins are installed at
# pinned versions into a temporary directory, so every machine generates the
# same code; keep the versions equal to those in go.mod.
#
#   bash proto/generate.sh        (or: go generate ./proto/...)
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOC_GEN_GO_VERSION=v1.36.12      # google.golang.org/protobuf in go.mod
PROTOC_GEN_CONNECT_GO_VERSION=v1.21.1 # connectrpc.com/connect in go.mod

command -v protoc >/dev/null || { echo "generate.sh: protoc not found (apt-get install -y protobuf-compiler)" >&2; exit 1; }

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
GOBIN="$bin" GOFLAGS=-mod=mod go install "google.golang.org/protobuf/cmd/protoc-gen-go@${PROTOC_GEN_GO_VERSION}"
GOBIN="$bin" GOFLAGS=-mod=mod go install "connectrpc.com/connect/cmd/protoc-gen-connect-go@${PROTOC_GEN_CONNECT_GO_VERSION}"

PATH="$bin:$PATH" protoc \
	--proto_path=proto \
	--go_out=. --go_opt=module=github.com/stepbox/stepbox \
	--connect-go_out=. --connect-go_opt=module=github.com/stepbox/stepbox \
	proto/stepbox/v1/stepbox.proto
gofmt -l proto/ | (! grep .) || { echo "generate.sh: generated code is not gofmt-clean" >&2; exit 1; }
echo "generated: $(cd proto && find stepbox -name '*.go' ! -name doc.go | sort | tr '\n' ' ')"
