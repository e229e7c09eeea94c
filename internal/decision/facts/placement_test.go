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
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

func nodeTerm(reqs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: reqs}
}

func fieldTerm(reqs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchFields: reqs}
}

func in(key string, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}

func requiredAffinity(terms ...corev1.NodeSelectorTerm) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
}

// What a pod's own spec says of the node it is bound to.
func TestBoundBySpec(t *testing.T) {
	hostname := corev1.LabelHostname
	for _, tc := range []struct {
		name     string
		mutate   func(*corev1.Pod)
		node, by string
	}{
		{"nothing binds it", func(*corev1.Pod) {}, "", ""},
		{"a mirror pod", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "abc"} },
			"n1", "its kubelet (a static pod, made again from the node's manifest)"},
		{"nodeSelector hostname", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{hostname: "h1"} },
			"h1", "spec.nodeSelector kubernetes.io/hostname"},
		{"nodeSelector of a zone", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: "z1"} }, "", ""},
		{"required metadata.name In one node", requiredAffinity(fieldTerm(in("metadata.name", "n1"))),
			"n1", "its required node affinity (metadata.name)"},
		{"required hostname In one value, beside another requirement", requiredAffinity(nodeTerm(in("disk", "ssd"), in(hostname, "h1"))),
			"h1", "its required node affinity (kubernetes.io/hostname)"},
		{"two terms naming the same node", requiredAffinity(fieldTerm(in("metadata.name", "n1")), nodeTerm(in(hostname, "n1"))),
			"n1", "its required node affinity (metadata.name)"},
		{"two terms naming two nodes", requiredAffinity(fieldTerm(in("metadata.name", "n1")), fieldTerm(in("metadata.name", "n2"))), "", ""},
		{"a term that names no node beside one that does", requiredAffinity(fieldTerm(in("metadata.name", "n1")), nodeTerm(in("disk", "ssd"))), "", ""},
		{"hostname In two values", requiredAffinity(nodeTerm(in(hostname, "h1", "h2"))), "", ""},
		{"hostname NotIn one value", requiredAffinity(nodeTerm(corev1.NodeSelectorRequirement{Key: hostname,
			Operator: corev1.NodeSelectorOpNotIn, Values: []string{"h1"}})), "", ""},
		{"only preferred affinity", func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
				{Weight: 1, Preference: fieldTerm(in("metadata.name", "n1"))}}}}
		}, "", ""},
		{"a hostPath volume", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "logs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}}}
		}, "n1", "the data of its hostPath volume logs"},
		{"an emptyDir volume only", func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testutil.NewPod("ns", "web-0").OnNode("n1").With(tc.mutate).Build()
			if node, by := boundBySpec(p); node != tc.node || by != tc.by {
				t.Errorf("got %q by %q, want %q by %q", node, by, tc.node, tc.by)
			}
		})
	}
}

// Which PersistentVolumes bind their pods to one node.
func TestVolumeNode(t *testing.T) {
	pinned := &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
		nodeTerm(in(corev1.LabelHostname, "h1"))}}}
	zonal := &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
		nodeTerm(in(corev1.LabelTopologyZone, "z1"))}}}
	pv := func(src corev1.PersistentVolumeSource, a *corev1.VolumeNodeAffinity) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: src, NodeAffinity: a}}
	}
	local := corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disks/1"}}
	csi := corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "v"}}
	for _, tc := range []struct {
		name       string
		pv         *corev1.PersistentVolume
		node, what string
	}{
		{"a local volume with its node affinity", pv(local, pinned), "h1", "local PersistentVolume pv-1"},
		{"a local volume without one: the pod's node", pv(local, nil), "n1", "local PersistentVolume pv-1"},
		{"a hostPath volume", pv(corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}, nil),
			"n1", "hostPath PersistentVolume pv-1"},
		{"a CSI volume pinned to one node (a node-local driver)", pv(csi, pinned),
			"h1", "PersistentVolume pv-1, required node affinity on kubernetes.io/hostname"},
		{"a zonal CSI volume", pv(csi, zonal), "", ""},
		{"a network volume", pv(corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}, nil), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if node, what := volumeNode(tc.pv, "n1"); node != tc.node || what != tc.what {
				t.Errorf("got %q (%q), want %q (%q)", node, what, tc.node, tc.what)
			}
		})
	}
}

// The placement is read only when an eviction could follow; a controller that says it all needs
// no read; the pod, its claims and their volumes are read from the API server once per pod.
func TestPlacementReads(t *testing.T) {
	ctx := context.Background()
	const ns = "shop"
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1", UID: "rs-1"}}
	pinnedRS := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pinned-1", UID: "rs-2"},
		Spec: appsv1.ReplicaSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeName: "n1"}}}}
	owners := map[string]types.UID{rs.Name: rs.UID, pinnedRS.Name: pinnedRS.UID}
	pod := func(name, apiVersion, kind, owner string, volumes ...corev1.Volume) *corev1.Pod {
		uid := owners[owner]
		if uid == "" {
			uid = types.UID("uid-" + owner)
		}
		return testutil.NewPod(ns, name).OnNode("n1").ControlledBy(apiVersion, kind, owner, uid).
			With(func(p *corev1.Pod) { p.UID, p.Spec.Volumes = types.UID("uid-"+name), volumes }).Build()
	}
	claim := func(name string) corev1.Volume {
		return corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}}
	}
	pvc := func(name, volume string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume}}
	}
	localPV := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-local"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt"}}}}
	netPV := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-net"},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}}}
	pods := []*corev1.Pod{
		pod("ds-0", "apps/v1", "DaemonSet", "agent"),
		pod("job-0", "batch/v1", "Job", "backup"),
		pod("static-0", "v1", "Node", "n1"),
		pod("web-0", "apps/v1", "ReplicaSet", rs.Name),
		pod("db-0", "apps/v1", "StatefulSet", "db", claim("data-db-0")),
		pod("shared-0", "apps/v1", "ReplicaSet", rs.Name, claim("shared")),
		pod("pinned-0", "apps/v1", "ReplicaSet", pinnedRS.Name),
		pod("secret-0", "apps/v1", "StatefulSet", "db", claim("forbidden")),
		pod("broken-0", "apps/v1", "StatefulSet", "db", claim("broken")),
	}
	objs := []client.Object{rs, pinnedRS, pvc("data-db-0", localPV.Name), pvc("shared", netPV.Name), localPV, netPV}
	for _, p := range pods {
		objs = append(objs, p)
	}
	store := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(objs...).Build()
	reads := map[string]int{}
	api := interceptor.NewClient(store, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		reads[key.Name]++
		switch key.Name {
		case "forbidden":
			return apierrors.NewForbidden(schema.GroupResource{Resource: "persistentvolumeclaims"}, key.Name, errors.New("no RBAC"))
		case "broken":
			return errors.New("connection refused")
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	evicting := rules.Governing{{Breaker: rules.RestartBreaker{Enabled: true, MinIneffective: 2, Window: time.Minute, Evict: true}}}
	facts := func(g rules.Governing, passing int) *rules.Facts {
		return &rules.Facts{Policies: g, Elsewhere: map[string]int{"app": passing}}
	}
	r := &Reader{cache: store, api: api, placements: newPlacements()}
	for _, tc := range []struct {
		pod   string
		facts *rules.Facts
		want  rules.Placement
		reads map[string]int
		err   bool
	}{
		{"web-0", facts(rules.Governing{{Breaker: rules.DefaultRestartBreaker}}, 1), rules.Placement{}, nil, false},
		{"web-0", facts(evicting, 0), rules.Placement{}, nil, false},
		{"ds-0", facts(evicting, 1), rules.Placement{ControllerGroup: "apps", ControllerKind: "DaemonSet"}, nil, false},
		{"job-0", facts(evicting, 1), rules.Placement{ControllerGroup: "batch", ControllerKind: "Job"}, nil, false},
		{"static-0", facts(evicting, 1), rules.Placement{ControllerKind: "Node", Node: "n1", By: staticPod}, nil, false},
		{"web-0", facts(evicting, 1), rules.Placement{ControllerGroup: "apps", ControllerKind: "ReplicaSet"}, map[string]int{"web-0": 1}, false},
		{"web-0", facts(evicting, 1), rules.Placement{ControllerGroup: "apps", ControllerKind: "ReplicaSet"}, nil, false},
		{"db-0", facts(evicting, 1), rules.Placement{ControllerGroup: "apps", ControllerKind: "StatefulSet", Node: "n1",
			By: "PersistentVolumeClaim data-db-0 (local PersistentVolume pv-local)"}, map[string]int{"db-0": 1, "data-db-0": 1, "pv-local": 1}, false},
		{"db-0", facts(evicting, 1), rules.Placement{ControllerGroup: "apps", ControllerKind: "StatefulSet", Node: "n1",
			By: "PersistentVolumeClaim data-db-0 (local PersistentVolume pv-local)"}, nil, false},
		{"shared-0", facts(evicting, 1), rules.Placement{ControllerGroup: "apps", ControllerKind: "ReplicaSet"},
			map[string]int{"shared-0": 1, "shared": 1, "pv-net": 1}, false},
		{"pinned-0", facts(evicting, 1), rules.Placement{ControllerGroup: "apps", ControllerKind: "ReplicaSet", Node: "n1",
			By: "spec.nodeName of the pod template of ReplicaSet pinned-1"}, map[string]int{"pinned-0": 1}, false},
		{"secret-0", facts(evicting, 1), rules.Placement{ControllerGroup: "apps", ControllerKind: "StatefulSet"},
			map[string]int{"secret-0": 1, "forbidden": 1}, false},
		{"broken-0", facts(evicting, 1), rules.Placement{}, map[string]int{"broken-0": 1, "broken": 1}, true},
		{"broken-0", facts(evicting, 1), rules.Placement{}, map[string]int{"broken-0": 1, "broken": 1}, true},
	} {
		clear(reads)
		var cached *corev1.Pod
		for _, p := range pods {
			if p.Name == tc.pod {
				cached = p
			}
		}
		got, err := r.placement(ctx, cached, tc.facts)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v (error: %v)", tc.pod, got, err, tc.want, tc.err)
		}
		if len(reads) != len(tc.reads) {
			t.Errorf("%s: read %v, want %v", tc.pod, reads, tc.reads)
		}
		for k, n := range tc.reads {
			if reads[k] != n {
				t.Errorf("%s: read %v, want %v", tc.pod, reads, tc.reads)
			}
		}
	}
	// A deleted pod's placement is forgotten with it.
	b := &Builder{decoded: newPodProbes(), placements: r.placements, onsets: newOnsets(nil)}
	b.ForgetPod(pods[4])
	if _, ok := r.placements.get(pods[4].UID); ok {
		t.Error("the placement of a deleted pod is kept")
	}
}
