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

package cli

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/plugin/explain"
)

// maxOwnerDepth bounds the walk up a pod's controllers (a Deployment's pod is two steps away).
const maxOwnerDepth = 5

// reader reads what the commands show. Reads that are not essential (the node's report, the
// workload's owners) say in a note what was not read, so a user with only their namespace's read
// rights still gets an answer.
type reader struct {
	c client.Client
}

// optional runs a read that may be refused: a refusal becomes a note, any other error is returned.
func optional(notes *[]string, what string, err error) error {
	if err == nil {
		return nil
	}
	if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		*notes = append(*notes, fmt.Sprintf("%s: %s", what, reasonOf(err)))
		return nil
	}
	return fmt.Errorf("reading %s: %w", what, err)
}

func reasonOf(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden to you"
	case meta.IsNoMatchError(err):
		return "not served: the operator's CRDs are not installed"
	case apierrors.IsNotFound(err):
		return "not found"
	}
	return err.Error()
}

// explainInputs reads everything explain needs for one pod.
func (r reader) explainInputs(ctx context.Context, ns, name string) (explain.Inputs, error) {
	in := explain.Inputs{Pod: &corev1.Pod{}}
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, in.Pod); err != nil {
		if apierrors.IsNotFound(err) {
			return in, fmt.Errorf("pod %q not found in namespace %q", name, ns)
		}
		return in, fmt.Errorf("reading pod %s/%s: %w", ns, name, err)
	}
	pod := in.Pod
	in.Workload = r.workload(ctx, pod, &in.Notes)
	policies := &policyv1alpha1.EnhancedLivenessPolicyList{}
	if err := optional(&in.Notes, "EnhancedLivenessPolicies of namespace "+ns, r.c.List(ctx, policies, client.InNamespace(ns))); err != nil {
		return in, err
	}
	in.Policies = policies.Items
	holds := &policyv1alpha1.RestartHoldList{}
	if err := optional(&in.Notes, "RestartHolds of namespace "+ns, r.c.List(ctx, holds, client.InNamespace(ns))); err != nil {
		return in, err
	}
	in.Holds = holds.Items
	crrs := &appsv1alpha1.ContainerRecreateRequestList{}
	err := r.c.List(ctx, crrs, client.InNamespace(ns), client.MatchingLabels{appsv1alpha1.LabelCRRPodUID: string(pod.UID)})
	if err := optional(&in.Notes, "ContainerRecreateRequests of the pod", err); err != nil {
		return in, err
	}
	in.Requests = crrs.Items
	events := &corev1.EventList{}
	err = r.c.List(ctx, events, client.InNamespace(ns), client.MatchingFields{"involvedObject.uid": string(pod.UID)})
	if err := optional(&in.Notes, "events of the pod", err); err != nil {
		return in, err
	}
	in.Events = events.Items
	if node := pod.Spec.NodeName; node != "" && pod.Labels[appsv1alpha1.LabelEnrolled] == "true" {
		report := &appsv1alpha1.NodePodProbeReport{}
		err := r.c.Get(ctx, client.ObjectKey{Name: node}, report)
		if err == nil {
			in.Report = report
		} else if err := optional(&in.Notes, "the probe results of NodePodProbeReport "+node+
			" (cluster-scoped; the results shown come from the pod's events)", err); err != nil {
			return in, err
		}
	}
	return in, nil
}

// workload walks up the pod's controller references as far as the reader may read them.
func (r reader) workload(ctx context.Context, pod *corev1.Pod, notes *[]string) *explain.Workload {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		return &explain.Workload{Kind: "Pod", Name: pod.Name}
	}
	w := &explain.Workload{Kind: ref.Kind, Name: ref.Name}
	for range maxOwnerDepth {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return w
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gv.WithKind(ref.Kind))
		if err := r.c.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: ref.Name}, obj); err != nil {
			*notes = append(*notes, fmt.Sprintf("the owner %s %s of the workload: %s (the workload is named after what could be read)",
				ref.Kind, ref.Name, reasonOf(err)))
			return w
		}
		if ref = metav1.GetControllerOfNoCopy(obj); ref == nil {
			return w
		}
		w = &explain.Workload{Kind: ref.Kind, Name: ref.Name}
	}
	return w
}
