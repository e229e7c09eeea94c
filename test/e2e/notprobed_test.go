//go:build e2e

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

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/unprobed"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// notProbed reports whether the node's report lists a probe of the pod as NotProbed.
func notProbed(node string, uid types.UID) func() bool {
	return func() bool {
		rep := &appsv1alpha1.NodePodProbeReport{}
		if k8s.Get(context.Background(), client.ObjectKey{Name: node}, rep) != nil {
			return false
		}
		ps := rep.Status.Pod(uid)
		if ps == nil {
			return false
		}
		for _, s := range ps.ProbeStates {
			if s.State == appsv1alpha1.ProbeNotProbed {
				return true
			}
		}
		return false
	}
}

// A probe the daemon's trust gate stops running after it passed (the key that sealed its pod is
// taken out of the trust ConfigMap) is never read as passing: NotProbed in the report, counted in
// the policy's status, a LivenessNotProbed event.
var _ = Describe("an enrolled pod whose seal's key leaves the trust ConfigMap", Serial, func() {
	It("is reported NotProbed, counted in the policy's unprobedContainers, with a LivenessNotProbed event", func() {
		ns := newNamespace("notprobed")
		pol := createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{})
		deployApp(ns, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true})
		pod := onlyPod(ns, "web")
		oldKey := signingKeyID()
		Expect(oldKey).NotTo(BeEmpty())
		Eventually(func(g Gomega) {
			g.Expect(signature.SealKeyID(getPod(ns, pod.Name))).To(Equal(oldKey))
			g.Expect(nppMentions(pod.Spec.NodeName, pod.UID)).To(BeTrue())
		}).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(notProbed(pod.Spec.NodeName, pod.UID)()).To(BeFalse())

		By("rotating the signing key, then taking the old one out of the trust ConfigMap")
		Expect(k8s.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: signingSecret}})).To(Succeed())
		Eventually(signingKeyID).WithTimeout(3 * time.Minute).WithPolling(time.Second).
			ShouldNot(Or(BeEmpty(), Equal(oldKey)))
		cm := &corev1.ConfigMap{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: operatorNS, Name: signature.TrustConfigMapName}, cm)).To(Succeed())
			g.Expect(cm.Data).To(HaveKey(oldKey))
			saved := cm.Data[oldKey]
			delete(cm.Data, oldKey)
			g.Expect(k8s.Update(context.Background(), cm)).To(Succeed())
			// Pods of later specs sealed with the old key are trusted again.
			DeferCleanup(func() {
				Eventually(func() error {
					c := &corev1.ConfigMap{}
					if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(cm), c); err != nil {
						return err
					}
					c.Data[oldKey] = saved
					return k8s.Update(context.Background(), c)
				}).WithTimeout(30 * time.Second).Should(Succeed())
			})
		}).WithTimeout(30 * time.Second).Should(Succeed())

		By("the daemon stops probing the pod and says so; the manager counts it and warns")
		// A seal naming a key the daemon has not seen waits up to a minute before it is refused.
		Eventually(notProbed(pod.Spec.NodeName, pod.UID)).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(BeTrue())
		Eventually(func() int32 {
			p := &policyv1alpha1.EnhancedLivenessPolicy{}
			Expect(k8s.Get(context.Background(), clientKey(pol), p)).To(Succeed())
			return p.Status.UnprobedContainers
		}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(BeNumerically(">", 0))
		Eventually(hasEvent(ns, pod.Name, unprobed.EventLivenessNotProbed, "", "")).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(BeTrue())
	})
})
