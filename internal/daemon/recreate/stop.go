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
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
)

// Event reasons, on the pod.
const (
	ReasonKilling           = "Killing"
	ReasonFailedPreStopHook = "FailedPreStopHook"
	// ReasonFailed is emitted on the request when it fails (a success has no event of its own).
	ReasonFailed = "Failed"
)

// transient reports runtime errors worth retrying: the kubelet, too, simply tries again on its
// next pod sync when a kill fails. Anything else (e.g. runc refusing) fails the container.
func transient(err error) bool {
	switch grpcstatus.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
		return true
	}
	return false
}

// startStops starts, in the background, a stop of each named container (the instance its state
// records) whose stop is not running or returned already: the preStop hook and the grace period
// of one request must never hold up a worker, and with it the other requests of the node. A stop
// that returns is remembered and wakes the request's next step.
func (e *Executor) startStops(ctx context.Context, crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod,
	names []string, states []appsv1alpha1.ContainerRecreateState, t stepTiming) {
	ids := map[string]string{}
	for _, s := range states {
		ids[s.Name] = s.ContainerID
	}
	for _, name := range names {
		id := ids[name]
		if !e.beginStop(crr, id) {
			continue
		}
		pod, crr := pod.DeepCopy(), crr.DeepCopy()
		e.stops.Add(1)
		e.stopsStarted.Add(1)
		// A stop once begun runs to its end (its grace period and the runtime's timeout bound it):
		// cut short at shutdown it would leave a preStop hook run without its stop, or a stop
		// whose outcome nobody records. The manager waits for it (drainStops).
		sctx := context.WithoutCancel(ctx)
		go func() {
			defer e.stops.Done()
			r := e.stop(sctx, pod, crr, name, id, t)
			r.at = e.Clock.Now()
			e.endStop(crr, id, r)
			if e.wake == nil {
				return // no manager, as in unit tests
			}
			select { // wake the request's next step
			case e.wake <- event.GenericEvent{Object: crr}:
			default: // full: the poll interval picks it up
			}
		}()
	}
}

// stop runs the preStop hook and stops one container instance through CRI, as the kubelet does
// when a liveness probe fails.
func (e *Executor) stop(ctx context.Context, pod *corev1.Pod, crr *appsv1alpha1.ContainerRecreateRequest, name, target string,
	t stepTiming) stopResult {
	// id is the container's ID as the runtime confirmed it: the hook and the stop name nothing else.
	id, r, done := e.inspect(ctx, pod, crr, name, target)
	if done {
		return r
	}
	var c *corev1.Container
	if rc, ok := podutil.FindRestartable(&pod.Spec, name); ok {
		c = rc.Container
	}
	e.Recorder.Eventf(pod, crr, corev1.EventTypeNormal, ReasonKilling, "StopContainer", "%s", killingNote(crr, name))
	total := crr.GracePeriodSeconds(pod)
	start := e.Clock.Now()
	hookMsg := ""
	if RunsPreStop(c, total) {
		hooks := &HookRunner{Runtime: e.Runtime, Addresses: e.Addresses, Clock: e.Clock, UserAgent: e.HookUserAgent}
		if err := hooks.Run(ctx, pod, c, id, c.Lifecycle.PreStop, time.Duration(total)*time.Second); err != nil {
			e.Recorder.Eventf(pod, crr, corev1.EventTypeWarning, ReasonFailedPreStopHook, "PreStopHook",
				"PreStopHook of container %s failed: %v", name, err)
			hookMsg = fmt.Sprintf(" (preStop hook failed: %v)", err)
		}
	}
	timeout := StopTimeout(total, e.Clock.Since(start))
	log := logf.FromContext(ctx).WithValues("pod", pod.Namespace+"/"+pod.Name, "container", name, "containerID", target)
	stopAt := e.Clock.Now()
	startToStop.Observe(stopAt.Sub(t.start).Seconds())
	// With the lines of the manager and the status writer, these follow one restart from the
	// failed probe to the stop (docs/daemon.md).
	kv := []any{"gracePeriod", timeout, "stepStartedAt", stamp.Nano(t.start), "stopAt", stamp.Nano(stopAt)}
	if !t.fenced.IsZero() {
		kv = append(kv, "fencedAt", stamp.Nano(t.fenced))
	}
	log.Info("stopping container", kv...)
	err := e.Runtime.StopContainer(ctx, id, timeout)
	stopDuration.Observe(e.Clock.Since(start).Seconds())
	log.Info("StopContainer returned", "returnedAt", stamp.Nano(e.Clock.Now()), "took", e.Clock.Since(stopAt).String(),
		"error", errString(err))
	if transient(err) {
		return stopResult{outcome: stopRetry, message: fmt.Sprintf("stopping %s failed, will retry: %v%s", target, err, hookMsg)}
	}
	if err != nil {
		return stopResult{outcome: stopFailed, message: fmt.Sprintf("stopping %s failed: %v%s", target, err, hookMsg)}
	}
	return stopResult{outcome: stopped, message: fmt.Sprintf("stopped %s with a grace period of %ds%s; waiting for the kubelet to start a new container",
		target, timeout, hookMsg)}
}

// inspect reads the container from the runtime before its stop: it is done (with the result) when
// the container is gone or exited, when the runtime cannot say, and when the container is not
// container name of pod. Whoever can write a pod's status can name any container of the node
// there; the runtime's labels, which the kubelet set when it created the container, cannot be.
// The ID must be the container's whole ID: the runtime resolves a prefix too, and between this
// read and the stop (the preStop hook may take the whole grace period) a prefix can come to name
// another container. Not done, it returns the ID the runtime confirmed.
func (e *Executor) inspect(ctx context.Context, pod *corev1.Pod, crr *appsv1alpha1.ContainerRecreateRequest, name, target string) (string, stopResult, bool) {
	id := cri.TrimContainerID(target)
	resp, err := e.Runtime.ContainerStatus(ctx, id, false)
	switch {
	case grpcstatus.Code(err) == codes.NotFound:
		return "", stopResult{outcome: alreadyStopped, message: target + " is already gone from the runtime; waiting for the kubelet to start a new container"}, true
	case transient(err):
		return "", stopResult{outcome: stopRetry, message: fmt.Sprintf("cannot read %s from the container runtime, will retry: %v", target, err)}, true
	case err != nil:
		return "", stopResult{outcome: stopFailed, message: fmt.Sprintf("cannot read %s from the container runtime: %v", target, err)}, true
	}
	if err := cri.CheckContainer(id, resp.GetStatus(), cri.PodOwner(pod, name)); err != nil {
		cri.OwnerRefusals.WithLabelValues(cri.OpStop, cri.AsNotOwned(err).Cause).Inc()
		e.Recorder.Eventf(pod, crr, corev1.EventTypeWarning, cri.ReasonForeignContainer, "StopContainer",
			"Did not stop container %s: %v", name, err)
		return "", stopResult{outcome: stopFailed, message: fmt.Sprintf("not stopped: %v", err)}, true
	}
	if resp.GetStatus().GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
		return "", stopResult{outcome: alreadyStopped, message: target + " has already exited; waiting for the kubelet to start a new container"}, true
	}
	return resp.GetStatus().GetId(), stopResult{}, false
}

// killingNote is the Killing event's message: the kubelet's own wording for a liveness restart,
// and a plain one for a request made by hand.
func killingNote(crr *appsv1alpha1.ContainerRecreateRequest, container string) string {
	_, fromProbe := crr.Annotations[appsv1alpha1.AnnotationCRRProbe]
	if crr.Labels[appsv1alpha1.LabelManagedBy] == appsv1alpha1.ManagedByDecisionController || fromProbe {
		return fmt.Sprintf("Container %s failed liveness probe, will be restarted", container)
	}
	return fmt.Sprintf("Stopping container %s by ContainerRecreateRequest %s", container, crr.Name)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
