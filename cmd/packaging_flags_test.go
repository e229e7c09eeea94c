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

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/certs"
)

func TestPackagingFlags(t *testing.T) {
	const envImage = "registry.example/elo:v2"
	cases := []struct {
		name    string
		env     string // RELATED_IMAGE_DAEMON
		args    []string
		wantErr string
		check   func(t *testing.T, f *packagingFlags)
	}{
		{
			name: "defaults match config/default",
			check: func(t *testing.T, f *packagingFlags) {
				o, err := f.certOptions("ns", "/certs")
				if err != nil {
					t.Fatal(err)
				}
				if o.Mode != certs.ModeSelf || o.SecretName != "enhanced-liveness-operator-webhook-server-cert" ||
					o.ServiceName != "enhanced-liveness-operator-webhook-service" ||
					o.MutatingWebhook != "enhanced-liveness-operator-mutating-webhook-configuration" ||
					o.ValidatingWebhook != "enhanced-liveness-operator-validating-webhook-configuration" {
					t.Errorf("cert options = %+v", o)
				}
				d, err := f.daemonConfig("ns")
				if err != nil {
					t.Fatal(err)
				}
				if d.Image != "" || d.ImagePullPolicy != corev1.PullIfNotPresent || d.Name != "enhanced-liveness-operator-daemon" ||
					len(d.ExtraArgs) != 0 || f.managerDeployment != "enhanced-liveness-operator-controller-manager" {
					t.Errorf("daemon config = %+v", d)
				}
				if on, err := f.monitoringEnabled(); !on || err != nil {
					t.Errorf("monitoring = %v, %v; want on by default (auto)", on, err)
				}
			},
		},
		{
			name: "monitoring off",
			args: []string{"--monitoring=off"},
			check: func(t *testing.T, f *packagingFlags) {
				if on, err := f.monitoringEnabled(); on || err != nil {
					t.Errorf("monitoring = %v, %v; want off", on, err)
				}
			},
		},
		{name: "unknown monitoring mode", args: []string{"--monitoring=on"}, wantErr: `--monitoring: must be auto or off, got "on"`},
		{
			name: "daemon image from the environment",
			env:  envImage,
			check: func(t *testing.T, f *packagingFlags) {
				if d, _ := f.daemonConfig("ns"); d.Image != envImage {
					t.Errorf("image = %q", d.Image)
				}
			},
		},
		{
			name: "flag wins over the environment, CRI endpoint passed on",
			env:  envImage,
			args: []string{"--daemon-image=registry.example/elo:v3", "--daemon-cri-endpoint=unix:///run/k3s/containerd.sock",
				"--cert-mode=olm", "--daemon-image-pull-policy=Always"},
			check: func(t *testing.T, f *packagingFlags) {
				d, _ := f.daemonConfig("ns")
				if d.Image != "registry.example/elo:v3" || d.ImagePullPolicy != corev1.PullAlways ||
					d.CRIEndpoint != "unix:///run/k3s/containerd.sock" {
					t.Errorf("daemon config = %+v", d)
				}
				if o, err := f.certOptions("ns", "/certs"); err != nil || o.Mode != certs.ModeOLM {
					t.Errorf("cert options = %+v, %v", o, err)
				}
			},
		},
		{name: "relative CRI endpoint", args: []string{"--daemon-cri-endpoint=containerd.sock"}, wantErr: "CRI endpoint"},
		{name: "unknown cert mode", args: []string{"--cert-mode=cert-manager"}, wantErr: "--cert-mode"},
		{name: "unknown pull policy", args: []string{"--daemon-image-pull-policy=Sometimes"},
			wantErr: "--daemon-image-pull-policy"},
		{name: "self mode without webhook names", args: []string{"--mutating-webhook-configuration=",
			"--validating-webhook-configuration="}, wantErr: "webhook configuration name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("RELATED_IMAGE_DAEMON", tc.env)
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			f := bindPackagingFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			_, cerr := f.certOptions("ns", "/certs")
			_, derr := f.daemonConfig("ns")
			_, merr := f.monitoringEnabled()
			if tc.wantErr != "" {
				for _, err := range []error{cerr, derr, merr} {
					if err != nil && strings.Contains(err.Error(), tc.wantErr) {
						return
					}
				}
				t.Fatalf("errors %v / %v / %v, want one containing %q", cerr, derr, merr, tc.wantErr)
			}
			tc.check(t, f)
		})
	}
}
