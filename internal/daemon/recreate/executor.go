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

package recreate

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
)

// EventRecorderName is the reporting controller of the executor's events.
const EventRecorderName = "enhanced-liveness-daemon"

// DefaultPollInterval re-checks a running request even without a pod or request event.
const DefaultPollInterval = 10 * time.Second

// Executor runs the ContainerRecreateRequests of one node. It writes only their status.
type Executor struct {
	// Client reads from the daemon's node-scoped cache and writes status patches.
	Client client.Client
	// APIReader reads around the cache: to confirm a pod is gone, and to re-read a request after a
	// conflict. Defaults to the manager's.
	APIReader client.Reader
	Runtime   cri.Runtime
	NodeName  string
	// Recorder emits events; defaults to the manager's recorder named EventRecorderName.
	Recorder events.EventRecorder
	Clock    clock.Clock
	// DefaultActiveDeadline applies when activeDeadlineSeconds is unset (default DefaultActiveDeadline).
	DefaultActiveDeadline time.Duration
	// PollInterval re-checks a running request as a safety net (default DefaultPollInterval).
	PollInterval time.Duration
	// MaxConcurrentReconciles is how many pods' requests run at once (default 4): a stop can take
	// the whole grace period, which must not hold up other pods.
	MaxConcurrentReconciles int
	// HookUserAgent is the User-Agent of HTTP preStop hooks (default "kube-lifecycle").
	HookUserAgent string

	memory
}

func (e *Executor) defaults() {
	if e.Clock == nil {
		e.Clock = clock.RealClock{}
	}
	if e.DefaultActiveDeadline <= 0 {
		e.DefaultActiveDeadline = DefaultActiveDeadline
	}
	if e.PollInterval <= 0 {
		e.PollInterval = DefaultPollInterval
	}
	if e.MaxConcurrentReconciles <= 0 {
		e.MaxConcurrentReconciles = 4
	}
	if e.APIReader == nil {
		e.APIReader = e.Client
	}
}

// SetupWithManager registers the executor. The manager's cache should already be limited to the
// node's pods and requests; the handlers filter again, so a wider cache is only slower.
func (e *Executor) SetupWithManager(mgr ctrl.Manager) error {
	if e.NodeName == "" || e.Runtime == nil {
		return errors.New("recreate: Executor needs NodeName and Runtime")
	}
	if e.Client == nil {
		e.Client = mgr.GetClient()
	}
	if e.APIReader == nil {
		e.APIReader = mgr.GetAPIReader()
	}
	if e.Recorder == nil {
		e.Recorder = mgr.GetEventRecorder(EventRecorderName)
	}
	e.defaults()
	return ctrl.NewControllerManagedBy(mgr).
		Named("daemon-crr-executor").
		Watches(&appsv1alpha1.ContainerRecreateRequest{}, handler.EnqueueRequestsFromMapFunc(e.requestsForCRR)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(e.requestsForPod)).
		WithOptions(controller.Options{MaxConcurrentReconciles: e.MaxConcurrentReconciles}).
		Complete(e)
}

// owns reports whether crr is an active request of this node.
func (e *Executor) owns(crr *appsv1alpha1.ContainerRecreateRequest) bool {
	return crr.Labels[appsv1alpha1.LabelCRRNodeName] == e.NodeName &&
		crr.Labels[appsv1alpha1.LabelCRRActive] == appsv1alpha1.TrueValue
}

// requestsForCRR enqueues the request and every active request of the same pod, so that the
// next one starts as soon as the running one finishes.
func (e *Executor) requestsForCRR(ctx context.Context, obj client.Object) []reconcile.Request {
	crr, ok := obj.(*appsv1alpha1.ContainerRecreateRequest)
	if !ok || crr.Labels[appsv1alpha1.LabelCRRNodeName] != e.NodeName {
		return nil
	}
	var reqs []reconcile.Request
	if e.owns(crr) {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(crr)})
	}
	if uid := crr.Labels[appsv1alpha1.LabelCRRPodUID]; uid != "" {
		reqs = append(reqs, e.activeRequestsOfPod(ctx, crr.Namespace, uid, crr.Name)...)
	}
	return reqs
}

// requestsForPod enqueues the active requests of a pod whose status or existence changed.
func (e *Executor) requestsForPod(ctx context.Context, obj client.Object) []reconcile.Request {
	return e.activeRequestsOfPod(ctx, obj.GetNamespace(), string(obj.GetUID()), "")
}

func (e *Executor) activeRequestsOfPod(ctx context.Context, namespace, podUID, except string) []reconcile.Request {
	crrs, err := e.listActive(ctx, namespace, podUID)
	if err != nil {
		logf.FromContext(ctx).Error(err, "listing requests of pod", "namespace", namespace, "podUID", podUID)
		return nil
	}
	var reqs []reconcile.Request
	for i := range crrs {
		if crrs[i].Name != except {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&crrs[i])})
		}
	}
	return reqs
}

func (e *Executor) listActive(ctx context.Context, namespace, podUID string) ([]appsv1alpha1.ContainerRecreateRequest, error) {
	var list appsv1alpha1.ContainerRecreateRequestList
	err := e.Client.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{
		appsv1alpha1.LabelCRRPodUID:   podUID,
		appsv1alpha1.LabelCRRNodeName: e.NodeName,
		appsv1alpha1.LabelCRRActive:   appsv1alpha1.TrueValue,
	})
	return list.Items, err
}

// Reconcile moves one request forward: wait for an older request of the pod, stop containers,
// watch their replacements come up, and finish.
//
// Every status write carries the resourceVersion the plan was made from. The cache can lag behind
// the executor's own last write; such a write conflicts, and the whole step is made again from a
// fresh read, never by re-applying a plan made from stale status.
func (e *Executor) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	e.defaults()
	crr := &appsv1alpha1.ContainerRecreateRequest{}
	if err := e.Client.Get(ctx, req.NamespacedName, crr); err != nil {
		if apierrors.IsNotFound(err) {
			e.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	for attempt := 0; ; attempt++ {
		res, err := e.reconcileRequest(ctx, crr)
		if !errors.Is(err, errConflict) || attempt >= conflictRetries {
			return res, ignoreSuperseded(err)
		}
		crr = &appsv1alpha1.ContainerRecreateRequest{}
		if err := e.APIReader.Get(ctx, req.NamespacedName, crr); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
}

func (e *Executor) reconcileRequest(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) (ctrl.Result, error) {
	if !e.owns(crr) || IsFinished(crr.Status.Phase) || crr.DeletionTimestamp != nil {
		e.forget(client.ObjectKeyFromObject(crr))
		return ctrl.Result{}, nil
	}
	now := e.Clock.Now()
	deadline, deadlineSecs := DeadlineOf(crr, e.DefaultActiveDeadline)

	pod, gone, err := e.getPod(ctx, crr)
	if err != nil {
		return ctrl.Result{}, err
	}
	if gone != "" {
		return ctrl.Result{}, e.finish(ctx, crr, crr.Status.ContainerRecreateStates, appsv1alpha1.RecreateFailed, gone)
	}

	siblings, err := e.listActive(ctx, crr.Namespace, string(pod.UID))
	if err != nil {
		return ctrl.Result{}, err
	}
	// The turn this process handed out wins over the cache, which may not show it yet.
	nextInCache := ""
	if next := NextToRun(append(siblings, *crr)); next != nil && next.UID != crr.UID {
		nextInCache = next.Name
	}
	other := e.claimTurn(ctx, pod.UID, crr, nextInCache)
	if other != "" {
		if !now.Before(deadline) {
			return ctrl.Result{}, e.finish(ctx, crr, nil, appsv1alpha1.RecreateFailed, fmt.Sprintf(
				"not started within activeDeadlineSeconds (%d): ContainerRecreateRequest %s of the same pod was still running", deadlineSecs, other))
		}
		msg := fmt.Sprintf("waiting for ContainerRecreateRequest %s of the same pod to finish", other)
		if _, err := e.writeStatus(ctx, crr, false, func(s *appsv1alpha1.ContainerRecreateRequestStatus) {
			s.Phase, s.Message = appsv1alpha1.RecreatePending, msg
		}); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: deadline.Sub(now)}, nil
	}
	return e.execute(ctx, crr, pod, deadline, deadlineSecs)
}

// getPod returns the request's pod, or why it is gone. The cache may lag behind a new pod, so a
// miss is confirmed with a live read before the request fails.
func (e *Executor) getPod(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) (*corev1.Pod, string, error) {
	key := types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName}
	pod := &corev1.Pod{}
	err := e.Client.Get(ctx, key, pod)
	if apierrors.IsNotFound(err) {
		err = e.APIReader.Get(ctx, key, pod)
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("pod %s no longer exists", crr.Spec.PodName), nil
	case err != nil:
		return nil, "", err
	}
	if uid := crr.Labels[appsv1alpha1.LabelCRRPodUID]; uid != "" && uid != string(pod.UID) {
		return nil, fmt.Sprintf("pod %s was replaced (uid %s, the request was for %s)", pod.Name, pod.UID, uid), nil
	}
	if pod.DeletionTimestamp != nil {
		return nil, fmt.Sprintf("pod %s is being deleted", pod.Name), nil
	}
	if pod.Spec.NodeName != e.NodeName {
		return nil, fmt.Sprintf("pod %s is not on node %s", pod.Name, e.NodeName), nil
	}
	return pod, "", nil
}
