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
func entryOf(t *testing.T, pod *corev1.Pod) appsv1alpha1.PodProbe {
	t.Helper()
	pctx, errs := probecontext.FromAnnotations(pod.Annotations)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	pp := appsv1alpha1.PodProbe{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, IP: podIP}
	for _, e := range pctx.Entries {
		for i := range pod.Spec.Containers {
			c := &pod.Spec.Containers[i]
			if c.Name != e.Name {
				continue
			}
			r, err := probecontext.Resolve(e.LivenessProbe, c)
			if err != nil {
				t.Fatal(err)
			}
			if r.GRPC != nil {
				r.GRPC.Service = nil // as the mapping writes it when the API server has not defaulted it yet
			}
			pp.Probes = append(pp.Probes, appsv1alpha1.ContainerProbe{Name: probecontext.ProbeName(pod.Name, c.Name), ContainerName: c.Name, Probe: *r})
		}
	}
	return pp
}

func names(ps []appsv1alpha1.ContainerProbe) string {
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
	execProbe := corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", "rm -rf /data"}}},
		TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}

	cases := []struct {
		name     string
		mutate   func(pod *corev1.Pod, pp *appsv1alpha1.PodProbe)
		noPod    bool
		accepted string
		cause    string // of the one refusal; "" = none
		probe    string // the refused probe; "" = the whole entry
		pending  bool
		message  string
	}{
		{name: "the mapping controller's entry for a sealed pod", accepted: "web-0-web,web-0-rpc"},
		{name: "the pod is not in the cache (yet)", noPod: true, cause: CausePodNotFound, pending: true},
		{name: "an exec probe added for a pod that has no probe context", mutate: func(pod *corev1.Pod, pp *appsv1alpha1.PodProbe) {
			pod.Annotations = nil
			pp.Probes = []appsv1alpha1.ContainerProbe{{Name: "web-0-web", ContainerName: "web", Probe: execProbe}}
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
		{name: "the pod's context changed after sealing", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			pod.Annotations[appsv1alpha1.AnnotationProbeContext] = strings.Replace(webContext, "/healthz", "/", 1)
		}, cause: CauseBadSeal},
		{name: "the entry's exec replaces the pod's HTTP probe", mutate: func(_ *corev1.Pod, pp *appsv1alpha1.PodProbe) {
			pp.Probes[0].Probe = execProbe
		}, accepted: "web-0-rpc", cause: CauseMismatch, probe: "web-0-web", message: `the probe of container "web" differs`},
		{name: "the entry's period differs", mutate: func(_ *corev1.Pod, pp *appsv1alpha1.PodProbe) {
			pp.Probes[1].Probe.PeriodSeconds = 1
		}, accepted: "web-0-web", cause: CauseMismatch, probe: "web-0-rpc"},
		{name: "the entry's HTTP probe aims at another port", mutate: func(_ *corev1.Pod, pp *appsv1alpha1.PodProbe) {
			pp.Probes[0].Probe.HTTPGet.Port = intstr.FromInt32(22)
		}, accepted: "web-0-rpc", cause: CauseMismatch, probe: "web-0-web"},
		{name: "a probe for a container the context does not list", mutate: func(pod *corev1.Pod, pp *appsv1alpha1.PodProbe) {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "db"})
			pp.Probes = append(pp.Probes, appsv1alpha1.ContainerProbe{Name: "web-0-db", ContainerName: "db", Probe: execProbe})
		}, accepted: "web-0-web,web-0-rpc", cause: CauseMismatch, probe: "web-0-db", message: `no liveness probe for container "db"`},
		{name: "a probe under another name", mutate: func(_ *corev1.Pod, pp *appsv1alpha1.PodProbe) {
			pp.Probes[1].Name = "web-0-web"
		}, accepted: "web-0-web", cause: CauseMismatch, probe: "web-0-web", message: `named "web-0-web", not "web-0-rpc"`},
		{name: "the entry names another pod", mutate: func(_ *corev1.Pod, pp *appsv1alpha1.PodProbe) {
			pp.Name = "db-0"
		}, cause: CauseWrongPod},
		{name: "the entry aims at another address (the daemon runs on the host network)", mutate: func(_ *corev1.Pod, pp *appsv1alpha1.PodProbe) {
			pp.IP = "169.254.169.254"
		}, cause: CauseWrongPod, message: `aims at address "169.254.169.254"`},
		{name: "the pod has no IP yet", mutate: func(pod *corev1.Pod, _ *appsv1alpha1.PodProbe) {
			pod.Status.PodIP, pod.Status.PodIPs = "", nil
		}, cause: CausePodNotFound, pending: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := sealedPod("uid-1")
			pp := entryOf(t, pod)
			if tc.mutate != nil {
				tc.mutate(pod, &pp)
			}
			if tc.noPod {
				pod = nil
			}
			accepted, refused := Check(&pp, pod, keys)
			if got := names(accepted); got != tc.accepted {
				t.Fatalf("accepted %q, want %q (refused %+v)", got, tc.accepted, refused)
			}
			if tc.cause == "" {
				if len(refused) > 0 {
					t.Fatalf("refused %+v", refused)
				}
				return
			}
			if len(refused) != 1 {
				t.Fatalf("refused %+v, want one", refused)
			}
			r := refused[0]
			if r.Cause != tc.cause || r.Probe != tc.probe || r.Pending != tc.pending || !strings.Contains(r.Message, tc.message) {
				t.Fatalf("refusal %+v; want cause %s, probe %q, pending %t, message containing %q", r, tc.cause, tc.probe, tc.pending, tc.message)
			}
		})
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
	tampered := entryOf(t, good)
	tampered.Probes[0].Probe.PeriodSeconds = 1
	entries := []appsv1alpha1.PodProbe{tampered, entryOf(t, forged), entryOf(t, rotated)}
	pods := map[types.UID]*corev1.Pod{good.UID: good, forged.UID: forged, rotated.UID: rotated}

	for range 3 {
		out, retry := g.Filter(entries, pods, keys)
		if len(out) != 1 || out[0].UID != good.UID || names(out[0].Probes) != "web-0-rpc" {
			t.Fatalf("passed %+v", out)
		}
		if retry <= 0 || retry > time.Minute {
			t.Fatalf("retry after %v: the unknown key must be looked at again within its wait", retry)
		}
	}
	if len(rec.notes) != 2 {
		t.Fatalf("events %q: want one per refused probe, not one per Filter", rec.notes)
	}
	if !strings.Contains(rec.notes[0], `Warning LivenessProbeRejected web-0 spec.containers{web}: liveness probe web-0-web `+
		`the node's NodePodProbe lists for container "web" is not run: the probe of container "web" differs`) {
		t.Fatalf("event %q", rec.notes[0])
	}
	if !strings.Contains(rec.notes[1], "the liveness probes the node's NodePodProbe lists for this pod are not run: "+
		"the pod's probe context was not admitted") {
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
	if len(out) != 2 || out[1].UID != rotated.UID {
		t.Fatalf("passed %+v after the key was published", out)
	}
	if got := testutil.ToFloat64(Refused.WithLabelValues(CauseUnknownKey)); got != 0 {
		t.Fatalf("probes still refused for an unknown key: %v", got)
	}
}
