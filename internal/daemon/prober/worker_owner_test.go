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
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
)

// execFixture is the worker fixture with an exec probe of container app of pod uid-1, against the
// test CRI server.
func execFixture(t testing.TB) (*fixture, *critest.Server, Target) {
	f := newFixture(t)
	f.m.Runtime = f.rt
	tg := f.target(3)
	tg.Probe.HTTPGet = nil
	tg.Probe.Exec = &corev1.ExecAction{Command: []string{"check"}}
	return f, f.cri, tg
}

// namesContainer makes the fixture's pod status name containerID for container app.
func (f *fixture) namesContainer(containerID string) {
	p := f.pod.DeepCopy()
	p.Status.ContainerStatuses[0].ContainerID = "containerd://" + containerID
	f.setPod(p)
}

// Whoever can write a pod's status can name another pod's container there (or another container
// of the pod): the exec probe must not run in it, nor its output go to this pod's events. The
// probe is reported not run (Unknown, never a result), with one Warning event and one count per
// container; once the status names the pod's own container again, the probe runs.
func TestWorker_ExecRefusesAContainerThatIsNotThePods(t *testing.T) {
	for _, tc := range []struct {
		name, cause   string
		podUID, cname string
	}{
		{"another pod's container", cri.CausePodUID, "uid-other", "app"},
		{"another container of the pod", cri.CauseContainerName, "uid-1", "side"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv, tg := execFixture(t)
			foreign := srv.AddContainer(tc.podUID, tc.cname)
			own := srv.AddContainer("uid-1", "app")
			f.namesContainer(foreign)
			before := testutil.ToFloat64(cri.OwnerRefusals.WithLabelValues(cri.OpExecProbe, tc.cause))
			w := f.worker(tg)

			for range 3 {
				f.run(w, 0)
			}
			if calls := srv.Calls("ExecSync"); len(calls) != 0 {
				t.Fatalf("exec ran in %s", calls[0].ContainerID)
			}
			if e := mustState(t, f, tg.Key, appsv1alpha1.ProbeUnknown); e.Message != MessageForeignContainer {
				t.Fatalf("message %q", e.Message)
			}
			ev := f.events()
			if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+cri.ReasonForeignContainer+" Liveness probe not run: container "+foreign) {
				t.Fatalf("events = %q, want one %s", ev, cri.ReasonForeignContainer)
			}
			if d := testutil.ToFloat64(cri.OwnerRefusals.WithLabelValues(cri.OpExecProbe, tc.cause)) - before; d != 1 {
				t.Fatalf("refusals{exec-probe,%s} grew by %v, want 1", tc.cause, d)
			}
			if n := len(srv.Calls("ContainerStatus")); n != 1 {
				t.Fatalf("%d ContainerStatus calls for 3 runs, want 1 (an owner never changes)", n)
			}

			f.namesContainer(own)
			for range 3 {
				f.run(w, 0)
			}
			if calls := srv.Calls("ExecSync"); len(calls) != 3 || calls[0].ContainerID != own {
				t.Fatalf("ExecSync calls %+v, want 3 in %s", calls, own)
			}
			mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
			if n := len(srv.Calls("ContainerStatus")); n != 2 {
				t.Fatalf("%d ContainerStatus calls, want 2: one per container", n)
			}
		})
	}
}

// The runtime resolves a unique prefix of a container ID as the whole ID, and the worker keeps
// its owner check for the ID as the pod's status writes it. A prefix of the pod's own container
// would pass once, then name whatever container takes that prefix after the pod's is gone: here
// another pod's, which every later exec would run in, its output in this pod's events. The
// worker refuses the prefix from the first run: no exec at all, Unknown, one Warning event that
// names neither the other container nor its pod, one count of cause container-id.
func TestWorker_ExecRefusesAPrefixOfAContainerID(t *testing.T) {
	f, srv, tg := execFixture(t)
	srv.AddContainerWithID("c0ffee00own", "uid-1", "app")
	f.namesContainer("c0ffee")
	before := testutil.ToFloat64(cri.OwnerRefusals.WithLabelValues(cri.OpExecProbe, cri.CauseContainerID))
	w := f.worker(tg)

	f.run(w, 0) // the prefix resolves to the pod's own container
	srv.Remove("c0ffee00own")
	srv.AddContainerWithID("c0ffee11other", "uid-other", "app")
	for range 3 {
		f.run(w, 0) // the same prefix now resolves to the other pod's container
	}

	for _, c := range srv.Calls("ExecSync") {
		if c.Resolved == "c0ffee11other" {
			t.Fatalf("exec %v ran in the other pod's container %s (asked for %s)", c.Cmd, c.Resolved, c.ContainerID)
		}
	}
	if calls := srv.Calls("ExecSync"); len(calls) != 0 {
		t.Fatalf("exec ran by the prefix %s in %s", calls[0].ContainerID, calls[0].Resolved)
	}
	if e := mustState(t, f, tg.Key, appsv1alpha1.ProbeUnknown); e.Message != MessageForeignContainer {
		t.Fatalf("message %q", e.Message)
	}
	ev := f.events()
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+cri.ReasonForeignContainer+" Liveness probe not run: container c0ffee is not a whole container ID") ||
		strings.Contains(ev[0], "11other") || strings.Contains(ev[0], "uid-other") {
		t.Fatalf("events = %q, want one %s naming only the prefix", ev, cri.ReasonForeignContainer)
	}
	if d := testutil.ToFloat64(cri.OwnerRefusals.WithLabelValues(cri.OpExecProbe, cri.CauseContainerID)) - before; d != 1 {
		t.Fatalf("refusals{exec-probe,container-id} grew by %v, want 1", d)
	}

	// The status naming the pod's container by its whole ID: the probe runs there.
	srv.AddContainerWithID("c0ffee22own", "uid-1", "app")
	f.namesContainer("c0ffee22own")
	f.run(w, 0)
	if calls := srv.Calls("ExecSync"); len(calls) != 1 || calls[0].ContainerID != "c0ffee22own" || calls[0].Resolved != "c0ffee22own" {
		t.Fatalf("ExecSync calls %+v, want one in c0ffee22own", calls)
	}
	mustState(t, f, tg.Key, appsv1alpha1.ProbeSucceeded)
}

// BenchmarkWorkerRunExec is one run of an exec worker against the test CRI server on a unix
// socket: the owner check is made once per container, so a run costs one ExecSync.
func BenchmarkWorkerRunExec(b *testing.B) {
	f, srv, tg := execFixture(b)
	f.namesContainer(srv.AddContainer("uid-1", "app"))
	w := f.worker(tg)
	f.run(w, 0)
	b.ReportAllocs()
	for b.Loop() {
		f.run(w, 0)
	}
	b.ReportMetric(float64(len(srv.Calls("")))/float64(b.N+1), "CRI-calls/run")
}
