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

package httpget

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The wire behaviour (docs/probe-semantics.md #16-#18) is tested through the probes in prober/check; these
// cases are the ones a lifecycle hook adds.
func TestNewRequest(t *testing.T) {
	c := &corev1.Container{Name: "app", Ports: []corev1.ContainerPort{{Name: "admin", ContainerPort: 9000}}}
	for _, tc := range []struct {
		name              string
		action            corev1.HTTPGetAction
		wantURL, wantUA   string
		wantHost, wantErr string
	}{
		{name: "path without a leading slash", action: corev1.HTTPGetAction{Path: "drain", Port: intstr.FromString("admin")},
			wantURL: "http://10.0.0.7:9000/drain", wantUA: "kube-lifecycle/1.37"},
		{name: "custom User-Agent replaces the default", action: corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80),
			HTTPHeaders: []corev1.HTTPHeader{{Name: "user-agent", Value: "mine"}}},
			wantURL: "http://10.0.0.7:80/", wantUA: "mine"},
		{name: "Host header", action: corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80),
			HTTPHeaders: []corev1.HTTPHeader{{Name: "Host", Value: "app.example"}}},
			wantURL: "http://10.0.0.7:80/", wantUA: "kube-lifecycle/1.37", wantHost: "app.example"},
		{name: "unknown named port", action: corev1.HTTPGetAction{Port: intstr.FromString("metrics")}, wantErr: `port "metrics" not found`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := NewRequest(&tc.action, c, "10.0.0.7", "kube-lifecycle/1.37")
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if req.URL.String() != tc.wantURL || req.Header.Get("User-Agent") != tc.wantUA || req.Host != tc.wantHost {
				t.Errorf("got %s UA %q Host %q; want %s UA %q Host %q", req.URL, req.Header.Get("User-Agent"), req.Host,
					tc.wantURL, tc.wantUA, tc.wantHost)
			}
			if len(req.Header.Values("User-Agent")) != 1 {
				t.Errorf("User-Agent sent %d times", len(req.Header.Values("User-Agent")))
			}
		})
	}
}

func TestNewRequest_DefaultHeadersShared(t *testing.T) {
	c := &corev1.Container{Name: "app"}
	plain := corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80)}
	a, _ := NewRequest(&plain, c, "10.0.0.7", "kube-probe/1.37")
	b, _ := NewRequest(&plain, c, "10.0.0.8", "kube-probe/1.37")
	if a.Header.Get("User-Agent") != "kube-probe/1.37" || a.Header.Get("Accept") != "*/*" || len(a.Header) != 2 {
		t.Errorf("default header %v", a.Header)
	}
	if reflect.ValueOf(a.Header).UnsafePointer() != reflect.ValueOf(b.Header).UnsafePointer() {
		t.Error("two requests without headers of their own got a map each")
	}
	other, _ := NewRequest(&plain, c, "10.0.0.7", "kube-lifecycle/1.37")
	custom, _ := NewRequest(&corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80),
		HTTPHeaders: []corev1.HTTPHeader{{Name: "X-Probe", Value: "1"}}}, c, "10.0.0.7", "kube-probe/1.37")
	if other.Header.Get("User-Agent") != "kube-lifecycle/1.37" || custom.Header.Get("X-Probe") != "1" ||
		a.Header.Get("X-Probe") != "" || a.Header.Get("User-Agent") != "kube-probe/1.37" {
		t.Errorf("headers leaked between requests: %v %v %v", a.Header, other.Header, custom.Header)
	}
}
