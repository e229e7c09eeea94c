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

package prober

import (
	"context"
	"os"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
)

func TestWorker_14_26_ExecThroughCRI(t *testing.T) {
	dir, err := os.MkdirTemp("", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	srv := &critest.Server{}
	var fail atomic.Bool
	srv.ExecFunc = func(r *runtimeapi.ExecSyncRequest) critest.ExecResult {
		if fail.Load() {
			return critest.ExecResult{Err: status.Error(codes.Unavailable, "runtime restarting")}
		}
		return critest.ExecResult{Stdout: "fine"}
	}
	ep, err := srv.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	id := srv.AddContainer("uid-1", "app")
	rt, err := cri.Connect(context.Background(), ep, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}

	f := newFixture(t)
	f.m.Runtime = rt
	p := f.pod.DeepCopy()
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PORT", Value: "8080"}}
	p.Status.ContainerStatuses[0].ContainerID = "containerd://" + id
	f.setPod(p)
	tg := f.target(3)
	tg.Probe.HTTPGet = nil
	tg.Probe.Exec = &corev1.ExecAction{Command: []string{"check", "--port=$(PORT)"}}
	w := f.worker(tg)
	f.run(w, 0)
	calls := srv.Calls("ExecSync")
	if len(calls) != 1 || calls[0].ContainerID != id || !reflect.DeepEqual(calls[0].Cmd, []string{"check", "--port=8080"}) || calls[0].Timeout != 1 {
		t.Fatalf("ExecSync calls %+v", calls)
	}
	mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)

	fail.Store(true)
	criErrors := testutil.ToFloat64(CRIErrors.WithLabelValues("ExecSync"))
	f.run(w, 0)
	if n := len(srv.Calls("ExecSync")); n != 1+maxProbeRetries {
		t.Errorf("%d ExecSync calls, want 1 + %d retries of the errored run", n, maxProbeRetries)
	}
	if n := testutil.ToFloat64(CRIErrors.WithLabelValues("ExecSync")) - criErrors; n != maxProbeRetries {
		t.Errorf("%v ExecSync errors counted, want one per attempt (%d)", n, maxProbeRetries)
	}
	mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded) // the error changed nothing
}
