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
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func httpProbe() *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3, SuccessThreshold: 1}
}

// enrolled is a Deployment's pod admitted in mode, its probe of container app moved to the
// probe context (or kept, in Shadow mode).
func enrolled(mode string) *corev1.Pod {
	pctx, err := probecontext.Encode([]probecontext.ContainerProbe{{Name: "app", LivenessProbe: httpProbe()}})
	if err != nil {
		panic(err)
	}
	b := testutil.NewPod("shop", "web-5d8f9-abcde").Enrolled().OnNode("node-a").
		Labels(map[string]string{appsv1alpha1.LabelMode: mode, "app": "web"}).
		Annotations(map[string]string{appsv1alpha1.AnnotationProbeContext: pctx}).
		ControlledBy("apps/v1", "ReplicaSet", "web-5d8f9", "rs-uid").Running("10.0.0.9")
	if mode == appsv1alpha1.ModeShadow {
		b = b.LivenessProbe("app", httpProbe())
	}
	pod := b.Build()
	pod.UID = "pod-uid"
	return pod
}

func report(pod *corev1.Pod, state appsv1alpha1.ProbeState, msg string, since time.Time) *appsv1alpha1.NodePodProbeReport {
	st := appsv1alpha1.ContainerProbeState{Name: probecontext.ProbeName(pod.Name, "app"), State: state, Message: msg,
		LastProbeTime: metav1.NewTime(now.Add(-2 * time.Second)), LastTransitionTime: metav1.NewTime(since)}
	if state == appsv1alpha1.ProbeFailed {
		st.FailingSince = &metav1.Time{Time: since}
	}
	return &appsv1alpha1.NodePodProbeReport{Status: appsv1alpha1.ProbeResults{PodProbeStatuses: []appsv1alpha1.PodProbeStatus{
		{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ProbeStates: []appsv1alpha1.ContainerProbeState{st}}}}}
}

func podEvent(pod *corev1.Pod, reason, action, msg string, at time.Time) corev1.Event {
	return corev1.Event{Reason: reason, Action: action, Message: msg, EventTime: metav1.NewMicroTime(at),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: pod.Name, UID: pod.UID, FieldPath: "spec.containers{app}"}}
}

func policy(mode policyv1alpha1.PolicyMode) policyv1alpha1.EnhancedLivenessPolicy {
	return policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "default"},
		Spec: policyv1alpha1.EnhancedLivenessPolicySpec{Mode: mode}}
}

var web = &Workload{Kind: "Deployment", Name: "web"}

func TestBuildHeldByAStorm(t *testing.T) {
	pod := enrolled(appsv1alpha1.ModeEnforce)
	onset := now.Add(-90 * time.Second)
	pol := policy(policyv1alpha1.ModeEnforce)
	pol.Status.HeldPods = []policyv1alpha1.HeldPod{{Pod: pod.Name, Container: "app", Reason: policyv1alpha1.HoldFailureStorm, Since: metav1.NewTime(onset)}}
	next := metav1.NewTime(now.Add(30 * time.Second))
	hold := policyv1alpha1.RestartHold{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "deployment-web-app-0123456789"},
		Status: policyv1alpha1.RestartHoldStatus{Workload: policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			Container: "app", Reason: "FailureStorm", Onset: metav1.NewTime(onset), Canaries: 2, NextCanary: &next}}
	x := Build(Inputs{Pod: pod, Workload: web, Policies: []policyv1alpha1.EnhancedLivenessPolicy{pol},
		Holds:  []policyv1alpha1.RestartHold{hold},
		Report: report(pod, appsv1alpha1.ProbeFailed, "HTTP probe failed with statuscode: 500", onset),
		Events: []corev1.Event{
			podEvent(pod, "RestartHeld", "FailureStorm", "FailureStorm: 4 of 10 pods of Deployment web are failing, more than maxFailing 3 (policy shop/default) (probe web-5d8f9-abcde-app, container app, containerd://x)", onset),
			podEvent(pod, "Unhealthy", "Probing", "Liveness probe failed: HTTP probe failed with statuscode: 500", now.Add(-5*time.Second)),
			podEvent(pod, "Unhealthy", "Probing", "Readiness probe failed: nope", now.Add(-4*time.Second)),
		},
		Now: now})
	if x.Mode != ModeEnforce || len(x.Policies) != 1 || x.Policies[0].Mode != "Enforce" {
		t.Fatalf("mode %q policies %v", x.Mode, x.Policies)
	}
	c := x.Containers[0]
	if c.Probe != "http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=3" {
		t.Errorf("probe %q", c.Probe)
	}
	if c.State != StateFailing || len(c.Results) != 2 || c.Results[0].Source != "report" {
		t.Errorf("state %s results %+v: want Failing, the report's result then the liveness event's (not the readiness one)", c.State, c.Results)
	}
	d := c.Decision
	if d.Verdict != VerdictHeld || d.Reason != "FailureStorm" || d.Kind != "Doubt" || d.Since == nil || !d.Since.Equal(onset) {
		t.Errorf("decision %+v", d)
	}
	if d.Rule != "4 of 10 pods of Deployment web are failing, more than maxFailing 3 (policy shop/default)" {
		t.Errorf("rule %q: want the event's why without the reason and the probe", d.Rule)
	}
	if !strings.Contains(d.EndsWhen, "a canary passes") || !strings.Contains(d.EndsWhen, "next canary is due at 2026-12-07T12:00:30Z (2 tried)") {
		t.Errorf("ends when %q", d.EndsWhen)
	}
	if c.Hold == nil || c.Hold.Name != hold.Name {
		t.Errorf("hold %+v", c.Hold)
	}
	if !strings.HasPrefix(c.Kubelet, "the kubelet would have restarted it at 2026-12-07T11:58:30Z") || !strings.Contains(c.Kubelet, "holds the restart instead") {
		t.Errorf("kubelet %q", c.Kubelet)
	}
	var out bytes.Buffer
	if err := Write(&out, x, now); err != nil {
		t.Fatal(err)
	}
	// A second result continues under the first, with no label of its own.
	if !regexp.MustCompile(`\n {14}\S.*\(event\) Liveness probe failed`).MatchString(out.String()) || strings.Contains(out.String(), "  :") {
		t.Errorf("the results are not one field:\n%s", out.String())
	}
}

// The rule line comes from the policy's status.heldPods when the pod's events are gone (they
// expire, and come once per 5 minutes); an event's words are the fallback for an entry without a
// message.
func TestBuildRuleFromTheStatusWithoutEvents(t *testing.T) {
	pod := enrolled(appsv1alpha1.ModeEnforce)
	onset := now.Add(-2 * time.Hour)
	rule := "3 of 3 pods of Deployment/web are failing, more than maxFailing 1 (policy shop/default)"
	pol := policy(policyv1alpha1.ModeEnforce)
	pol.Status.HeldPods = []policyv1alpha1.HeldPod{{Pod: pod.Name, Container: "app", Reason: policyv1alpha1.HoldFailureStorm,
		Since: metav1.NewTime(onset), Message: rule}}
	in := Inputs{Pod: pod, Workload: web, Policies: []policyv1alpha1.EnhancedLivenessPolicy{pol}, Now: now,
		Report: report(pod, appsv1alpha1.ProbeFailed, "HTTP probe failed with statuscode: 500", onset)}
	x := Build(in)
	if d := x.Containers[0].Decision; d.Verdict != VerdictHeld || d.Reason != "FailureStorm" || d.Rule != rule {
		t.Fatalf("decision %+v: want held FailureStorm with the status entry's rule", d)
	}
	var out bytes.Buffer
	if err := Write(&out, x, now); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "  Rule:       "+rule+"\n") {
		t.Errorf("no rule line:\n%s", out.String())
	}

	// An entry without a message (an earlier manager's): the latest hold event says why.
	pol.Status.HeldPods[0].Message = ""
	in.Events = []corev1.Event{podEvent(pod, "RestartStillHeld", "FailureStorm for 5m0s",
		"FailureStorm: still held after 5m0s: 2 of 3 pods of Deployment/web are failing (probe p, container app, c)", now.Add(-time.Minute))}
	if d := Build(in).Containers[0].Decision; d.Rule != "2 of 3 pods of Deployment/web are failing" {
		t.Errorf("rule %q: want the event's words", d.Rule)
	}
}

// A budget hold behind a PodDisruptionBudget: the rule line names it with its numbers, and what
// ends the hold is the budget's.
func TestBuildBudgetHoldBehindAPodDisruptionBudget(t *testing.T) {
	pod := enrolled(appsv1alpha1.ModeEnforce)
	onset := now.Add(-20 * time.Second)
	rule := "1 of 4 pods of Deployment/web are unavailable, the PodDisruptionBudget web allows 1 (maxUnavailable 1)"
	pol := policy(policyv1alpha1.ModeEnforce)
	pol.Status.HeldPods = []policyv1alpha1.HeldPod{{Pod: pod.Name, Container: "app", Reason: policyv1alpha1.HoldMaxUnavailable,
		Since: metav1.NewTime(onset), Message: rule}}
	x := Build(Inputs{Pod: pod, Workload: web, Policies: []policyv1alpha1.EnhancedLivenessPolicy{pol}, Now: now,
		Report: report(pod, appsv1alpha1.ProbeFailed, "HTTP probe failed with statuscode: 500", onset)})
	d := x.Containers[0].Decision
	if d.Verdict != VerdictHeld || d.Reason != "MaxUnavailable" || d.Rule != rule {
		t.Fatalf("decision %+v: want held MaxUnavailable naming the PodDisruptionBudget", d)
	}
	if !strings.HasPrefix(d.EndsWhen, "a pod of the workload is available again") {
		t.Errorf("ends when %q", d.EndsWhen)
	}
	var out bytes.Buffer
	if err := Write(&out, x, now); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "the PodDisruptionBudget web allows 1 (maxUnavailable 1)") {
		t.Errorf("the PodDisruptionBudget is not named:\n%s", out.String())
	}
}

// A pod whose node reports it NotProbed, and an eviction its workload's policy records.
func TestBuildNotProbedAndAnEviction(t *testing.T) {
	pod := enrolled(appsv1alpha1.ModeEnforce)
	pol := policy(policyv1alpha1.ModeEnforce)
	evicted := now.Add(-3 * time.Minute)
	pol.Status.RecentEvictions = []policyv1alpha1.RecentEviction{{Pod: "web-5d8f9-old", PodUID: "old-uid", OwnerKind: "ReplicaSet",
		OwnerName: "web-5d8f9", Node: "node-b", Container: "app", Time: metav1.NewTime(evicted), Expires: metav1.NewTime(evicted.Add(10 * time.Minute))}}
	x := Build(Inputs{Pod: pod, Workload: web, Policies: []policyv1alpha1.EnhancedLivenessPolicy{pol}, Now: now,
		Report: report(pod, appsv1alpha1.ProbeNotProbed, "the probe context's seal does not verify", now.Add(-time.Minute))})
	if c := x.Containers[0]; c.State != StateNotProbed {
		t.Errorf("state %s: want NotProbed", c.State)
	}
	if len(x.Evictions) != 1 || x.Evictions[0].Pod != "web-5d8f9-old" || x.Evictions[0].Node != "node-b" {
		t.Fatalf("evictions %+v: want the workload's recorded one", x.Evictions)
	}
	var out bytes.Buffer
	if err := Write(&out, x, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NotProbed", "the probe context's seal does not verify",
		"the node daemon does not probe it", "pod web-5d8f9-old (container app) from node node-b at 2026-12-07T11:57:00Z",
		"policy default: new pods avoid that node until 2026-12-07T12:07:00Z"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q:\n%s", want, out.String())
		}
	}
}

func TestBuildEnforceCountsTheOperatorsRestarts(t *testing.T) {
	pod := enrolled(appsv1alpha1.ModeEnforce)
	pod.Status.ContainerStatuses[0].RestartCount = 2
	x := Build(Inputs{Pod: pod, Now: now, Report: report(pod, appsv1alpha1.ProbeSucceeded, "", now)})
	if k := x.Containers[0].Kubelet; k != "nothing: the probe passes; its container was restarted 2 times (the operator's requests included)" {
		t.Errorf("kubelet %q", k)
	}
}

func TestBuildRestartRequested(t *testing.T) {
	pod := enrolled(appsv1alpha1.ModeEnforce)
	crr := func(name string, phase appsv1alpha1.ContainerRecreateRequestPhase, at time.Time) appsv1alpha1.ContainerRecreateRequest {
		return appsv1alpha1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at), Labels: map[string]string{appsv1alpha1.LabelCRRPodUID: string(pod.UID)}},
			Spec:       appsv1alpha1.ContainerRecreateRequestSpec{PodName: pod.Name, Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app"}}},
			Status:     appsv1alpha1.ContainerRecreateRequestStatus{Phase: phase}}
	}
	other := crr("other", appsv1alpha1.RecreatePending, now)
	other.Labels[appsv1alpha1.LabelCRRPodUID] = "other-uid"
	other.Spec.PodName = "other"
	x := Build(Inputs{Pod: pod, Workload: web, Now: now, Report: report(pod, appsv1alpha1.ProbeFailed, "timeout", now.Add(-time.Minute)),
		Requests: []appsv1alpha1.ContainerRecreateRequest{crr("old", appsv1alpha1.RecreateSucceeded, now.Add(-time.Hour)), crr("new", "", now.Add(-time.Second)), other}})
	c := x.Containers[0]
	if len(c.Requests) != 2 || c.Requests[0].Name != "new" || c.Requests[0].Phase != "Pending" {
		t.Fatalf("requests %+v: want new (Pending) then old, not the other pod's", c.Requests)
	}
	if c.Decision.Verdict != VerdictRestartRequested || !strings.Contains(c.Decision.Rule, "new is Pending") {
		t.Errorf("decision %+v", c.Decision)
	}
	if len(x.Policies) != 0 {
		t.Errorf("policies %v", x.Policies)
	}
}

func TestBuildShadowSaysWhatTheKubeletDid(t *testing.T) {
	pod := enrolled(appsv1alpha1.ModeShadow)
	pod.Status.ContainerStatuses[0].RestartCount = 3
	pod.Status.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error",
		FinishedAt: metav1.NewTime(now.Add(-time.Minute))}
	pol := policy(policyv1alpha1.ModeShadow)
	pol.Status.Figures = &policyv1alpha1.EnrollingFigures{WindowStart: metav1.NewTime(now.Add(-24 * time.Hour)),
		Workloads: []policyv1alpha1.WorkloadFigures{
			{Workload: policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, Mode: "Shadow", Avoided: 2, Agreed: 1,
				AvoidedByReason: []policyv1alpha1.HeldCount{{Reason: policyv1alpha1.HoldFailureStorm, Count: 2}}, AddedP50Seconds: 4, AddedMaxSeconds: 4},
			{Workload: policyv1alpha1.WorkloadReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"}, Mode: "Shadow", Avoided: 9},
		}}
	x := Build(Inputs{Pod: pod, Workload: web, Policies: []policyv1alpha1.EnhancedLivenessPolicy{pol}, Now: now,
		Report: report(pod, appsv1alpha1.ProbeSucceeded, "", now.Add(-time.Minute))})
	c := x.Containers[0]
	if x.Mode != ModeShadow || !c.NativeProbe || c.Restarts != 3 {
		t.Fatalf("mode %s native %v restarts %d", x.Mode, c.NativeProbe, c.Restarts)
	}
	if c.Kubelet != "the kubelet restarted it 3 times; the last container stopped at 2026-12-07T11:59:00Z (exit code 137, Error) (it runs the native liveness probe)" {
		t.Errorf("kubelet %q", c.Kubelet)
	}
	if len(x.Figures) != 1 || x.Figures[0].Avoided != 2 || x.Figures[0].AvoidedByReason["FailureStorm"] != 2 {
		t.Errorf("figures %+v: want web's only", x.Figures)
	}
}

func TestBuildNativePodAndUnreadableReport(t *testing.T) {
	native := testutil.NewPod("shop", "plain").Containers("app", "sidecar").LivenessProbe("app", httpProbe()).Build()
	x := Build(Inputs{Pod: native, Now: now})
	if x.Mode != ModeNative || len(x.Containers) != 1 || x.Containers[0].Name != "app" {
		t.Fatalf("mode %s containers %+v: want native, only the container with a liveness probe", x.Mode, x.Containers)
	}
	pod := enrolled(appsv1alpha1.ModeEnforce)
	note := "the node's NodePodProbeReport node-a: forbidden"
	x = Build(Inputs{Pod: pod, Now: now, Notes: []string{note}, Events: []corev1.Event{
		podEvent(pod, "Unhealthy", "Probing", "Liveness probe failed: timeout", now.Add(-time.Minute)),
		podEvent(pod, "RestartHeld", "RateLimited", "RateLimited: no token in policy shop/default's bucket (probe p, container app, containerd://x)", now.Add(-time.Minute))}})
	c := x.Containers[0]
	if c.State != StateFailing || c.Decision.Verdict != VerdictHeld || c.Decision.Reason != "RateLimited" || c.Decision.Kind != "Budget" {
		t.Errorf("state %s decision %+v: a recent failure and hold event stand in for the report", c.State, c.Decision)
	}
	if len(x.Notes) != 1 || x.Notes[0] != note {
		t.Errorf("notes %v", x.Notes)
	}
	// An old hold event says nothing of now.
	x = Build(Inputs{Pod: pod, Now: now.Add(time.Hour), Events: []corev1.Event{
		podEvent(pod, "RestartHeld", "RateLimited", "RateLimited: x (probe p, container app, c)", now)}})
	if v := x.Containers[0].Decision.Verdict; v != VerdictNone {
		t.Errorf("verdict %s from an hour-old event", v)
	}
}

func TestHeldEventReason(t *testing.T) {
	for _, tc := range []struct{ msg, reason, rule string }{
		{"MaxUnavailable: 2 of 3 pods unavailable >= maxUnavailable 1 (probe a-b, container b, containerd://1)", "MaxUnavailable", "2 of 3 pods unavailable >= maxUnavailable 1"},
		{"NodeStorm: still held after 5m0s: 6 of 8 pods failing on node n (probe a-b, container b, containerd://1)", "NodeStorm", "6 of 8 pods failing on node n"},
		{"Shadow: would restart (probe a-b, container b, c)", "Shadow", "would restart"},
	} {
		r, why := heldEventReason(corev1.Event{Message: tc.msg})
		if r != tc.reason || why != tc.rule {
			t.Errorf("%q: got %q, %q", tc.msg, r, why)
		}
	}
}

func TestDescribe(t *testing.T) {
	svc := "health"
	for _, tc := range []struct {
		h    corev1.ProbeHandler
		want string
	}{
		{corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/ok"}}}, "exec [cat /tmp/ok]"},
		{corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Scheme: "HTTPS", Host: "10.0.0.1", Path: "/h", Port: intstr.FromInt32(443)}}, "http-get https://10.0.0.1:443/h"},
		{corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(5432)}}, "tcp-socket :5432"},
		{corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9090, Service: &svc}}, "grpc <pod>:9090 health"},
	} {
		got := Describe(&corev1.Probe{ProbeHandler: tc.h, PeriodSeconds: 5, TimeoutSeconds: 2, SuccessThreshold: 1, FailureThreshold: 4})
		if want := tc.want + " delay=0s timeout=2s period=5s #success=1 #failure=4"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
