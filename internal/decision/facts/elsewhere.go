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
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// Spread is how a pod's workload fares on the other nodes, for one container: its pods there
// whose probe of it passes, and those whose probe fails or has started to fail (suspect), as
// their nodes' daemons report it now. Passes: the pod's own probe of it passes now.
type Spread struct {
	Passing, Failing int
	Passes           bool
}

// Elsewhere returns the pod's node, how its workload fares on other nodes for container, and
// whether the pod's own probe of it passes now: a failure that the same app does not have
// elsewhere is the node's (the node condition). A
// daemon that is not reporting vouches for nothing, either way. A pod that is gone, or not
// scheduled, has no node and counts nothing.
func (r *Reader) Elsewhere(ctx context.Context, key types.NamespacedName, container string) (node string, s Spread, err error) {
	pod := &corev1.Pod{}
	if err := r.cache.Get(ctx, key, pod, unsafeGet); err != nil || pod.Spec.NodeName == "" {
		if err == nil || apierrors.IsNotFound(err) {
			return "", s, nil
		}
		return "", s, err
	}
	if s, err = r.spread(ctx, pod, container); err != nil {
		return "", s, err
	}
	states, err := r.containerStates(ctx, pod)
	if err != nil {
		return "", s, err
	}
	for _, c := range states {
		s.Passes = s.Passes || c.Name == container && c.Healthy
	}
	return pod.Spec.NodeName, s, nil
}

func (r *Reader) passingElsewhere(ctx context.Context, pod *corev1.Pod, container string) (int, error) {
	s, err := r.spread(ctx, pod, container)
	return s.Passing, err
}

func (r *Reader) spread(ctx context.Context, pod *corev1.Pod, container string) (Spread, error) {
	var s Spread
	w, err := r.workloads.Resolve(ctx, pod)
	if err != nil {
		return s, err
	}
	pods, err := r.workloads.Pods(ctx, pod, w)
	if err != nil {
		return s, err
	}
	for _, p := range pods {
		if p.Spec.NodeName == pod.Spec.NodeName || p.DeletionTimestamp != nil {
			continue
		}
		if d, err := r.daemon(ctx, p.Spec.NodeName); err != nil {
			return s, err
		} else if !d.Reporting {
			continue
		}
		states, err := r.containerStates(ctx, p)
		if err != nil {
			return s, err
		}
		for _, c := range states {
			switch {
			case c.Name != container:
			case c.Healthy:
				s.Passing++
			case c.Failing || c.Suspect:
				s.Failing++
			}
		}
	}
	return s, nil
}

// ReportingDaemons counts the nodes whose daemon is reporting now (its Lease is current): the
// nodes the operator probes on, which bound how many may carry the node condition at once.
func (r *Reader) ReportingDaemons(ctx context.Context) (int, error) {
	list := &coordinationv1.LeaseList{}
	if err := r.cache.List(ctx, list, client.InNamespace(r.leaseNS), client.UnsafeDisableDeepCopy); err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		node, ok := strings.CutPrefix(list.Items[i].Name, appsv1alpha1.DaemonLeasePrefix)
		if !ok || node == "" {
			continue
		}
		d, err := r.daemon(ctx, node)
		if err != nil {
			return 0, err
		}
		if d.Reporting {
			n++
		}
	}
	return n, nil
}
