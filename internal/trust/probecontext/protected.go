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
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// ProtectedAnnotations are the pod annotations that decide what the node daemon runs in a pod's
// containers. Like a native livenessProbe they are fixed at creation: after it, nobody but the
// operator may add, change or remove them (the ValidatingAdmissionPolicy the manager keeps and the
// pod webhook on UPDATE both enforce ProtectedChanges).
var ProtectedAnnotations = []string{
	appsv1alpha1.AnnotationProbeContext,
	appsv1alpha1.AnnotationKruiseProbeContext,
	appsv1alpha1.AnnotationProbeContextSignature,
	appsv1alpha1.AnnotationProbeContextSeal,
	appsv1alpha1.AnnotationEnabled,
	appsv1alpha1.AnnotationKruiseEnabled,
}

// ProtectedLabels are the pod labels under the same rule as ProtectedAnnotations. The mode label
// says who restarts the pod (the operator, or the kubelet that kept its native probe): changed
// after creation, it would leave a pod with two restarters or none.
var ProtectedLabels = []string{appsv1alpha1.LabelEnrolled, appsv1alpha1.LabelMode}

// ImmutableRule is the rule a change of a protected key breaks, as the denial states it.
const ImmutableRule = "may not be added, changed or removed after the pod is created, except by the " +
	"enhanced-liveness operator: a pod's liveness probe is fixed at creation, like a native livenessProbe " +
	"(delete and re-create the pod to change it)"

// AnnotationPath and LabelPath are the field paths of a pod annotation and label, as denials name them.
func AnnotationPath(key string) *field.Path { return field.NewPath("metadata", "annotations").Key(key) }
func LabelPath(key string) *field.Path      { return field.NewPath("metadata", "labels").Key(key) }

// ProtectedChanges returns one Forbidden error per protected annotation or label that was added,
// changed or removed between oldMeta and newMeta.
func ProtectedChanges(oldMeta, newMeta *metav1.ObjectMeta) field.ErrorList {
	var errs field.ErrorList
	diff := func(keys []string, o, n map[string]string, path func(string) *field.Path) {
		for _, k := range keys {
			ov, oOK := o[k]
			nv, nOK := n[k]
			if oOK != nOK || ov != nv {
				errs = append(errs, field.Forbidden(path(k), ImmutableRule))
			}
		}
	}
	diff(ProtectedAnnotations, oldMeta.Annotations, newMeta.Annotations, AnnotationPath)
	diff(ProtectedLabels, oldMeta.Labels, newMeta.Labels, LabelPath)
	return errs
}

// optInValues are the only values the opt-in annotations accept.
var optInValues = []string{appsv1alpha1.TrueValue, appsv1alpha1.FalseValue}

// ValidateOptIn rejects an opt-in annotation (ours or OpenKruise's alias) whose value is neither
// "true" nor "false": "yes" would otherwise silently not enroll the pod.
func ValidateOptIn(annotations map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range []string{appsv1alpha1.AnnotationEnabled, appsv1alpha1.AnnotationKruiseEnabled} {
		if v, ok := annotations[k]; ok && !slices.Contains(optInValues, v) {
			errs = append(errs, field.NotSupported(AnnotationPath(k), v, optInValues))
		}
	}
	return errs
}
