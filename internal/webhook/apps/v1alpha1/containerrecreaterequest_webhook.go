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

package v1alpha1

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// nolint:unused
// log is for logging in this package.
var containerrecreaterequestlog = logf.Log.WithName("containerrecreaterequest-resource")

// SetupContainerRecreateRequestWebhookWithManager registers the webhook for ContainerRecreateRequest in the manager.
func SetupContainerRecreateRequestWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &appsv1alpha1.ContainerRecreateRequest{}).
		WithValidator(&ContainerRecreateRequestValidator{}).
		WithDefaulter(&ContainerRecreateRequestDefaulter{}).
		Complete()
}

// TODO(user): EDIT THIS FILE!  THIS IS SCAFFOLDING FOR YOU TO OWN!

// +kubebuilder:webhook:path=/mutate-apps-enhancedliveness-io-v1alpha1-containerrecreaterequest,mutating=true,failurePolicy=fail,sideEffects=None,groups=apps.enhancedliveness.io,resources=containerrecreaterequests,verbs=create;update,versions=v1alpha1,name=mcontainerrecreaterequest-v1alpha1.kb.io,admissionReviewVersions=v1

// ContainerRecreateRequestDefaulter struct is responsible for setting default values on the custom resource of the
// Kind ContainerRecreateRequest when those are created or updated.
//
// NOTE: The +kubebuilder:object:generate=false marker prevents controller-gen from generating DeepCopy methods,
// as it is used only for temporary operations and does not need to be deeply copied.
type ContainerRecreateRequestDefaulter struct {
	// TODO(user): Add more fields as needed for defaulting
}

// Default implements admission.Defaulter so a webhook will be registered for the Kind ContainerRecreateRequest.
func (d *ContainerRecreateRequestDefaulter) Default(_ context.Context, obj *appsv1alpha1.ContainerRecreateRequest) error {
	containerrecreaterequestlog.Info("Defaulting for ContainerRecreateRequest", "name", obj.GetName())

	// TODO(user): fill in your defaulting logic.

	return nil
}

// TODO(user): change verbs to "verbs=create;update;delete" if you want to enable deletion validation.
// NOTE: If you want to customise the 'path', use the flags '--defaulting-path' or '--validation-path'.
// +kubebuilder:webhook:path=/validate-apps-enhancedliveness-io-v1alpha1-containerrecreaterequest,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps.enhancedliveness.io,resources=containerrecreaterequests,verbs=create;update,versions=v1alpha1,name=vcontainerrecreaterequest-v1alpha1.kb.io,admissionReviewVersions=v1

// ContainerRecreateRequestValidator struct is responsible for validating the ContainerRecreateRequest resource
// when it is created, updated, or deleted.
//
// NOTE: The +kubebuilder:object:generate=false marker prevents controller-gen from generating DeepCopy methods,
// as this struct is used only for temporary operations and does not need to be deeply copied.
type ContainerRecreateRequestValidator struct {
	// TODO(user): Add more fields as needed for validation
}

// ValidateCreate implements admission.Validator so a webhook will be registered for the type ContainerRecreateRequest.
func (v *ContainerRecreateRequestValidator) ValidateCreate(_ context.Context, obj *appsv1alpha1.ContainerRecreateRequest) (admission.Warnings, error) {
	containerrecreaterequestlog.Info("Validation for ContainerRecreateRequest upon creation", "name", obj.GetName())

	// TODO(user): fill in your validation logic upon object creation.

	return nil, nil
}

// ValidateUpdate implements admission.Validator so a webhook will be registered for the type ContainerRecreateRequest.
func (v *ContainerRecreateRequestValidator) ValidateUpdate(_ context.Context, oldObj, newObj *appsv1alpha1.ContainerRecreateRequest) (admission.Warnings, error) {
	containerrecreaterequestlog.Info("Validation for ContainerRecreateRequest upon update", "name", newObj.GetName())

	// TODO(user): fill in your validation logic upon object update.

	return nil, nil
}

// ValidateDelete implements admission.Validator so a webhook will be registered for the type ContainerRecreateRequest.
func (v *ContainerRecreateRequestValidator) ValidateDelete(_ context.Context, obj *appsv1alpha1.ContainerRecreateRequest) (admission.Warnings, error) {
	containerrecreaterequestlog.Info("Validation for ContainerRecreateRequest upon deletion", "name", obj.GetName())

	// TODO(user): fill in your validation logic upon object deletion.

	return nil, nil
}
