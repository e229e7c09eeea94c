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

package gate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	eltestutil "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

const podIP = "10.0.0.7"

// webContext: an HTTP probe on a named port and a gRPC probe without a service (the NodePodProbe
// CRD defaults it to ""), as a creator may write them.
const webContext = `[{"name":"web","livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":5}},` +
	`{"name":"rpc","livenessProbe":{"grpc":{"port":9090}}}]`

// sealedPod is an enrolled pod as the manager leaves it: admitted and sealed.
func sealedPod(uid types.UID) *corev1.Pod {
	p := eltestutil.NewPod("shop", "web-0").Enrolled().OnNode("n1").Containers("web", "rpc").Port("web", "http", 8080).
		Annotations(map[string]string{appsv1alpha1.AnnotationProbeContext: webContext}).Running(podIP).Build()
	p.UID = uid
	return eltestutil.Seal(eltestutil.Admit(p))
}

// entryOf is the NodePodProbe entry the mapping controller writes for pod.
func entryOf(pod *corev1.Pod) appsv1alpha1.PodProbe {
	return appsv1alpha1.PodProbe{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}
}

func names(ps []probecontext.Probe) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return strings.Join(out, ",")
}

func TestCheck(t *testing.T) {
	keys := eltestutil.TrustedKeys()
	other, err := signature.GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		mutate   func(pod *corev1.Pod, pp *appsv1alpha1.PodProbe)
		noPod    bool
		accepted string
		cause    string // "" = not refused
		pending  bool
		message  string
	}{
		{name: "the mapping controller's entry for a sealed pod", accepted: "web-0-web,web-0-rpc"},
		{name: "the pod is not in the cache (yet)", noPod: true, cause: CausePodNotFound, pending: true},
		{name: "a pod that has no probe context", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			pod.Annotations = nil
		}, cause: CauseNotSigned, message: "not admitted by the operator's pod webhook"},
		{name: "a forged enrolled pod: context without signature or seal", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			delete(pod.Annotations, appsv1alpha1.AnnotationProbeContextSeal)
			delete(pod.Annotations, appsv1alpha1.AnnotationProbeContextSignature)
		}, cause: CauseNotSigned},
		{name: "admitted, the manager has not sealed it yet", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			delete(pod.Annotations, appsv1alpha1.AnnotationProbeContextSeal)
		}, cause: CauseAwaitingSeal, pending: true},
		{name: "sealed with a key the daemon does not hold", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			s, _ := signature.Seal(other, pod)
			pod.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = s
		}, cause: CauseUnknownKey, pending: true},
		{name: "a seal copied from another pod", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			pod.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = sealedPod("uid-other").Annotations[appsv1alpha1.AnnotationProbeContextSeal]
		}, cause: CauseBadSeal, message: "does not match"},
		{name: "the pod's context changed after sealing (an exec in place of the HTTP probe)", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			pod.Annotations[appsv1alpha1.AnnotationProbeContext] = `[{"name":"web","livenessProbe":{"exec":{"command":["rm","-rf","/data"]}}}]`
		}, cause: CauseBadSeal},
		{name: "a container of the context the pod does not have gives no probe", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			pod.Spec.Containers = pod.Spec.Containers[1:]
		}, accepted: "web-0-rpc"},
		{name: "containers the kubelet would not start again give no probe", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		}},
		{name: "the entry names another pod", mutate: func(_ *corev1.Pod, pp *appsv1alpha1.PodProbe) {
			pp.Name = "db-0"
		}, cause: CauseWrongPod, message: "but UID uid-1 is pod shop/web-0"},
		// The probes dial the address the runtime gives the sandbox, never status.podIP.
		{name: "the pod has no IP in its status yet", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			pod.Status.PodIP, pod.Status.PodIPs = "", nil
		}, accepted: "web-0-web,web-0-rpc"},
		{name: "an exec probe of a pod with no IP in its status yet", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			pod.Annotations = map[string]string{appsv1alpha1.AnnotationProbeContext: `[{"name":"web","livenessProbe":{"exec":{"command":["true"]}}}]`}
			pod.Status.PodIP, pod.Status.PodIPs = "", nil
			eltestutil.Seal(eltestutil.Admit(pod))
		}, accepted: "web-0-web"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := sealedPod("uid-1")
			pp := entryOf(pod)
			if tc.mutate != nil {
				tc.mutate(pod, &pp)
			}
			if tc.noPod {
				pod = nil
			}
			accepted, v := Check(&pp, pod, keys)
			if got := names(accepted); got != tc.accepted {
				t.Fatalf("accepted %q, want %q (refused %+v)", got, tc.accepted, v)
			}
			if tc.cause == "" {
				if v != nil {
					t.Fatalf("refused %+v", v)
				}
				return
			}
			if v == nil || v.Cause != tc.cause || v.Pending != tc.pending || !strings.Contains(v.Message, tc.message) {
				t.Fatalf("verdict %+v; want cause %s, pending %t, message containing %q", v, tc.cause, tc.pending, tc.message)
			}
		})
	}
}

// The probes the daemon runs are the pod's sealed context's, named ports resolved and defaults
// explicit: nothing of them comes from the NodePodProbe.
func TestCheckTakesTheProbesFromThePod(t *testing.T) {
	pod := sealedPod("uid-1")
	probes, v := Check(&appsv1alpha1.PodProbe{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}, pod, eltestutil.TrustedKeys())
	if v != nil || len(probes) != 2 {
		t.Fatalf("probes %+v, verdict %+v", probes, v)
	}
	web, rpc := probes[0], probes[1]
	if web.Container != "web" || web.Probe.HTTPGet == nil || web.Probe.HTTPGet.Port != intstr.FromInt32(8080) ||
		web.Probe.PeriodSeconds != 5 || web.Probe.TimeoutSeconds != 1 || web.Probe.FailureThreshold != 3 {
		t.Errorf("web probe %+v", web.Probe)
	}
	if rpc.Container != "rpc" || rpc.Name != "web-0-rpc" || rpc.Probe.GRPC == nil || rpc.Probe.GRPC.Port != 9090 {
		t.Errorf("rpc probe %+v", rpc.Probe)
	}
}

// recorder keeps the notes of the events sent.
type recorder struct{ notes []string }

func (r *recorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _ string, note string, args ...any) {
	o := regarding.(*corev1.ObjectReference)
	r.notes = append(r.notes, eventtype+" "+reason+" "+o.Name+" "+o.FieldPath+": "+fmt.Sprintf(note, args...))
}

var _ events.EventRecorder = &recorder{}

func TestGateReportsEachRefusalOnceAndHoldsAnUnknownKeyForAWhile(t *testing.T) {
	Refusals.Reset()
	keys := eltestutil.TrustedKeys()
	rec := &recorder{}
	clk := clocktesting.NewFakePassiveClock(time.Now())
	g := &Gate{Recorder: rec, Clock: clk, UnknownKeyWait: time.Minute}

	good := sealedPod("uid-good")
	forged := sealedPod("uid-forged")
	delete(forged.Annotations, appsv1alpha1.AnnotationProbeContextSeal)
	delete(forged.Annotations, appsv1alpha1.AnnotationProbeContextSignature)
	rotated := sealedPod("uid-rotated")
	newKey, err := signature.GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := signature.Seal(newKey, rotated)
	rotated.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = s
	misnamed := sealedPod("uid-misnamed")
	wrong := entryOf(misnamed)
	wrong.Name = "db-0"
	entries := []appsv1alpha1.PodProbe{entryOf(good), entryOf(forged), entryOf(rotated), wrong}
	pods := map[types.UID]*corev1.Pod{good.UID: good, forged.UID: forged, rotated.UID: rotated, misnamed.UID: misnamed}

	for range 3 {
		out, retry := g.Filter(entries, pods, keys)
		if len(out) != 4 || names(out[0].Run) != "web-0-web,web-0-rpc" || out[0].Held != nil {
			t.Fatalf("judged %+v", out)
		}
		for _, e := range out[1:] {
			if e.Run != nil || names(e.Held) != "web-0-web,web-0-rpc" || e.Held[0].Probe != nil {
				t.Fatalf("%s: run %+v, held %+v: want none run, both held by name only", e.UID, e.Run, e.Held)
			}
		}
		if retry <= 0 || retry > time.Minute {
			t.Fatalf("retry after %v: the unknown key must be looked at again within its wait", retry)
		}
	}
	if len(rec.notes) != 2 {
		t.Fatalf("events %q: want one per refused pod, not one per Filter", rec.notes)
	}
	if !strings.Contains(rec.notes[0], "Warning LivenessProbeRejected web-0 : the liveness probes of this pod, which the node's "+
		"NodePodProbe names, are not run: the pod's probe context was not admitted") {
		t.Fatalf("event %q", rec.notes[0])
	}
	if !strings.Contains(rec.notes[1], "the NodePodProbe entry names pod shop/db-0, but UID uid-misnamed is pod shop/web-0") {
		t.Fatalf("event %q", rec.notes[1])
	}
	if got := testutil.ToFloat64(Refused.WithLabelValues(CauseUnknownKey)); got != 2 {
		t.Fatalf("probes refused for an unknown key: %v", got)
	}

	// The new key is still unknown after the wait: refused, with an event.
	clk.SetTime(clk.Now().Add(time.Minute))
	if _, retry := g.Filter(entries, pods, keys); retry != 0 {
		t.Fatalf("retry %v after the wait", retry)
	}
	if len(rec.notes) != 3 || !strings.Contains(rec.notes[2], "is not in the trusted key set") {
		t.Fatalf("events %q", rec.notes)
	}
	if got := testutil.ToFloat64(Refusals.WithLabelValues(CauseUnknownKey)); got != 2 {
		t.Fatalf("refusals for an unknown key: %v", got)
	}

	// The daemon learns the key: the pod is probed.
	out, _ := g.Filter(entries, pods, keys.With(newKey, time.Now()))
	if names(out[2].Run) != "web-0-web,web-0-rpc" || out[2].Held != nil {
		t.Fatalf("judged %+v after the key was published", out[2])
	}
	if got := testutil.ToFloat64(Refused.WithLabelValues(CauseUnknownKey)); got != 0 {
		t.Fatalf("probes still refused for an unknown key: %v", got)
	}
}
