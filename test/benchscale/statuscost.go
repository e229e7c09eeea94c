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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// writeCost is what n writes of one kind cost the control plane.
type writeCost struct {
	objectBytes           int
	wall, apiserver, etcd time.Duration
}

// statusCase is one kind of status write measured: setup creates the object and returns the
// function that makes write k.
type statusCase struct {
	name  string
	pods  int
	setup func(ctx context.Context, c client.Client) (objectBytes int, write func(k int) error, err error)
}

// statusWriteCost measures what one status write costs the API server and etcd, each kind n
// times in a row on one control plane: the node daemon's results write (the sparse results in the
// node's NodePodProbeReport) at each size of podCounts, and the kubelet's pod status patch of a
// container restart, the native reference (-status-writes; docs/performance.md,
// "NodePodProbeReport status writes").
func statusWriteCost(podCounts []int, n int) error {
	cases := make([]statusCase, 0, len(podCounts)+1)
	for _, p := range podCounts {
		cases = append(cases, statusCase{"report status write", p, reportStatus(p)})
	}
	cases = append(cases, statusCase{"pod status patch (native)", 1, podStatusPatch})

	env, err := testutil.NewEnvironment()
	if err != nil {
		return err
	}
	cfg, err := env.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()
	cfg.QPS, cfg.Burst = -1, -1
	c, err := client.New(cfg, client.Options{Scheme: testutil.Scheme()})
	if err != nil {
		return err
	}
	ctx := context.Background()
	fmt.Printf("Status writes: %d writes per kind on one control plane, load %s\n", n, loadAvg())
	results := make([]writeCost, len(cases))
	for i, sc := range cases {
		if results[i], err = measure(ctx, c, sc, n); err != nil {
			return fmt.Errorf("%s at %d pods: %w", sc.name, sc.pods, err)
		}
	}
	native := results[len(results)-1].apiserver
	fmt.Printf("%-28s %5s %10s %10s %18s %10s %10s\n", "write", "pods", "object B", "wall ms", "kube-apiserver ms", "etcd ms", "× native")
	for i, sc := range cases {
		r := results[i]
		per := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
		fmt.Printf("%-28s %5d %10d %10.2f %18.2f %10.2f %10.1f\n", sc.name, sc.pods, r.objectBytes,
			per(r.wall), per(r.apiserver), per(r.etcd), float64(r.apiserver)/float64(max(native, 1)))
	}
	fmt.Printf("load after: %s\n", loadAvg())
	return nil
}

// measure sets the case up and reads the control plane's CPU time around its n writes.
func measure(ctx context.Context, c client.Client, sc statusCase, n int) (writeCost, error) {
	var r writeCost
	size, write, err := sc.setup(ctx, c)
	if err != nil {
		return r, err
	}
	r.objectBytes = size
	cpu0, t0 := controlPlaneCPU(), time.Now()
	for k := 1; k <= n; k++ {
		if err := write(k); err != nil {
			return r, err
		}
	}
	r.wall = time.Since(t0)
	cpu1 := controlPlaneCPU()
	r.apiserver, r.etcd = cpu1["kube-apiserver"]-cpu0["kube-apiserver"], cpu1["etcd"]-cpu0["etcd"]
	return r, nil
}

var objects int

// reportStatus is what the daemon writes on a node of pods pods, all passing but one at a time:
// each write reports one pod Failed in the node's NodePodProbeReport, the next one passing again
// (its entry gone), status.probedGeneration marking the spec of its NodePodProbe as probed (merge
// patch with the resourceVersion, as the daemon writes).
func reportStatus(pods int) func(context.Context, client.Client) (int, func(int) error, error) {
	return func(ctx context.Context, c client.Client) (int, func(int) error, error) {
		objects++
		npp := nodePodProbe(fmt.Sprintf("node-%d", objects), pods)
		if err := c.Create(ctx, npp, client.FieldOwner("manager")); err != nil {
			return 0, nil, err
		}
		rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: npp.Name}}
		if err := c.Create(ctx, rep, client.FieldOwner("manager")); err != nil {
			return 0, nil, err
		}
		base := rep.DeepCopy()
		rep.Status.ProbedGeneration, rep.Status.ProbedPods = npp.Generation, int32(pods)
		if err := c.Status().Patch(ctx, rep, client.MergeFrom(base), client.FieldOwner("daemon")); err != nil {
			return 0, nil, err
		}
		whole, _ := json.Marshal(rep)
		return len(whole), func(k int) error {
			before := rep.DeepCopy()
			if k%2 == 1 {
				rep.Status.PodProbeStatuses = []appsv1alpha1.PodProbeStatus{podState(npp, (k/2)%pods, true)}
				rep.Status.FailingProbes = 1
			} else {
				rep.Status.PodProbeStatuses, rep.Status.FailingProbes = nil, 0
			}
			return c.Status().Patch(ctx, rep, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}),
				client.FieldOwner("daemon"))
		}, nil
	}
}

// podStatusPatch is the native reference: the kubelet's status patch of a pod whose container
// it has just restarted (new container ID, restart count, ready flips), a strategic merge patch.
func podStatusPatch(ctx context.Context, c client.Client) (int, func(int) error, error) {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz",
		Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10, FailureThreshold: 3}
	pod := testutil.NewPod("default", "web-7c9d5b8f4d-00000").OnNode("node-1").LivenessProbe("app", probe).
		Labels(map[string]string{"app": "web", "pod-template-hash": "7c9d5b8f4d"}).Build()
	if err := c.Create(ctx, pod); err != nil {
		return 0, nil, err
	}
	started := time.Now()
	before := pod.DeepCopy()
	pod.Status = testutil.RunningStatus(pod, "10.0.0.1", 1, true, started)
	if err := c.Status().Patch(ctx, pod, client.StrategicMergeFrom(before), client.FieldOwner("kubelet")); err != nil {
		return 0, nil, err
	}
	whole, _ := json.Marshal(pod)
	return len(whole), func(k int) error {
		before := pod.DeepCopy()
		pod.Status = testutil.RunningStatus(pod, "10.0.0.1", k+1, k%2 == 0, started.Add(time.Duration(k)*time.Second))
		return c.Status().Patch(ctx, pod, client.StrategicMergeFrom(before), client.FieldOwner("kubelet"))
	}, nil
}

// nodePodProbe is the spec the mapping controller writes for pods pods of a typical web
// Deployment (one HTTP liveness probe each, in container app).
func nodePodProbe(name string, pods int) *appsv1alpha1.NodePodProbe {
	npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for i := range pods {
		npp.Spec.PodProbes = append(npp.Spec.PodProbes, appsv1alpha1.PodProbe{
			Name: fmt.Sprintf("web-7c9d5b8f4d-%05d", i), Namespace: appName,
			UID: types.UID(fmt.Sprintf("0e4b3c4e-%04d-4f5e-9a1b-2c3d4e5f6a7b", i)),
		})
	}
	return npp
}

// podState is what the daemon reports for pod i: Succeeded, or Failed with the prober's message.
func podState(npp *appsv1alpha1.NodePodProbe, i int, failed bool) appsv1alpha1.PodProbeStatus {
	p := npp.Spec.PodProbes[i]
	st := appsv1alpha1.ContainerProbeState{Name: p.Name + "-app", ContainerID: "containerd://" + strings.Repeat("7f", 32),
		State: appsv1alpha1.ProbeSucceeded, LastProbeTime: metav1.Now(), LastTransitionTime: metav1.Now()}
	if failed {
		st.State, st.Message = appsv1alpha1.ProbeFailed, "HTTP probe failed with statuscode: 500"
		st.FailingSince = &metav1.Time{Time: time.Now().Add(-20 * time.Second)}
	}
	return appsv1alpha1.PodProbeStatus{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ProbeStates: []appsv1alpha1.ContainerProbeState{st}}
}
