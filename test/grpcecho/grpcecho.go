// Package grpcecho is the gRPC backend behind the tests' gRPC locations:
// the node's test server runs it in pods (test/framework/node/internal/
// testserver) and the renderer's tests run it on loopback. It serves gRPC's
// health service, whose Check is a unary call and Watch a server-streaming
// one, and names the server that answered in the x-served-by response
// header.
package grpcecho

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// RefusedService is the service whose Check fails with a status of the
// backend's own, FailedPrecondition.
const RefusedService = "refuse"

// WatchStatuses are what Watch streams before it ends the call.
var WatchStatuses = []healthpb.HealthCheckResponse_ServingStatus{
	healthpb.HealthCheckResponse_SERVING, healthpb.HealthCheckResponse_NOT_SERVING, healthpb.HealthCheckResponse_SERVING,
}

// ServerHeader is the response header that names the server (not
// "server", which nginx sets to its own name).
const ServerHeader = "x-served-by"

// Register serves the health service as name on s.
func Register(s *grpc.Server, name string) { healthpb.RegisterHealthServer(s, health{name: name}) }

type health struct {
	healthpb.UnimplementedHealthServer
	name string
}

func (h health) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	_ = grpc.SetHeader(ctx, metadata.Pairs(ServerHeader, h.name))
	if req.GetService() == RefusedService {
		return nil, status.Error(codes.FailedPrecondition, "the backend refuses")
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

func (h health) Watch(_ *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	_ = stream.SetHeader(metadata.Pairs(ServerHeader, h.name))
	for _, s := range WatchStatuses {
		if err := stream.Send(&healthpb.HealthCheckResponse{Status: s}); err != nil {
			return err
		}
	}
	return nil
}
