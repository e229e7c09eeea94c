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

// Package v1 holds the Pod mutating webhook that enrolls pods: it moves their native liveness
// probes into the probe-context annotation, so that the kubelet no longer kills on liveness and
// the operator's node daemon probes instead.
package v1

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/probecontext"
)

var podlog = logf.Log.WithName("pod-webhook")

// SetupPodWebhookWithManager registers the Pod webhook. Policies are read from the manager's
// cache; operatorNamespace is skipped like kube-system.
func SetupPodWebhookWithManager(mgr ctrl.Manager, operatorNamespace string) error {
	return ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).
		WithDefaulter(&PodDefaulter{Policies: mgr.GetClient(), OperatorNamespace: operatorNamespace}).
		Complete()
}

// Ignore: when the manager is down, pods are created with their native probe (fail-open).
// IfNeeded: a container added by a later webhook gets its probe moved too.
// +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=ignore,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mpod-v1.kb.io,admissionReviewVersions=v1,timeoutSeconds=5,reinvocationPolicy=IfNeeded
// +kubebuilder:rbac:groups=policy.enhancedliveness.io,resources=enhancedlivenesspolicies,verbs=get;list;watch

// PodDefaulter enrolls pods on CREATE.
type PodDefaulter struct {
	// Policies reads EnhancedLivenessPolicies (the manager's cache).
	Policies client.Reader
	// OperatorNamespace is never enrolled, nor is kube-system.
	OperatorNamespace string
}

var podGK = schema.GroupKind{Kind: "Pod"}

// Default enrolls the pod when it opted in, or is selected by a policy with enroll: true.
// Invalid probes deny the pod, with the apiserver's wording and the container's name.
func (d *PodDefaulter) Default(ctx context.Context, pod *corev1.Pod) error {
	ns := pod.Namespace
	if req, err := admission.RequestFromContext(ctx); err == nil && req.Namespace != "" {
		ns = req.Namespace
	}
	if ns == metav1.NamespaceSystem || ns == d.OperatorNamespace {
		return nil
	}
	if !d.wantsEnrollment(ctx, ns, pod) {
		return nil
	}
	return enroll(pod)
}

// OptedIn reports whether the pod carries the opt-in annotation or OpenKruise's alias.
func OptedIn(pod *corev1.Pod) bool {
	return pod.Annotations[appsv1alpha1.AnnotationEnabled] == appsv1alpha1.TrueValue ||
		pod.Annotations[appsv1alpha1.AnnotationKruiseEnabled] == appsv1alpha1.TrueValue
}

func (d *PodDefaulter) wantsEnrollment(ctx context.Context, ns string, pod *corev1.Pod) bool {
	if OptedIn(pod) {
		return true
	}
	var policies policyv1alpha1.EnhancedLivenessPolicyList
	if err := d.Policies.List(ctx, &policies, client.InNamespace(ns)); err != nil {
		// Fail open, like the webhook's failurePolicy: the pod keeps its native probe.
		podlog.Error(err, "listing policies; pod not enrolled by policy", "namespace", ns)
		return false
	}
	for i := range policies.Items {
		p := &policies.Items[i]
		if !p.Spec.Enroll || p.DeletionTimestamp != nil {
			continue
		}
		if ok, err := p.Selects(pod.Labels); err == nil && ok {
			return true
		}
	}
	return false
}

// containerError ties a field error to the container it concerns, for the denial message.
type containerError struct {
	container string
	err       *field.Error
}

// enroll moves the liveness probes of pod's containers into the probe-context annotation and
// labels the pod, or returns an Invalid error naming each container and field at fault.
func enroll(pod *corev1.Pod) error {
	pctx, errs := probecontext.FromAnnotations(pod.Annotations)
	if len(errs) > 0 {
		return invalid(pod, wrap("", errs))
	}
	var cerrs []containerError
	inAnnotation := make(map[string]bool, len(pctx.Entries))
	annPath := field.NewPath("metadata", "annotations").Key(pctx.Key)
	for i, e := range pctx.Entries {
		inAnnotation[e.Name] = true
		p := annPath.Index(i)
		pc, ok := podutil.FindRestartable(&pod.Spec, e.Name)
		if !ok {
			cerrs = append(cerrs, wrap(e.Name, field.ErrorList{field.Invalid(p.Child("name"), e.Name,
				"must be the name of a container or of a restartable init container of the pod")})...)
			continue
		}
		lp := e.LivenessProbe.DeepCopy()
		probecontext.SetDefaults(lp)
		cerrs = append(cerrs, wrap(e.Name, probecontext.ValidateLiveness(lp, pc.Container, p.Child("livenessProbe")))...)
	}

	entries := pctx.Entries
	moved := 0
	for _, pc := range podutil.RestartableContainers(&pod.Spec) {
		c := pc.Container
		if c.LivenessProbe == nil {
			continue
		}
		path := pc.Path.Child("livenessProbe")
		if inAnnotation[c.Name] {
			cerrs = append(cerrs, wrap(c.Name, field.ErrorList{field.Forbidden(path,
				fmt.Sprintf("the container already has a liveness probe in annotation %s", pctx.Key))})...)
			continue
		}
		lp := c.LivenessProbe.DeepCopy()
		probecontext.SetDefaults(lp)
		cerrs = append(cerrs, wrap(c.Name, probecontext.ValidateLiveness(lp, c, path))...)
		entries = append(entries, probecontext.ContainerProbe{Name: c.Name, LivenessProbe: lp})
		c.LivenessProbe = nil
		moved++
	}
	if len(cerrs) > 0 {
		return invalid(pod, cerrs)
	}
	if len(entries) == 0 {
		return nil // nothing to probe: not enrolled, the manager need not cache it
	}
	if moved > 0 {
		value, err := probecontext.Encode(entries)
		if err != nil {
			return invalid(pod, wrap("", field.ErrorList{field.TooLong(
				field.NewPath("metadata", "annotations").Key(appsv1alpha1.AnnotationProbeContext), "", probecontext.MaxAnnotationBytes)}))
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[appsv1alpha1.AnnotationProbeContext] = value
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1alpha1.LabelEnrolled] = appsv1alpha1.TrueValue
	return nil
}

func wrap(container string, errs field.ErrorList) []containerError {
	out := make([]containerError, 0, len(errs))
	for _, e := range errs {
		out = append(out, containerError{container: container, err: e})
	}
	return out
}

// invalid builds the apiserver-style Invalid error, with each message prefixed by its container.
func invalid(pod *corev1.Pod, cerrs []containerError) error {
	name := pod.Name
	if name == "" {
		name = pod.GenerateName
	}
	var list field.ErrorList
	parts := make([]string, 0, len(cerrs))
	for _, ce := range cerrs {
		list = append(list, ce.err)
		if ce.container != "" {
			parts = append(parts, fmt.Sprintf("container %q: %s", ce.container, ce.err.Error()))
		} else {
			parts = append(parts, ce.err.Error())
		}
	}
	se := apierrors.NewInvalid(podGK, name, list)
	se.ErrStatus.Message = fmt.Sprintf("Pod %q is invalid: %s", name, strings.Join(parts, "; "))
	return se
}
