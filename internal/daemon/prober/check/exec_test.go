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
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
)

func startCRI(t *testing.T, exec func(*runtimeapi.ExecSyncRequest) critest.ExecResult) (cri.Runtime, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "x")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	srv := &critest.Server{ExecFunc: exec}
	ep, err := srv.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	id := srv.AddContainer("sb", "app")
	rt, err := cri.Connect(context.Background(), ep, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return rt, "containerd://" + id
}

func TestExec_26_ExitCodesAndOutput(t *testing.T) {
	cases := []struct {
		name string
		r    critest.ExecResult
		want Result
		out  string
	}{
		{"exit 0", critest.ExecResult{Stdout: "fine"}, Success, "fine"},
		{"exit 1: stdout then stderr", critest.ExecResult{Stdout: "out;", Stderr: "err", ExitCode: 1}, Failure, "out;err"},
		{"exit 2 with nothing", critest.ExecResult{ExitCode: 2}, Failure, ""},
		{"output capped at 10 KiB", critest.ExecResult{Stdout: strings.Repeat("a", 8<<10), Stderr: strings.Repeat("b", 8<<10), ExitCode: 1}, Failure,
			strings.Repeat("a", 8<<10) + strings.Repeat("b", 2<<10)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt, id := startCRI(t, func(*runtimeapi.ExecSyncRequest) critest.ExecResult { return tc.r })
			res, out, err := triple(Exec(context.Background(), rt, id, []string{"check"}, time.Second))
			if res != tc.want || out != tc.out || err != nil {
				t.Errorf("got %v %q %v, want %v %q", res, out, err, tc.want, tc.out)
			}
		})
	}
}

func TestExec_26_TimeoutIsFailureWithMessage(t *testing.T) {
	var gotTimeout int64
	rt, id := startCRI(t, func(r *runtimeapi.ExecSyncRequest) critest.ExecResult {
		gotTimeout = r.Timeout
		return critest.ExecResult{Delay: 3 * time.Second}
	})
	res, out, err := triple(Exec(context.Background(), rt, id, []string{"sh", "-c", "sleep 5"}, time.Second))
	want := `command timed out: "sh -c sleep 5" timed out after 1s`
	if res != Failure || out != want || err != nil {
		t.Errorf("got %v %q %v, want Failure %q", res, out, err, want)
	}
	if gotTimeout != 1 {
		t.Errorf("ExecSync timeout = %d s, want timeoutSeconds (1)", gotTimeout)
	}
}

func TestExec_14_RuntimeErrorIsAnError(t *testing.T) {
	rt, id := startCRI(t, func(*runtimeapi.ExecSyncRequest) critest.ExecResult {
		return critest.ExecResult{Err: status.Error(codes.Unavailable, "runtime is restarting")}
	})
	res, _, err := triple(Exec(context.Background(), rt, id, []string{"check"}, time.Second))
	if res != Unknown || err == nil || !strings.Contains(err.Error(), "runtime is restarting") {
		t.Errorf("got %v %v, want Unknown with the runtime error", res, err)
	}
}

func TestExec_26_ContainerIDPrefixIsTrimmed(t *testing.T) {
	var got string
	rt, id := startCRI(t, func(r *runtimeapi.ExecSyncRequest) critest.ExecResult {
		got = r.ContainerId
		return critest.ExecResult{}
	})
	if res, _, err := triple(Exec(context.Background(), rt, id, []string{"true"}, time.Second)); res != Success || err != nil {
		t.Fatal(res, err)
	}
	if "containerd://"+got != id {
		t.Errorf("ExecSync got container %q, want the CRI ID of %q", got, id)
	}
}

func TestExec_26_ExpandCommandFromLiteralEnvOnly(t *testing.T) {
	env := []corev1.EnvVar{
		{Name: "PORT", Value: "8080"},
		{Name: "EMPTY", Value: ""},
		{Name: "FROM_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "k"}}},
	}
	cases := []struct{ in, want string }{
		{"curl localhost:$(PORT)/", "curl localhost:8080/"},
		{"$(PORT)$(PORT)", "80808080"},
		{"$(UNDEFINED)", "$(UNDEFINED)"},
		{"$$(PORT)", "$(PORT)"},
		{"$$$(PORT)", "$8080"},
		{"a$$b", "a$b"},
		{"$(EMPTY)x", "x"},
		{"$(FROM_SECRET)", ""},
		{"$(PORT", "$(PORT"},
		{"cost $5", "cost $5"},
		{"trailing $", "trailing $"},
		{"no vars", "no vars"},
	}
	for _, tc := range cases {
		got := ExpandCommand([]string{tc.in}, env)
		if !reflect.DeepEqual(got, []string{tc.want}) {
			t.Errorf("expand(%q) = %q, want %q", tc.in, got[0], tc.want)
		}
	}
	if ExpandCommand(nil, env) != nil {
		t.Error("nil command must stay nil")
	}
}
