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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// Event reasons explain reads on a pod (docs/reference.md, Events).
const (
	eventUnhealthy        = "Unhealthy"
	eventRestartHeld      = "RestartHeld"
	eventRestartStillHeld = "RestartStillHeld"
	eventEvicted          = "Evicted"
	eventEvictionRefused  = "EvictionRefused"
)

// Container states.
const (
	StatePassing   = "Passing"
	StateFailing   = "Failing"
	StateNotProbed = "NotProbed"
	StateUnknown   = "Unknown"
)

// Verdicts.
const (
	VerdictNone             = "None"
	VerdictHeld             = "Held"
	VerdictRestartRequested = "RestartRequested"
	VerdictEvicted          = "Evicted"
)

// Inputs are the objects explain reads for one pod.
type Inputs struct {
	Pod *corev1.Pod
	// Workload is the pod's top controller (nil: a bare pod, or its owners could not be read).
	Workload *Workload
	// Policies, Holds and Requests are those of the pod's namespace; Requests may be only the pod's.
	Policies []policyv1alpha1.EnhancedLivenessPolicy
	Holds    []policyv1alpha1.RestartHold
	Requests []appsv1alpha1.ContainerRecreateRequest
	// Events are the pod's events.
	Events []corev1.Event
	// Report is the node's NodePodProbeReport; nil when it could not be read (Notes say why).
	Report *appsv1alpha1.NodePodProbeReport
	// Notes are said as they are: what the reader could not read.
	Notes []string
	Now   time.Time
}

// Build explains the pod from what in holds.
func Build(in Inputs) Explanation {
	pod := in.Pod
	x := Explanation{Pod: pod.Name, Namespace: pod.Namespace, Node: pod.Spec.NodeName, Workload: in.Workload,
		Notes: slices.Clone(in.Notes)}
	x.Mode, x.ModeNote = mode(pod)
	x.Policies = governing(pod, in.Policies)
	probes, problems, err := probecontext.PodProbes(pod)
	if err != nil && x.Mode != ModeNative {
		x.Notes = append(x.Notes, "the pod's probe context cannot be read: "+err.Error())
	}
	events := newEventIndex(in.Events)
	for _, c := range pod.Spec.Containers {
		cx := Container{Name: c.Name, NativeProbe: c.LivenessProbe != nil, Restarts: restartCount(pod, c.Name)}
		probe := findProbe(probes, c.Name)
		if probe != nil {
			cx.Probe = Describe(probe.Probe)
		}
		for _, p := range problems {
			if p.Container == c.Name {
				cx.ProbeProblem = p.Message
			}
		}
		if probe == nil && !cx.NativeProbe && cx.ProbeProblem == "" {
			continue
		}
		fillContainer(&cx, in, events, probe != nil)
		x.Containers = append(x.Containers, cx)
	}
	x.Evictions = evictions(pod, in.Workload, in.Policies)
	x.Figures = figures(in.Workload, pod, in.Policies)
	return x
}

// fillContainer sets what the operator and the kubelet know of one container.
func fillContainer(cx *Container, in Inputs, events eventIndex, probed bool) {
	pod := in.Pod
	cx.State = StateUnknown
	if probed {
		if st := reportState(in.Report, pod, cx.Name); st != nil {
			cx.State = stateOf(st.State)
			cx.Results = append(cx.Results, Result{Time: resultTime(st), Outcome: string(st.State), Message: st.Message,
				Source: "report", Count: 1})
		}
	}
	for _, e := range events.of(eventUnhealthy, cx.Name) {
		if isLiveness(e) {
			cx.Results = append(cx.Results, Result{Time: EventTime(e), Outcome: "Failed", Message: e.Message, Source: "event",
				Count: max(1, e.Count)})
		}
	}
	slices.SortStableFunc(cx.Results, func(a, b Result) int { return b.Time.Compare(a.Time) })
	if cx.State == StateUnknown && probed && len(cx.Results) > 0 && in.Report == nil {
		// Without the report, a recent failure event is the best evidence.
		if in.Now.Sub(cx.Results[0].Time) < 5*time.Minute {
			cx.State = StateFailing
		}
	}
	cx.Requests = requests(in.Requests, pod, cx.Name)
	cx.Hold = hold(in.Holds, in.Workload, pod, cx.Name)
	cx.Decision = decide(cx, in, events)
	cx.Kubelet = kubelet(cx, pod, in)
}

func mode(pod *corev1.Pod) (string, string) {
	if pod.Labels[appsv1alpha1.LabelEnrolled] != "true" {
		return ModeNative, "the pod is not enrolled: the kubelet runs its liveness probes and restarts it on its own"
	}
	if appsv1alpha1.AdmittedInShadow(pod.Labels) {
		return ModeShadow, "admitted in Shadow mode: it kept its native liveness probes and the kubelet restarts it; " +
			"the operator probes beside it and records what it would have done, and never restarts or evicts it"
	}
	return ModeEnforce, "admitted in Enforce mode: its liveness probes were moved to the operator, which restarts it " +
		"within the policy's holds for as long as the pod lives"
}

func governing(pod *corev1.Pod, policies []policyv1alpha1.EnhancedLivenessPolicy) []Policy {
	var out []Policy
	for i := range policies {
		p := &policies[i]
		if ok, err := p.Selects(pod.Labels); err == nil && ok {
			out = append(out, Policy{Name: p.Name, Mode: string(p.Spec.Mode)})
		}
	}
	return out
}

func findProbe(probes []probecontext.Probe, container string) *probecontext.Probe {
	for i := range probes {
		if probes[i].Container == container {
			return &probes[i]
		}
	}
	return nil
}

func restartCount(pod *corev1.Pod, container string) int32 {
	if st := containerStatus(pod, container); st != nil {
		return st.RestartCount
	}
	return 0
}

func containerStatus(pod *corev1.Pod, container string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == container {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// reportState is the container's state in the node's report, for this pod (by UID).
func reportState(r *appsv1alpha1.NodePodProbeReport, pod *corev1.Pod, container string) *appsv1alpha1.ContainerProbeState {
	if r == nil {
		return nil
	}
	for i := range r.Status.PodProbeStatuses {
		ps := &r.Status.PodProbeStatuses[i]
		if ps.UID != pod.UID {
			continue
		}
		name := probecontext.ProbeName(pod.Name, container)
		for j := range ps.ProbeStates {
			if ps.ProbeStates[j].Name == name {
				return &ps.ProbeStates[j]
			}
		}
	}
	return nil
}

func stateOf(s appsv1alpha1.ProbeState) string {
	switch s {
	case appsv1alpha1.ProbeSucceeded:
		return StatePassing
	case appsv1alpha1.ProbeFailed:
		return StateFailing
	case appsv1alpha1.ProbeNotProbed:
		return StateNotProbed
	}
	return StateUnknown
}

func resultTime(st *appsv1alpha1.ContainerProbeState) time.Time {
	if !st.LastProbeTime.IsZero() {
		return st.LastProbeTime.Time
	}
	return st.LastTransitionTime.Time
}

// isLiveness: the Unhealthy event is about a liveness probe (the kubelet's readiness and startup
// probes use the same reason).
func isLiveness(e corev1.Event) bool { return strings.HasPrefix(e.Message, "Liveness probe") }

func requests(all []appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod, container string) []Request {
	var out []Request
	for i := range all {
		r := &all[i]
		if r.Labels[appsv1alpha1.LabelCRRPodUID] != string(pod.UID) && r.Spec.PodName != pod.Name {
			continue
		}
		if !slices.ContainsFunc(r.Spec.Containers, func(c appsv1alpha1.ContainerRecreateRequestContainer) bool { return c.Name == container }) {
			continue
		}
		phase := string(r.Status.Phase)
		if phase == "" {
			phase = string(appsv1alpha1.RecreatePending)
		}
		out = append(out, Request{Name: r.Name, Created: r.CreationTimestamp.Time, Phase: phase, Message: r.Status.Message})
	}
	slices.SortStableFunc(out, func(a, b Request) int { return b.Created.Compare(a.Created) })
	return out
}

// hold is the RestartHold of the pod's workload and container, or the one whose canary is this
// pod's container.
func hold(all []policyv1alpha1.RestartHold, w *Workload, pod *corev1.Pod, container string) *Hold {
	for i := range all {
		h := &all[i]
		st := &h.Status
		if st.Container != container {
			continue
		}
		ofWorkload := w != nil && st.Workload.Kind == w.Kind && st.Workload.Name == w.Name
		ofPod := st.Workload.Kind == "Pod" && st.Workload.Name == pod.Name
		isCanary := st.Canary != nil && st.Canary.PodUID == pod.UID
		if !ofWorkload && !ofPod && !isCanary {
			continue
		}
		out := &Hold{Name: h.Name, Reason: st.Reason, Onset: st.Onset.Time, Canaries: st.Canaries,
			NextCanary: timeOf(st.NextCanary), Released: timeOf(st.ReleasedAt)}
		if k := st.Canary; k != nil {
			what := "restarted"
			if k.Evicted {
				what = "evicted"
			}
			out.Canary = fmt.Sprintf("pod %s %s at %s, judged until %s", k.Pod, what, stamp.Seconds(k.RestartedAt.Time), stamp.Seconds(k.Deadline.Time))
		}
		return out
	}
	return nil
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.Time
	return &v
}

// evictions are the recorded evictions of the pod's workload (its replaced pods) and of the pod.
func evictions(pod *corev1.Pod, w *Workload, policies []policyv1alpha1.EnhancedLivenessPolicy) []Eviction {
	owner := metav1.GetControllerOfNoCopy(pod)
	var out []Eviction
	for i := range policies {
		p := &policies[i]
		for _, e := range p.Status.RecentEvictions {
			mine := e.PodUID == pod.UID || (owner != nil && e.OwnerKind == owner.Kind && e.OwnerName == owner.Name) ||
				(w != nil && e.OwnerKind == w.Kind && e.OwnerName == w.Name)
			if mine {
				out = append(out, Eviction{Policy: p.Name, Pod: e.Pod, Node: e.Node, Container: e.Container,
					Time: e.Time.Time, Expires: e.Expires.Time})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Eviction) int { return b.Time.Compare(a.Time) })
	return out
}

// figures are the governing policies' figures of the pod's workload.
func figures(w *Workload, pod *corev1.Pod, policies []policyv1alpha1.EnhancedLivenessPolicy) []Figures {
	var out []Figures
	for i := range policies {
		p := &policies[i]
		f := p.Status.Figures
		if f == nil {
			continue
		}
		for _, wf := range f.Workloads {
			mine := (w != nil && wf.Workload.Kind == w.Kind && wf.Workload.Name == w.Name) ||
				(wf.Workload.Kind == "Pod" && wf.Workload.Name == pod.Name)
			if !mine {
				continue
			}
			fx := Figures{Policy: p.Name, Mode: wf.Mode, Since: f.WindowStart.Time, Avoided: wf.Avoided, Agreed: wf.Agreed,
				AddedP50Seconds: wf.AddedP50Seconds, AddedMaxSeconds: wf.AddedMaxSeconds}
			for _, c := range wf.AvoidedByReason {
				if fx.AvoidedByReason == nil {
					fx.AvoidedByReason = map[string]int64{}
				}
				fx.AvoidedByReason[string(c.Reason)] = c.Count
			}
			out = append(out, fx)
		}
	}
	return out
}
