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
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// withStatusIP sets the fixture pod's status.podIP, as a pods/status writer can.
func withStatusIP(f *fixture, ip string) {
	p := f.pod.DeepCopy()
	p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	f.pod = p
	f.setPod(p)
}

func countEvents(evs []string, reason string) int {
	n := 0
	for _, e := range evs {
		if strings.Contains(e, " "+reason+" ") {
			n++
		}
	}
	return n
}

// The probe dials the address the runtime gives the pod's sandbox: a status.podIP pointed
// elsewhere (nothing listens on 127.0.0.2) changes nothing but one event.
func TestWorker_DialsTheRuntimesAddressNotStatusPodIP(t *testing.T) {
	f := newFixture(t)
	withStatusIP(f, "127.0.0.2")
	tg := f.target(1)
	w := f.worker(tg)
	for range 3 {
		f.run(w, 200)
	}
	mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
	if n := f.requests.Load(); n != 3 {
		t.Fatalf("%d requests reached the sandbox's address, want 3", n)
	}
	evs := f.events()
	if countEvents(evs, ReasonPodIPMismatch) != 1 || !strings.Contains(strings.Join(evs, "|"), "status.podIP 127.0.0.2 is not its address 127.0.0.1") {
		t.Fatalf("events %q, want one %s naming both addresses", evs, ReasonPodIPMismatch)
	}
	// The address is asked once per container, not on every run.
	if n := len(f.cri.Calls("PodSandboxStatus")); n != 1 {
		t.Errorf("PodSandboxStatus called %d times, want 1", n)
	}
}

// A status.podIP written while the container runs (a new version of the pod, the same
// container) is compared with the address already known: one event, no new runtime call, and
// the probe still dials the sandbox's address.
func TestWorker_StatusPodIPChangedLaterIsReported(t *testing.T) {
	f := newFixture(t)
	tg := f.target(1)
	w := f.worker(tg)
	f.run(w, 200)
	if n := countEvents(f.events(), ReasonPodIPMismatch); n != 0 {
		t.Fatalf("%d %s events while the status agrees", n, ReasonPodIPMismatch)
	}
	calls := len(f.cri.Calls(""))
	withStatusIP(f, "127.0.0.2")
	f.run(w, 200)
	withStatusIP(f, "127.0.0.2") // another version of the pod, the same address: no second event
	f.run(w, 200)
	mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
	if n := countEvents(f.events(), ReasonPodIPMismatch); n != 1 {
		t.Fatalf("%d %s events, want 1", n, ReasonPodIPMismatch)
	}
	if n := len(f.cri.Calls("")); n != calls {
		t.Errorf("%d runtime calls after the first run, want none", n-calls)
	}
	if n := f.requests.Load(); n != 3 {
		t.Errorf("%d requests reached the sandbox's address, want 3", n)
	}
}

// A new container may run in a new sandbox: its address is asked again, and a status.podIP
// that agrees with the runtime raises no event.
func TestWorker_NewSandboxNewAddress(t *testing.T) {
	f := newFixture(t)
	tg := f.target(1)
	w := f.worker(tg)
	f.run(w, 200)
	mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
	// The pod's sandbox is recreated at 127.0.0.3, where nothing listens.
	f.cri.AddSandbox("sb-2", "uid-1", "127.0.0.3", false)
	f.newContainer("containerd://c2")
	f.run(w, 200)
	// Failed: the probe dialled the new sandbox's address, not the old one (which answers 200).
	mustState(t, f, tg.Key, appsv1alpha1.ProbeFailed)
	if n := len(f.cri.Calls("PodSandboxStatus")); n != 2 {
		t.Fatalf("PodSandboxStatus called %d times, want 2 (one per sandbox)", n)
	}
	if n := countEvents(f.events(), ReasonPodIPMismatch); n != 1 {
		t.Fatalf("%d %s events, want 1 (127.0.0.1 in status, 127.0.0.3 in the runtime)", n, ReasonPodIPMismatch)
	}
}

// A host-network pod's sandbox has no address of its own: the probe dials the node's.
func TestWorker_HostNetworkDialsTheNodesAddress(t *testing.T) {
	f := newFixture(t)
	f.cri.AddSandbox("sb-host", "uid-1", "", true)
	f.m.Addresses.NodeIP = func(context.Context) (string, error) { return "127.0.0.1", nil }
	withStatusIP(f, "127.0.0.2")
	tg := f.target(1)
	w := f.worker(tg)
	f.run(w, 200)
	mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
	if f.requests.Load() != 1 {
		t.Fatal("the probe did not reach the node's address")
	}
	want := "status.podIP 127.0.0.2 is not its address 127.0.0.1 the node's, as the pod's sandbox shares the node's network (sandbox sb-host)"
	if evs := f.events(); countEvents(evs, ReasonPodIPMismatch) != 1 || !strings.Contains(strings.Join(evs, "|"), want) {
		t.Fatalf("events %q, want one %s saying %q", evs, ReasonPodIPMismatch, want)
	}
}

// No ready sandbox: no address, so the probe errors (Unknown, not counted) and dials nothing.
func TestWorker_NoSandboxErrorsAndDialsNothing(t *testing.T) {
	f := newFixture(t)
	f.cri.AddSandbox("sb-other", "uid-other", "127.0.0.1", false)
	p := f.pod.DeepCopy()
	p.UID = "uid-nosandbox"
	f.pod = p
	f.setPod(p)
	tg := f.target(1)
	tg.PodUID = "uid-nosandbox"
	w := f.worker(tg)
	f.run(w, 200)
	mustState(t, f, tg.Key, appsv1alpha1.ProbeUnknown)
	if f.requests.Load() != 0 {
		t.Fatal("the probe dialled without the runtime's address")
	}
	if evs := strings.Join(f.events(), "|"); !strings.Contains(evs, "no ready sandbox of pod UID uid-nosandbox") {
		t.Fatalf("events %q, want the errored probe's reason", evs)
	}
}

// Exec probes do not dial the pod: they never ask for its address.
func TestWorker_ExecProbeAsksNoAddress(t *testing.T) {
	f, srv, tg := execFixture(t)
	f.namesContainer(srv.AddContainer("uid-1", "app"))
	w := f.worker(tg)
	f.run(w, 0)
	if len(srv.Calls("ExecSync")) != 1 {
		t.Fatal("the exec probe did not run")
	}
	if n := len(srv.Calls("ListPodSandbox")) + len(srv.Calls("PodSandboxStatus")); n != 0 {
		t.Fatalf("%d sandbox calls for an exec probe", n)
	}
}
