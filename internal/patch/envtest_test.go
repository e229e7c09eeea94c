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

package patch

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

var _ = Describe("status patch helper against the API server", func() {
	var ns string
	BeforeEach(func() {
		n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "patch-"}}
		Expect(k8sClient.Create(ctx, n)).To(Succeed())
		ns = n.Name
	})

	// create makes a request with a status, and returns a copy read back (the helper's "stale" copy
	// once another writer has written).
	create := func(status appsv1alpha1.ContainerRecreateRequestStatus) *appsv1alpha1.ContainerRecreateRequest {
		GinkgoHelper()
		r := request()
		r.Namespace = ns
		Expect(k8sClient.Create(ctx, r)).To(Succeed())
		r.Status = status
		Expect(k8sClient.Status().Update(ctx, r)).To(Succeed())
		read := &appsv1alpha1.ContainerRecreateRequest{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), read)).To(Succeed())
		return read
	}
	other := func(r *appsv1alpha1.ContainerRecreateRequest, status appsv1alpha1.ContainerRecreateRequestStatus) {
		GinkgoHelper()
		fresh := &appsv1alpha1.ContainerRecreateRequest{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), fresh)).To(Succeed())
		fresh.Status = status
		Expect(k8sClient.Status().Update(ctx, fresh)).To(Succeed())
	}
	stored := func(r *appsv1alpha1.ContainerRecreateRequest) appsv1alpha1.ContainerRecreateRequestStatus {
		GinkgoHelper()
		out := &appsv1alpha1.ContainerRecreateRequest{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(r), out)).To(Succeed())
		return out.Status
	}

	It("refuses a write from a stale copy, reads the object again, judges it again and writes on it", func() {
		mine := create(appsv1alpha1.ContainerRecreateRequestStatus{Phase: pending, Message: "old"})
		other(mine, appsv1alpha1.ContainerRecreateRequestStatus{Phase: pending, Message: "from the other writer",
			ContainerRecreateStates: []appsv1alpha1.ContainerRecreateState{{Name: "app", Phase: pending}}})
		var seen []string
		res, err := Status(ctx, k8sClient, nil, mine, toRecreating(&seen))
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(Result{Written: true, Conflicts: 1}))
		Expect(seen).To(Equal([]string{"old", "from the other writer"}))
		got := stored(mine)
		Expect(got.Phase).To(Equal(recreating))
		Expect(got.Message).To(Equal("from the other writer"), "the other writer's status is kept")
		Expect(got.ContainerRecreateStates).To(HaveLen(1))
		Expect(mine.Status.Phase).To(Equal(recreating), "the object holds what was written")
	})

	It("judges the fresh object alone: fields the fresh object leaves out are not kept from the judged copy", func() {
		mine := create(appsv1alpha1.ContainerRecreateRequestStatus{Phase: pending, Message: "old",
			ContainerRecreateStates: []appsv1alpha1.ContainerRecreateState{{Name: "app", Phase: pending, Message: "old state"}}})
		mine.Labels = map[string]string{"only-in-my-copy": "x"}
		other(mine, appsv1alpha1.ContainerRecreateRequestStatus{Phase: pending})
		var judged *appsv1alpha1.ContainerRecreateRequest
		res, err := Status(ctx, k8sClient, nil, mine, func(r *appsv1alpha1.ContainerRecreateRequest) (bool, error) {
			judged = r.DeepCopy()
			r.Status.Phase = recreating
			return true, nil
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(Result{Written: true, Conflicts: 1}))
		Expect(judged.Status.Message).To(BeEmpty())
		Expect(judged.Status.ContainerRecreateStates).To(BeEmpty())
		Expect(judged.Labels).NotTo(HaveKey("only-in-my-copy"))
	})

	It("writes nothing when the judgement of the fresh object says so", func() {
		mine := create(appsv1alpha1.ContainerRecreateRequestStatus{Phase: pending})
		other(mine, appsv1alpha1.ContainerRecreateRequestStatus{Phase: failed, Message: "failed by the manager"})
		var seen []string
		res, err := Status(ctx, k8sClient, nil, mine, toRecreating(&seen))
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(Result{Conflicts: 1}))
		Expect(stored(mine)).To(HaveField("Phase", failed))
	})

	It("sends an empty patch when asked: it proves the copy is current, and is refused when it is not", func() {
		mine := create(appsv1alpha1.ContainerRecreateRequestStatus{Phase: recreating, Message: "m"})
		rv := mine.ResourceVersion
		fence := func(r *appsv1alpha1.ContainerRecreateRequest) (bool, error) { return true, nil }
		res, err := Status(ctx, k8sClient, nil, mine, fence, Attempts(1))
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(Result{Written: true}))
		Expect(mine.ResourceVersion).To(Equal(rv), "an empty patch changes nothing")

		other(mine, appsv1alpha1.ContainerRecreateRequestStatus{Phase: recreating, Message: "newer"})
		res, err = Status(ctx, k8sClient, nil, mine, fence, Attempts(1))
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "%v", err)
		Expect(res).To(Equal(Result{Conflicts: 1}))
	})

	It("returns NotFound for a request that is gone", func() {
		mine := create(appsv1alpha1.ContainerRecreateRequestStatus{Phase: pending})
		Expect(k8sClient.Delete(ctx, mine)).To(Succeed())
		var seen []string
		_, err := Status(ctx, k8sClient, nil, mine, toRecreating(&seen))
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	})
})
