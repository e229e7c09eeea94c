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
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// fixture is a manager on a fake clock with a loopback HTTP server whose status code the test
// scripts, and one pod "web" (uid "uid-1") with container "app" running as containerd://c1.
type fixture struct {
	t        testing.TB
	m        *Manager
	clk      *clocktesting.FakeClock
	rec      *events.FakeRecorder
	code     atomic.Int32
	requests atomic.Int32
	// hold, when set, keeps each request waiting until it is closed; inFlight and maxInFlight
	// count the requests being answered.
	hold                  atomic.Pointer[chan struct{}]
	inFlight, maxInFlight atomic.Int32
	port                  int
	pod                   *corev1.Pod
	// cri is the test CRI server the manager asks, through rt, for the pod's address.
	cri *critest.Server
	rt  cri.Runtime
}

// startCRI serves a test CRI server until the test ends, and connects to it.
func startCRI(t testing.TB) (*critest.Server, cri.Runtime) {
	t.Helper()
	dir, err := os.MkdirTemp("", "x")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	srv := &critest.Server{}
	ep, err := srv.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	rt, err := cri.Connect(context.Background(), ep, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return srv, rt
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{t: t, clk: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), rec: events.NewFakeRecorder(100)}
	f.code.Store(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		n := f.inFlight.Add(1)
		defer f.inFlight.Add(-1)
		for m := f.maxInFlight.Load(); n > m && !f.maxInFlight.CompareAndSwap(m, n); m = f.maxInFlight.Load() {
		}
		if h := f.hold.Load(); h != nil {
			<-*h
		}
		code := int(f.code.Load())
		if code >= 300 && code < 400 {
			// A redirect to another hostname, which is not followed.
			w.Header().Set("Location", "http://other.invalid/")
		}
		w.WriteHeader(code)
		_, _ = fmt.Fprintf(w, "code %d", code)
	}))
	t.Cleanup(srv.Close)
	_, portStr, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	f.port, _ = strconv.Atoi(portStr)
	f.cri, f.rt = startCRI(t)
	// The runtime's address of the pod's sandbox, which HTTP probes dial.
	f.cri.AddSandbox("sb-1", "uid-1", "127.0.0.1", false)
	f.m = &Manager{UserAgent: "kube-probe/1.37", Clock: f.clk, Events: &Events{Recorder: f.rec},
		Addresses: &cri.Addresses{Runtime: f.rt}}
	f.m.init()
	f.m.started = f.clk.Now().Add(-time.Hour)
	f.m.ctx = context.Background()
	probeSeries.add(f.m) // as Start does
	t.Cleanup(func() { probeSeries.remove(f.m) })
	f.pod = testutil.NewPod("ns", "web").With(func(p *corev1.Pod) { p.UID = "uid-1" }).
		Running("127.0.0.1").ContainerID("app", "containerd://c1").StartedAt(f.clk.Now().Add(-time.Minute)).Build()
	f.setPod(f.pod)
	return f
}

// holdRequests keeps the server's answers waiting until the returned func (or the test's end,
// so that a failed test does not hang in the server's Close) releases them.
func (f *fixture) holdRequests() (release func()) {
	ch := make(chan struct{})
	f.hold.Store(&ch)
	var once sync.Once
	release = func() { once.Do(func() { f.hold.Store(nil); close(ch) }) }
	f.t.Cleanup(release)
	return release
}

func (f *fixture) setPod(p *corev1.Pod) {
	f.m.mu.Lock()
	f.m.pods = map[types.UID]*corev1.Pod{p.UID: p}
	f.m.mu.Unlock()
}

// target returns an HTTP liveness probe of container app against the fixture's server.
func (f *fixture) target(failureThreshold int32) Target {
	return Target{
		Key:     results.Key{PodUID: "uid-1", Container: "app", Probe: "web-app"},
		PodName: "web", Namespace: "ns",
		Probe: withDefaults(corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(f.port))}},
			FailureThreshold: failureThreshold, PeriodSeconds: 10,
		}),
	}
}

// worker registers a worker for t without starting its loop: tests call doProbe themselves.
func (f *fixture) worker(t Target) *worker {
	w := newWorker(f.m, &t)
	f.m.mu.Lock()
	f.m.workers[t.Key] = w
	f.m.mu.Unlock()
	return w
}

// run scripts the server's status code and runs one probe.
func (f *fixture) run(w *worker, code int) bool {
	f.code.Store(int32(code))
	return w.doProbe(context.Background())
}

func (f *fixture) state(k results.Key) (results.Entry, bool) { return f.m.Results.Get(k) }

// newContainer replaces the container with a new instance id, running since now.
func (f *fixture) newContainer(id string) {
	p := f.pod.DeepCopy()
	p.Status.ContainerStatuses[0].ContainerID = id
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(f.clk.Now())}}
	f.pod = p
	f.setPod(p)
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func mustState(t *testing.T, f *fixture, k results.Key, want appsv1alpha1.ProbeState) results.Entry {
	t.Helper()
	e, ok := f.state(k)
	if !ok || e.State != want {
		t.Fatalf("state = %+v (present %v), want %s", e, ok, want)
	}
	return e
}
