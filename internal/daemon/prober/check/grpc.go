/*
Copyright 2026 The enhanced-liveness-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package check

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpchealth "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
)

func init() {
	register(&kind{field: "grpc", label: "grpc", build: newGRPCRunner,
		uses: func(h *corev1.ProbeHandler) bool { return h.GRPC != nil }})
}

// grpcRunner runs a gRPC health probe against the pod IP.
type grpcRunner struct {
	host, service, userAgent string
	port                     int
	timeout                  time.Duration
}

func newGRPCRunner(_ context.Context, env *Env, s *Spec) (Runner, error) {
	if s.PodIP == "" {
		return nil, errNoPodIP
	}
	a := s.Probe.GRPC
	service := ""
	if a.Service != nil {
		service = *a.Service
	}
	return &grpcRunner{host: s.PodIP, service: service, userAgent: env.UserAgent, port: int(a.Port), timeout: s.timeout()}, nil
}

func (r *grpcRunner) Run(context.Context, string) (Outcome, error) {
	return GRPC(r.host, r.service, r.port, r.timeout, r.userAgent)
}

// GRPC calls grpc.health.v1.Health/Check for service on host:port in plain text. One deadline
// (timeout) covers the connection and the call; only SERVING passes.
func GRPC(host, service string, port int, timeout time.Duration, userAgent string) (Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	//nolint:staticcheck // a blocking dial is what bounds the connection by the probe's deadline
	conn, err := grpc.DialContext(ctx, addr,
		grpc.WithUserAgent(userAgent),
		grpc.WithBlock(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			return dialer().DialContext(ctx, "tcp", a)
		}),
	)
	if err != nil {
		if err == context.DeadlineExceeded { //nolint:errorlint // grpc returns the context error itself
			return failure(fmt.Sprintf("timeout: failed to connect service %q within %v: %+v", addr, timeout, err), timeoutReason(timeout)), nil
		}
		return failure(fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err), errorReason(err, timeout)), nil
	}
	defer func() { _ = conn.Close() }()

	resp, err := grpchealth.NewHealthClient(conn).Check(metadata.NewOutgoingContext(ctx, metadata.MD{}),
		&grpchealth.HealthCheckRequest{Service: service})
	if err != nil {
		if st, ok := status.FromError(err); ok {
			switch st.Code() {
			case codes.Unimplemented:
				return failure("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): "+st.Message(),
					"gRPC health service not implemented"), nil
			case codes.DeadlineExceeded:
				return failure(fmt.Sprintf("timeout: health rpc did not complete within %v", timeout), timeoutReason(timeout)), nil
			}
			// The status message is the server's own text: the code alone goes into the reason.
			return failure(fmt.Sprintf("error: health rpc probe failed: %+v", err), "health rpc failed: "+st.Code().String()), nil
		}
		return failure(fmt.Sprintf("error: health rpc probe failed: %+v", err), errorReason(err, timeout)), nil
	}
	if resp.GetStatus() != grpchealth.HealthCheckResponse_SERVING {
		msg := fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String())
		return failure(msg, msg), nil
	}
	return Outcome{Result: Success, Message: "service healthy"}, nil
}

func failure(message, reason string) Outcome {
	return Outcome{Result: Failure, Message: message, Reason: reason}
}
