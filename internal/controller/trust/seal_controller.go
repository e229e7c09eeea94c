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

// Package trust holds the manager's side of the probe trust boundary: the seal controller, which
// binds every admitted probe context to its pod's UID once the pod exists, and the key-set
// controller, which keeps the public keys the daemons verify with (internal/trust/signature).
package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// ReasonNotTrusted is the Warning event on a pod whose probe context the manager does not seal:
// none of its probes is run until the pod is re-created.
const ReasonNotTrusted = "LivenessProbeNotTrusted"

// unknownKeyWait is how long an admission signature naming a key the manager does not know yet
// is retried before the pod is judged untrusted: another replica may have rotated the key a
// moment ago and published it where this replica's cache does not show it yet.
const unknownKeyWait = 2 * time.Minute

// Keys is what the seal controller signs with (a *signature.Store in the manager).
type Keys interface {
	Current() (signature.KeyPair, bool)
}

// KeySource gives the trusted public keys; false while they cannot be known yet.
type KeySource interface {
	KeySet(ctx context.Context) (signature.KeySet, bool, error)
}

// SealReconciler seals the probe context of every enrolled pod once: it checks how the context
// was admitted (the pod webhook's admission signature, used by no other pod) and writes a seal
// bound to the pod's UID, which is all the mapping controller
// and the node daemons accept. A pod whose context it cannot vouch for gets a Warning event
// saying why, and is never probed.
type SealReconciler struct {
	// Client patches pods (a merge patch of one annotation: cached pods are stripped, never
	// written back whole) and reads the cache of enrolled pods.
	Client   client.Client
	Recorder events.EventRecorder
	Keys     Keys
	Trust    KeySource
	// OperatorNamespace, like kube-system, is never enrolled by the webhook.
	OperatorNamespace string
	// Now is the API server's clock as the manager measures it (internal/manager/apiclock): admission
	// signatures are issued on it and pods are stamped on it; time.Now when nil.
	Now func() time.Time

	// admissions tells which pod each recent admission signature belongs to.
	admissions admissions
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

func (r *SealReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile seals one pod, or reports why it cannot.
func (r *SealReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pod.Labels[appsv1alpha1.LabelEnrolled] != appsv1alpha1.TrueValue || pod.DeletionTimestamp != nil ||
		probecontext.AnnotationKey(pod.Annotations) == "" {
		return ctrl.Result{}, nil
	}
	kp, ok := r.Keys.Current()
	if !ok {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	keys, ok, err := r.Trust.KeySet(ctx)
	if err != nil || !ok {
		return ctrl.Result{RequeueAfter: time.Second}, err
	}
	if _, err := signature.VerifySeal(keys, pod); err == nil {
		return ctrl.Result{}, nil
	}
	err = r.admitted(keys, pod)
	if errors.Is(err, signature.ErrUnknownKey) && r.now().Sub(pod.CreationTimestamp.Time) < unknownKeyWait {
		log.V(1).Info("admission signature names a key not published yet; retrying", "error", err.Error())
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}
	if err != nil {
		Untrusted.WithLabelValues(untrustedCause(err)).Inc()
		r.Recorder.Eventf(pod, nil, corev1.EventTypeWarning, ReasonNotTrusted, "Seal",
			"liveness probes of pod %s/%s are not run: %v; re-create the pod (for a workload: kubectl rollout restart) "+
				"to have its probes admitted again", pod.Namespace, pod.Name, err)
		return ctrl.Result{}, nil
	}
	seal, err := signature.Seal(kp, pod)
	if err != nil {
		return ctrl.Result{}, err
	}
	// The UID in the patch makes the API server refuse it for a pod re-created under the same name.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": pod.UID, "annotations": map[string]string{appsv1alpha1.AnnotationProbeContextSeal: seal}}})
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Client.Patch(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}},
		client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("sealing pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	Sealed.WithLabelValues(evidenceAdmission).Inc()
	log.V(1).Info("sealed the probe context", "pod", req.NamespacedName, "key", kp.ID, "evidence", evidenceAdmission)
	return ctrl.Result{}, nil
}

// evidenceAdmission is the evidence the seal controller checks before it seals (the label of
// Sealed): the pod webhook's admission signature.
const evidenceAdmission = "admission"

// admitted checks that the pod's probe context was admitted by the pod webhook: its admission
// signature, on this pod only.
func (r *SealReconciler) admitted(keys signature.KeySet, pod *corev1.Pod) error {
	if pod.Namespace == metav1.NamespaceSystem || pod.Namespace == r.OperatorNamespace {
		return fmt.Errorf("%w: the webhook enrolls no pod in namespace %s", signature.ErrNotSigned, pod.Namespace)
	}
	if _, err := signature.VerifyAdmission(keys, pod); err != nil {
		return err
	}
	if other := r.otherHolder(pod); other != "" {
		return fmt.Errorf("%w: its admission signature was made for pod %s, which was created first "+
			"(a signature copied from another pod)", signature.ErrNotSigned, other)
	}
	return nil
}

// otherHolder returns the pod, other than pod, that its admission signature belongs to (the
// first created with it, admissions), "" when it is pod's own.
func (r *SealReconciler) otherHolder(pod *corev1.Pod) string {
	r.admissions.observe(pod, r.now())
	if h, ok := r.admissions.holder(signature.AdmissionNonce(pod)); ok && h.uid != pod.UID {
		return h.pod()
	}
	return ""
}

// untrustedCause is the metric label of a refusal.
func untrustedCause(err error) string {
	if errors.Is(err, signature.ErrUnknownKey) {
		return "unknown-key"
	}
	return "not-admitted"
}

// SetupWithManager watches enrolled pods (the manager caches no others): their creation and
// changes of their labels or annotations; status updates cannot change what is sealed. The one
// handler records each pod's admission before it queues the pod, so a pod is never judged before
// the pods the watch delivered ahead of it are known.
func (r *SealReconciler) SetupWithManager(mgr ctrl.Manager) error {
	relevant := predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld, e.ObjectNew
			return !mapsEqual(o.GetAnnotations(), n.GetAnnotations()) || !mapsEqual(o.GetLabels(), n.GetLabels())
		},
		DeleteFunc: func(event.DeleteEvent) bool { return false },
	}
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	observe := func(o client.Object, q queue) {
		r.admissions.observe(o, r.now())
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("probe-seal").
		Watches(&corev1.Pod{}, handler.Funcs{
			CreateFunc:  func(_ context.Context, e event.CreateEvent, q queue) { observe(e.Object, q) },
			UpdateFunc:  func(_ context.Context, e event.UpdateEvent, q queue) { observe(e.ObjectNew, q) },
			GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) { observe(e.Object, q) },
		}, builder.WithPredicates(relevant)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
