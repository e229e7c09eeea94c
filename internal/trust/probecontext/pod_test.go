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

package probecontext

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func annotations(ctx string) map[string]string {
	if ctx == "" {
		return nil
	}
	return map[string]string{"enhancedliveness.io/container-probe-context": ctx}
}

func TestPodProbes(t *testing.T) {
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	pod := func(ctx string, edit func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Annotations: annotations(ctx)}, Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: always}, {Name: "setup"}},
			Containers: []corev1.Container{{Name: "web", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}},
				{Name: "log"}},
		}}
		if edit != nil {
			edit(p)
		}
		return p
	}
	const web = `{"name":"web","livenessProbe":{"httpGet":{"port":"http"},"periodSeconds":5}}`
	const proxy = `{"name":"proxy","livenessProbe":{"tcpSocket":{"port":15000}}}`
	cases := []struct {
		name     string
		pod      *corev1.Pod
		probes   string // "name:container:port" each
		problems string
		err      bool
	}{
		{name: "a container and a sidecar, named port resolved", pod: pod("["+web+","+proxy+"]", nil),
			probes: "web-0-web:web:8080,web-0-proxy:proxy:15000"},
		{name: "a container the pod does not have", pod: pod(`[{"name":"db","livenessProbe":{"tcpSocket":{"port":1}}},`+proxy+"]", nil),
			probes: "web-0-proxy:proxy:15000", problems: `db: probe context names container "db", which the pod does not have`},
		{name: "an init container that is not a sidecar", pod: pod(`[{"name":"setup","livenessProbe":{"tcpSocket":{"port":1}}}]`, nil),
			problems: `setup: probe context names container "setup", which the pod does not have`},
		{name: "a regular container of a Never pod, its sidecar still probed", pod: pod("["+web+","+proxy+"]", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
		}), probes: "web-0-proxy:proxy:15000", problems: `web: container "web" has restart policy Never`},
		{name: "a named port the container does not have", pod: pod("["+web+"]", func(p *corev1.Pod) { p.Spec.Containers[0].Ports = nil }),
			problems: `web: `},
		{name: "no probe context", pod: pod("", nil)},
		{name: "a context that does not decode", pod: pod("{", nil), err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			probes, problems, err := PodProbes(tc.pod)
			if (err != nil) != tc.err {
				t.Fatalf("err %v, want one: %v", err, tc.err)
			}
			var got []string
			for _, p := range probes {
				port := intstr.IntOrString{}
				if p.Probe.HTTPGet != nil {
					port = p.Probe.HTTPGet.Port
				} else if p.Probe.TCPSocket != nil {
					port = p.Probe.TCPSocket.Port
				}
				if p.Probe.TimeoutSeconds != 1 || p.Probe.FailureThreshold != 3 {
					t.Errorf("%s: defaults not explicit: %+v", p.Name, p.Probe)
				}
				got = append(got, fmt.Sprintf("%s:%s:%s", p.Name, p.Container, port.String()))
			}
			if strings.Join(got, ",") != tc.probes {
				t.Errorf("probes %v, want %s", got, tc.probes)
			}
			var msgs []string
			for _, p := range problems {
				msgs = append(msgs, p.Container+": "+p.Message)
			}
			if !strings.HasPrefix(strings.Join(msgs, "; "), tc.problems) || (tc.problems == "") != (len(msgs) == 0) {
				t.Errorf("problems %q, want %q", msgs, tc.problems)
			}
		})
	}
}
