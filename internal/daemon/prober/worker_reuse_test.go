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
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
)

// pathServer records the paths it is asked for.
type pathServer struct {
	mu    sync.Mutex
	paths []string
	port  int
}

func newPathServer(t *testing.T) *pathServer {
	s := &pathServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	_, p, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	s.port, _ = strconv.Atoi(p)
	return s
}

func (s *pathServer) got() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.paths, ",")
}

// A worker builds its HTTP request once and reuses it, so the request must follow a new pod
// object (here a named port that now resolves elsewhere) and a new target at once.
func TestWorker_16_ReusedRequestFollowsPodAndTarget(t *testing.T) {
	f := newFixture(t)
	a, b := newPathServer(t), newPathServer(t)
	withPort := func(port int) {
		p := f.pod.DeepCopy()
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}
		f.pod = p
		f.setPod(p)
	}
	withPort(a.port)
	tg := f.target(3)
	tg.Probe.HTTPGet = &corev1.HTTPGetAction{Path: "/one", Port: intstr.FromString("http")}
	w := f.worker(tg)
	f.run(w, 200)
	f.run(w, 200)
	if got := a.got(); got != "/one,/one" {
		t.Fatalf("server a got %q, want two runs on /one", got)
	}
	withPort(b.port)
	f.run(w, 200)
	if got := b.got(); got != "/one" {
		t.Fatalf("after the pod changed, server b got %q, want /one", got)
	}
	tg2 := tg
	tg2.Probe.HTTPGet = &corev1.HTTPGetAction{Path: "/two", Port: intstr.FromInt32(int32(a.port))}
	w.setTarget(&tg2)
	f.run(w, 200)
	if got := a.got(); got != "/one,/one,/two" {
		t.Fatalf("after the target changed, server a got %q, want /two last", got)
	}
}

// cmdRecorder is a runtime whose ExecSync records the commands and exits 0, and whose every
// container is the fixture's pod's "app".
type cmdRecorder struct {
	mu   sync.Mutex
	cmds []string
}

func (r *cmdRecorder) ContainerStatus(_ context.Context, id string, _ bool) (*runtimeapi.ContainerStatusResponse, error) {
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: id,
		Labels: map[string]string{cri.LabelPodUID: "uid-1", cri.LabelContainerName: "app"}}}, nil
}

func (r *cmdRecorder) ExecSync(_ context.Context, _ string, cmd []string, _ time.Duration) ([]byte, []byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds = append(r.cmds, strings.Join(cmd, " "))
	return nil, nil, nil
}

// The expanded exec command is kept like the HTTP request, so it must follow the container's env.
func TestWorker_26_ExpandedCommandFollowsPodEnv(t *testing.T) {
	f := newFixture(t)
	rt := &cmdRecorder{}
	f.m.Runtime = rt
	withEnv := func(v string) {
		p := f.pod.DeepCopy()
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "WHO", Value: v}}
		f.pod = p
		f.setPod(p)
	}
	withEnv("a")
	tg := f.target(3)
	tg.Probe.ProbeHandler = corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"check", "$(WHO)"}}}
	w := f.worker(tg)
	f.run(w, 200)
	f.run(w, 200)
	withEnv("b")
	f.run(w, 200)
	if got := strings.Join(rt.cmds, ","); got != "check a,check a,check b" {
		t.Errorf("commands %q, want the env of each pod object", got)
	}
}
