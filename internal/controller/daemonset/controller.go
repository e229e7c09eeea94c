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

package daemonset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/ssa"
)

// Reconciler creates the node daemon's DaemonSet and keeps it as the manager's
// configuration says. There is no custom resource behind it (an OLM bundle can only install
// Deployments, so the manager owns the DaemonSet): it watches DaemonSets labelled
// app.kubernetes.io/managed-by=enhanced-liveness-operator in the operator namespace and
// re-applies the desired object whenever one of them changes or disappears.
type Reconciler struct {
	Client client.Client
	// APIReader reads the manager's Deployment, which the cache does not hold.
	APIReader client.Reader
	// Config is the desired daemon; an empty Image means "the manager's own image".
	Config Config
	// OwnerDeployment is the manager's Deployment in Config.Namespace. When it exists it owns
	// the DaemonSet, so uninstalling the manager (kustomize or OLM) garbage-collects the daemons,
	// and its "manager" container's image is the default daemon image.
	OwnerDeployment string
}

// +kubebuilder:rbac:groups=apps,namespace=enhanced-liveness-system,resources=daemonsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,namespace=enhanced-liveness-system,resources=deployments,verbs=get

// Reconcile applies the desired DaemonSet and deletes DaemonSets this manager created under
// another name (e.g. after --daemon-name changed).
func (r *Reconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	cfg := r.Config

	owner, err := ssa.ManagerDeployment(ctx, r.APIReader, cfg.Namespace, r.OwnerDeployment)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading manager Deployment: %w", err)
	}
	if owner == nil && r.OwnerDeployment != "" {
		log.V(1).Info("manager Deployment not found; the daemon DaemonSet gets no owner", "deployment", r.OwnerDeployment)
	}
	if cfg.Image == "" && owner != nil {
		cfg.Image = managerImage(owner)
	}
	if err := cfg.Validate(); err != nil {
		// Not retryable: the manager's settings are wrong. A terminal error is logged and counted
		// (controller_runtime_terminal_reconcile_errors_total) and the DaemonSet is left as it is.
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("cannot build the daemon DaemonSet: %w", err))
	}

	desired := Build(cfg)
	if owner != nil {
		desired.OwnerReferences = []metav1.OwnerReference{ssa.OwnedBy(owner)}
	}
	if err := ssa.Apply(ctx, r.Client, desired); err != nil {
		return ctrl.Result{}, err
	}

	var list appsv1.DaemonSetList
	if err := r.Client.List(ctx, &list, client.InNamespace(cfg.Namespace),
		client.MatchingLabelsSelector{Selector: ManagedSelector()}); err != nil {
		return ctrl.Result{}, err
	}
	for i := range list.Items {
		old := &list.Items[i]
		if old.Name == cfg.Name {
			continue
		}
		log.Info("deleting a daemon DaemonSet this manager no longer wants", "name", old.Name)
		if err := r.Client.Delete(ctx, old); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// managerImage is the image of the Deployment's "manager" container (or its only container).
func managerImage(d *appsv1.Deployment) string {
	cs := d.Spec.Template.Spec.Containers
	for _, c := range cs {
		if c.Name == "manager" {
			return c.Image
		}
	}
	if len(cs) == 1 {
		return cs[0].Image
	}
	return ""
}

// SetupWithManager watches the managed DaemonSets (the manager's cache holds only those of the
// operator namespace: internal/manager/managercache) and triggers one reconcile at start, so a
// missing DaemonSet is created. Status changes (every daemon pod becoming ready) do not need a
// re-apply; spec, label, annotation and owner edits do, and deletions always pass (ssa.Keep).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	managed := func(o client.Object) bool {
		return o.GetNamespace() == r.Config.Namespace && ManagedSelector().Matches(labels.Set(o.GetLabels()))
	}
	return ssa.Keep(mgr, "daemonset", types.NamespacedName{Namespace: r.Config.Namespace, Name: r.Config.Name},
		managed, r, &appsv1.DaemonSet{})
}
