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

package results

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

func TestOf(t *testing.T) {
	listing := func(uid string) appsv1alpha1.ProbeResults {
		return appsv1alpha1.ProbeResults{PodProbeStatuses: []appsv1alpha1.PodProbeStatus{{Name: "p", Namespace: "ns", UID: k8stypes.UID("u-" + uid)}}}
	}
	written := listing("report")
	written.ProbedGeneration = 1
	for _, tc := range []struct {
		name   string
		report *appsv1alpha1.ProbeResults
		want   string
	}{
		{"no report: the NodePodProbe status", nil, "u-npp"},
		{"report not written: the NodePodProbe status", &appsv1alpha1.ProbeResults{}, "u-npp"},
		{"written report", &written, "u-report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: "n1", Generation: 1}}
			npp.Status.ProbeResults = listing("npp")
			objs := []client.Object{npp}
			if tc.report != nil {
				objs = append(objs, &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: *tc.report})
			}
			c := fake.NewClientBuilder().WithScheme(testutil.Scheme()).WithObjects(objs...).Build()
			got, err := Of(context.Background(), c, "n1")
			if err != nil {
				t.Fatal(err)
			}
			if uid := string(got.Status.PodProbeStatuses[0].UID); uid != tc.want {
				t.Fatalf("results of %s, want %s", uid, tc.want)
			}
		})
	}
	if _, err := Of(context.Background(), fake.NewClientBuilder().WithScheme(testutil.Scheme()).Build(), "n1"); err == nil {
		t.Fatal("no NodePodProbe: want its NotFound error")
	}
}
