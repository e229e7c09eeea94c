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

// Package v1alpha1 holds the EnhancedLivenessPolicy validating webhook: it refuses, naming the
// field and the rule, the blacklist entries the schema cannot check (a workload's apiVersion, Kind
// and name, a container name), and warns of valid settings that are usually mistakes and of a mode
// change, which applies to new pods only.
package v1alpha1

import (
	"context"
	"fmt"
	"regexp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// SetupEnhancedLivenessPolicyWebhookWithManager registers the validating webhook for
// EnhancedLivenessPolicy in the manager.
func SetupEnhancedLivenessPolicyWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &policyv1alpha1.EnhancedLivenessPolicy{}).
		WithValidator(&EnhancedLivenessPolicyValidator{}).
		Complete()
}

// +kubebuilder:webhook:path=/validate-policy-enhancedliveness-io-v1alpha1-enhancedlivenesspolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=policy.enhancedliveness.io,resources=enhancedlivenesspolicies,verbs=create;update,versions=v1alpha1,name=venhancedlivenesspolicy-v1alpha1.kb.io,admissionReviewVersions=v1

// EnhancedLivenessPolicyValidator rejects what the CRD schema and its CEL rules cannot express:
// label selectors that do not parse, blacklisted workloads whose apiVersion, kind or name cannot
// name a Kubernetes object, and container names that cannot exist. It warns about settings that
// are valid but rarely meant.
type EnhancedLivenessPolicyValidator struct{}

// ValidateCreate validates a new policy.
func (v *EnhancedLivenessPolicyValidator) ValidateCreate(_ context.Context, obj *policyv1alpha1.EnhancedLivenessPolicy) (admission.Warnings, error) {
	return validate(obj)
}

// ValidateUpdate validates a changed policy, and warns that a new mode applies to new pods only.
func (v *EnhancedLivenessPolicyValidator) ValidateUpdate(_ context.Context, oldObj, newObj *policyv1alpha1.EnhancedLivenessPolicy) (admission.Warnings, error) {
	w, err := validate(newObj)
	if err == nil && oldObj.Spec.Mode.IsShadow() != newObj.Spec.Mode.IsShadow() {
		w = append(w, fmt.Sprintf("spec.mode: the pods running now keep the mode they were admitted in; %s applies "+
			"to pods created from now on: re-create the others (kubectl rollout restart) to move them to it", modeName(newObj.Spec.Mode)))
	}
	return w, err
}

// modeName is the mode a policy admits pods in: Enforce (also when unset) or Shadow.
func modeName(m policyv1alpha1.PolicyMode) policyv1alpha1.PolicyMode {
	if m.IsShadow() {
		return policyv1alpha1.ModeShadow
	}
	return policyv1alpha1.ModeEnforce
}

// ValidateDelete allows every deletion.
func (v *EnhancedLivenessPolicyValidator) ValidateDelete(_ context.Context, _ *policyv1alpha1.EnhancedLivenessPolicy) (admission.Warnings, error) {
	return nil, nil
}

// kindPattern is what a Kind looks like: an upper-case letter, then letters and digits.
var kindPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

func validate(p *policyv1alpha1.EnhancedLivenessPolicy) (admission.Warnings, error) {
	spec := field.NewPath("spec")
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs := metav1validation.ValidateLabelSelector(p.Spec.Selector, opts, spec.Child("selector"))
	if bl := p.Spec.Blacklist; bl != nil {
		blPath := spec.Child("blacklist")
		errs = append(errs, metav1validation.ValidateLabelSelector(bl.PodSelector, opts, blPath.Child("podSelector"))...)
		for i, w := range bl.Workloads {
			wp := blPath.Child("workloads").Index(i)
			if gv, err := schema.ParseGroupVersion(w.APIVersion); err != nil || gv.Version == "" {
				errs = append(errs, field.Invalid(wp.Child("apiVersion"), w.APIVersion,
					"must be <group>/<version> (e.g. apps/v1) or <version> for the core group (v1)"))
			} else if gv.Group != "" {
				for _, msg := range validation.IsDNS1123Subdomain(gv.Group) {
					errs = append(errs, field.Invalid(wp.Child("apiVersion"), w.APIVersion, "group: "+msg))
				}
			}
			if !kindPattern.MatchString(w.Kind) {
				errs = append(errs, field.Invalid(wp.Child("kind"), w.Kind, "must be a Kind such as Deployment: an upper-case letter, then letters and digits"))
			}
			for _, msg := range validation.IsDNS1123Subdomain(w.Name) {
				errs = append(errs, field.Invalid(wp.Child("name"), w.Name, msg))
			}
		}
		for i, c := range bl.Containers {
			for _, msg := range validation.IsDNS1123Label(c) {
				errs = append(errs, field.Invalid(blPath.Child("containers").Index(i), c, msg))
			}
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(policyv1alpha1.GroupVersion.WithKind("EnhancedLivenessPolicy").GroupKind(), p.Name, errs)
	}
	return warnings(p), nil
}

// warnings points at valid settings that are usually mistakes.
func warnings(p *policyv1alpha1.EnhancedLivenessPolicy) admission.Warnings {
	var w admission.Warnings
	mu, mf := p.Spec.MaxUnavailable, p.Spec.MaxFailing
	if mu != nil && mf != nil && mu.Type == mf.Type {
		lower := false
		if mu.Type == intstr.Int {
			lower = mf.IntVal < mu.IntVal
		} else {
			var a, b int
			_, errA := fmt.Sscanf(mu.StrVal, "%d%%", &a)
			_, errB := fmt.Sscanf(mf.StrVal, "%d%%", &b)
			lower = errA == nil && errB == nil && b < a
		}
		if lower {
			w = append(w, fmt.Sprintf("spec.maxFailing (%s) is below spec.maxUnavailable (%s): a failure storm holds restarts before the unavailability budget can be used",
				mf.String(), mu.String()))
		}
	}
	if p.Spec.Mode == policyv1alpha1.ModeDryRun {
		w = append(w, "spec.mode: DryRun is deprecated: it is the old name of Shadow, which it means; write Shadow")
	}
	if mu != nil && (mu.String() == "0" || mu.String() == "0%") {
		w = append(w, "spec.maxUnavailable is 0: only pods that are already unavailable are ever restarted")
	}
	if bl := p.Spec.Blacklist; bl != nil {
		for i, wl := range bl.Workloads {
			if wl.Kind == "ReplicaSet" {
				w = append(w, fmt.Sprintf("spec.blacklist.workloads[%d]: pods of a ReplicaSet owned by a Deployment belong to the Deployment; blacklist the Deployment instead", i))
			}
		}
	}
	return w
}
