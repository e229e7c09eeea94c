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
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func validConfig() Config {
	return Config{
		Name: DefaultName, Namespace: "enhanced-liveness-system", ServiceAccount: DefaultName,
		Image: "example.org/elo:v1", MetricsPort: DefaultMetricsPort, HealthPort: DefaultHealthPort,
		Resources: DefaultResources(),
	}
}

func TestValidate(t *testing.T) {
	const endpointErr = "CRI endpoint"
	cases := []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{name: "valid", mutate: func(*Config) {}},
		{name: "no image", mutate: func(c *Config) { c.Image = "" }, wantErr: "image is empty"},
		{name: "no namespace", mutate: func(c *Config) { c.Namespace = "" }, wantErr: "namespace is empty"},
		{name: "no name", mutate: func(c *Config) { c.Name = "" }, wantErr: "name is empty"},
		{name: "no service account", mutate: func(c *Config) { c.ServiceAccount = "" }, wantErr: "service account is empty"},
		{name: "port zero", mutate: func(c *Config) { c.MetricsPort = 0 }, wantErr: "out of range"},
		{name: "port too high", mutate: func(c *Config) { c.HealthPort = 70000 }, wantErr: "out of range"},
		{name: "same ports", mutate: func(c *Config) { c.HealthPort = c.MetricsPort }, wantErr: "are equal"},
		{name: "CRI endpoint", mutate: func(c *Config) { c.CRIEndpoint = "unix:///run/k3s/containerd/containerd.sock" }},
		{name: "CRI endpoint not unix", mutate: func(c *Config) { c.CRIEndpoint = "tcp://1.2.3.4:1" }, wantErr: endpointErr},
		{name: "CRI endpoint relative", mutate: func(c *Config) { c.CRIEndpoint = "unix://run/x.sock" }, wantErr: endpointErr},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.mutate(&c)
			err := c.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	c := validConfig()
	c.ExtraArgs = []string{"--zap-log-level=debug"}
	ds := Build(c)
	pod := ds.Spec.Template.Spec
	ctr := pod.Containers[0]

	checks := []struct {
		name string
		ok   bool
	}{
		{"name and namespace", ds.Name == DefaultName && ds.Namespace == "enhanced-liveness-system"},
		{"managed-by label", ds.Labels["app.kubernetes.io/managed-by"] == ManagedByValue},
		{"selector matches template", labels.SelectorFromSet(ds.Spec.Selector.MatchLabels).Matches(labels.Set(ds.Spec.Template.Labels))},
		{"managed selector matches", ManagedSelector().Matches(labels.Set(ds.Labels))},
		{"rolling update", ds.Spec.UpdateStrategy.Type == appsv1.RollingUpdateDaemonSetStrategyType && ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable != nil},
		{"tolerates every taint", len(pod.Tolerations) == 1 && pod.Tolerations[0].Operator == corev1.TolerationOpExists && pod.Tolerations[0].Key == "" && pod.Tolerations[0].Effect == ""},
		{"host network", pod.HostNetwork && pod.DNSPolicy == corev1.DNSClusterFirstWithHostNet},
		{"priority class", pod.PriorityClassName == "system-node-critical"},
		{"service account", pod.ServiceAccountName == DefaultName},
		{"image", ctr.Image == c.Image && ctr.ImagePullPolicy == corev1.PullIfNotPresent},
		{"command", len(ctr.Command) == 1 && ctr.Command[0] == "/daemon"},
		{"ports in args", contains(ctr.Args, "--metrics-bind-address=:10290") && contains(ctr.Args, "--health-probe-bind-address=:10291")},
		{"extra args", contains(ctr.Args, c.ExtraArgs[0])},
		{"node name from downward API", envField(ctr, "NODE_NAME") == "spec.nodeName"},
		{"namespace from downward API", envField(ctr, "POD_NAMESPACE") == "metadata.namespace"},
		{"resources", !ctr.Resources.Requests.Cpu().IsZero() && !ctr.Resources.Limits.Memory().IsZero()},
		{"no privilege", !*ctr.SecurityContext.Privileged && !*ctr.SecurityContext.AllowPrivilegeEscalation},
		{"drops all capabilities", len(ctr.SecurityContext.Capabilities.Drop) == 1 && ctr.SecurityContext.Capabilities.Drop[0] == "ALL" && len(ctr.SecurityContext.Capabilities.Add) == 0},
		{"read-only root", *ctr.SecurityContext.ReadOnlyRootFilesystem},
		{"seccomp", pod.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault},
		{"probes on health port", ctr.LivenessProbe.HTTPGet.Port.IntVal == DefaultHealthPort && ctr.ReadinessProbe.HTTPGet.Path == "/readyz"},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("%s: not as expected", ch.name)
		}
	}

	// Only the CRI socket directories come from the host, and read-only.
	if len(pod.Volumes) != len(CRISocketDirs) {
		t.Fatalf("volumes = %d, want %d", len(pod.Volumes), len(CRISocketDirs))
	}
	for i, v := range pod.Volumes {
		if v.HostPath == nil || v.HostPath.Path != CRISocketDirs[i].Path {
			t.Errorf("volume %s is not the host path %s", v.Name, CRISocketDirs[i].Path)
		}
		m := ctr.VolumeMounts[i]
		if m.Name != v.Name || !m.ReadOnly || m.MountPath != CRISocketDirs[i].Path {
			t.Errorf("mount %+v is not a read-only mount of %s", m, v.Name)
		}
	}
}

func TestBuildCRIEndpoint(t *testing.T) {
	cases := []struct {
		endpoint  string
		wantMount string // extra host directory mounted, "" for none
	}{
		{endpoint: ""},
		{endpoint: "unix:///run/containerd/containerd.sock"},
		{endpoint: "unix:///run/k3s/containerd/containerd.sock", wantMount: "/run/k3s/containerd"},
	}
	for _, tc := range cases {
		c := validConfig()
		c.CRIEndpoint = tc.endpoint
		pod := Build(c).Spec.Template.Spec
		ctr := pod.Containers[0]
		if got := contains(ctr.Args, "--cri-endpoint="+tc.endpoint); got != (tc.endpoint != "") {
			t.Errorf("%q: --cri-endpoint passed = %v", tc.endpoint, got)
		}
		want := len(CRISocketDirs)
		if tc.wantMount != "" {
			want++
		}
		if len(pod.Volumes) != want || len(ctr.VolumeMounts) != want {
			t.Fatalf("%q: %d volumes, %d mounts, want %d", tc.endpoint, len(pod.Volumes), len(ctr.VolumeMounts), want)
		}
		if tc.wantMount != "" {
			last := ctr.VolumeMounts[want-1]
			if last.MountPath != tc.wantMount || !last.ReadOnly || pod.Volumes[want-1].HostPath.Path != tc.wantMount {
				t.Errorf("%q: extra mount %+v", tc.endpoint, last)
			}
		}
	}
}

func TestBuildPullPolicy(t *testing.T) {
	c := validConfig()
	c.ImagePullPolicy = corev1.PullAlways
	if got := Build(c).Spec.Template.Spec.Containers[0].ImagePullPolicy; got != corev1.PullAlways {
		t.Fatalf("pull policy = %s, want Always", got)
	}
}

func contains(s []string, v string) bool { return slices.Contains(s, v) }

func envField(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			return e.ValueFrom.FieldRef.FieldPath
		}
	}
	return ""
}
