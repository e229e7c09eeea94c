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

package containerrecreaterequest

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/patch"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// EventStopInFlight is the Warning event on a request whose deadline passed while the daemon's
// stop of its container had not returned: it is failed once the stop returned.
const EventStopInFlight = "RecreateStopInFlight"

// Defaults of the CRR lifecycle controller.
const (
	DefaultCRRPickupTimeout    = time.Minute
	DefaultCRRPodCheckInterval = 30 * time.Second
	// DefaultCRRStopInFlightLimit bounds how long past its deadline and its grace period a
	// request waits for a stop in flight to be reported ended.
	DefaultCRRStopInFlightLimit = 10 * time.Minute
)

// Reconciler is the manager's side of a CRR's life. Each outcome has one
// writer: the node daemon runs the request and records its progress and the outcome of the
// restart; this controller alone fails requests that cannot finish (pod gone, replaced or
// terminating, no daemon picked them up, deadline passed). It deletes finished requests after
// their TTL. Whether a request still holds its pod is its phase (ContainerRecreateRequest.Active).
type Reconciler struct {
	client.Client
	// APIReader reads pods uncached (hand-made requests may target pods the cache does not hold)
	// and requests fresh on conflict.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Clock is the API server's clock as the manager measures it (internal/manager/apiclock): the
	// deadlines count from the request's creationTimestamp, which the API server stamps.
	Clock clock.PassiveClock

	// PickupTimeout fails a request whose status.phase is still empty this long after creation.
	PickupTimeout time.Duration
	// PodCheckInterval bounds how long an unfinished request goes without checking its pod, for
	// pods outside the cache whose deletion no event announces.
	PodCheckInterval time.Duration
	// StopInFlightLimit is how long past its deadline plus its grace period a request waits for
	// a stop in flight: a live daemon's runtime timeout ends a stop well within it, so a stop
	// still in flight then has a daemon that will not report it (gone, or replaced by one that
	// does not know the stop), and the request fails rather than hold its pod's budget forever.
	StopInFlightLimit time.Duration

	// finished remembers when this manager first saw each request finished, on Clock: the TTL
	// counts from then, not from status.completionTime, which the node daemon stamps on the
	// node's clock. A restarted manager counts again from its start (a request is kept longer,
	// never shorter).
	finished finishedMemory
}

// finishedMemory is when each finished request was first seen so, by name and UID; a request is
// forgotten when it is deleted.
type finishedMemory struct {
	mu   sync.Mutex
	seen map[types.NamespacedName]finishedAt
}

type finishedAt struct {
	uid types.UID
	at  time.Time
}

// at returns when crr was first seen finished: now, the first time.
func (m *finishedMemory) at(crr *appsv1alpha1.ContainerRecreateRequest, now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := client.ObjectKeyFromObject(crr)
	if f, ok := m.seen[key]; ok && f.uid == crr.UID {
		return f.at
	}
	if m.seen == nil {
		m.seen = map[types.NamespacedName]finishedAt{}
	}
	m.seen[key] = finishedAt{uid: crr.UID, at: now}
	return now
}

func (m *finishedMemory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.seen, key)
}

// +kubebuilder:rbac:groups=apps.enhancedliveness.io,resources=containerrecreaterequests,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps.enhancedliveness.io,resources=containerrecreaterequests/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile moves one request along its lifecycle and requeues for its next deadline.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	crr := &appsv1alpha1.ContainerRecreateRequest{}
	if err := r.Get(ctx, req.NamespacedName, crr); err != nil {
		if apierrors.IsNotFound(err) {
			r.finished.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if crr.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	if crr.Finished() {
		return r.reconcileFinished(ctx, crr)
	}
	now := r.Clock.Now()
	msg, next, err := r.failIfStuck(ctx, crr, now)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case msg == "" && next.IsZero(): // finished meanwhile: its own event follows
		return ctrl.Result{}, nil
	case msg == "":
		if crr.StopInFlight() && !now.Before(crr.Deadline()) {
			r.Recorder.Eventf(crr, nil, corev1.EventTypeWarning, EventStopInFlight, "Wait", "%s",
				stopInFlightMessage(crr.ActiveDeadline()))
		}
		return ctrl.Result{RequeueAfter: next.Sub(now)}, nil
	}
	logf.FromContext(ctx).Info("request failed", "reason", msg)
	r.Recorder.Eventf(crr, nil, corev1.EventTypeWarning, "RecreateFailed", "Complete", "%s", msg)
	return r.reconcileFinished(ctx, crr)
}

// failureReason says why an unfinished request must fail now, or when to look again.
func (r *Reconciler) failureReason(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, now time.Time) (string, time.Time, error) {
	pod := &corev1.Pod{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: crr.Namespace, Name: crr.Spec.PodName}, pod); err != nil {
		if !apierrors.IsNotFound(err) {
			return "", time.Time{}, err
		}
		return podGoneMessage(crr.Spec.PodName), time.Time{}, nil
	}
	if uid := crr.Labels[appsv1alpha1.LabelCRRPodUID]; uid != "" && uid != string(pod.UID) {
		return podReplacedMessage(crr.Spec.PodName, uid, string(pod.UID)), time.Time{}, nil
	}
	if pod.DeletionTimestamp != nil {
		return podTerminatingMessage(crr.Spec.PodName), time.Time{}, nil
	}
	node := crr.Labels[appsv1alpha1.LabelCRRNodeName]
	if node == "" {
		node = pod.Spec.NodeName
	}
	next := now.Add(r.PodCheckInterval)
	switch end := crr.Deadline(); {
	case !now.Before(end) && crr.StopInFlight():
		// The daemon's stop may still go through: failing the request now would free its budget
		// (and let it be replaced) while the container is stopping. The daemon's runtime timeout
		// bounds the stop; its return wakes this request, the pod check interval covers a lost one.
		limit := r.stopInFlightLimit(crr)
		if !now.Before(end.Add(limit)) {
			return stopNeverEndedMessage(crr.ActiveDeadline(), limit, node), time.Time{}, nil
		}
		if e := end.Add(limit); e.Before(next) {
			next = e
		}
	case !now.Before(end):
		return deadlineMessage(crr.ActiveDeadline(), crr.Status.Message), time.Time{}, nil
	case end.Before(next):
		next = end
	}
	if crr.Status.Phase == "" {
		if end := crr.CreationTimestamp.Add(r.PickupTimeout); !now.Before(end) {
			return notPickedUpMessage(r.PickupTimeout, node), time.Time{}, nil
		} else if end.Before(next) {
			next = end
		}
	}
	return "", next, nil
}

// stopInFlightLimit is how long past its deadline a request waits for a stop in flight: the
// request's grace period (the longest a stop can take) plus StopInFlightLimit.
func (r *Reconciler) stopInFlightLimit(crr *appsv1alpha1.ContainerRecreateRequest) time.Duration {
	grace := appsv1alpha1.DefaultTerminationGracePeriodSeconds
	if g := crr.Spec.Strategy.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	return time.Duration(grace)*time.Second + r.StopInFlightLimit
}

// failIfStuck fails the request when failureReason says it cannot finish, with a status patch
// under optimistic lock (internal/patch). On a conflict it rereads the request and judges it
// again: the daemon may have picked it up or finished it meanwhile (a request it started is never
// failed as "not picked up"). It returns the message it failed the request with, or when to look
// again.
func (r *Reconciler) failIfStuck(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest,
	now time.Time) (string, time.Time, error) {
	var msg string
	var next time.Time
	_, err := patch.Status(ctx, r.Client, r.APIReader, crr, func(crr *appsv1alpha1.ContainerRecreateRequest) (bool, error) {
		msg, next = "", time.Time{}
		if crr.Finished() || crr.DeletionTimestamp != nil {
			return false, nil
		}
		why, at, err := r.failureReason(ctx, crr, now)
		if err != nil || why == "" {
			next = at
			return false, err
		}
		crr.Status.Phase = appsv1alpha1.RecreateFailed
		crr.Status.Message = truncate.String(why, appsv1alpha1.MaxMessageLength)
		crr.Status.CompletionTime = &metav1.Time{Time: r.Clock.Now()}
		msg = crr.Status.Message
		return true, nil
	})
	if err != nil {
		msg = ""
	}
	return msg, next, client.IgnoreNotFound(err)
}

// reconcileFinished deletes the request once its TTL passed since this manager first saw it
// finished.
func (r *Reconciler) reconcileFinished(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) (ctrl.Result, error) {
	// A finished request without completionTime would never expire: date it now.
	if _, err := patch.Status(ctx, r.Client, r.APIReader, crr, func(crr *appsv1alpha1.ContainerRecreateRequest) (bool, error) {
		if crr.Status.CompletionTime != nil {
			return false, nil
		}
		crr.Status.CompletionTime = &metav1.Time{Time: r.Clock.Now()}
		return true, nil
	}); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := r.Clock.Now()
	if left := r.finished.at(crr, now).Add(crr.TTLAfterFinished()).Sub(now); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	err := r.Delete(ctx, crr, client.Preconditions{UID: &crr.UID})
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// SetupWithManager watches requests, and the deletion of enrolled pods.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.PickupTimeout == 0 {
		r.PickupTimeout = DefaultCRRPickupTimeout
	}
	if r.PodCheckInterval == 0 {
		r.PodCheckInterval = DefaultCRRPodCheckInterval
	}
	if r.StopInFlightLimit == 0 {
		r.StopInFlightLimit = DefaultCRRStopInFlightLimit
	}
	// A pod that goes away, or starts terminating, ends its requests at once rather than at the
	// next pod check.
	podEnds := predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp() == nil && e.ObjectNew.GetDeletionTimestamp() != nil
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&appsv1alpha1.ContainerRecreateRequest{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.requestsOfPod), builder.WithPredicates(podEnds)).
		Named("apps-containerrecreaterequest").
		Complete(r)
}

// requestsOfPod are the unfinished requests of a pod that is going away.
func (r *Reconciler) requestsOfPod(ctx context.Context, o client.Object) []reconcile.Request {
	var list appsv1alpha1.ContainerRecreateRequestList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace()),
		client.MatchingLabels{appsv1alpha1.LabelCRRPodUID: string(o.GetUID())}); err != nil {
		logf.FromContext(ctx).Error(err, "listing requests of a pod that is going away", "pod", o.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].Finished() {
			continue
		}
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
