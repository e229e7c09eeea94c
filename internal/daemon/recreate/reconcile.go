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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// stepTiming is when the step that stops a container began (the executor took up the request),
// and when its status write before the stop was acknowledged (zero when the stop went first).
// The stop logs them, and measures the executor's own share of a restart from the first.
type stepTiming struct{ start, fenced time.Time }

// Reconcile takes one step of a request: observe it, plan once (Advance), and act on the plan:
// start the stops it names, write the status it describes, and record what the write made
// known. A plan is carried out as made; the next one comes from a new observation.
//
// The status write carries the resourceVersion the plan was made from (internal/patch). The
// cache can lag behind the executor's own last write; such a write conflicts, and the step is
// observed and planned again from a fresh read, never carried out from a stale status.
func (e *Executor) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	e.defaults()
	t := stepTiming{start: e.Clock.Now()}
	crr := &appsv1alpha1.ContainerRecreateRequest{}
	if err := e.Client.Get(ctx, req.NamespacedName, crr); err != nil {
		if apierrors.IsNotFound(err) {
			e.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return e.step(ctx, crr, t)
}

// step observes the request as read, plans once, and carries the plan out: the stops that may
// go first, the status write, then the stops that wait for it and the memory's part.
func (e *Executor) step(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, t stepTiming) (ctrl.Result, error) {
	o, err := e.observe(ctx, crr)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := Advance(o)
	if p.WriteAfter > 0 {
		// A stop's return waits for the new container, to be written with it (Plan.WriteAfter).
		return ctrl.Result{RequeueAfter: e.requeueAfter(p.WriteAfter, o.Deadline)}, nil
	}
	if p.StopFirst {
		e.startStops(ctx, crr, o.Pod, p.Kill, p.States, t)
	}
	if o, p, err = e.write(ctx, crr, o, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch {
	case p.Leave != "":
		if p.Forget {
			e.forget(client.ObjectKeyFromObject(crr))
		}
		logf.FromContext(ctx).V(1).Info("not running the request", "why", p.Leave)
		if p.AwaitStop {
			return ctrl.Result{RequeueAfter: e.PollInterval}, nil
		}
		return ctrl.Result{}, nil
	case p.Phase.Finished():
		e.finished(ctx, crr)
		return ctrl.Result{}, nil
	}
	if len(p.Kill) > 0 {
		if !p.StopFirst {
			t.fenced = e.Clock.Now()
		}
		e.startStops(ctx, crr, o.Pod, p.Kill, p.States, t) // a stop started before the write is not started again
	}
	e.recorded(crr, p.Recorded)
	return ctrl.Result{RequeueAfter: e.requeueAfter(p.RequeueAfter, o.Deadline)}, nil
}

// finished counts a request this daemon finished, emits the event of a failure and forgets it.
func (e *Executor) finished(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest) {
	e.forget(client.ObjectKeyFromObject(crr))
	// A success is told by the request's status and by the pod's events (the manager's
	// RestartRequested, this daemon's Killing, the kubelet's Started): an event on the request
	// would be one more API write per restart. A failure is a Warning on the request, where a user
	// looks for why.
	if crr.Status.Phase == appsv1alpha1.RecreateFailed {
		crrExecuted.WithLabelValues("failed").Inc()
		e.Recorder.Eventf(crr, nil, corev1.EventTypeWarning, ReasonFailed, "Recreate", "%s", crr.Status.Message)
	} else {
		crrExecuted.WithLabelValues("succeeded").Inc()
	}
	logf.FromContext(ctx).Info("request finished", "phase", crr.Status.Phase, "message", crr.Status.Message)
}

// requeueAfter is when to look at the request again: at want (when set) or after the poll
// interval, whichever is sooner, and never after its deadline. The stops that return, and the
// pod's and the request's changes, wake it sooner.
func (e *Executor) requeueAfter(want time.Duration, deadline time.Time) time.Duration {
	d := e.PollInterval
	if want > 0 && want < d {
		d = want
	}
	if left := deadline.Sub(e.Clock.Now()); left > 0 && left < d {
		d = left
	}
	return d
}
