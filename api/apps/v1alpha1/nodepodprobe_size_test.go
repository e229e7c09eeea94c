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

package v1alpha1

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The shapes of a spec.podProbes entry that BenchmarkNodePodProbeSize compares with PodProbe:
// the one before 2026-12-05 (each pod's resolved probes), and names per container.
type (
	probesEntry struct {
		Name      string           `json:"name"`
		Namespace string           `json:"namespace"`
		UID       types.UID        `json:"uid"`
		IP        string           `json:"ip,omitempty"`
		Probes    []containerProbe `json:"probes"`
	}
	containerProbe struct {
		Name          string        `json:"name"`
		ContainerName string        `json:"containerName"`
		Probe         *corev1.Probe `json:"probe,omitempty"`
	}
)

// worstPods are n pods with the longest names the API server accepts (pod 253 bytes, namespace
// 63) and 64 containers of 63-byte names each, whose probes fill a probe context to its 64 KiB
// limit (one exec probe carries the command).
func worstPods(n int) []probesEntry {
	command := strings.Repeat("x", 64*1024-2048) // the context's other 63 entries and its JSON
	out := make([]probesEntry, n)
	for i := range out {
		name := fmt.Sprintf("%0*d", MaxPodNameLength, i)
		e := probesEntry{Name: name, Namespace: strings.Repeat("n", MaxNamespaceLength),
			UID: types.UID(fmt.Sprintf("6f1c9a52-2b7e-4c0e-9d55-%012d", i)), IP: "fd00:10:244:123:4567:89ab:cdef:1234"}
		for c := range MaxProbesPerPod {
			container := fmt.Sprintf("%0*d", MaxContainerNameLength, c)
			p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}},
				TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
			if c == 0 {
				p.ProbeHandler = corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", command}}}
			}
			e.Probes = append(e.Probes, containerProbe{Name: name + "-" + container, ContainerName: container, Probe: p})
		}
		out[i] = e
	}
	return out
}

// specBytes is the JSON size of a NodePodProbe whose spec.podProbes holds entries.
func specBytes(b *testing.B, entries any) float64 {
	obj := map[string]any{"apiVersion": GroupVersion.String(), "kind": "NodePodProbe",
		"metadata": metav1.ObjectMeta{Name: strings.Repeat("w", 253)}, "spec": map[string]any{"podProbes": entries}}
	data, err := json.Marshal(obj)
	if err != nil {
		b.Fatal(err)
	}
	return float64(len(data))
}

// BenchmarkNodePodProbeSize reports the JSON size of one node's NodePodProbe in the worst case
// (worstPods), for 250 pods and for the most a NodePodProbe holds (MaxPodProbesPerNode): with
// each pod's probes (the shape before 2026-12-05), with the probes' and containers' names only,
// and with the pod's names only (PodProbe). The API server refuses an object over 1.5 MiB
// (etcd's request limit; 3 MiB for the request body).
//
//	go test ./api/apps/v1alpha1 -run '^$' -bench NodePodProbeSize -benchtime 1x
func BenchmarkNodePodProbeSize(b *testing.B) {
	for _, pods := range []int{250, MaxPodProbesPerNode} {
		worst := worstPods(pods)
		names := make([]probesEntry, pods)
		podNames := make([]PodProbe, pods)
		for i, e := range worst {
			names[i] = probesEntry{Name: e.Name, Namespace: e.Namespace, UID: e.UID}
			for _, p := range e.Probes {
				names[i].Probes = append(names[i].Probes, containerProbe{Name: p.Name, ContainerName: p.ContainerName})
			}
			podNames[i] = PodProbe{Name: e.Name, Namespace: e.Namespace, UID: e.UID}
		}
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			var probes, containers, pod float64
			for b.Loop() {
				probes, containers, pod = specBytes(b, worst), specBytes(b, names), specBytes(b, podNames)
			}
			b.ReportMetric(probes/(1<<20), "MiB-probes")
			b.ReportMetric(containers/(1<<20), "MiB-container-names")
			b.ReportMetric(pod/1024, "KiB-pod-names")
		})
	}
}

// TestWorstNodePodProbeFits holds the names-only shape to its purpose: the most a NodePodProbe
// holds, with every field of every entry at its longest, stays far below the API server's limit.
func TestWorstNodePodProbeFits(t *testing.T) {
	entries := make([]PodProbe, MaxPodProbesPerNode)
	for i := range entries {
		entries[i] = worstPodProbe(t, i)
	}
	data, err := json.Marshal(NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("w", 253)},
		Spec: NodePodProbeSpec{PodProbes: entries}})
	if err != nil {
		t.Fatal(err)
	}
	if limit := 1536 * 1024 / 2; len(data) > limit {
		t.Fatalf("a full NodePodProbe with the longest names is %d bytes: more than half of etcd's 1.5 MiB (%d)", len(data), limit)
	}
}

// worstPodProbe is entry i with each field at its longest. A field of PodProbe it does not know
// fails the test: whatever an entry carries (a pod's probes, say) must be measured here first.
func worstPodProbe(t *testing.T, i int) PodProbe {
	t.Helper()
	longest := map[string]string{
		"name":      fmt.Sprintf("%0*d", MaxPodNameLength, i),
		"namespace": strings.Repeat("n", MaxNamespaceLength),
		"uid":       fmt.Sprintf("6f1c9a52-2b7e-4c0e-9d55-%012d", i),
	}
	var e PodProbe
	v := reflect.ValueOf(&e).Elem()
	for j := range v.NumField() {
		f := v.Type().Field(j)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		value, known := longest[tag]
		if !known || f.Type.Kind() != reflect.String {
			t.Fatalf("PodProbe.%s (json %q) is not measured: give its longest value in worstPodProbe", f.Name, tag)
		}
		v.Field(j).SetString(value)
	}
	return e
}
