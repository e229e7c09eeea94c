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

package recreate

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

func TestStopTimeout(t *testing.T) {
	cases := []struct {
		total   int64
		preStop time.Duration
		want    int64
	}{
		{30, 0, 30},
		{30, 5*time.Second + 900*time.Millisecond, 25}, // whole seconds are subtracted
		{30, 28 * time.Second, 2},
		{30, 40 * time.Second, 2}, // a hook that overran: floor
		{1, 0, 2},
		{0, 0, 2},
	}
	for _, tc := range cases {
		if got := StopTimeout(tc.total, tc.preStop); got != tc.want {
			t.Errorf("StopTimeout(%d, %v) = %d, want %d", tc.total, tc.preStop, got, tc.want)
		}
	}
}

func TestRunsPreStop(t *testing.T) {
	withHook := &corev1.Container{Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}}}
	if !RunsPreStop(withHook, 1) || RunsPreStop(withHook, 0) || RunsPreStop(&corev1.Container{}, 30) {
		t.Error("preStop runs only when there is a hook and a grace period above zero")
	}
}

func crrAt(name string, created time.Time, phase appsv1alpha1.ContainerRecreateRequestPhase) appsv1alpha1.ContainerRecreateRequest {
	return appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(created)},
		Status:     appsv1alpha1.ContainerRecreateRequestStatus{Phase: phase},
	}
}

func TestNextToRun(t *testing.T) {
	cases := []struct {
		name string
		crrs []appsv1alpha1.ContainerRecreateRequest
		want string
	}{
		{"none", nil, ""},
		{"oldest first", []appsv1alpha1.ContainerRecreateRequest{crrAt("b", t0.Add(time.Second), ""), crrAt("a", t0.Add(2*time.Second), "")}, "b"},
		{"same second: by name", []appsv1alpha1.ContainerRecreateRequest{crrAt("z", t0, ""), crrAt("m", t0, pending)}, "m"},
		{"a running one keeps its turn", []appsv1alpha1.ContainerRecreateRequest{crrAt("old", t0, pending), crrAt("new", t0.Add(time.Minute), recreating)}, "new"},
		{"finished ones do not count", []appsv1alpha1.ContainerRecreateRequest{crrAt("done", t0, succeeded), crrAt("failed", t0, failedP), crrAt("next", t0.Add(time.Hour), "")}, "next"},
		{"all finished", []appsv1alpha1.ContainerRecreateRequest{crrAt("done", t0, succeeded)}, ""},
	}
	for _, tc := range cases {
		got := NextToRun(tc.crrs)
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, name, tc.want)
		}
	}
}

func TestObservePod(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyOnFailure,
			InitContainers: []corev1.Container{
				{Name: "init"},
				{Name: "sidecar", RestartPolicy: &always},
			},
			Containers: []corev1.Container{{Name: "app"}, {Name: "done"}},
		},
		Status: corev1.PodStatus{
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "sidecar", ContainerID: "c://s1",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}, Started: ptr.To(false)}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", ContainerID: "c://a1", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}},
				{Name: "done", ContainerID: "c://d1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
			},
		},
	}
	app := ObservePod(pod)["app"]
	if !app.InSpec || app.RestartPolicy != corev1.RestartPolicyOnFailure || app.ContainerID != "c://a1" || !app.Running || !app.Started || !app.StartedAt.Equal(t0) {
		t.Errorf("app: %+v", app)
	}
	if s := ObservePod(pod)["sidecar"]; !s.InSpec || s.RestartPolicy != corev1.RestartPolicyAlways || s.ContainerID != "c://s1" || s.Started {
		t.Errorf("sidecar: %+v", s)
	}
	if d := ObservePod(pod)["done"]; d.Running || d.ContainerID != "c://d1" {
		t.Errorf("done: %+v", d)
	}
	if i := ObservePod(pod)["init"]; i.InSpec {
		t.Errorf("a plain init container is not restartable: %+v", i)
	}
	// The kubelet judges each container by its own restartPolicy when it has one.
	never := pod.DeepCopy()
	never.Spec.RestartPolicy = corev1.RestartPolicyNever
	never.Spec.Containers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	never.Spec.Containers[1].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyOnFailure)
	if a := ObservePod(never)["app"]; a.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("a container's own Always in a Never pod: %+v", a)
	}
	if d := ObservePod(never)["done"]; d.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("a container's own OnFailure: %+v", d)
	}
	if s := ObservePod(never)["sidecar"]; s.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("a sidecar in a Never pod: %+v", s)
	}
	pod.Spec.RestartPolicy = ""
	if a := ObservePod(pod)["app"]; a.RestartPolicy != corev1.RestartPolicyAlways {
		t.Errorf("empty restartPolicy means Always: %+v", a)
	}
}
