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

package admissionpolicy

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/ssa"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies;validatingadmissionpolicybindings,verbs=list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies;validatingadmissionpolicybindings,verbs=get;create;update;patch,resourceNames=enhanced-liveness-operator-pod-probe-immutable;enhanced-liveness-operator-daemon-node-scope;enhanced-liveness-operator-restart-holds
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=nodepodprobes.apps.enhancedliveness.io

// Reconciler applies the policies and their bindings at start and again whenever one is edited
// or deleted. It runs on the leader only; the objects are cluster-wide.
type Reconciler struct {
	Client client.Client
	// APIReader reads the owner CRD (not cached).
	APIReader client.Reader
	// OperatorUsername is exempt from the immutability policy (Config.OperatorUsername).
	OperatorUsername string
	// DaemonUsername is held to its node by the node-scope policy (Config.DaemonUsername).
	DaemonUsername string
}

// Reconcile applies the desired policy and binding.
func (r *Reconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(schemaCRD)
	cfg := Config{OperatorUsername: r.OperatorUsername, DaemonUsername: r.DaemonUsername}
	switch err := r.APIReader.Get(ctx, types.NamespacedName{Name: OwnerCRD}, crd); {
	case err == nil && crd.DeletionTimestamp == nil:
		cfg.OwnerUID = crd.UID
	case err == nil || apierrors.IsNotFound(err):
		// The operator is being uninstalled: its CRDs go first, and the garbage collector removes
		// the policy and the binding they own. Applying them now would bring them back without
		// an owner, and they would outlive the operator, keeping every pod's probe keys
		// immutable with nobody to serve the exemption.
		log.Info("owner CRD gone or being deleted; not applying the admission policies", "crd", OwnerCRD)
		return ctrl.Result{}, nil
	default:
		return ctrl.Result{}, fmt.Errorf("reading CRD %s: %w", OwnerCRD, err)
	}
	for _, build := range []func(Config) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding){
		Build, BuildDaemonNodeScope, BuildRestartHolds,
	} {
		policy, binding := build(cfg)
		for _, obj := range []client.Object{policy, binding} {
			if err := ssa.Apply(ctx, r.Client, obj); err != nil {
				return ctrl.Result{}, err
			}
		}
		if err := r.replaceDrifted(ctx, policy, binding); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// replaceDrifted writes the whole spec of the policy or the binding when it differs from the
// desired one. Server-side apply cannot take out what another manager added to a list or map it
// merges (a second validation action, an extra match condition, a selector term), and any of
// those could weaken the policy.
func (r *Reconciler) replaceDrifted(ctx context.Context,
	policy *admissionregistrationv1.ValidatingAdmissionPolicy, binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding) error {
	livePolicy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(policy), livePolicy); err != nil {
		return err
	}
	if !equality.Semantic.DeepEqual(livePolicy.Spec, policy.Spec) {
		livePolicy.Spec = policy.Spec
		if err := r.Client.Update(ctx, livePolicy, client.FieldOwner(ssa.FieldOwner)); err != nil {
			return fmt.Errorf("restoring the spec of ValidatingAdmissionPolicy %s: %w", policy.Name, err)
		}
	}
	liveBinding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(binding), liveBinding); err != nil {
		return err
	}
	if !equality.Semantic.DeepEqual(liveBinding.Spec, binding.Spec) {
		liveBinding.Spec = binding.Spec
		if err := r.Client.Update(ctx, liveBinding, client.FieldOwner(ssa.FieldOwner)); err != nil {
			return fmt.Errorf("restoring the spec of ValidatingAdmissionPolicyBinding %s: %w", binding.Name, err)
		}
	}
	return nil
}

// SetupWithManager watches the policies and the bindings (the manager's cache holds only the
// managed ones: internal/manager/managercache) and reconciles once at start, so missing objects are
// created.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	managed := func(o client.Object) bool { return ManagedSelector().Matches(labels.Set(o.GetLabels())) }
	return ssa.Keep(mgr, "admissionpolicy", types.NamespacedName{Name: Name}, managed, r,
		&admissionregistrationv1.ValidatingAdmissionPolicy{}, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{})
}
