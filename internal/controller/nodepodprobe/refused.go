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
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/patch"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// ReasonWriteRefused is the Warning event on a NodePodProbe whose spec the API server refused.
const ReasonWriteRefused = "NodePodProbeWriteRefused"

// refusedRetry is how soon a refused write is tried again (the pods may have changed meanwhile,
// and the events and the condition stay current).
const refusedRetry = 30 * time.Second

// refusalOf reports whether err is the API server refusing the object itself, which a retry of
// the same write cannot fix (a transient error is retried by the workqueue instead).
func refusalOf(err error) bool {
	switch {
	case apierrors.IsInvalid(err), apierrors.IsRequestEntityTooLargeError(err), apierrors.IsBadRequest(err),
		apierrors.IsForbidden(err):
		return true
	case apierrors.IsInternalError(err):
		// etcd's "request is too large" reaches the client as an internal error.
		return true
	}
	return false
}

// refused handles a refused write of the node's spec: the NodePodProbe (created empty when it did
// not exist, so that there is one to carry it) gets the condition Mapped=False and a Warning
// event, and each pod the write would have added gets a Warning event: it is not probed. before
// is the object as it was (nil when the create was refused).
func (r *Reconciler) refused(ctx context.Context, node client.Object, before *appsv1alpha1.NodePodProbe,
	desired []appsv1alpha1.PodProbe, writeErr error) (ctrl.Result, error) {
	if !refusalOf(writeErr) {
		return ctrl.Result{}, writeErr
	}
	logf.FromContext(ctx).Error(writeErr, "the API server refused the NodePodProbe; its new pods are not probed")
	npp := before
	if npp == nil {
		npp = newNodePodProbe(node.GetName(), node.GetUID())
		if err := r.Create(ctx, npp); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, errors.Join(writeErr, err)
		}
		if err := r.Get(ctx, client.ObjectKeyFromObject(npp), npp); err != nil {
			return ctrl.Result{}, errors.Join(writeErr, err)
		}
	}
	msg := truncate.String(writeErr.Error(), appsv1alpha1.MaxProbeMessageLength)
	r.Recorder.Eventf(npp, nil, corev1.EventTypeWarning, ReasonWriteRefused, "MapProbes",
		"the API server refused the spec of the enrolled pods of node %s; the pods it would add are not probed: %s",
		node.GetName(), msg)
	probed := make(map[types.UID]bool, len(npp.Spec.PodProbes))
	for _, pp := range npp.Spec.PodProbes {
		probed[pp.UID] = true
	}
	for _, pp := range desired {
		if probed[pp.UID] {
			continue
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pp.Name, Namespace: pp.Namespace, UID: pp.UID}}
		r.Recorder.Eventf(pod, nil, corev1.EventTypeWarning, ReasonNotMapped, "MapProbe",
			"liveness probe not handed to the node daemon: the API server refused the NodePodProbe of node %s "+
				"(condition %s=False on it): %s", node.GetName(), appsv1alpha1.ConditionMapped, msg)
	}
	if err := r.setMapped(ctx, npp, metav1.ConditionFalse, appsv1alpha1.ReasonWriteRefused, msg); err != nil {
		return ctrl.Result{}, errors.Join(writeErr, err)
	}
	return ctrl.Result{RequeueAfter: refusedRetry}, nil
}

// setMapped sets the Mapped condition. A NodePodProbe that never had a refused write carries
// none, so that the common case costs no status write.
func (r *Reconciler) setMapped(ctx context.Context, npp *appsv1alpha1.NodePodProbe,
	status metav1.ConditionStatus, reason, message string) error {
	if npp.UID == "" {
		return nil
	}
	if status == metav1.ConditionTrue && meta.FindStatusCondition(npp.Status.Conditions, appsv1alpha1.ConditionMapped) == nil {
		return nil
	}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	_, err := patch.Status(ctx, r.Client, reader, npp, func(npp *appsv1alpha1.NodePodProbe) (bool, error) {
		return meta.SetStatusCondition(&npp.Status.Conditions, metav1.Condition{
			Type: appsv1alpha1.ConditionMapped, Status: status, Reason: reason, Message: message,
			ObservedGeneration: npp.Generation,
		}), nil
	})
	if err != nil {
		return fmt.Errorf("setting condition %s of NodePodProbe %s: %w", appsv1alpha1.ConditionMapped, npp.Name, err)
	}
	return nil
}
