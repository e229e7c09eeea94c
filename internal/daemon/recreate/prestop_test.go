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

package recreate

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
)

// withPreStop gives the pod's first container a preStop hook and optionally container ports.
func withPreStop(hook corev1.LifecycleHandler, ports ...corev1.ContainerPort) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &hook}
		p.Spec.Containers[0].Ports = ports
	}
}

func grace(s int64) func(*appsv1alpha1.ContainerRecreateRequest) {
	return func(r *appsv1alpha1.ContainerRecreateRequest) {
		r.Spec.Strategy.TerminationGracePeriodSeconds = ptr.To(s)
	}
}

func hookFailures(evs []string) []string {
	var out []string
	for _, e := range evs {
		if strings.HasPrefix(e, "Warning FailedPreStopHook ") {
			out = append(out, e)
		}
	}
	return out
}

func TestPreStopExec(t *testing.T) {
	cases := []struct {
		name     string
		result   critest.ExecResult
		grace    int64
		wantFail string // substring of the FailedPreStopHook event; "" = no event
		wantStop string
	}{
		{"success", critest.ExecResult{Stdout: "drained"}, 20, "", "/20"},
		{"non-zero exit", critest.ExecResult{Stdout: "out", Stderr: "boom", ExitCode: 3},
			20, `PreStopHook of container app failed: exec preStop hook "/bin/drain --now" failed: `, "/20"},
		{"timeout", critest.ExecResult{Delay: 3 * time.Second}, 1, `exec preStop hook "/bin/drain --now" timed out after 1s`, "/2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(s *critest.Server) {
				s.ExecFunc = func(*runtimeapi.ExecSyncRequest) critest.ExecResult { return tc.result }
			})
			h.pod("web", withPreStop(corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/drain", "--now"}}}), "app")
			id := h.containerID("web", "app")
			h.crr("r", "web", grace(tc.grace), "app")
			h.reconcile("r")

			execs := h.srv.Calls("ExecSync")
			if len(execs) != 1 || !slices.Equal(execs[0].Cmd, []string{"/bin/drain", "--now"}) || execs[0].Timeout != tc.grace ||
				"critest://"+execs[0].ContainerID != id {
				t.Fatalf("ExecSync calls = %+v", execs)
			}
			if s := h.stops(); len(s) != 1 || !strings.HasSuffix(s[0], tc.wantStop) {
				t.Fatalf("stops = %v, want timeout %s (the container is stopped whatever the hook did)", s, tc.wantStop)
			}
			fails := hookFailures(h.events())
			if tc.wantFail == "" && len(fails) != 0 || tc.wantFail != "" && (len(fails) != 1 || !strings.Contains(fails[0], tc.wantFail)) {
				t.Fatalf("FailedPreStopHook events = %v, want %q", fails, tc.wantFail)
			}
			msg := h.get("r").Status.ContainerRecreateStates[0].Message
			if (tc.wantFail != "") != strings.Contains(msg, "preStop hook failed") {
				t.Fatalf("state message = %q", msg)
			}
		})
	}
}

func TestPreStopHTTP(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError) // the kubelet ignores hook status codes
	}))
	defer srv.Close()
	_, portStr, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	port, _ := strconv.Atoi(portStr)

	// A server that hangs up without answering: a transport error, on a port nobody else can take.
	hangUp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hangUp.Close() }()
	go func() {
		for {
			c, err := hangUp.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	hangUpPort := hangUp.Addr().(*net.TCPAddr).Port

	cases := []struct {
		name     string
		action   corev1.HTTPGetAction
		wantFail string
	}{
		{"numeric port", corev1.HTTPGetAction{Path: "/drain?x=1", Port: intstr.FromInt32(int32(port)),
			HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Reason", Value: "crr"}, {Name: "Host", Value: "app.local"}}}, ""},
		{"named port", corev1.HTTPGetAction{Path: "/drain", Port: intstr.FromString("http")}, ""},
		{"unknown named port", corev1.HTTPGetAction{Port: intstr.FromString("nope")}, `port "nope" not found`},
		{"server hangs up", corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(int32(hangUpPort))}, "http preStop hook GET http://127.0.0.1:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			h := newHarness(t)
			h.e.HookUserAgent = "kube-lifecycle/1.37"
			h.pod("web", withPreStop(corev1.LifecycleHandler{HTTPGet: &tc.action}, corev1.ContainerPort{Name: "http", ContainerPort: int32(port)}), "app")
			h.crr("r", "web", nil, "app")
			h.reconcile("r")
			if len(h.stops()) != 1 {
				t.Fatalf("stops = %v", h.stops())
			}
			fails := hookFailures(h.events())
			if tc.wantFail != "" {
				if len(fails) != 1 || !strings.Contains(fails[0], tc.wantFail) {
					t.Fatalf("FailedPreStopHook events = %v, want %q", fails, tc.wantFail)
				}
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if len(fails) != 0 || len(got) != 1 {
				t.Fatalf("events %v, requests %d", fails, len(got))
			}
			r := got[0]
			if r.Method != http.MethodGet || r.URL.Path != "/drain" || r.UserAgent() != "kube-lifecycle/1.37" {
				t.Fatalf("request %s %s UA %q", r.Method, r.URL, r.UserAgent())
			}
			if tc.name == "numeric port" && (r.URL.RawQuery != "x=1" || r.Header.Get("X-Reason") != "crr" || r.Host != "app.local") {
				t.Fatalf("query %q header %q host %q", r.URL.RawQuery, r.Header.Get("X-Reason"), r.Host)
			}
		})
	}
}

func TestPreStopTCP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			_ = c.Close()
			accepted <- struct{}{}
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port

	h := newHarness(t)
	h.pod("web", withPreStop(corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}), "app")
	h.crr("r", "web", nil, "app")
	h.reconcile("r")
	<-accepted
	if f := hookFailures(h.events()); len(f) != 0 || len(h.stops()) != 1 {
		t.Fatalf("events %v stops %v", f, h.stops())
	}

	_ = l.Close()
	h2 := newHarness(t)
	h2.pod("web", withPreStop(corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}), "app")
	h2.crr("r", "web", nil, "app")
	h2.reconcile("r")
	if f := hookFailures(h2.events()); len(f) != 1 || !strings.Contains(f[0], "tcp preStop hook to 127.0.0.1:") || len(h2.stops()) != 1 {
		t.Fatalf("events %v stops %v", f, h2.stops())
	}
}

// A sleep hook's time is taken off the grace period given to StopContainer.
func TestPreStopSleepIsSubtractedFromGrace(t *testing.T) {
	h := newHarness(t)
	h.pod("web", withPreStop(corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}), "app")
	h.crr("r", "web", grace(30), "app")
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.reconcile("r")
	}()
	for i := 0; !h.clock.HasWaiters(); i++ {
		if i > 10000 {
			t.Fatal("the sleep hook never waited on the clock")
		}
		time.Sleep(time.Millisecond)
	}
	if len(h.stops()) != 0 {
		t.Fatal("stopped before the preStop hook finished")
	}
	h.clock.Step(5 * time.Second)
	<-done
	if s := h.stops(); len(s) != 1 || !strings.HasSuffix(s[0], "/25") {
		t.Fatalf("stops = %v, want 30 - 5 = 25 s", s)
	}
	if f := hookFailures(h.events()); len(f) != 0 {
		t.Fatalf("events %v", f)
	}
}

func TestPreStopSkippedWithZeroGrace(t *testing.T) {
	h := newHarness(t)
	h.pod("web", withPreStop(corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"x"}}}), "app")
	h.crr("r", "web", grace(0), "app")
	h.reconcile("r")
	if len(h.srv.Calls("ExecSync")) != 0 || len(h.stops()) != 1 || !strings.HasSuffix(h.stops()[0], "/2") {
		t.Fatalf("exec %v stops %v", h.srv.Calls("ExecSync"), h.stops())
	}
}

func TestHookRunnerRejectsBadHooks(t *testing.T) {
	h := newHarness(t)
	runner := &HookRunner{Runtime: h.e.Runtime, Addresses: &cri.Addresses{Runtime: h.e.Runtime}, Clock: h.clock}
	c := &corev1.Container{Name: "app"}
	// noIP's status names an address, but the runtime has no sandbox of it.
	noIP := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-nosandbox"}, Status: corev1.PodStatus{PodIP: "127.0.0.1"}}
	h.srv.AddSandbox("sb-hook", "uid-hook", "127.0.0.1", false)
	withIP := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-hook"}}
	cases := []struct {
		name    string
		pod     *corev1.Pod
		handler corev1.LifecycleHandler
		want    string // "" = no error
	}{
		{"no handler", withIP, corev1.LifecycleHandler{}, "preStop hook has no handler"},
		{"empty command", withIP, corev1.LifecycleHandler{Exec: &corev1.ExecAction{}}, "exec preStop hook: command is empty"},
		{"http without pod IP", noIP, corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}, "httpGet.host is empty and the pod's address is not known: the runtime has no ready sandbox of pod UID uid-nosandbox"},
		{"tcp without pod IP", noIP, corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}, "tcpSocket.host is empty and the pod's address is not known: the runtime has no ready sandbox of pod UID uid-nosandbox"},
		{"port out of range", withIP, corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(0)}}, "invalid port number: 0"},
		{"sleep cut short by the grace period", withIP, corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 60}}, ""},
	}
	for _, tc := range cases {
		// The grace period bounds the whole hook, the runtime's answers included: only the sleep
		// is meant to be cut short, the others get one a loaded machine never reaches.
		grace := 30 * time.Second
		if tc.handler.Sleep != nil {
			grace = 20 * time.Millisecond
		}
		err := runner.Run(h.ctx, tc.pod, c, "critest://none", &tc.handler, grace)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

// The hook connects to the address the runtime gives the pod's sandbox, not to the pod's
// status.podIP, which a pods/status writer can point at another pod.
func TestPreStopDialsTheRuntimesAddressNotStatusPodIP(t *testing.T) {
	reached := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached <- struct{}{} }))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, hook := range []corev1.LifecycleHandler{
		{HTTPGet: &corev1.HTTPGetAction{Path: "/drain", Port: intstr.FromInt32(int32(port))}},
		{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}},
	} {
		h := newHarness(t) // the sandbox's address is 127.0.0.1, where srv listens
		h.pod("web", func(p *corev1.Pod) {
			withPreStop(hook)(p)
			p.Status.PodIP, p.Status.PodIPs = "127.0.0.2", []corev1.PodIP{{IP: "127.0.0.2"}}
		}, "app")
		h.crr("r", "web", nil, "app")
		h.reconcile("r")
		if f := hookFailures(h.events()); len(f) != 0 || len(h.stops()) != 1 {
			t.Fatalf("events %v stops %v", f, h.stops())
		}
		if hook.HTTPGet != nil {
			select {
			case <-reached:
			default:
				t.Fatal("the HTTP hook did not reach the sandbox's address")
			}
		}
	}
}
