package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"slices"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stepbox/stepbox/server"
)

// grpcHealth makes the call a gRPC health probe makes (Kubernetes' grpc
// probe, grpc-health-probe): grpc.health.v1.Health/Check over HTTP/2 in
// gRPC's own framing, written here by hand rather than by the library the
// server uses. It returns the status (1 SERVING, 2 NOT_SERVING) and the
// grpc-status trailer.
func (ts *testServer) grpcHealth(t *testing.T, service string) (status int, grpcStatus string) {
	t.Helper()
	// HealthCheckRequest{service: 1}: field 1, length-delimited.
	var msg []byte
	if service != "" {
		msg = append([]byte{0x0a, byte(len(service))}, service...)
	}
	body := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)))
	body = append(body, msg...)
	req, err := http.NewRequest("POST", ts.url+"/grpc.health.v1.Health/Check", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	resp, err := ts.h2c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	grpcStatus = resp.Trailer.Get("Grpc-Status")
	if grpcStatus == "" {
		grpcStatus = resp.Header.Get("Grpc-Status") // a trailers-only response
	}
	// HealthCheckResponse{status: 1}: 0x08 then the enum; absent is 0.
	if len(b) >= 5 {
		if m := b[5:]; len(m) >= 2 && m[0] == 0x08 {
			status = int(m[1])
		}
	}
	return status, grpcStatus
}

// TestGRPCReflection: the server answers gRPC server reflection, v1 and
// v1alpha, so that grpcurl and the like list and describe its services
// with no proto files; a config can turn it off.
func TestGRPCReflection(t *testing.T) {
	ts := start(t, server.Config{})
	c := grpcreflect.NewClient(ts.h2c, ts.url, connect.WithGRPC())
	s := c.NewStream(context.Background())
	defer s.Close()
	names, err := s.ListServices()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []protoreflect.FullName{"stepbox.v1.StepboxService", "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Errorf("services %v: no %s", names, want)
		}
	}
	files, err := s.FileContainingSymbol("stepbox.v1.StepboxService")
	if err != nil || len(files) == 0 {
		t.Fatalf("describe: %v %v", files, err)
	}
	var methods []string
	for _, svc := range files[0].GetService() {
		for _, m := range svc.GetMethod() {
			methods = append(methods, m.GetName())
		}
	}
	for _, want := range []string{"Run", "Execute", "CompileTypeScript", "Health"} {
		if !slices.Contains(methods, want) {
			t.Errorf("methods %v: no %s", methods, want)
		}
	}

	off := false
	ts = start(t, server.Config{Reflection: &off})
	s = grpcreflect.NewClient(ts.h2c, ts.url, connect.WithGRPC()).NewStream(context.Background())
	defer s.Close()
	if names, err := s.ListServices(); err == nil {
		t.Fatalf("reflection off, yet it lists %v", names)
	}
	if status, code := ts.grpcHealth(t, ""); code != "0" || status != 1 && status != 2 {
		t.Fatalf("with reflection off, health is still served: got status %d, grpc-status %q", status, code)
	}
}
