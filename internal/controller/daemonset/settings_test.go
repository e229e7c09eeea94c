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

package daemonset

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemonoptions"
)

func TestValidateExtraArgs(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "none"},
		{name: "memory limit and log level", args: []string{"--memory-limit=128Mi", "--zap-log-level=debug"}},
		{name: "single dash and a boolean", args: []string{"-enable-http2", "--metrics-secure=false"}},
		{name: "windows", args: []string{"--status-write-window=1s", "--failure-write-window=50ms"}},
		{name: "unknown flag", args: []string{"--memory-limits=1Gi"},
			wantErr: `daemon argument "--memory-limits=1Gi": the daemon has no flag --memory-limits (it has `},
		{name: "not a flag", args: []string{"128Mi"}, wantErr: `daemon argument "128Mi": want one flag, --name=value`},
		{name: "triple dash", args: []string{"---memory-limit=1"}, wantErr: "want one flag"},
		{name: "value missing", args: []string{"--cri-timeout"}, wantErr: "flag needs an argument: -cri-timeout"},
		{name: "bad value", args: []string{"--memory-limit=lots"}, wantErr: `--memory-limit "lots": must be auto, 0 or a quantity`},
		{name: "managed: CRI endpoint", args: []string{"--cri-endpoint=unix:///x.sock"},
			wantErr: "--cri-endpoint is set by the manager from the manager flag --daemon-cri-endpoint"},
		{name: "managed: metrics address", args: []string{"--metrics-bind-address=:9000"},
			wantErr: "--daemon-metrics-port"},
		{name: "managed: node name", args: []string{"--node-name=x"}, wantErr: "downward API"},
		{name: "managed: kubeconfig", args: []string{"--kubeconfig=/k"}, wantErr: "in-cluster ServiceAccount"},
		{name: "twice", args: []string{"--memory-limit=1Gi", "--memory-limit=2Gi"}, wantErr: "--memory-limit is given twice"},
		{name: "report budget", args: []string{"--report-budget-bytes=524288"}},
		{name: "report budget out of range", args: []string{"--report-budget-bytes=4096"},
			wantErr: `daemon arguments ["--report-budget-bytes=4096"]: --report-budget-bytes (4096) must be at least 65536`},
		{name: "windows together", args: []string{"--status-write-window=10ms", "--failure-write-window=50ms"},
			wantErr: "--failure-write-window (50ms)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateExtraArgs(tc.args)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// Every flag the DaemonSet sets itself is a daemon flag (or controller-runtime's --kubeconfig,
// which the daemon's binary registers globally), and Build sets the ones it names.
func TestManagedDaemonFlagsExist(t *testing.T) {
	known := daemonoptions.Names()
	for name := range ManagedDaemonFlags {
		found := name == "kubeconfig"
		for _, k := range known {
			found = found || k == name
		}
		if !found {
			t.Errorf("ManagedDaemonFlags names --%s, which the daemon does not have", name)
		}
	}
	c := validConfig()
	c.CRIEndpoint = "unix:///run/containerd/containerd.sock"
	args := strings.Join(Build(c).Spec.Template.Spec.Containers[0].Args, " ")
	for _, name := range []string{"metrics-bind-address", "health-probe-bind-address", "cri-endpoint"} {
		if !strings.Contains(args, "--"+name+"=") {
			t.Errorf("Build does not set --%s: %s", name, args)
		}
	}
}

func TestValidateResources(t *testing.T) {
	q := resource.MustParse
	cases := []struct {
		name    string
		r       corev1.ResourceRequirements
		wantErr string
	}{
		{name: "defaults", r: DefaultResources()},
		{name: "none", r: corev1.ResourceRequirements{}},
		{name: "request without limit", r: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("1")}}},
		{name: "request above limit",
			r: corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": q("1Gi")},
				Limits: corev1.ResourceList{"memory": q("256Mi")}},
			wantErr: "daemon memory request 1Gi is above its limit 256Mi"},
		{name: "zero limit", r: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("0")}},
			wantErr: "daemon cpu limit 0 is not positive"},
		{name: "negative request", r: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q("-1")}},
			wantErr: "daemon cpu request -1 is negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateResources(tc.r)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
