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

package v1

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// The same rule as the ValidatingAdmissionPolicy the manager keeps (internal/controller/
// admissionpolicy), for clusters where that policy is not in force. Ignore, like the mutating
// webhook: a manager outage must never block pod updates (the kubelet's status updates among them).
// The object selector keeps it off every pod that is not enrolled, so the cluster's other pods
// (and their status updates) never wait on the manager: on UPDATE the API server calls it when
// the old or the new pod carries the label, so it still sees every change of an enrolled pod and
// anyone adding the label. The other protected keys of a pod that is not enrolled decide nothing
// (only enrolled pods are sealed and probed), and the admission policy refuses their changes anyway.
// +kubebuilder:webhook:path=/validate--v1-pod,mutating=false,failurePolicy=ignore,sideEffects=None,groups="",resources=pods;pods/status,verbs=update,versions=v1,name=vpod-v1.kb.io,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"objectSelector":{"matchExpressions":[{"key":"enhancedliveness.io/enrolled","operator":"Exists"}]}}`

// PodImmutability denies changes of the protected annotations and label of a pod after its
// creation (probecontext.ProtectedChanges), and a native livenessProbe added to or changed on an
// enrolled container (probecontext.NativeProbeChanges), except by the operator itself.
type PodImmutability struct {
	// OperatorNamespace is skipped, like kube-system.
	OperatorNamespace string
	// OperatorUsername may change them.
	OperatorUsername string
}

var podsGR = schema.GroupResource{Resource: "pods"}

// ValidateCreate allows every pod: creation is the mutating webhook's business.
func (v *PodImmutability) ValidateCreate(context.Context, *corev1.Pod) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate denies an update (of the pod or its status) that adds, changes or removes a
// protected annotation or label, or that gives an enrolled container a native livenessProbe of
// its own (where probes are mutable), naming each field and the rule.
func (v *PodImmutability) ValidateUpdate(ctx context.Context, oldPod, newPod *corev1.Pod) (admission.Warnings, error) {
	ns := newPod.Namespace
	user := ""
	if req, err := admission.RequestFromContext(ctx); err == nil {
		if req.Namespace != "" {
			ns = req.Namespace
		}
		user = req.UserInfo.Username
	}
	if ns == metav1.NamespaceSystem || ns == v.OperatorNamespace || (user != "" && user == v.OperatorUsername) {
		return nil, nil
	}
	errs := probecontext.ProtectedChanges(&oldPod.ObjectMeta, &newPod.ObjectMeta)
	errs = append(errs, probecontext.NativeProbeChanges(oldPod, newPod)...)
	if len(errs) > 0 {
		return nil, apierrors.NewForbidden(podsGR, newPod.Name, errs.ToAggregate())
	}
	return nil, nil
}

// ValidateDelete allows every deletion.
func (v *PodImmutability) ValidateDelete(context.Context, *corev1.Pod) (admission.Warnings, error) {
	return nil, nil
}
