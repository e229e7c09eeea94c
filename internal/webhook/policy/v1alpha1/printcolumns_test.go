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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	eltestutil "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// printedPolicy is the row the API server prints for a policy (what `kubectl get elp` shows).
func printedPolicy(g Gomega, p *policyv1alpha1.EnhancedLivenessPolicy) map[string]string {
	row, err := eltestutil.PrintedRow(ctx, cfg, fmt.Sprintf("/apis/%s/namespaces/%s/enhancedlivenesspolicies/%s",
		policyv1alpha1.GroupVersion, p.Namespace, p.Name))
	g.Expect(err).NotTo(HaveOccurred())
	return row
}

// `kubectl get elp` says what is true now: the restarts held now and how long the oldest has
// been held; the totals since the policy was created stay in the status.
var _ = Describe("kubectl get elp", func() {
	It("shows the mode, the restarts held now and the oldest hold's age, not the totals", func() {
		const ns = "policy-columns"
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: policyv1alpha1.EnhancedLivenessPolicySpec{Mode: policyv1alpha1.ModeShadow}}
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		row := printedPolicy(Default, p)
		Expect(row).To(HaveKeyWithValue("Mode", "Shadow"))
		Expect(row).To(HaveKeyWithValue("Held", ""), "nothing held: an empty cell")
		Expect(row).To(HaveKeyWithValue("Oldest Hold", ""))

		held := metav1.NewTime(time.Now().Add(-5 * time.Minute))
		p.Status = policyv1alpha1.EnhancedLivenessPolicyStatus{
			RestartsRequested: 40, RestartsHeld: 300, HeldPodsTotal: 3,
			HeldPods: []policyv1alpha1.HeldPod{
				{Pod: "web-a", Container: "app", Reason: policyv1alpha1.HoldFailureStorm, Since: held},
				{Pod: "web-b", Container: "app", Reason: policyv1alpha1.HoldFailureStorm, Since: metav1.Now()},
			},
		}
		Expect(k8sClient.Status().Update(ctx, p)).To(Succeed())
		row = printedPolicy(Default, p)
		Expect(row).To(HaveKeyWithValue("Held", "3"), "held now, not the %d held since creation", p.Status.RestartsHeld)
		Expect(row["Oldest Hold"]).To(Or(Equal("5m"), Equal("5m1s"), Equal("4m59s")), "the longest-held restart's age: %v", row)
		Expect(row).NotTo(HaveKey("Restarts"), "the total of requests stays in the status")
		Expect(row).NotTo(ContainElement("300"))
	})
})
