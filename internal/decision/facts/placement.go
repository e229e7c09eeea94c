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
	"cmp"
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// The pod's placement, for an eviction (rules.Placement): its controller's kind, from the cached
// pod's owner references, and what binds it to its node. The cache keeps no pod spec beyond
// nodeName, so the pod is read from the API server, and so are its claims and their volumes:
// once per pod, since all of it is fixed once the pod runs (a pod's volumes, affinity and node
// selector; a bound claim's volume; a volume's node affinity), only when an eviction could
// follow, and forgotten with the pod.
//
// What cannot be seen: a pod created with spec.nodeName looks like any scheduled pod. The
// pod template of its ReplicaSet or StatefulSet (cached) tells when it is the template's; a
// controller of another kind is not read (when all its pods run on one node, no pod passes
// elsewhere and nothing is evicted anyway). A claim or volume the manager may not read binds
// nothing (logged at V(1)).

// placements keeps each pod's binding to its node, read once.
type placements struct {
	mu   sync.Mutex
	byID map[types.UID]rules.Placement
}

func newPlacements() *placements { return &placements{byID: map[types.UID]rules.Placement{}} }

func (c *placements) get(uid types.UID) (rules.Placement, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.byID[uid]
	return p, ok
}

func (c *placements) put(uid types.UID, p rules.Placement) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byID[uid] = p
}

// forget drops a deleted pod's placement.
func (c *placements) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byID, uid)
}

// placement reads the pod's placement when an eviction could follow: the governing policies
// evict and a failed container passes on another node (f.Elsewhere).
func (r *Reader) placement(ctx context.Context, pod *corev1.Pod, f *rules.Facts) (rules.Placement, error) {
	var p rules.Placement
	if b, _ := f.Policies.RestartBreaker(); !b.Evict || !passesElsewhere(f) {
		return p, nil
	}
	c := metav1.GetControllerOf(pod)
	if c != nil {
		gv, _ := schema.ParseGroupVersion(c.APIVersion)
		p.ControllerGroup, p.ControllerKind = gv.Group, c.Kind
		if gv.Group == "" && c.Kind == "Node" {
			// A mirror pod: the node's kubelet runs it from a static manifest, and makes it again.
			p.Node, p.By = pod.Spec.NodeName, staticPod
		}
	}
	if p.Unmovable() != "" {
		return p, nil // its controller says it all: nothing to read
	}
	if known, ok := r.placements.get(pod.UID); ok {
		return known, nil
	}
	live := &corev1.Pod{}
	if err := r.api.Get(ctx, client.ObjectKeyFromObject(pod), live); err != nil || live.UID != pod.UID {
		// Gone, or replaced: nothing will be evicted; a failed read is the decision's error.
		return p, client.IgnoreNotFound(err)
	}
	var err error
	p.Node, p.By = boundBySpec(live)
	if p.Node == "" {
		p.Node, p.By, err = r.templateNode(ctx, live, c)
	}
	if p.Node == "" && err == nil {
		p.Node, p.By, err = r.claimsNode(ctx, live)
	}
	if err != nil {
		return rules.Placement{}, err
	}
	r.placements.put(pod.UID, p)
	return p, nil
}

// passesElsewhere reports whether a failed container of the pod passes on another node: without
// it the pod is not evicted, whatever binds it.
func passesElsewhere(f *rules.Facts) bool {
	for _, n := range f.Elsewhere {
		if n > 0 {
			return true
		}
	}
	return false
}

const staticPod = "its kubelet (a static pod, made again from the node's manifest)"

// boundBySpec returns the node the pod's own spec binds it to, and what binds it ("" when
// nothing does): a mirror pod's annotation, a node selector or a required node affinity that
// names one node, a hostPath volume (its data is the node's).
func boundBySpec(pod *corev1.Pod) (node, by string) {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return pod.Spec.NodeName, staticPod
	}
	if v := pod.Spec.NodeSelector[corev1.LabelHostname]; v != "" {
		return v, "spec.nodeSelector " + corev1.LabelHostname
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		if v, key := oneNode(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution); v != "" {
			return v, "its required node affinity (" + key + ")"
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.HostPath != nil {
			return pod.Spec.NodeName, "the data of its hostPath volume " + v.Name
		}
	}
	return "", ""
}

// oneNode returns the one node a required node selector admits, and the key that names it
// (metadata.name, or the hostname label): every term must name the same node, as terms are
// alternatives. "" when it admits more than one node, or when it is nil.
func oneNode(sel *corev1.NodeSelector) (node, key string) {
	if sel == nil {
		return "", ""
	}
	for i, t := range sel.NodeSelectorTerms {
		v, k := termNode(t)
		switch {
		case v == "" || i > 0 && v != node:
			return "", ""
		case i == 0:
			node, key = v, k
		}
	}
	return node, key
}

// termNode returns the one node a node selector term admits by name or hostname, and the key that
// names it; "" when no requirement of the term names one node (its requirements all apply).
func termNode(t corev1.NodeSelectorTerm) (node, key string) {
	for _, r := range t.MatchFields {
		if r.Key == "metadata.name" && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
			return r.Values[0], r.Key
		}
	}
	for _, r := range t.MatchExpressions {
		if r.Key == corev1.LabelHostname && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
			return r.Values[0], r.Key
		}
	}
	return "", ""
}

// templateNode returns the node the pod template of the pod's ReplicaSet or StatefulSet (from the
// cache) names in spec.nodeName: a replacement made from it runs there again.
func (r *Reader) templateNode(ctx context.Context, pod *corev1.Pod, c *metav1.OwnerReference) (node, by string, err error) {
	if c == nil {
		return "", "", nil
	}
	if gv, _ := schema.ParseGroupVersion(c.APIVersion); gv.Group != appsv1.GroupName {
		return "", "", nil
	}
	var owner client.Object
	var spec *corev1.PodSpec
	switch c.Kind {
	case kindReplicaSet:
		rs := &appsv1.ReplicaSet{}
		owner, spec = rs, &rs.Spec.Template.Spec
	case kindStatefulSet:
		sts := &appsv1.StatefulSet{}
		owner, spec = sts, &sts.Spec.Template.Spec
	default:
		return "", "", nil
	}
	if err := r.cache.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: c.Name}, owner, unsafeGet); err != nil {
		return "", "", client.IgnoreNotFound(err)
	}
	if owner.GetUID() != c.UID || spec.NodeName == "" {
		return "", "", nil
	}
	return spec.NodeName, fmt.Sprintf("spec.nodeName of the pod template of %s %s", c.Kind, c.Name), nil
}

// claimsNode returns the node a volume of the pod's claims binds it to (volumeNode), read from
// the API server; a claim or volume the manager may not read, or gone, binds nothing.
func (r *Reader) claimsNode(ctx context.Context, pod *corev1.Pod) (node, by string, err error) {
	for _, v := range pod.Spec.Volumes {
		var claim string
		switch {
		case v.PersistentVolumeClaim != nil:
			claim = v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			claim = pod.Name + "-" + v.Name // the name the ephemeral volume controller gives it
		default:
			continue
		}
		pvc := &corev1.PersistentVolumeClaim{}
		if err := r.api.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: claim}, pvc); err != nil || pvc.Spec.VolumeName == "" {
			if err := r.unreadableVolume(ctx, err, "PersistentVolumeClaim", claim); err != nil {
				return "", "", err
			}
			continue
		}
		pv := &corev1.PersistentVolume{}
		if err := r.api.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv); err != nil {
			if err := r.unreadableVolume(ctx, err, "PersistentVolume", pvc.Spec.VolumeName); err != nil {
				return "", "", err
			}
			continue
		}
		if n, what := volumeNode(pv, pod.Spec.NodeName); n != "" {
			return n, fmt.Sprintf("PersistentVolumeClaim %s (%s)", claim, what), nil
		}
	}
	return "", "", nil
}

// unreadableVolume returns err unless it says the object is gone or not readable by the manager,
// which is logged: that volume binds nothing the decision knows of.
func (r *Reader) unreadableVolume(ctx context.Context, err error, kind, name string) error {
	if err == nil || !unreadable(err) {
		return err
	}
	logf.FromContext(ctx).V(1).Info("volume not readable: it is not known to bind the pod to its node",
		"kind", kind, "name", name, "reason", err.Error())
	return nil
}

// volumeNode returns the node a PersistentVolume binds its pods to, and what it is: a local or
// hostPath volume (its data is on the node the pod runs on, podNode), or a volume whose required
// node affinity admits one node. A zonal or network volume binds no node.
func volumeNode(pv *corev1.PersistentVolume, podNode string) (node, what string) {
	var pinned, key string
	if a := pv.Spec.NodeAffinity; a != nil {
		pinned, key = oneNode(a.Required)
	}
	switch {
	case pv.Spec.Local != nil:
		return cmp.Or(pinned, podNode), "local PersistentVolume " + pv.Name
	case pv.Spec.HostPath != nil:
		return podNode, "hostPath PersistentVolume " + pv.Name
	case pinned != "":
		return pinned, fmt.Sprintf("PersistentVolume %s, required node affinity on %s", pv.Name, key)
	}
	return "", ""
}
