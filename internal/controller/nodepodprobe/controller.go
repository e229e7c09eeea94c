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
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// DefaultMappingBatchDelay is how long pod events for one node are collected before the node's
// NodePodProbe is written once for all of them.
const DefaultMappingBatchDelay = 500 * time.Millisecond

// Reconciler keeps one NodePodProbe per node naming the enrolled pods bound to it
// whose liveness probes its daemon runs. The reconcile key is the node, so many pod events make one write.
// It writes only the spec (and the Mapped condition), and creates the node's NodePodProbeReport:
// the results have one writer, the node's daemon, which drops the states of pods that left the
// spec itself. The object is deleted only when its node is gone; its report goes with it.
type Reconciler struct {
	client.Client
	Recorder events.EventRecorder
	// Keys are the trusted public keys: only pods whose probe context is sealed (the seal
	// controller of internal/controller/trust checked how it was admitted) are mapped; the seal
	// controller reports the others.
	Keys interface {
		KeySet(ctx context.Context) (signature.KeySet, bool, error)
	}
	// OperatorNamespace, like kube-system, is never enrolled by the webhook: a probe context
	// there was not written by it.
	OperatorNamespace string
	// BatchDelay defaults to DefaultMappingBatchDelay.
	BatchDelay time.Duration
	// APIReader reads a NodePodProbe again after a conflict on its status; the client when nil.
	APIReader client.Reader
}

// +kubebuilder:rbac:groups=apps.enhancedliveness.io,resources=nodepodprobes,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps.enhancedliveness.io,resources=nodepodprobes/status,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile writes the NodePodProbe of node req.Name from the enrolled pods bound to it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	nodeName := req.Name

	node := &metav1.PartialObjectMetadata{}
	node.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	nodeGone := false
	if err := r.Get(ctx, types.NamespacedName{Name: nodeName}, node); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		nodeGone = true
	}

	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.MatchingFields{managercache.PodByNode: nodeName}); err != nil {
		return ctrl.Result{}, err
	}
	keys, ok, err := r.Keys.KeySet(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !ok {
		// Without the keys no pod can be trusted; writing now would empty the node's probes.
		log.V(1).Info("probe-context signing key not loaded yet; waiting")
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	desired, problems, leftOut := desiredPodProbes(pods.Items, r.trust(keys))
	for _, p := range problems {
		r.Recorder.Eventf(p.pod, nil, corev1.EventTypeWarning, p.reason, "MapProbe", "%s", p.message)
	}

	npp := &appsv1alpha1.NodePodProbe{}
	exists := true
	if err := r.Get(ctx, types.NamespacedName{Name: nodeName}, npp); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		exists = false
	}

	switch {
	case nodeGone:
		if !exists {
			return ctrl.Result{}, nil
		}
		log.V(1).Info("deleting the NodePodProbe of a deleted node")
		err := r.Delete(ctx, npp, client.Preconditions{UID: &npp.UID, ResourceVersion: &npp.ResourceVersion})
		return ctrl.Result{}, client.IgnoreNotFound(err)
	case !exists && len(desired) == 0:
		return ctrl.Result{}, nil
	case !exists:
		npp = newNodePodProbe(nodeName, node.UID)
		npp.Spec.PodProbes = desired
		log.V(1).Info("creating NodePodProbe", "pods", len(desired))
		if err := r.Create(ctx, npp); err != nil {
			return r.refused(ctx, node, nil, desired, err)
		}
	case !slices.Equal(npp.Spec.PodProbes, desired):
		// The spec has one writer (this controller, one reconcile per node at a time) and is
		// recomputed whole from the pods, so a merge patch that replaces spec.podProbes needs no
		// optimistic lock: a cache that lags behind our last write cannot make it conflict or lose
		// an entry.
		before := npp.DeepCopy()
		patch := client.MergeFrom(before)
		npp.Spec.PodProbes = desired
		log.V(1).Info("updating NodePodProbe", "pods", len(desired))
		if err := r.Patch(ctx, npp, patch); err != nil {
			return r.refused(ctx, node, before, desired, err)
		}
	}
	if err := r.ensureReport(ctx, npp); err != nil {
		return ctrl.Result{}, err
	}
	if len(leftOut) > 0 {
		return ctrl.Result{}, r.setMapped(ctx, npp, metav1.ConditionFalse, appsv1alpha1.ReasonPodsLeftOut, leftOutMessage(leftOut))
	}
	return ctrl.Result{}, r.setMapped(ctx, npp, metav1.ConditionTrue, appsv1alpha1.ReasonSpecWritten, "")
}

// leftOutMessage says, for the Mapped condition, which namespaces had pods left out and how many.
func leftOutMessage(leftOut map[string]int) string {
	parts := make([]string, 0, len(leftOut))
	for _, ns := range slices.Sorted(maps.Keys(leftOut)) {
		parts = append(parts, fmt.Sprintf("%d pods of namespace %s", leftOut[ns], ns))
	}
	return fmt.Sprintf("the node has more enrolled pods than a NodePodProbe holds (%d); the namespace with the most "+
		"entries on the node gives up pods first: %s are not probed", appsv1alpha1.MaxPodProbesPerNode, strings.Join(parts, ", "))
}

func newNodePodProbe(nodeName string, nodeUID types.UID) *appsv1alpha1.NodePodProbe {
	return &appsv1alpha1.NodePodProbe{
		ObjectMeta: metav1.ObjectMeta{
			Name: nodeName,
			// Lets the garbage collector remove it with the node even while the manager is down.
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: nodeName, UID: nodeUID,
				BlockOwnerDeletion: ptr.To(false),
			}},
		},
	}
}

// trust accepts the sealed probe contexts (signature.VerifySeal) in namespaces the webhook enrolls.
func (r *Reconciler) trust(keys signature.KeySet) func(*corev1.Pod) error {
	return func(pod *corev1.Pod) error {
		if pod.Namespace == metav1.NamespaceSystem || pod.Namespace == r.OperatorNamespace {
			return fmt.Errorf("%w: the webhook enrolls no pod in namespace %s", signature.ErrNotSigned, pod.Namespace)
		}
		_, err := signature.VerifySeal(keys, pod)
		return err
	}
}

// SetupWithManager watches NodePodProbes, enrolled pods and node creation/deletion, all batched
// per node. It queries managercache.PodByNode.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.BatchDelay == 0 {
		r.BatchDelay = DefaultMappingBatchDelay
	}
	batch := batchByNode{delay: r.BatchDelay}
	nodeLifecycle := predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }}
	return ctrl.NewControllerManagedBy(mgr).
		Named("apps-nodepodprobe").
		Watches(&appsv1alpha1.NodePodProbe{}, batch).
		Watches(&appsv1alpha1.NodePodProbeReport{}, batch, builder.WithPredicates(reportLifecycle)).
		Watches(&corev1.Pod{}, batch).
		WatchesMetadata(&corev1.Node{}, batch, builder.WithPredicates(nodeLifecycle)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
		Complete(r)
}

// batchByNode enqueues the node of a pod, NodePodProbe or Node after a delay; the workqueue keeps
// one entry per node, so every event of the window (our own writes included) lands in one reconcile.
type batchByNode struct{ delay time.Duration }

type requestQueue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (b batchByNode) add(o client.Object, q requestQueue) {
	node := o.GetName() // a NodePodProbe and its report are named after their node
	if pod, ok := o.(*corev1.Pod); ok {
		node = pod.Spec.NodeName
	}
	if node != "" {
		q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Name: node}}, b.delay)
	}
}

func (b batchByNode) Create(_ context.Context, e event.CreateEvent, q requestQueue) {
	b.add(e.Object, q)
}

func (b batchByNode) Update(_ context.Context, e event.UpdateEvent, q requestQueue) {
	oldPod, ok1 := e.ObjectOld.(*corev1.Pod)
	newPod, ok2 := e.ObjectNew.(*corev1.Pod)
	if ok1 && ok2 && !mappingRelevantChange(oldPod, newPod) {
		return
	}
	b.add(e.ObjectNew, q)
}

func (b batchByNode) Delete(_ context.Context, e event.DeleteEvent, q requestQueue) {
	b.add(e.Object, q)
}

func (b batchByNode) Generic(_ context.Context, e event.GenericEvent, q requestQueue) {
	b.add(e.Object, q)
}

// mappingRelevantChange ignores the pod updates (readiness, conditions, container states) that
// cannot change the pod's NodePodProbe entry.
func mappingRelevantChange(o, n *corev1.Pod) bool {
	return o.Spec.NodeName != n.Spec.NodeName ||
		o.Status.PodIP != n.Status.PodIP ||
		o.Status.Phase != n.Status.Phase ||
		(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) ||
		o.Labels[appsv1alpha1.LabelEnrolled] != n.Labels[appsv1alpha1.LabelEnrolled] ||
		o.Annotations[appsv1alpha1.AnnotationProbeContextSignature] != n.Annotations[appsv1alpha1.AnnotationProbeContextSignature] ||
		o.Annotations[appsv1alpha1.AnnotationProbeContextSeal] != n.Annotations[appsv1alpha1.AnnotationProbeContextSeal] ||
		probecontext.AnnotationKey(o.Annotations) != probecontext.AnnotationKey(n.Annotations) ||
		o.Annotations[probecontext.AnnotationKey(o.Annotations)] != n.Annotations[probecontext.AnnotationKey(n.Annotations)]
}
