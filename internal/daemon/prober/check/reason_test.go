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
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpchealth "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/httpget"
)

// triple unpacks an Outcome the way the kubelet's probers answer: result, message, error.
func triple(o Outcome, err error) (Result, string, error) { return o.Result, o.Message, err }

// secret stands for whatever an application writes: a response body, command output, a gRPC
// status message. It may be in an Outcome's Message (the pod's own events) but never in its Reason
// (the cluster-scoped NodePodProbeReport).
const secret = "password=hunter2"

// rudeHealth answers every health check with an error whose message is the application's own.
type rudeHealth struct {
	grpchealth.UnimplementedHealthServer
	code codes.Code
}

func (h rudeHealth) Check(context.Context, *grpchealth.HealthCheckRequest) (*grpchealth.HealthCheckResponse, error) {
	return nil, status.Error(h.code, secret)
}

func rudeGRPC(t *testing.T, code codes.Code) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	grpchealth.RegisterHealthServer(s, rudeHealth{code: code})
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return l.Addr().(*net.TCPAddr).Port
}

func refusedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port
}

func TestOutcomeReasonsNeverCarryApplicationOutput(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fail":
			http.Error(w, secret, http.StatusInternalServerError)
		case "/ok":
			_, _ = w.Write([]byte(secret))
		case "/away":
			w.Header().Set("Location", "http://elsewhere.example/"+secret)
			w.WriteHeader(http.StatusFound)
			_, _ = w.Write([]byte(secret))
		case "/slow":
			time.Sleep(time.Second)
		default: // a redirect loop whose targets the application chose
			http.Redirect(w, r, "/loop/"+secret+r.URL.Path, http.StatusFound)
		}
	}))
	defer srv.Close()
	garbage := listenAndWrite(t, "HTTP/1.1 "+secret+"\r\n\r\n")
	exec := func(r critest.ExecResult) func(t *testing.T) (Outcome, error) {
		return func(t *testing.T) (Outcome, error) {
			rt, id := startCRI(t, func(*runtimeapi.ExecSyncRequest) critest.ExecResult { return r })
			return Exec(context.Background(), rt, id, []string{"check"}, time.Second)
		}
	}
	get := func(path string, timeout time.Duration) func(t *testing.T) (Outcome, error) {
		return func(t *testing.T) (Outcome, error) {
			return probeHTTPOutcome(t, srv.URL, corev1.HTTPGetAction{Path: path}, timeout)
		}
	}

	cases := []struct {
		name      string
		run       func(t *testing.T) (Outcome, error)
		result    Result
		reason    string
		hasOutput bool // the application's output is in the message (the event)
	}{
		{"exec exit 1", exec(critest.ExecResult{Stdout: secret, ExitCode: 1}), Failure, "exit code 1", true},
		{"exec exit 137", exec(critest.ExecResult{Stderr: secret, ExitCode: 137}), Failure, "exit code 137", true},
		{"exec success", exec(critest.ExecResult{Stdout: secret}), Success, "", true},
		{"exec timeout", exec(critest.ExecResult{Delay: 3 * time.Second}), Failure, "timeout after 1s", false},
		{"HTTP 500 with a body", get("/fail", time.Second), Failure, "HTTP probe failed with statuscode: 500", false},
		{"HTTP 200 with a body", get("/ok", time.Second), Success, "", true},
		{"HTTP redirect to another host", get("/away", time.Second), Warning, "redirect not followed (statuscode: 302)", true},
		{"HTTP redirect loop", get("/loop", time.Second), Failure, "stopped after 10 redirects", true},
		{"HTTP timeout", get("/slow", 100*time.Millisecond), Failure, "timeout after 100ms", false},
		{"HTTP connection refused", func(t *testing.T) (Outcome, error) {
			return probeHTTPOutcome(t, fmt.Sprintf("http://127.0.0.1:%d", refusedPort(t)), corev1.HTTPGetAction{Path: "/"}, time.Second)
		}, Failure, "connection refused", false},
		{"HTTP malformed response", func(t *testing.T) (Outcome, error) {
			return probeHTTPOutcome(t, "http://"+garbage, corev1.HTTPGetAction{Path: "/"}, time.Second)
		}, Failure, "request failed", true},
		{"TCP refused", func(t *testing.T) (Outcome, error) { return TCP("127.0.0.1", refusedPort(t), time.Second) },
			Failure, "connection refused", false},
		{"gRPC refused", func(t *testing.T) (Outcome, error) {
			return GRPC("127.0.0.1", "", refusedPort(t), 200*time.Millisecond, testUA)
		}, Failure, "timeout after 200ms", false},
		{"gRPC error with the server's message", func(t *testing.T) (Outcome, error) {
			return GRPC("127.0.0.1", "", rudeGRPC(t, codes.Internal), time.Second, testUA)
		}, Failure, "health rpc failed: Internal", true},
		{"gRPC unimplemented with the server's message", func(t *testing.T) (Outcome, error) {
			return GRPC("127.0.0.1", "", rudeGRPC(t, codes.Unimplemented), time.Second, testUA)
		}, Failure, "gRPC health service not implemented", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.run(t)
			if err != nil || o.Result != tc.result || o.Reason != tc.reason {
				t.Fatalf("got %v reason %q (message %q), %v; want %v reason %q", o.Result, o.Reason, o.Message, err, tc.result, tc.reason)
			}
			if strings.Contains(o.Message, secret) != tc.hasOutput {
				t.Errorf("message %q: application output present = %t, want %t", o.Message, !tc.hasOutput, tc.hasOutput)
			}
		})
	}
}

// listenAndWrite serves raw bytes to every connection, then closes it.
func listenAndWrite(t *testing.T, raw string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			_, _ = c.Read(buf)
			_, _ = c.Write([]byte(raw))
			_ = c.Close()
		}
	}()
	return l.Addr().String()
}

// hostPort splits a test server URL into the pod IP and port a probe would use.
func hostPort(t *testing.T, raw string) (string, int) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(u.Port())
	return u.Hostname(), p
}

func probeHTTP(t *testing.T, srvURL string, action corev1.HTTPGetAction, timeout time.Duration) (Result, string, error) {
	t.Helper()
	return triple(probeHTTPOutcome(t, srvURL, action, timeout))
}

func probeHTTPOutcome(t *testing.T, srvURL string, action corev1.HTTPGetAction, timeout time.Duration) (Outcome, error) {
	t.Helper()
	host, port := hostPort(t, srvURL)
	action.Port = intstr.FromInt32(int32(port))
	req, err := httpget.NewRequest(&action, &corev1.Container{}, host, testUA)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	return NewHTTP().Probe(req, timeout)
}
