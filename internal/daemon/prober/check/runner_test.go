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
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	grpchealth "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		handler  corev1.ProbeHandler
		label    string
		defaults corev1.ProbeHandler // SetDefaults of handler
	}{
		{"exec", corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}, "exec",
			corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}},
		{"httpGet: path and scheme defaulted", corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}, "http",
			corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Scheme: corev1.URISchemeHTTP, Port: intstr.FromInt32(80)}}},
		{"httpGet: set values kept", corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/h", Scheme: corev1.URISchemeHTTPS}}, "http",
			corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/h", Scheme: corev1.URISchemeHTTPS}}},
		{"tcpSocket", corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}, "tcp",
			corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}},
		{"grpc", corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000}}, "grpc", corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000}}},
		{"none", corev1.ProbeHandler{}, "none", corev1.ProbeHandler{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Label(&tc.handler); got != tc.label {
				t.Errorf("Label = %q, want %q", got, tc.label)
			}
			in := *tc.handler.DeepCopy()
			got := tc.handler
			SetDefaults(&got)
			if !equality.Semantic.DeepEqual(got, tc.defaults) {
				t.Errorf("SetDefaults = %+v, want %+v", got, tc.defaults)
			}
			if !equality.Semantic.DeepEqual(tc.handler, in) {
				t.Errorf("SetDefaults changed the action it was given: %+v", tc.handler)
			}
		})
	}
	_, err := NewRunner(context.Background(), Env{}, Spec{Probe: &corev1.Probe{}}).Run(context.Background(), "c1")
	if want := "the probe has no handler (exec, grpc, httpGet or tcpSocket)"; err == nil || err.Error() != want {
		t.Errorf("a probe without a handler: %v, want %q", err, want)
	}
}

// execCall is what fakeExecer was asked.
type execCall struct {
	id, cmd string
	timeout time.Duration
}

// fakeExecer records ExecSync calls and answers with err.
type fakeExecer struct {
	calls []execCall
	err   error
}

func (f *fakeExecer) ExecSync(_ context.Context, id string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	f.calls = append(f.calls, execCall{id, strings.Join(cmd, " "), timeout})
	return []byte("out"), nil, f.err
}

func TestExecRunner(t *testing.T) {
	down := errors.New("runtime down")
	for _, tc := range []struct {
		name      string
		noRuntime bool
		runtime   error // what ExecSync returns
		env       []corev1.EnvVar
		noSpec    bool // the pod has no container spec of that name
		want      execCall
		wantErr   string
		criOp     string // the error is a RuntimeError of this operation
	}{
		{name: "the command expanded from the container's env, the probe's timeout",
			env:  []corev1.EnvVar{{Name: "PORT", Value: "8080"}},
			want: execCall{"c1", "check --port=8080 $(MISSING)", 2 * time.Second}},
		{name: "no container spec: nothing expanded", noSpec: true,
			want: execCall{"c1", "check --port=$(PORT) $(MISSING)", 2 * time.Second}},
		{name: "a runtime error is an error of ExecSync", runtime: down,
			want: execCall{"c1", "check --port=$(PORT) $(MISSING)", 2 * time.Second}, wantErr: "runtime down", criOp: "ExecSync"},
		{name: "no runtime connection", noRuntime: true, wantErr: "no container runtime connection for exec probes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &fakeExecer{err: tc.runtime}
			env := Env{Runtime: rt}
			if tc.noRuntime {
				env.Runtime = nil
			}
			s := Spec{Probe: &corev1.Probe{TimeoutSeconds: 2, ProbeHandler: corev1.ProbeHandler{
				Exec: &corev1.ExecAction{Command: []string{"check", "--port=$(PORT)", "$(MISSING)"}}}}}
			if !tc.noSpec {
				s.Container = &corev1.Container{Name: "app", Env: tc.env}
			}
			r := NewRunner(context.Background(), env, s)
			for range 2 { // what the runner keeps serves every run
				o, err := r.Run(context.Background(), "containerd://c1")
				if tc.wantErr != "" {
					if err == nil || err.Error() != tc.wantErr {
						t.Fatalf("err = %v, want %q", err, tc.wantErr)
					}
					var re *RuntimeError
					if got := errors.As(err, &re); got != (tc.criOp != "") || got && (re.Op != tc.criOp || !errors.Is(err, down)) {
						t.Errorf("err %#v: a RuntimeError of %q expected: %v", err, tc.criOp, tc.criOp != "")
					}
					continue
				}
				if err != nil || o.Result != Success || o.Message != "out" {
					t.Fatalf("run: %+v, %v", o, err)
				}
			}
			if tc.noRuntime {
				return
			}
			if len(rt.calls) != 2 || rt.calls[0] != tc.want || rt.calls[1] != tc.want {
				t.Errorf("ExecSync calls %+v, want twice %+v", rt.calls, tc.want)
			}
		})
	}
}

func TestHTTPRunner(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.Host+r.URL.RequestURI()+" "+r.UserAgent())
	}))
	t.Cleanup(srv.Close)
	host, portStr, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	port, _ := strconv.Atoi(portStr)
	container := &corev1.Container{Name: "app", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}
	for _, tc := range []struct {
		name      string
		action    corev1.HTTPGetAction
		podIP     string
		want      string // what the server saw, twice
		wantErr   string
		cancelled bool // the context the runner was built with ended
	}{
		{name: "the pod IP and a port number", podIP: host,
			action: corev1.HTTPGetAction{Path: "/healthz?x=1", Port: intstr.FromInt32(int32(port))},
			want:   srv.Listener.Addr().String() + "/healthz?x=1 " + testUA},
		{name: "a named port of the container", podIP: host,
			action: corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")},
			want:   srv.Listener.Addr().String() + "/ " + testUA},
		{name: "a host of its own needs no pod IP",
			action: corev1.HTTPGetAction{Host: host, Path: "/", Port: intstr.FromInt32(int32(port))},
			want:   srv.Listener.Addr().String() + "/ " + testUA},
		{name: "no host and no pod IP yet", action: corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(port))},
			wantErr: "the pod has no IP address yet"},
		{name: "a named port the container does not have", podIP: host,
			action: corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("metrics")}, wantErr: `port "metrics" not found`},
		{name: "the context it was built with bounds its request", podIP: host, cancelled: true,
			action: corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(port))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			a := tc.action
			r := NewRunner(ctx, Env{HTTP: NewHTTP(), UserAgent: testUA},
				Spec{Probe: &corev1.Probe{TimeoutSeconds: 1, ProbeHandler: corev1.ProbeHandler{HTTPGet: &a}}, Container: container, PodIP: tc.podIP})
			if tc.cancelled {
				cancel()
			}
			for range 2 {
				o, err := r.Run(context.Background(), "c1")
				switch {
				case tc.wantErr != "":
					if err == nil || err.Error() != tc.wantErr {
						t.Fatalf("err = %v, want %q", err, tc.wantErr)
					}
				case tc.cancelled:
					if err != nil || o.Result != Failure || !strings.Contains(o.Message, "context canceled") {
						t.Fatalf("run after the context ended: %+v, %v", o, err)
					}
				case err != nil || o.Result != Success:
					t.Fatalf("run: %+v, %v", o, err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("requests %q, want none", got)
				}
				return
			}
			if len(got) != 2 || got[0] != tc.want || got[1] != tc.want {
				t.Errorf("requests %q, want twice %q", got, tc.want)
			}
		})
	}
}

func TestTCPRunner(t *testing.T) {
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
			_ = c.Close()
		}
	}()
	open := l.Addr().(*net.TCPAddr).Port
	closedL, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := closedL.Addr().(*net.TCPAddr).Port
	_ = closedL.Close()
	container := &corev1.Container{Name: "app", Ports: []corev1.ContainerPort{{Name: "svc", ContainerPort: int32(open)}}}
	for _, tc := range []struct {
		name    string
		action  corev1.TCPSocketAction
		podIP   string
		want    Result
		wantErr string
	}{
		{name: "the pod IP and a port number", podIP: "127.0.0.1", action: corev1.TCPSocketAction{Port: intstr.FromInt32(int32(open))}, want: Success},
		{name: "a named port of the container", podIP: "127.0.0.1", action: corev1.TCPSocketAction{Port: intstr.FromString("svc")}, want: Success},
		{name: "a host of its own needs no pod IP", action: corev1.TCPSocketAction{Host: "127.0.0.1", Port: intstr.FromInt32(int32(open))}, want: Success},
		{name: "a closed port fails", podIP: "127.0.0.1", action: corev1.TCPSocketAction{Port: intstr.FromInt32(int32(closed))}, want: Failure},
		{name: "no host and no pod IP yet", action: corev1.TCPSocketAction{Port: intstr.FromInt32(int32(open))}, wantErr: "the pod has no IP address yet"},
		{name: "a named port the container does not have", podIP: "127.0.0.1", action: corev1.TCPSocketAction{Port: intstr.FromString("metrics")},
			wantErr: `port "metrics" not found`},
		{name: "a port out of range", podIP: "127.0.0.1", action: corev1.TCPSocketAction{Port: intstr.FromInt32(70000)},
			wantErr: "invalid port number: 70000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.action
			r := NewRunner(context.Background(), Env{},
				Spec{Probe: &corev1.Probe{TimeoutSeconds: 1, ProbeHandler: corev1.ProbeHandler{TCPSocket: &a}}, Container: container, PodIP: tc.podIP})
			for range 2 {
				o, err := r.Run(context.Background(), "c1")
				if tc.wantErr != "" {
					if err == nil || err.Error() != tc.wantErr {
						t.Fatalf("err = %v, want %q", err, tc.wantErr)
					}
					continue
				}
				if err != nil || o.Result != tc.want {
					t.Fatalf("run: %+v, %v; want %v", o, err, tc.want)
				}
			}
		})
	}
}

func TestGRPCRunner(t *testing.T) {
	port, hs := grpcServer(t, true)
	hs.SetServingStatus("", grpchealth.HealthCheckResponse_SERVING)
	hs.SetServingStatus("down", grpchealth.HealthCheckResponse_NOT_SERVING)
	for _, tc := range []struct {
		name    string
		service *string
		podIP   string
		want    string // the outcome's message
		wantErr string
	}{
		{name: "no service: the server's overall health", podIP: "127.0.0.1", want: "service healthy"},
		{name: "the named service", podIP: "127.0.0.1", service: new("down"), want: `service unhealthy (responded with "NOT_SERVING")`},
		{name: "no pod IP yet", wantErr: "the pod has no IP address yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRunner(context.Background(), Env{UserAgent: testUA}, Spec{PodIP: tc.podIP,
				Probe: &corev1.Probe{TimeoutSeconds: 1, ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: int32(port), Service: tc.service}}}})
			for range 2 {
				o, err := r.Run(context.Background(), "c1")
				if tc.wantErr != "" {
					if err == nil || err.Error() != tc.wantErr {
						t.Fatalf("err = %v, want %q", err, tc.wantErr)
					}
					continue
				}
				if err != nil || o.Message != tc.want {
					t.Fatalf("run: %+v, %v; want %q", o, err, tc.want)
				}
			}
		})
	}
}
