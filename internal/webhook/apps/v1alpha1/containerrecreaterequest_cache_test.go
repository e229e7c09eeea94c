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
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// countingReader counts the pods read through it.
type countingReader struct {
	client.Reader
	reads int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.reads++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// podReaders returns a live reader holding live and a cache holding cached (as the manager's
// cache holds it: stripped); nil leaves that side without the pod.
func podReaders(t *testing.T, live, cached *corev1.Pod) (*countingReader, *countingReader) {
	t.Helper()
	build := func(p *corev1.Pod) *countingReader {
		b := fake.NewClientBuilder().WithScheme(testutil.Scheme())
		if p != nil {
			p = p.DeepCopy()
			b = b.WithObjects(p)
		}
		return &countingReader{Reader: b.Build()}
	}
	if cached != nil {
		stripped, err := managercache.StripPod(cached.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		cached = stripped.(*corev1.Pod)
	}
	return build(live), build(cached)
}

func cachePod(mutate func(*corev1.Pod)) *corev1.Pod {
	b := testutil.NewPod("ns", "app").OnNode("node-1").
		Annotations(map[string]string{appsv1alpha1.AnnotationProbeContext: probeContext}).
		Containers("web", "worker").Running("").ContainerID("web", "containerd://w1").ContainerID("worker", "containerd://k1").
		With(func(p *corev1.Pod) { p.UID, p.Spec.TerminationGracePeriodSeconds = "uid-app", ptr.To[int64](45) })
	if mutate != nil {
		b.With(mutate)
	}
	return b.Build()
}

func namedCRR(containers map[string]string, mutate func(*appsv1alpha1.ContainerRecreateRequest)) *appsv1alpha1.ContainerRecreateRequest {
	crr := &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "r"},
		Spec:       appsv1alpha1.ContainerRecreateRequestSpec{PodName: "app"},
	}
	for name, id := range containers {
		c := appsv1alpha1.ContainerRecreateRequestContainer{Name: name}
		if id != "" {
			c.StatusContext = &appsv1alpha1.ContainerRecreateRequestContainerContext{ContainerID: id}
		}
		crr.Spec.Containers = append(crr.Spec.Containers, c)
	}
	if mutate != nil {
		mutate(crr)
	}
	return crr
}

func TestDefaulterReadsCachedPodsOnlyToAccept(t *testing.T) {
	terminating := func(p *corev1.Pod) {
		p.DeletionTimestamp, p.Finalizers = ptr.To(metav1.Now()), []string{"x"}
	}
	cases := []struct {
		name           string
		live, cached   *corev1.Pod
		crr            *appsv1alpha1.ContainerRecreateRequest
		wantLiveReads  int
		wantCacheReads int
		wantErr        string
	}{
		{name: "every instance named: the cached pod is enough",
			live: cachePod(nil), cached: cachePod(nil), crr: namedCRR(map[string]string{"web": "containerd://w1"}, nil),
			wantCacheReads: 1},
		{name: "an instance left to the webhook: the live pod",
			live: cachePod(nil), cached: cachePod(nil), crr: namedCRR(map[string]string{"web": ""}, nil),
			wantLiveReads: 1},
		{name: "not in the cache (not enrolled): the live pod",
			live: cachePod(nil), crr: namedCRR(map[string]string{"web": "containerd://w1"}, nil),
			wantCacheReads: 1, wantLiveReads: 1},
		{name: "the cached pod breaks a rule (stale): judged again on the live pod, accepted",
			live: cachePod(nil), cached: cachePod(terminating), crr: namedCRR(map[string]string{"web": "containerd://w1"}, nil),
			wantCacheReads: 1, wantLiveReads: 1},
		{name: "a rule broken on both: denied",
			live: cachePod(terminating), cached: cachePod(terminating), crr: namedCRR(map[string]string{"web": "containerd://w1"}, nil),
			wantCacheReads: 1, wantLiveReads: 1, wantErr: "the pod is terminating"},
		{name: "gone from the API server while still cached with another UID: denied",
			cached: cachePod(nil), crr: namedCRR(map[string]string{"web": "containerd://w1"}, func(r *appsv1alpha1.ContainerRecreateRequest) {
				r.Labels = map[string]string{appsv1alpha1.LabelCRRPodUID: "uid-new"}
			}),
			wantCacheReads: 1, wantLiveReads: 1, wantErr: "spec.podName: Not found"},
		{name: "grace period from a probe the cache does not keep: the live pod",
			live: cachePod(nil), cached: cachePod(nil), crr: namedCRR(map[string]string{"worker": "containerd://k1"}, nil),
			wantCacheReads: 1, wantLiveReads: 1},
		{name: "grace period set by the creator: the cached pod is enough",
			live: cachePod(nil), cached: cachePod(nil), crr: namedCRR(map[string]string{"worker": "containerd://k1"},
				func(r *appsv1alpha1.ContainerRecreateRequest) {
					r.Spec.Strategy.TerminationGracePeriodSeconds = ptr.To[int64](5)
				}),
			wantCacheReads: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			live, cache := podReaders(t, tc.live, tc.cached)
			d := &ContainerRecreateRequestDefaulter{Pods: live, PodCache: cache}
			err := d.Default(context.Background(), tc.crr)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Default: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Default = %v, want an error containing %q", err, tc.wantErr)
			}
			if live.reads != tc.wantLiveReads || cache.reads != tc.wantCacheReads {
				t.Fatalf("live reads %d, cache reads %d; want %d, %d", live.reads, cache.reads, tc.wantLiveReads, tc.wantCacheReads)
			}
			if err != nil {
				return
			}
			if got := tc.crr.Labels[appsv1alpha1.LabelCRRPodUID]; got != "uid-app" || tc.crr.Labels[appsv1alpha1.LabelCRRNodeName] != "node-1" {
				t.Fatalf("labels %v", tc.crr.Labels)
			}
			if g := tc.crr.Spec.Strategy.TerminationGracePeriodSeconds; g == nil {
				t.Fatal("grace period not defaulted")
			}
		})
	}
}

// The defaults from the cached (stripped) pod are those from the live pod.
func TestDefaultsFromCachedPodEqualLive(t *testing.T) {
	for _, named := range []map[string]string{{"web": "containerd://w1"}, {"web": "containerd://w1", "worker": "containerd://k1"}} {
		live, cache := podReaders(t, cachePod(nil), cachePod(nil))
		fromCache, fromLive := namedCRR(named, nil), namedCRR(named, nil)
		if err := (&ContainerRecreateRequestDefaulter{Pods: live, PodCache: cache}).Default(context.Background(), fromCache); err != nil {
			t.Fatal(err)
		}
		if err := (&ContainerRecreateRequestDefaulter{Pods: live}).Default(context.Background(), fromLive); err != nil {
			t.Fatal(err)
		}
		if a, b := fromCache.Spec, fromLive.Spec; *a.Strategy.TerminationGracePeriodSeconds != *b.Strategy.TerminationGracePeriodSeconds ||
			*a.ActiveDeadlineSeconds != *b.ActiveDeadlineSeconds || a.Strategy.FailurePolicy != b.Strategy.FailurePolicy {
			t.Fatalf("%v: from the cache %+v, live %+v", named, a, b)
		}
		if len(fromCache.Labels) != len(fromLive.Labels) {
			t.Fatalf("labels %v vs %v", fromCache.Labels, fromLive.Labels)
		}
		for k, v := range fromLive.Labels {
			if fromCache.Labels[k] != v {
				t.Fatalf("labels %v vs %v", fromCache.Labels, fromLive.Labels)
			}
		}
	}
}
