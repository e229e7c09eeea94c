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

package cri_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri/critest"
)

func TestAddressesOf(t *testing.T) {
	ctx := context.Background()
	srv := &critest.Server{}
	rt := startServer(t, srv)
	srv.AddSandbox("sb-a", "uid-a", "10.0.0.1", false)
	srv.AddSandbox("sb-b", "uid-b", "10.0.0.2", false)
	srv.AddSandbox("sb-host", "uid-host", "", true)
	srv.AddSandbox("sb-static", "static-uid", "10.0.0.9", false)
	a := &cri.Addresses{Runtime: rt, NodeIP: func(context.Context) (string, error) { return "192.168.0.5", nil }}
	mk := func(uid string) *corev1.Pod {
		p := &corev1.Pod{Status: corev1.PodStatus{PodIP: "10.0.0.2"}} // status names pod b's address
		p.UID = types.UID(uid)
		return p
	}
	mirror := mk("api-uid")
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "static-uid"}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		want    cri.PodAddress
		wantErr string
	}{
		{"the sandbox's address, not status.podIP", mk("uid-a"), cri.PodAddress{IP: "10.0.0.1", SandboxID: "sb-a"}, ""},
		{"host network: the node's", mk("uid-host"), cri.PodAddress{IP: "192.168.0.5", SandboxID: "sb-host", HostNetwork: true}, ""},
		{"a mirror pod: its static pod's sandbox", mirror, cri.PodAddress{IP: "10.0.0.9", SandboxID: "sb-static"}, ""},
		{"no sandbox", mk("uid-none"), cri.PodAddress{}, "the runtime has no ready sandbox of pod UID uid-none"},
	} {
		got, err := a.Of(ctx, tc.pod)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: Of = %+v, %v, want %+v", tc.name, got, err, tc.want)
		}
	}

	// Asked once per sandbox: a second lookup reads no status, a new sandbox does.
	before := len(srv.Calls("PodSandboxStatus"))
	if got, _ := a.Of(ctx, mk("uid-a")); got.IP != "10.0.0.1" || len(srv.Calls("PodSandboxStatus")) != before {
		t.Fatalf("cached lookup = %+v, status calls %d -> %d", got, before, len(srv.Calls("PodSandboxStatus")))
	}
	srv.AddSandbox("sb-a2", "uid-a", "10.0.0.7", false)
	if got, _ := a.Of(ctx, mk("uid-a")); got.IP != "10.0.0.7" || got.SandboxID != "sb-a2" {
		t.Fatalf("after the sandbox was recreated: %+v", got)
	}
	a.Forget(mk("uid-a"))
	before = len(srv.Calls("PodSandboxStatus"))
	if _, _ = a.Of(ctx, mk("uid-a")); len(srv.Calls("PodSandboxStatus")) != before+1 {
		t.Fatal("a forgotten pod's sandbox was not asked again")
	}
}

func TestAddressesErrors(t *testing.T) {
	ctx := context.Background()
	srv := &critest.Server{}
	rt := startServer(t, srv)
	srv.AddSandbox("sb-host", "uid-host", "", true)
	srv.AddSandbox("sb-noip", "uid-noip", "", false)
	p := func(uid string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}} }
	for _, tc := range []struct {
		name    string
		a       *cri.Addresses
		pod     *corev1.Pod
		wantErr string
	}{
		{"no runtime", nil, p("uid-host"), "no container runtime to ask the pod's address"},
		{"host network, node IP unknown", &cri.Addresses{Runtime: rt}, p("uid-host"), "shares the node's network and the node's IP is not known"},
		{"host network, node IP fails", &cri.Addresses{Runtime: rt, NodeIP: func(context.Context) (string, error) { return "", errors.New("boom") }},
			p("uid-host"), "the node's IP: boom"},
		{"sandbox without an IP", &cri.Addresses{Runtime: rt}, p("uid-noip"), "the runtime reports no IP for sandbox sb-noip"},
	} {
		if _, err := tc.a.Of(ctx, tc.pod); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
		}
	}
}

func TestHostIP(t *testing.T) {
	addrs := func(a ...corev1.NodeAddress) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Addresses: a}}
	}
	for _, tc := range []struct {
		name, want, wantErr string
		node                *corev1.Node
	}{
		{"first InternalIP", "10.1.0.1", "", addrs(corev1.NodeAddress{Type: corev1.NodeHostName, Address: "n1"},
			corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "1.2.3.4"},
			corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.1.0.1"}, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.1.0.2"})},
		{"ExternalIP when no InternalIP", "1.2.3.4", "", addrs(corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "1.2.3.4"})},
		{"none", "", "node n1 has no InternalIP or ExternalIP in status.addresses", addrs(corev1.NodeAddress{Type: corev1.NodeHostName, Address: "n1"})},
	} {
		got, err := cri.HostIP(tc.node)
		if got != tc.want || tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
			t.Errorf("%s: HostIP = %q, %v, want %q, %q", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}
