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
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

const nppCRD = "apps.enhancedliveness.io_nodepodprobes.yaml"

// The CRDs measured: path relative to the repository root.
var variants = []struct{ name, crd string }{
	{"shipped (atomic lists)", filepath.Join("config", "crd", "bases", nppCRD)},
	{"previous (map lists)", filepath.Join("internal", "controller", "apps", "testdata", "nodepodprobes-map-lists.yaml")},
}

type writeCost struct {
	objectBytes, managedBytes int
	wall, apiserver, etcd     time.Duration
}

// statusWriteCost measures what one NodePodProbe status write costs the API server: the node
// daemon's merge patch of one pod's state, n times in a row on a NodePodProbe of pods pods, once
// with the shipped CRD and once with the previous release's (per-entry map lists), each on a
// control plane of its own (-status-writes; docs/development.md, "NodePodProbe size").
func statusWriteCost(pods, n int) error {
	fmt.Printf("NodePodProbe status writes: %d pods, %d writes per variant, load %s\n", pods, n, loadAvg())
	fmt.Printf("%-24s %12s %14s %12s %18s %12s\n", "CRD", "object B", "managedFields B", "wall ms", "kube-apiserver ms", "etcd ms")
	for _, v := range variants {
		r, err := measure(v.crd, pods, n)
		if err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		per := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(n) }
		fmt.Printf("%-24s %12d %14d %12.2f %18.2f %12.2f\n", v.name, r.objectBytes, r.managedBytes,
			per(r.wall), per(r.apiserver), per(r.etcd))
	}
	return nil
}

// measure starts a control plane with crd, creates the NodePodProbe as the manager does, writes
// its whole status once and then n single-pod changes as the daemon does (merge patch, optimistic
// lock), and reads the control plane's CPU time around the n writes.
func measure(crdPath string, pods, n int) (writeCost, error) {
	var r writeCost
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), crdPath))
	if err != nil {
		return r, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		return r, err
	}
	env, err := testutil.NewEnvironment(false)
	if err != nil {
		return r, err
	}
	env.CRDDirectoryPaths, env.CRDs = nil, []*apiextensionsv1.CustomResourceDefinition{crd}
	cfg, err := env.Start()
	if err != nil {
		return r, err
	}
	defer func() { _ = env.Stop() }()
	cfg.QPS, cfg.Burst = -1, -1
	c, err := client.New(cfg, client.Options{Scheme: testutil.Scheme()})
	if err != nil {
		return r, err
	}
	ctx := context.Background()
	npp := nodePodProbe(pods)
	if err := c.Create(ctx, npp, client.FieldOwner("manager")); err != nil {
		return r, err
	}
	base := npp.DeepCopy()
	for i := range pods {
		npp.Status.PodProbeStatuses = append(npp.Status.PodProbeStatuses, podState(npp, i, false))
	}
	npp.Status.ProbedPods = int32(pods)
	if err := c.Status().Patch(ctx, npp, client.MergeFrom(base), client.FieldOwner("daemon")); err != nil {
		return r, err
	}
	whole, _ := json.Marshal(npp)
	managed, _ := json.Marshal(npp.ManagedFields)
	r.objectBytes, r.managedBytes = len(whole), len(managed)

	cpu0, t0 := controlPlaneCPU(), time.Now()
	for k := 1; k <= n; k++ {
		before := npp.DeepCopy()
		i := k % pods
		npp.Status.PodProbeStatuses[i] = podState(npp, i, (k/pods)%2 == 0)
		if err := c.Status().Patch(ctx, npp, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}),
			client.FieldOwner("daemon")); err != nil {
			return r, err
		}
	}
	r.wall = time.Since(t0)
	cpu1 := controlPlaneCPU()
	r.apiserver, r.etcd = cpu1["kube-apiserver"]-cpu0["kube-apiserver"], cpu1["etcd"]-cpu0["etcd"]
	return r, nil
}

// nodePodProbe is the spec the mapping controller writes for pods pods of a typical web
// Deployment (one HTTP liveness probe each, defaults spelled out as the mapping writes them).
func nodePodProbe(pods int) *appsv1alpha1.NodePodProbe {
	npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	probe := corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080),
			Scheme: corev1.URISchemeHTTP}},
		PeriodSeconds: 10, FailureThreshold: 3, TimeoutSeconds: 1, SuccessThreshold: 1,
	}
	for i := range pods {
		name := fmt.Sprintf("web-7c9d5b8f4d-%05d", i)
		npp.Spec.PodProbes = append(npp.Spec.PodProbes, appsv1alpha1.PodProbe{
			Name: name, Namespace: "shop", UID: types.UID(fmt.Sprintf("0e4b3c4e-%04d-4f5e-9a1b-2c3d4e5f6a7b", i)),
			IP:     fmt.Sprintf("10.0.%d.%d", i/250, i%250+1),
			Probes: []appsv1alpha1.ContainerProbe{{Name: name + "-app", ContainerName: "app", Probe: probe}},
		})
	}
	return npp
}

// podState is what the daemon reports for pod i: Succeeded, or Failed with the prober's message.
func podState(npp *appsv1alpha1.NodePodProbe, i int, failed bool) appsv1alpha1.PodProbeStatus {
	p := npp.Spec.PodProbes[i]
	st := appsv1alpha1.ContainerProbeState{Name: p.Probes[0].Name, ContainerID: "containerd://" + strings.Repeat("7f", 32),
		State: appsv1alpha1.ProbeSucceeded, LastProbeTime: metav1.Now(), LastTransitionTime: metav1.Now()}
	if failed {
		st.State, st.Message = appsv1alpha1.ProbeFailed, "HTTP probe failed with statuscode: 500"
	}
	return appsv1alpha1.PodProbeStatus{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ProbeStates: []appsv1alpha1.ContainerProbeState{st}}
}
