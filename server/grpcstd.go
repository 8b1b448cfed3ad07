package server

import (
	"context"
	"net/http"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"

	"github.com/stepbox/stepbox/proto/stepbox/v1/stepboxv1connect"
)

// mountGRPCStandard serves the two services that tools and orchestrators
// expect of any gRPC server: grpc.health.v1.Health, which answers SERVING
// while the server takes runs (as /readyz does) for Kubernetes' gRPC
// probes and grpc-health-probe, and, unless Config.Reflection is false,
// server reflection (v1 and v1alpha) so that grpcurl, grpcui, Postman and
// Evans need no copy of the proto files. Neither takes a tenant's key:
// health says only SERVING or NOT_SERVING, and reflection describes the
// public API, nothing of a tenant's.
func (s *Server) mountGRPCStandard(mux *http.ServeMux) {
	mux.Handle(grpchealth.NewHandler(healthChecker{s}))
	if s.cfg.reflection() {
		r := grpcreflect.NewStaticReflector(stepboxv1connect.StepboxServiceName, grpchealth.HealthV1ServiceName)
		mux.Handle(grpcreflect.NewHandlerV1(r))
		mux.Handle(grpcreflect.NewHandlerV1Alpha(r))
	}
}

// healthChecker answers gRPC health checks: for the whole server (the
// empty name) and for the Stepbox service, SERVING when the server is
// ready for runs, NOT_SERVING while it is not (draining, no worker);
// any other name is not found, as the protocol asks.
type healthChecker struct{ s *Server }

func (h healthChecker) Check(_ context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	switch req.Service {
	case "", stepboxv1connect.StepboxServiceName:
	default:
		return nil, connect.NewError(connect.CodeNotFound, nil)
	}
	if ok, _ := h.s.ready(); !ok {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}
