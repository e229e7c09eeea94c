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
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// wirePod is an enrolled pod of a ReplicaSet as the API server sends it to the manager's
// informer, in protobuf: the kubelet's five conditions, signed and sealed probe context.
func wirePod(b *testing.B, i int) []byte {
	b.Helper()
	p := testutil.FullPod()
	p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	p.Name, p.UID = fmt.Sprintf("web-7c9d-%05d", i), types.UID(fmt.Sprintf("4f1e6b2c-9a7d-4b1e-8c2d-%012d", i))
	p.GenerateName = "web-7c9d-"
	p.Labels["pod-template-hash"] = "7c9d"
	p.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = "v2.k1." + strings.Repeat("s", 110)
	p.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = "v2.k1." + strings.Repeat("t", 110)
	now := metav1.Now()
	p.Status.Conditions = nil
	for _, t := range []corev1.PodConditionType{"PodReadyToStartContainers", corev1.PodInitialized, corev1.PodReady,
		corev1.ContainersReady, corev1.PodScheduled} {
		p.Status.Conditions = append(p.Status.Conditions,
			corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	p.Status.PodIP = fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff)
	s := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	var buf strings.Builder
	if err := s.Encode(p, &buf); err != nil {
		b.Fatal(err)
	}
	return []byte(buf.String())
}

// BenchmarkCachedPodBytes reports the heap a cached enrolled pod keeps after StripPod
// (retained-B/pod): the informer decodes each pod from protobuf, the transform strips it, the
// store keeps it. The field indexes and the informer's own maps are not counted.
func BenchmarkCachedPodBytes(b *testing.B) {
	const n = 10000
	s := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	wire := make([][]byte, n)
	for i := range wire {
		wire[i] = wirePod(b, i)
	}
	for b.Loop() {
		kept := make([]any, n)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range wire {
			obj, _, err := s.Decode(wire[i], nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			if kept[i], err = StripPod(obj); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "retained-B/pod")
		runtime.KeepAlive(kept)
	}
}
