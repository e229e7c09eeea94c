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

package facts

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

func TestJobDesired(t *testing.T) {
	cases := []struct {
		name                  string
		parallelism, complete *int32
		succeeded             int32
		want                  int32
	}{
		{name: "defaults: one pod", want: 1},
		{name: "parallelism", parallelism: ptr.To[int32](4), want: 4},
		{name: "work queue (no completions)", parallelism: ptr.To[int32](3), succeeded: 2, want: 3},
		{name: "bounded by the completions missing", parallelism: ptr.To[int32](5), complete: ptr.To[int32](6), succeeded: 4, want: 2},
		{name: "completions reached while a pod exists: still 1", parallelism: ptr.To[int32](2), complete: ptr.To[int32](3), succeeded: 3, want: 1},
		{name: "parallelism 0 (suspended by hand) while a pod exists: 1", parallelism: ptr.To[int32](0), want: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: c.parallelism, Completions: c.complete},
				Status: batchv1.JobStatus{Succeeded: c.succeeded}}
			if got := JobDesired(job); got != c.want {
				t.Errorf("JobDesired = %d, want %d", got, c.want)
			}
		})
	}
}

// A CronJob's pod resolves to its Job (not to the CronJob, which controls no pod itself), with the
// Job's desired count, and the Job's pods are the workload's pods.
func TestCronJobPodResolvesToItsJob(t *testing.T) {
	ctx := context.Background()
	cron := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "nightly", UID: "cj"}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "nightly-290", UID: "job",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "nightly", UID: "cj",
			Controller: ptr.To(true)}}},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](2), Completions: ptr.To[int32](5)}, Status: batchv1.JobStatus{Succeeded: 4}}
	api := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(cron, job).Build()
	pod := testutil.NewPod("shop", "nightly-290-x").ControlledBy("batch/v1", "Job", "nightly-290", "job").Build()
	cache := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(pod).
		WithIndex(&corev1.Pod{}, managercache.ByController, managercache.ControllerUID).
		WithIndex(&appsv1.ReplicaSet{}, managercache.ByController, managercache.ControllerUID).Build()
	w := NewWorkloads(cache, api, api, clock.RealClock{})
	wl, err := w.Resolve(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	if wl.Ref.Kind != "Job" || wl.Ref.Name != "nightly-290" || wl.Desired == nil || *wl.Desired != 1 || !wl.Bound {
		t.Fatalf("workload %s desired %v, want Job nightly-290 with 1 (parallelism 2, 1 completion missing)", wl.Ref, wl.Desired)
	}
	pods, err := w.Pods(ctx, pod, wl)
	if err != nil || len(pods) != 1 || pods[0].Name != pod.Name {
		t.Fatalf("pods of the Job: %v, %v", pods, err)
	}
}
