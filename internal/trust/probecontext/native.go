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

package probecontext

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// EnrolledProbeRule is the rule a native livenessProbe added to, or changed on, an enrolled
// container breaks, as the denials state it. Pod probes are immutable today; where they can be
// updated in place (the MutableContainerProbes feature gate) the kubelet would probe the
// container beside the operator, and both would restart it.
const EnrolledProbeRule = "may not be added or changed on a container enrolled in enhanced liveness: its liveness " +
	"probe is run by the operator from the pod's probe context, and a native one beside it would make the kubelet " +
	"probe and restart the container too (change the probe by re-creating the pod)"

// NativeProbeChanges returns one Forbidden error per container of newPod whose native
// livenessProbe the update adds or changes while the enrolled oldPod's probe context (ours or
// OpenKruise's, as FromAnnotations reads it) holds that container's probe. A probe the container
// already had is left alone, and so is every container of a pod that is not enrolled (label
// enhancedliveness.io/enrolled), or whose context does not decode: nothing probes it but the kubelet.
func NativeProbeChanges(oldPod, newPod *corev1.Pod) field.ErrorList {
	if oldPod.Labels[appsv1alpha1.LabelEnrolled] != appsv1alpha1.TrueValue {
		return nil
	}
	// Most updates of an enrolled pod are the kubelet's status updates: the probe context is
	// decoded only when a native liveness probe was added or changed.
	var changed []*field.Path
	var names []string
	collect := func(list, oldList []corev1.Container, path *field.Path) {
		for i := range list {
			c := &list[i]
			if c.LivenessProbe == nil {
				continue
			}
			if old := containerNamed(oldList, c.Name); old != nil && equality.Semantic.DeepEqual(old.LivenessProbe, c.LivenessProbe) {
				continue
			}
			changed = append(changed, path.Index(i).Child("livenessProbe"))
			names = append(names, c.Name)
		}
	}
	collect(newPod.Spec.InitContainers, oldPod.Spec.InitContainers, field.NewPath("spec", "initContainers"))
	collect(newPod.Spec.Containers, oldPod.Spec.Containers, field.NewPath("spec", "containers"))
	if len(changed) == 0 {
		return nil
	}
	pctx, errs := FromAnnotations(oldPod.Annotations)
	if len(errs) > 0 {
		return nil
	}
	var out field.ErrorList
	for i, name := range names {
		if pctx.Lookup(name) != nil {
			out = append(out, field.Forbidden(changed[i], EnrolledProbeRule))
		}
	}
	return out
}

func containerNamed(list []corev1.Container, name string) *corev1.Container {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}
