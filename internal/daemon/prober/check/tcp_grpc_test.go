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
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	grpchealth "google.golang.org/grpc/health/grpc_health_v1"
)

func TestTCP_24_ConnectWithoutSendingBytes(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	got := make(chan int, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 16)
		n, _ := c.Read(buf) // returns at the probe's close
		got <- n
		_ = c.Close()
	}()
	port := l.Addr().(*net.TCPAddr).Port
	res, out, err := triple(TCP("127.0.0.1", port, time.Second))
	if res != Success || out != "" || err != nil {
		t.Fatalf("got %v %q %v", res, out, err)
	}
	if n := <-got; n != 0 {
		t.Errorf("probe sent %d bytes, want none", n)
	}
}

func TestTCP_24_RefusedIsFailureWithDialError(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	res, out, err := triple(TCP("127.0.0.1", port, time.Second))
	if res != Failure || err != nil || !strings.HasPrefix(out, "dial tcp 127.0.0.1:") || !strings.Contains(out, "connection refused") {
		t.Errorf("got %v %q %v", res, out, err)
	}
}

func grpcServer(t *testing.T, withHealth bool) (int, *health.Server) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	var hs *health.Server
	if withHealth {
		hs = health.NewServer()
		grpchealth.RegisterHealthServer(s, hs)
	}
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return l.Addr().(*net.TCPAddr).Port, hs
}

func TestGRPC_25_HealthStatuses(t *testing.T) {
	port, hs := grpcServer(t, true)
	hs.SetServingStatus("ok", grpchealth.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", grpchealth.HealthCheckResponse_NOT_SERVING)
	hs.SetServingStatus("", grpchealth.HealthCheckResponse_SERVING)
	cases := []struct {
		service string
		want    Result
		msg     string
	}{
		{"", Success, "service healthy"},
		{"ok", Success, "service healthy"},
		{"down", Failure, `service unhealthy (responded with "NOT_SERVING")`},
		{"missing", Failure, "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"},
	}
	for _, tc := range cases {
		res, out, err := triple(GRPC("127.0.0.1", tc.service, port, time.Second, testUA))
		if res != tc.want || out != tc.msg || err != nil {
			t.Errorf("service %q: got %v %q %v, want %v %q", tc.service, res, out, err, tc.want, tc.msg)
		}
	}
}

func TestGRPC_25_UnimplementedHealthService(t *testing.T) {
	port, _ := grpcServer(t, false)
	res, out, err := triple(GRPC("127.0.0.1", "", port, time.Second, testUA))
	want := "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): unknown service grpc.health.v1.Health"
	if res != Failure || out != want || err != nil {
		t.Errorf("got %v %q %v", res, out, err)
	}
}

func TestGRPC_25_DialTimeout(t *testing.T) {
	// A listener that accepts but never speaks HTTP/2: the connection never becomes ready.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	defer func() { _ = l.Close() }()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { <-ctx.Done(); _ = c.Close() }()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	res, out, err := triple(GRPC("127.0.0.1", "", port, 200*time.Millisecond, testUA))
	if res != Failure || err != nil || !strings.HasPrefix(out, `timeout: failed to connect service "127.0.0.1:`) {
		t.Errorf("got %v %q %v", res, out, err)
	}
}

func TestGRPC_25_RefusedIsFailure(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	res, out, err := triple(GRPC("127.0.0.1", "", port, 300*time.Millisecond, testUA))
	if res != Failure || err != nil || !strings.Contains(out, "failed to connect service") {
		t.Errorf("got %v %q %v", res, out, err)
	}
}
