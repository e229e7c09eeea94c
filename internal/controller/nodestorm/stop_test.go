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

package nodestorm_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/nodestorm"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/nodecondition"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"
)

// manager stop, as the chart's pre-delete hook runs it: no manager of the suite runs here, the
// spec plays the manager's Deployment and its pods (no kube-controller-manager in envtest).
var _ = Describe("manager stop, before an uninstall", func() {
	// nodeWith creates a Node with the kubelet's Ready condition and, unless status is empty,
	// the EnhancedLivenessNodeStorm condition.
	nodeWith := func(status corev1.ConditionStatus, reason string) string {
		obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: dt.Name("stop-node")}}
		Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(Succeed()) })
		obj.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}
		if status != "" {
			obj.Status.Conditions = append(obj.Status.Conditions, corev1.NodeCondition{Type: nodecondition.Type,
				Status: status, Reason: reason, Message: "set by the spec",
				LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))})
		}
		Expect(k8sClient.Status().Update(ctx, obj)).To(Succeed())
		return obj.Name
	}
	conditionsOf := func(node string) map[corev1.NodeConditionType]corev1.NodeCondition {
		obj := &corev1.Node{}
		Expect(k8sClient.Get(ctx, client.ObjectKey{Name: node}, obj)).To(Succeed())
		out := map[corev1.NodeConditionType]corev1.NodeCondition{}
		for _, c := range obj.Status.Conditions {
			out[c.Type] = c
		}
		return out
	}
	// manager creates the manager's Deployment (2 replicas) and one pod it selects.
	manager := func(ns string) (*appsv1.Deployment, *corev1.Pod) {
		labels := map[string]string{"control-plane": "controller-manager"}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "enhanced-liveness-operator-controller-manager"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "manager"}}}}}}
		Expect(k8sClient.Create(ctx, d)).To(Succeed())
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "manager-0", Labels: labels},
			Spec: d.Spec.Template.Spec}
		Expect(k8sClient.Create(ctx, pod)).To(Succeed())
		// Another pod of the namespace, which the Deployment does not select, is not waited for.
		other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"}, Spec: d.Spec.Template.Spec}
		Expect(k8sClient.Create(ctx, other)).To(Succeed())
		return d, pod
	}
	replicas := func(d *appsv1.Deployment) func() int32 {
		return func() int32 {
			Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
			return *d.Spec.Replicas
		}
	}

	It("scales the manager to 0, waits for its pods, then sets False every condition still True", func() {
		ns := dt.NewNamespace()
		held, ineffective := nodeWith(corev1.ConditionTrue, nodecondition.ReasonHeld), nodeWith(corev1.ConditionTrue, nodecondition.ReasonIneffective)
		cleared, never := nodeWith(corev1.ConditionFalse, nodecondition.ReasonNone), nodeWith("", "")
		d, pod := manager(ns)

		done := make(chan nodestorm.StopResult)
		go func() {
			defer GinkgoRecover()
			res, err := nodestorm.Stop(ctx, k8sClient, nodestorm.StopOptions{Manager: client.ObjectKeyFromObject(d),
				Timeout: time.Minute, Poll: 100 * time.Millisecond})
			Expect(err).NotTo(HaveOccurred())
			done <- res
		}()
		Eventually(replicas(d)).Should(BeZero())
		Consistently(done).WithTimeout(time.Second).ShouldNot(Receive(), "it waits while a manager pod is there")
		Expect(conditionsOf(held)[nodecondition.Type].Status).To(Equal(corev1.ConditionTrue), "nothing is released before the manager is gone")

		Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		var res nodestorm.StopResult
		Eventually(done).WithTimeout(30 * time.Second).Should(Receive(&res))
		Expect(res.Scaled).To(BeTrue())
		Expect(res.Remaining).To(BeEmpty())
		Expect(res.Released).To(ContainElements(held, ineffective))
		Expect(res.Released).NotTo(ContainElements(cleared), "a False condition is not written")
		Expect(res.Released).NotTo(ContainElements(never))

		for _, n := range []string{held, ineffective} {
			c := conditionsOf(n)
			Expect(c[nodecondition.Type].Status).To(Equal(corev1.ConditionFalse), n)
			Expect(c[nodecondition.Type].Reason).To(Equal(nodecondition.ReasonNotJudged), n)
			Expect(c[nodecondition.Type].Message).To(ContainSubstring("the manager was stopped (manager stop"), n)
			Expect(c[nodecondition.Type].LastTransitionTime.Time).To(BeTemporally(">", time.Now().Add(-time.Minute)), n)
			Expect(c[corev1.NodeReady].Reason).To(Equal("KubeletReady"), "the kubelet's condition is left alone")
		}
		Expect(conditionsOf(cleared)[nodecondition.Type].Message).To(Equal("set by the spec"))
		Expect(conditionsOf(never)).NotTo(HaveKey(nodecondition.Type), "a node that never had the condition gets none")
	})

	It("reports the manager pods that outlive the timeout and sets the conditions False anyway", func() {
		ns := dt.NewNamespace()
		held := nodeWith(corev1.ConditionTrue, nodecondition.ReasonHeld)
		d, pod := manager(ns)
		res, err := nodestorm.Stop(ctx, k8sClient, nodestorm.StopOptions{Manager: client.ObjectKeyFromObject(d),
			Timeout: time.Second, Poll: 100 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Scaled).To(BeTrue())
		Expect(res.Remaining).To(ConsistOf(pod.Name))
		Expect(res.Released).To(ContainElement(held))
		Expect(conditionsOf(held)[nodecondition.Type].Status).To(Equal(corev1.ConditionFalse))
	})

	It("sets the conditions False when there is no manager Deployment", func() {
		held := nodeWith(corev1.ConditionTrue, nodecondition.ReasonHeld)
		res, err := nodestorm.Stop(ctx, k8sClient, nodestorm.StopOptions{
			Manager: types.NamespacedName{Namespace: dt.NewNamespace(), Name: "enhanced-liveness-operator-controller-manager"},
			Timeout: time.Second})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Scaled).To(BeFalse())
		Expect(res.Released).To(ContainElement(held))
		Expect(conditionsOf(held)[nodecondition.Type].Reason).To(Equal(nodecondition.ReasonNotJudged))
	})
})
