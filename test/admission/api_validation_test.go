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

package admission

import (
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// These specs prove the CRD schemas (OpenAPI + CEL) of the apps group against the real apiserver:
// no controller or webhook runs, so what is rejected here is rejected for every client.

func validNPP(name string) *appsv1alpha1.NodePodProbe {
	return &appsv1alpha1.NodePodProbe{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1alpha1.NodePodProbeSpec{PodProbes: []appsv1alpha1.PodProbe{{
			Name: "web-0", Namespace: "default", UID: "uid-web-0",
		}}},
	}
}

func validCRR(name string) *appsv1alpha1.ContainerRecreateRequest {
	return &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{
			PodName:    "web-0",
			Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app"}},
		},
	}
}

// expectInvalid creates obj and expects a 422 whose message contains each of want.
func expectInvalid(obj client.Object, want ...string) {
	err := k8sClient.Create(ctx, obj)
	Expect(err).To(HaveOccurred(), "the apiserver accepted an invalid object")
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
	for _, w := range want {
		Expect(err.Error()).To(ContainSubstring(w))
	}
}

var _ = Describe("apps.enhancedliveness.io CRD validation", func() {
	It("accepts the samples in config/samples", func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})).To(Succeed())
		for _, f := range []string{"apps_v1alpha1_nodepodprobe.yaml", "apps_v1alpha1_containerrecreaterequest.yaml"} {
			data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "config", "samples", f))
			Expect(err).NotTo(HaveOccurred())
			var obj client.Object = &appsv1alpha1.NodePodProbe{}
			if f == "apps_v1alpha1_containerrecreaterequest.yaml" {
				obj = &appsv1alpha1.ContainerRecreateRequest{}
			}
			Expect(yaml.UnmarshalStrict(data, obj)).To(Succeed(), f)
			Expect(k8sClient.Create(ctx, obj)).To(Succeed(), f)
		}
	})

	DescribeTable("rejects an invalid NodePodProbe",
		func(mutate func(*appsv1alpha1.NodePodProbe), want ...string) {
			npp := validNPP("bad-npp")
			mutate(npp)
			expectInvalid(npp, want...)
		},
		Entry("pod entry without uid", func(n *appsv1alpha1.NodePodProbe) {
			n.Spec.PodProbes[0].UID = ""
		}, "spec.podProbes[0].uid", "should be at least 1 chars long"),
		Entry("pod entry without name", func(n *appsv1alpha1.NodePodProbe) {
			n.Spec.PodProbes[0].Name = ""
		}, "spec.podProbes[0].name", "should be at least 1 chars long"),
		Entry("pod entry with a namespace longer than a DNS label", func(n *appsv1alpha1.NodePodProbe) {
			n.Spec.PodProbes[0].Namespace = strings.Repeat("n", appsv1alpha1.MaxNamespaceLength+1)
		}, "spec.podProbes[0].namespace", "may not be more than 63 bytes"),
	)

	It("rejects an unknown probe state in a report, through the status subresource", func() {
		rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "state-report"}}
		Expect(k8sClient.Create(ctx, rep)).To(Succeed())
		rep.Status.PodProbeStatuses = []appsv1alpha1.PodProbeStatus{{
			Name: "web-0", Namespace: "default", UID: "uid-web-0",
			ProbeStates: []appsv1alpha1.ContainerProbeState{{Name: "web-0-app", State: "Broken"}},
		}}
		err := k8sClient.Status().Update(ctx, rep)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring(`Unsupported value: "Broken"`))
	})

	It("keeps no probe results in a NodePodProbe: its status has only conditions, the report holds the results", func() {
		npp := validNPP("no-results-npp")
		Expect(k8sClient.Create(ctx, npp)).To(Succeed())
		results := []byte(`{"status":{"probedGeneration":1,"probedPods":1,"failingProbes":1,"podProbeStatuses":[{"name":"web-0",` +
			`"namespace":"default","uid":"uid-web-0","probeStates":[{"name":"web-0-app","state":"Failed"}]}]}}`)
		Expect(k8sClient.Status().Patch(ctx, npp, client.RawPatch(types.MergePatchType, results))).To(Succeed())
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(appsv1alpha1.GroupVersion.WithKind("NodePodProbe"))
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(npp), got)).To(Succeed())
		status, _, err := unstructured.NestedMap(got.Object, "status")
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(BeEmpty(), "the API server drops every result field")
	})

	DescribeTable("rejects an invalid ContainerRecreateRequest",
		func(mutate func(*appsv1alpha1.ContainerRecreateRequest), want ...string) {
			crr := validCRR("bad-crr")
			mutate(crr)
			expectInvalid(crr, want...)
		},
		Entry("no podName", func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.PodName = "" },
			"spec.podName", "should be at least 1 chars long"),
		Entry("no containers", func(c *appsv1alpha1.ContainerRecreateRequest) { c.Spec.Containers = nil },
			"spec.containers", "Required value"),
		Entry("a container twice", func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.Containers = append(c.Spec.Containers, c.Spec.Containers[0])
		}, "spec.containers[1]", "Duplicate value"),
		Entry("unknown failurePolicy", func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.Strategy.FailurePolicy = "Retry"
		}, "spec.strategy.failurePolicy", `Unsupported value: "Retry"`),
		Entry("activeDeadlineSeconds below 3", func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.ActiveDeadlineSeconds = ptr.To[int64](2)
		}, "spec.activeDeadlineSeconds", "should be greater than or equal to 3"),
		Entry("negative ttlSecondsAfterFinished", func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1)
		}, "spec.ttlSecondsAfterFinished", "should be greater than or equal to 0"),
		Entry("negative minStartedSeconds", func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.Strategy.MinStartedSeconds = -5
		}, "spec.strategy.minStartedSeconds", "should be greater than or equal to 0"),
		Entry("statusContext without containerID", func(c *appsv1alpha1.ContainerRecreateRequest) {
			c.Spec.Containers[0].StatusContext = &appsv1alpha1.ContainerRecreateRequestContainerContext{}
		}, "spec.containers[0].statusContext.containerID"),
	)

	It("defaults the CRR failure policy and refuses spec changes after creation", func() {
		crr := validCRR("immutable-crr")
		Expect(k8sClient.Create(ctx, crr)).To(Succeed())
		Expect(crr.Spec.Strategy.FailurePolicy).To(Equal(appsv1alpha1.FailurePolicyFail))

		crr.Spec.Containers = append(crr.Spec.Containers, appsv1alpha1.ContainerRecreateRequestContainer{Name: "sidecar"})
		err := k8sClient.Update(ctx, crr)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("spec is immutable after creation"))

		// metadata stays writable
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(crr), crr)).To(Succeed())
		crr.Labels = map[string]string{"team": "shop"}
		Expect(k8sClient.Update(ctx, crr)).To(Succeed())
	})

	It("writes CRR status only through the status subresource", func() {
		crr := validCRR("status-crr")
		Expect(k8sClient.Create(ctx, crr)).To(Succeed())

		crr.Status.Phase = appsv1alpha1.RecreateSucceeded
		Expect(k8sClient.Update(ctx, crr)).To(Succeed())
		got := &appsv1alpha1.ContainerRecreateRequest{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(crr), got)).To(Succeed())
		Expect(got.Status.Phase).To(BeEmpty(), "status changed through the main resource")

		got.Status.Phase = appsv1alpha1.RecreateRecreating
		Expect(k8sClient.Status().Update(ctx, got)).To(Succeed())
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(crr), got)).To(Succeed())
		Expect(got.Status.Phase).To(Equal(appsv1alpha1.RecreateRecreating))
	})
	It("accepts CRR status messages of MaxMessageLength bytes, and no longer", func() {
		crr := validCRR("message-crr")
		Expect(k8sClient.Create(ctx, crr)).To(Succeed())
		full := strings.Repeat("x", appsv1alpha1.MaxMessageLength)
		crr.Status = appsv1alpha1.ContainerRecreateRequestStatus{Phase: appsv1alpha1.RecreateRecreating, Message: full,
			ContainerRecreateStates: []appsv1alpha1.ContainerRecreateState{{Name: "app", Phase: appsv1alpha1.RecreateRecreating, Message: full}}}
		Expect(k8sClient.Status().Update(ctx, crr)).To(Succeed())

		crr.Status.Message = full + "x"
		crr.Status.ContainerRecreateStates[0].Message = full + "x"
		err := k8sClient.Status().Update(ctx, crr)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(And(ContainSubstring("status.message"), ContainSubstring("status.containerRecreateStates[0].message")))
	})
})
