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

package prober

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

func TestEvents_29_PointAtTheContainerAndCapTheNote(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}, InitContainers: []corev1.Container{{Name: "proxy"}}}}
	if got := fieldPath(pod, "app"); got != "spec.containers{app}" {
		t.Errorf("fieldPath(app) = %q", got)
	}
	if got := fieldPath(pod, "proxy"); got != "spec.initContainers{proxy}" {
		t.Errorf("fieldPath(proxy) = %q", got)
	}
	rec := events.NewFakeRecorder(1)
	(&Events{Recorder: rec}).warn(&Target{Key: results.Key{Container: "app"}}, pod, ReasonUnhealthy, "Liveness probe failed: %s", strings.Repeat("x", 10<<10))
	if e := <-rec.Events; len(e) > len("Warning Unhealthy ")+truncate.MaxEventNoteBytes || !strings.HasPrefix(e, "Warning Unhealthy Liveness probe failed: xxx") {
		t.Errorf("event of %d bytes: %.60q", len(e), e)
	}
	var nilEvents *Events
	nilEvents.warn(&Target{}, pod, ReasonUnhealthy, "ignored") // no recorder: no panic
}

// The NodePodProbeReport is cluster-scoped: what a state carries must never be what the
// application wrote (a response body, command output). The body still reaches the pod's own
// events, as the kubelet's do.
func TestWorker_StatusCarriesReasonsNotResponseBodies(t *testing.T) {
	f := newFixture(t)
	tg := f.target(1)
	w := f.worker(tg)
	f.run(w, 200)
	if e := mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded); e.Message != "" {
		t.Errorf("success reported with %q", e.Message)
	}
	f.run(w, 500)
	if e := mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed); e.Message != "HTTP probe failed with statuscode: 500" {
		t.Errorf("failure reported with %q", e.Message)
	}
	f.run(w, 302) // recovers with an unfollowed redirect, whose body only the event shows
	if e := mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded); e.Message != "" {
		t.Errorf("recovery reported with %q", e.Message)
	}
	if ev := f.events(); !slices.Contains(ev, "Warning ProbeWarning Liveness probe warning: Probe terminated redirects, Response body: code 302") {
		t.Errorf("events %q lack the body", ev)
	}
}
