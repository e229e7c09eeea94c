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

// Package v1alpha1 holds the ContainerRecreateRequest webhooks: defaulting from the pod on
// CREATE (labels, statusContext, grace period, failure policy, TTL) with the checks that need the
// pod, and immutability of the spec and the identity labels on UPDATE.
package v1alpha1

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// SetupContainerRecreateRequestWebhookWithManager registers the CRR webhooks. A person may restart
// a container of any pod, enrolled (cached by the manager) or not: pods are read with the API
// reader, or from the manager's cache as PodCache says.
func SetupContainerRecreateRequestWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &appsv1alpha1.ContainerRecreateRequest{}).
		WithDefaulter(&ContainerRecreateRequestDefaulter{Pods: mgr.GetAPIReader(), PodCache: mgr.GetClient()}).
		WithValidator(&ContainerRecreateRequestValidator{}).
		Complete()
}

// +kubebuilder:webhook:path=/mutate-apps-enhancedliveness-io-v1alpha1-containerrecreaterequest,mutating=true,failurePolicy=fail,sideEffects=None,groups=apps.enhancedliveness.io,resources=containerrecreaterequests,verbs=create,versions=v1alpha1,name=mcontainerrecreaterequest-v1alpha1.kb.io,admissionReviewVersions=v1,timeoutSeconds=10
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// ContainerRecreateRequestDefaulter fills a new request from its pod and denies requests that
// cannot be carried out.
type ContainerRecreateRequestDefaulter struct {
	// Pods reads pods uncached.
	Pods client.Reader
	// PodCache, when set, reads pods from the manager's cache (enrolled pods, stripped), which
	// saves the decision controller's requests a round trip to the API server. It is used only
	// for a request that names every instance it restarts (statusContext, as the decision
	// controller's do), so nothing of the request is taken from a cached pod, and only to accept:
	// a request that breaks a rule on the cached pod is judged again on the live one.
	PodCache client.Reader
}

var crrGK = schema.GroupKind{Group: appsv1alpha1.GroupVersion.Group, Kind: "ContainerRecreateRequest"}

func invalid(crr *appsv1alpha1.ContainerRecreateRequest, errs field.ErrorList) error {
	name := crr.Name
	if name == "" {
		name = crr.GenerateName
	}
	return apierrors.NewInvalid(crrGK, name, errs)
}

func labelPath(key string) *field.Path {
	return field.NewPath("metadata", "labels").Key(key)
}

// Default fills labels, statusContext, failurePolicy, the grace period, the active deadline and
// the TTL on CREATE: every default of the request is written into it.
func (d *ContainerRecreateRequestDefaulter) Default(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) error {
	ns := crr.Namespace
	if req, err := admission.RequestFromContext(ctx); err == nil && req.Namespace != "" {
		ns = req.Namespace
	}
	specPath := field.NewPath("spec")
	if d := crr.Spec.ActiveDeadlineSeconds; d != nil && *d < appsv1alpha1.MinActiveDeadlineSeconds {
		return invalid(crr, field.ErrorList{field.Invalid(specPath.Child("activeDeadlineSeconds"), *d,
			fmt.Sprintf("must be greater than or equal to %d", appsv1alpha1.MinActiveDeadlineSeconds))})
	}
	key := types.NamespacedName{Namespace: ns, Name: crr.Spec.PodName}
	if d.PodCache != nil && namesEveryInstance(crr) {
		cached := &corev1.Pod{}
		if err := d.PodCache.Get(ctx, key, cached); err == nil && graceKnown(crr, cached) &&
			len(validateAgainstPod(crr, cached)) == 0 {
			applyDefaults(crr, cached)
			return nil
		}
	}
	pod := &corev1.Pod{}
	if err := d.Pods.Get(ctx, key, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return invalid(crr, field.ErrorList{field.NotFound(specPath.Child("podName"), crr.Spec.PodName)})
		}
		return apierrors.NewInternalError(fmt.Errorf("reading pod %s/%s: %w", ns, crr.Spec.PodName, err))
	}
	if errs := validateAgainstPod(crr, pod); len(errs) > 0 {
		return invalid(crr, errs)
	}
	applyDefaults(crr, pod)
	return nil
}

// namesEveryInstance reports whether the creator named the instance of every container
// (statusContext): then no default is taken from the pod's container statuses.
func namesEveryInstance(crr *appsv1alpha1.ContainerRecreateRequest) bool {
	for _, c := range crr.Spec.Containers {
		if c.StatusContext == nil || c.StatusContext.ContainerID == "" {
			return false
		}
	}
	return len(crr.Spec.Containers) > 0
}

// validateAgainstPod holds every CREATE rule that needs the pod.
func validateAgainstPod(crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	podPath := field.NewPath("spec", "podName")
	switch {
	case pod.Spec.NodeName == "":
		errs = append(errs, field.Invalid(podPath, pod.Name, "the pod is not scheduled to a node yet"))
	case pod.DeletionTimestamp != nil:
		errs = append(errs, field.Invalid(podPath, pod.Name, "the pod is terminating"))
	}
	if v, ok := crr.Labels[appsv1alpha1.LabelCRRPodUID]; ok && v != string(pod.UID) {
		errs = append(errs, field.Invalid(labelPath(appsv1alpha1.LabelCRRPodUID), v,
			fmt.Sprintf("must be the UID of pod %q (%s)", pod.Name, pod.UID)))
	}
	if v, ok := crr.Labels[appsv1alpha1.LabelCRRNodeName]; ok && v != pod.Spec.NodeName {
		errs = append(errs, field.Invalid(labelPath(appsv1alpha1.LabelCRRNodeName), v,
			fmt.Sprintf("must be the node of pod %q (%s)", pod.Name, pod.Spec.NodeName)))
	}

	seen := map[string]bool{}
	for i, c := range crr.Spec.Containers {
		p := field.NewPath("spec", "containers").Index(i).Child("name")
		if seen[c.Name] {
			errs = append(errs, field.Duplicate(p, c.Name))
			continue
		}
		seen[c.Name] = true
		rc, ok := podutil.FindRestartable(&pod.Spec, c.Name)
		if !ok {
			if podutil.IsInitContainer(&pod.Spec, c.Name) {
				errs = append(errs, field.Invalid(p, c.Name, "is an init container that is not restartable (restartPolicy: Always)"))
			} else {
				errs = append(errs, field.NotFound(p, c.Name))
			}
			continue
		}
		if policy := podutil.RestartPolicyAfterStop(&pod.Spec, rc); policy != corev1.RestartPolicyAlways {
			whose := "the pod has"
			if rc.Container.RestartPolicy != nil {
				whose = "the container has"
			}
			errs = append(errs, field.Invalid(p, c.Name, fmt.Sprintf("%s restartPolicy %s: a stopped container would not "+
				"be started again (only restartPolicy Always starts it again whatever its exit code)", whose, policy)))
			continue
		}
		if st := podutil.ContainerStatus(pod, c.Name); st == nil || st.State.Running == nil || st.ContainerID == "" {
			errs = append(errs, field.Invalid(p, c.Name, "the container has no running containerID"))
		}
	}
	return errs
}

// applyDefaults names the instance of each container the creator left unnamed, then writes the
// request's defaults (appsv1alpha1.ContainerRecreateRequest.SetDefaults).
func applyDefaults(crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod) {
	for i := range crr.Spec.Containers {
		c := &crr.Spec.Containers[i]
		// A context given by the creator names the instance it meant; if that instance is gone
		// already, the daemon counts the container as restarted instead of stopping its successor.
		if c.StatusContext == nil {
			st := podutil.ContainerStatus(pod, c.Name)
			c.StatusContext = &appsv1alpha1.ContainerRecreateRequestContainerContext{
				ContainerID: st.ContainerID, RestartCount: st.RestartCount,
			}
		}
	}
	crr.SetDefaults(pod, probeGrace(pod))
}

// graceKnown reports whether the grace period needs nothing a cached pod lacks: it is set, or
// every container's probe is in the probe-context annotation (a cached pod has no native probes).
func graceKnown(crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod) bool {
	if crr.Spec.Strategy.TerminationGracePeriodSeconds != nil {
		return true
	}
	pctx, _ := probecontext.FromAnnotations(pod.Annotations)
	for _, c := range crr.Spec.Containers {
		if pctx.Lookup(c.Name) == nil {
			return false
		}
	}
	return true
}

// probeGrace returns, per container, its liveness probe's terminationGracePeriodSeconds: from
// the probe-context annotation of an enrolled pod, else from the native probe.
func probeGrace(pod *corev1.Pod) func(container string) *int64 {
	pctx, _ := probecontext.FromAnnotations(pod.Annotations) // the Pod webhook validated it
	return func(name string) *int64 {
		if e := pctx.Lookup(name); e != nil && e.LivenessProbe.TerminationGracePeriodSeconds != nil {
			return e.LivenessProbe.TerminationGracePeriodSeconds
		}
		if pc, ok := podutil.FindRestartable(&pod.Spec, name); ok && pc.Container.LivenessProbe != nil {
			return pc.Container.LivenessProbe.TerminationGracePeriodSeconds
		}
		return nil
	}
}

// The validating webhook takes UPDATE only. On CREATE the mutating webhook (failurePolicy Fail)
// has just set the labels from the pod and denied what cannot be carried out, so a second round
// trip would only re-check its own work; it was a quarter of the CRR create on the restart path.
// +kubebuilder:webhook:path=/validate-apps-enhancedliveness-io-v1alpha1-containerrecreaterequest,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps.enhancedliveness.io,resources=containerrecreaterequests,verbs=update,versions=v1alpha1,name=vcontainerrecreaterequest-v1alpha1.kb.io,admissionReviewVersions=v1,timeoutSeconds=10

// ContainerRecreateRequestValidator keeps the spec and the identity labels of a request as its
// defaulting left them.
type ContainerRecreateRequestValidator struct{}

// ValidateCreate is never called (the webhook is registered for UPDATE only) and allows all.
func (v *ContainerRecreateRequestValidator) ValidateCreate(context.Context, *appsv1alpha1.ContainerRecreateRequest) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate keeps the spec and the identity labels as created.
func (v *ContainerRecreateRequestValidator) ValidateUpdate(_ context.Context, oldCRR, newCRR *appsv1alpha1.ContainerRecreateRequest) (admission.Warnings, error) {
	var errs field.ErrorList
	if !equality.Semantic.DeepEqual(oldCRR.Spec, newCRR.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "spec is immutable after creation"))
	}
	for _, key := range []string{appsv1alpha1.LabelCRRPodUID, appsv1alpha1.LabelCRRNodeName} {
		oldV, oldOK := oldCRR.Labels[key]
		newV, newOK := newCRR.Labels[key]
		if oldOK != newOK || oldV != newV {
			errs = append(errs, field.Forbidden(labelPath(key), "is immutable"))
		}
	}
	if len(errs) > 0 {
		return nil, invalid(newCRR, errs)
	}
	return nil, nil
}

// ValidateDelete allows every deletion.
func (v *ContainerRecreateRequestValidator) ValidateDelete(context.Context, *appsv1alpha1.ContainerRecreateRequest) (admission.Warnings, error) {
	return nil, nil
}
