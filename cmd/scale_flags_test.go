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

package main

import (
	"flag"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

func parseScaleFlags(t *testing.T, args ...string) *scaleFlags {
	t.Helper()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	f := bindScaleFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestScaleFlagsRateLimit(t *testing.T) {
	cases := []struct {
		args      []string
		wantQPS   float32
		wantBurst int
		wantErr   string
	}{
		{nil, defaultKubeAPIQPS, defaultKubeAPIBurst, ""},
		{[]string{"--kube-api-qps=50", "--kube-api-burst=75"}, 50, 75, ""},
		{[]string{"--kube-api-qps=-1"}, -1, defaultKubeAPIBurst, ""},
		{[]string{"--kube-api-qps=0"}, 0, 0, "--kube-api-qps: must be greater than 0, or -1"},
		{[]string{"--kube-api-qps=-5"}, 0, 0, "--kube-api-qps: must be greater than 0, or -1"},
		{[]string{"--kube-api-burst=0"}, 0, 0, "--kube-api-burst: must be at least 1"},
		{[]string{"--decision-workers=0"}, 0, 0, "--decision-workers: must be at least 1"},
	}
	for _, c := range cases {
		cfg := &rest.Config{}
		err := parseScaleFlags(t, c.args...).applyTo(cfg)
		if c.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
				t.Errorf("%v: got %v, want %q", c.args, err, c.wantErr)
			}
			continue
		}
		if err != nil || cfg.QPS != c.wantQPS || cfg.Burst != c.wantBurst {
			t.Errorf("%v: QPS %v burst %d err %v, want %v %d", c.args, cfg.QPS, cfg.Burst, err, c.wantQPS, c.wantBurst)
		}
	}
}

func TestScaleFlagsCache(t *testing.T) {
	pod := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p",
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
			Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}
	}
	for _, strip := range []bool{true, false} {
		f := parseScaleFlags(t, "--strip-cached-objects="+map[bool]string{true: "true", false: "false"}[strip])
		opts := f.cacheOptions("ops")
		if (opts.DefaultTransform != nil) != strip {
			t.Errorf("strip=%v: DefaultTransform set = %v", strip, opts.DefaultTransform != nil)
		}
		var podsSeen int
		for obj, by := range opts.ByObject {
			if _, ok := obj.(*corev1.Pod); !ok {
				continue
			}
			podsSeen++
			if by.Label == nil || by.Label.String() != "enhancedliveness.io/enrolled=true" {
				t.Errorf("strip=%v: pod label selector %v", strip, by.Label)
			}
			if !strip {
				if by.Transform != nil {
					t.Errorf("strip=false: pods are transformed")
				}
				continue
			}
			out, err := by.Transform(pod())
			if err != nil {
				t.Fatal(err)
			}
			p := out.(*corev1.Pod)
			if p.ManagedFields != nil || p.Spec.Containers[0].Image != "" || p.Spec.NodeName != "n1" {
				t.Errorf("strip=true: cached pod %+v", p)
			}
		}
		// Pods, the DaemonSet, the Leases, the admission policies and bindings, the trust ConfigMap.
		if podsSeen != 1 || len(opts.ByObject) != 6 {
			t.Errorf("strip=%v: ByObject has %d entries, %d for pods", strip, len(opts.ByObject), podsSeen)
		}
	}
}
