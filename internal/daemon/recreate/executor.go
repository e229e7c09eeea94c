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
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
)

// EventRecorderName is the reporting controller of the executor's events.
const EventRecorderName = "enhanced-liveness-daemon"

// DefaultPollInterval re-checks a running request even without a pod or request event.
const DefaultPollInterval = 10 * time.Second

// DefaultReturnWriteWindow is how long the return of a stop that went through waits to be
// written with the kubelet's new container (the kubelet notices an exit within its one-second
// relist and starts the container at once unless it is in back-off).
const DefaultReturnWriteWindow = 5 * time.Second

// Executor runs the ContainerRecreateRequests of one node. It writes only their status.
type Executor struct {
	// Client reads from the daemon's node-scoped cache and writes status patches.
	Client client.Client
	// APIReader reads around the cache: to confirm a pod is gone, and to re-read a request after a
	// conflict. Defaults to the manager's.
	APIReader client.Reader
	Runtime   cri.Runtime
	// Addresses gives the pod address of preStop hooks that name no host (default: asked of
	// Runtime, with no node IP for host-network pods).
	Addresses *cri.Addresses
	NodeName  string
	// Recorder emits events; defaults to the manager's recorder named EventRecorderName.
	Recorder events.EventRecorder
	Clock    clock.Clock
	// PollInterval re-checks a running request as a safety net (default DefaultPollInterval).
	PollInterval time.Duration
	// ReturnWriteWindow: a stop that went through is recorded in the request's status together
	// with the new container when the kubelet starts one within this window, in one write instead
	// of two; otherwise once the window has passed (default DefaultReturnWriteWindow; negative:
	// at once).
	ReturnWriteWindow time.Duration
	// MaxConcurrentReconciles is how many requests take a step at once (default 4). A step only
	// reads and writes: stops (preStop hook and grace period, possibly many minutes) run in the
	// background, so one request never holds up another.
	MaxConcurrentReconciles int
	// HookUserAgent is the User-Agent of HTTP preStop hooks (default "kube-lifecycle").
	HookUserAgent string

	memory
	// stops counts the stops running in the background; wake carries their returns to the
	// controller's queue.
	stops        sync.WaitGroup
	stopsStarted atomic.Int64
	wake         chan event.GenericEvent
}

func (e *Executor) defaults() {
	if e.Clock == nil {
		e.Clock = clock.RealClock{}
	}
	if e.PollInterval <= 0 {
		e.PollInterval = DefaultPollInterval
	}
	if e.ReturnWriteWindow == 0 {
		e.ReturnWriteWindow = DefaultReturnWriteWindow
	}
	if e.MaxConcurrentReconciles <= 0 {
		e.MaxConcurrentReconciles = 4
	}
	if e.APIReader == nil {
		e.APIReader = e.Client
	}
	if e.Addresses == nil {
		e.Addresses = &cri.Addresses{Runtime: e.Runtime}
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
	e.wake = make(chan event.GenericEvent, 1024)
	if err := mgr.Add(manager.RunnableFunc(e.drainStops)); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("daemon-crr-executor").
		WatchesRawSource(source.Channel(e.wake, &handler.EnqueueRequestForObject{})).
		Watches(&appsv1alpha1.ContainerRecreateRequest{}, handler.EnqueueRequestsFromMapFunc(e.requestsForCRR)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(e.requestsForPod)).
		WithOptions(controller.Options{MaxConcurrentReconciles: e.MaxConcurrentReconciles}).
		Complete(e)
}

// drainStops waits, once the manager stops, for the stops still running, so that the daemon does
// not exit in the middle of one (the manager's graceful shutdown timeout bounds the wait).
func (e *Executor) drainStops(ctx context.Context) error {
	<-ctx.Done()
	e.stops.Wait()
	return nil
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
