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

package nodepodprobe

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// +kubebuilder:rbac:groups=apps.enhancedliveness.io,resources=nodepodprobereports,verbs=get;list;watch;create

// ensureReport creates the NodePodProbeReport of npp, where the node's daemon writes its results,
// with an empty status (the daemon's first write fills it). npp owns it, so the garbage
// collector deletes it with npp. The manager never writes the report's status.
func (r *Reconciler) ensureReport(ctx context.Context, npp *appsv1alpha1.NodePodProbe) error {
	err := r.Get(ctx, types.NamespacedName{Name: npp.Name}, &appsv1alpha1.NodePodProbeReport{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{
		Name: npp.Name,
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "NodePodProbe", Name: npp.Name, UID: npp.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false),
		}},
	}}
	if err := r.Create(ctx, rep); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating NodePodProbeReport %s: %w", npp.Name, err)
	}
	return nil
}

// reportLifecycle lets through the creation and deletion of reports, not the daemons' status
// writes: a deleted report is created again.
var reportLifecycle = predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}
