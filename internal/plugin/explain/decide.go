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

package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
)

// heldEventAge is how long a RestartHeld or RestartStillHeld event stands for a hold that is
// still on: the decision repeats it every 5 minutes while the hold lasts.
const heldEventAge = 6 * time.Minute

// decide reads the current decision on the container: an active restart request, a hold the
// governing policies list now, or a hold a recent event announced.
func decide(cx *Container, in Inputs, events eventIndex) Decision {
	if len(cx.Requests) > 0 && active(cx.Requests[0].Phase) {
		r := cx.Requests[0]
		return Decision{Verdict: VerdictRestartRequested, Since: &r.Created,
			Rule: fmt.Sprintf("ContainerRecreateRequest %s is %s", r.Name, r.Phase)}
	}
	last := events.latestHeld(cx.Name)
	d := Decision{Verdict: VerdictNone}
	if h := listedHeld(in.Policies, in.Pod.Name, cx.Name); h != nil {
		since := h.Since.Time
		d = Decision{Verdict: VerdictHeld, Reason: string(h.Reason), Since: &since, Rule: h.Message}
	} else if last != nil && in.Now.Sub(EventTime(*last)) < heldEventAge && cx.State != StatePassing {
		reason, _ := heldEventReason(*last)
		d = Decision{Verdict: VerdictHeld, Reason: reason}
	}
	if d.Verdict != VerdictHeld {
		if e := events.latest(eventEvicted, cx.Name); e != nil && in.Pod.DeletionTimestamp != nil {
			return Decision{Verdict: VerdictEvicted, Rule: e.Message}
		}
		return d
	}
	d.Kind = string(policyv1alpha1.HoldReason(d.Reason).Kind())
	// The status entry's message outlasts the events; an entry an earlier manager wrote has none.
	if last != nil && d.Rule == "" {
		if reason, rule := heldEventReason(*last); reason == d.Reason {
			d.Rule = rule
		}
	}
	d.EndsWhen = endsWhen(d.Reason, cx.Hold)
	return d
}

func active(phase string) bool {
	return phase == string(appsv1alpha1.RecreatePending) || phase == string(appsv1alpha1.RecreateRecreating)
}

// listedHeld finds the container in the governing policies' status.heldPods, an entry with a
// message first (one an earlier manager wrote has none).
func listedHeld(policies []policyv1alpha1.EnhancedLivenessPolicy, pod, container string) *policyv1alpha1.HeldPod {
	var found *policyv1alpha1.HeldPod
	for i := range policies {
		for j := range policies[i].Status.HeldPods {
			h := &policies[i].Status.HeldPods[j]
			if h.Pod != pod || h.Container != container {
				continue
			}
			if h.Message != "" {
				return h
			}
			if found == nil {
				found = h
			}
		}
	}
	return found
}

// heldEventReason splits a RestartHeld note "<reason>: <why> (probe …)" or a RestartStillHeld
// note "<reason>: still held after <d>: <why> (probe …)" into the reason and the why.
func heldEventReason(e corev1.Event) (string, string) {
	reason, rest, ok := strings.Cut(e.Message, ": ")
	if !ok {
		return strings.Fields(e.Action + " ")[0], e.Message
	}
	if after, ok := strings.CutPrefix(rest, "still held after "); ok {
		if _, why, ok := strings.Cut(after, ": "); ok {
			rest = why
		}
	}
	if i := strings.LastIndex(rest, " (probe "); i >= 0 {
		rest = rest[:i]
	}
	return reason, rest
}

// endsWhen is the reference's "ends when" for the reason, with the hold's next canary.
func endsWhen(reason string, h *Hold) string {
	s := plain(EndsWhen[policyv1alpha1.HoldReason(reason)])
	if h != nil && h.Reason == reason {
		switch {
		case h.Canary != "":
			s += "; a canary is being judged now: " + h.Canary
		case h.NextCanary != nil:
			s += fmt.Sprintf("; the next canary is due at %s (%d tried)", stamp.Seconds(*h.NextCanary), h.Canaries)
		}
	}
	return s
}

// plain drops the reference's Markdown code marks.
func plain(s string) string { return strings.ReplaceAll(s, "`", "") }

// kubelet says what the kubelet did (its own probe: Shadow, native) or would have done (Enforce).
func kubelet(cx *Container, pod *corev1.Pod, in Inputs) string {
	did := "the kubelet has not restarted it"
	if st := containerStatus(pod, cx.Name); st != nil && st.RestartCount > 0 {
		did = fmt.Sprintf("the kubelet restarted it %d times", st.RestartCount)
		if !cx.NativeProbe {
			did = fmt.Sprintf("its container was restarted %d times (the operator's requests included)", st.RestartCount)
		}
		if t := st.LastTerminationState.Terminated; t != nil {
			did += fmt.Sprintf("; the last container stopped at %s (exit code %d, %s)", stamp.Seconds(t.FinishedAt.Time), t.ExitCode, t.Reason)
		}
	}
	if cx.NativeProbe {
		return did + " (it runs the native liveness probe)"
	}
	switch cx.State {
	case StateFailing:
		at := ""
		if len(cx.Results) > 0 && cx.Results[0].Source == "report" {
			at = " at " + stamp.Seconds(failingSince(in.Report, pod, cx.Name, cx.Results[0].Time))
		}
		would := "the kubelet would have restarted it" + at + ": the probe failed failureThreshold times in a row"
		if cx.Decision.Verdict == VerdictHeld {
			would += "; the operator holds the restart instead"
		}
		return would + "; " + did
	case StatePassing:
		return "nothing: the probe passes; " + did
	case StateNotProbed:
		// The worst case for liveness: its probe was moved out, and the daemon does not run it.
		return "nothing: the node daemon does not probe it (the reason is in its result and its LivenessNotProbed events) and the kubelet has no probe of it, so no failure can restart it; " + did
	}
	return "unknown: no probe result is readable; " + did
}

func failingSince(r *appsv1alpha1.NodePodProbeReport, pod *corev1.Pod, container string, def time.Time) time.Time {
	if st := reportState(r, pod, container); st != nil {
		if st.FailingSince != nil {
			return st.FailingSince.Time
		}
		return st.LastTransitionTime.Time
	}
	return def
}

// eventIndex is the pod's events, newest first.
type eventIndex []corev1.Event

func newEventIndex(evs []corev1.Event) eventIndex {
	out := slices.Clone(evs)
	slices.SortStableFunc(out, func(a, b corev1.Event) int { return EventTime(b).Compare(EventTime(a)) })
	return out
}

// of returns the events of a reason about the container (its fieldPath or its name in the note),
// or about the whole pod when container is empty.
func (x eventIndex) of(reason, container string) []corev1.Event {
	var out []corev1.Event
	for _, e := range x {
		if e.Reason != reason {
			continue
		}
		if container != "" && !aboutContainer(e, container) {
			continue
		}
		out = append(out, e)
	}
	return out
}

func (x eventIndex) latest(reason, container string) *corev1.Event {
	if evs := x.of(reason, container); len(evs) > 0 {
		return &evs[0]
	}
	return nil
}

// latestHeld is the newest RestartHeld or RestartStillHeld event about the container.
func (x eventIndex) latestHeld(container string) *corev1.Event {
	for i := range x {
		e := &x[i]
		if (e.Reason == eventRestartHeld || e.Reason == eventRestartStillHeld) && aboutContainer(*e, container) {
			return e
		}
	}
	return nil
}

func aboutContainer(e corev1.Event, container string) bool {
	if fp := e.InvolvedObject.FieldPath; fp != "" {
		return fp == "spec.containers{"+container+"}" || fp == "spec.initContainers{"+container+"}"
	}
	return strings.Contains(e.Message, "container "+container+",") || strings.Contains(e.Message, "container "+container+")")
}

// EventTime is when the event was last seen, whichever API wrote it (a core/v1 event's last
// timestamp, an events.k8s.io series' last observation or event time).
func EventTime(e corev1.Event) time.Time {
	t := e.LastTimestamp.Time
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	if e.EventTime.After(t) {
		t = e.EventTime.Time
	}
	if t.IsZero() {
		t = e.CreationTimestamp.Time
	}
	return t
}
