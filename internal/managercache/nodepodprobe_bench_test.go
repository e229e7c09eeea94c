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

package managercache

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// wireNodePodProbe is a node's NodePodProbe as the API server sends it to the manager's informer
// (JSON: custom resources have no protobuf): perNode pods of a few workloads, one HTTP probe each.
func wireNodePodProbe(b *testing.B, node, perNode int) []byte {
	b.Helper()
	npp := &appsv1alpha1.NodePodProbe{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "NodePodProbe"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", node), UID: types.UID(fmt.Sprintf("n-%d", node))},
	}
	for i := range perNode {
		name := fmt.Sprintf("web-%d-7c9d-%05d", i%5, node*perNode+i)
		npp.Spec.PodProbes = append(npp.Spec.PodProbes, appsv1alpha1.PodProbe{
			Name: name, Namespace: fmt.Sprintf("team-%d", i%5),
			UID: types.UID(fmt.Sprintf("4f1e6b2c-9a7d-4b1e-8c2d-%012d", node*perNode+i)),
			IP:  fmt.Sprintf("10.%d.%d.%d", node>>8&0xff, node&0xff, i),
			Probes: []appsv1alpha1.ContainerProbe{{Name: name + "-app", ContainerName: "app", Probe: corev1.Probe{
				ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080),
					Scheme: corev1.URISchemeHTTP}},
				TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
			}}},
		})
	}
	out, err := json.Marshal(npp)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkCachedNodePodProbeBytes reports the heap a cached NodePodProbe keeps per pod entry
// (retained-B/pod), decoded as the informer does, with and without StripNodePodProbe.
func BenchmarkCachedNodePodProbeBytes(b *testing.B) {
	const nodes, perNode = 500, 20
	scheme := clientgoscheme.Scheme
	if err := appsv1alpha1.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	wire := make([][]byte, nodes)
	for i := range wire {
		wire[i] = wireNodePodProbe(b, i, perNode)
	}
	for _, strip := range []bool{false, true} {
		b.Run(fmt.Sprintf("strip=%v", strip), func(b *testing.B) {
			for b.Loop() {
				kept := make([]any, nodes)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for i := range wire {
					obj, _, err := decoder.Decode(wire[i], nil, nil)
					if err != nil {
						b.Fatal(err)
					}
					kept[i] = obj
					if strip {
						if kept[i], err = StripNodePodProbe(obj); err != nil {
							b.Fatal(err)
						}
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(nodes*perNode), "retained-B/pod")
				runtime.KeepAlive(kept)
			}
		})
	}
}
