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

package restart_test

import (
	"time"

	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// An eviction that is its hold's canary is in the RestartHold before the Eviction API is called,
// as a canary restart is before its request: however slow the records' writer is, a leader
// change right after the eviction finds the canary in flight.
var _ = Describe("Decision controller, an eviction canary's record", func() {
	It("is written before the eviction", func() {
		stop := dt.StartManager(dt.TestConfig(), slowRestartHoldWrites(3*time.Second))
		defer stop()
		ns, _, a := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		Eventually(gone(a), dt.Wait, 10*time.Millisecond).Should(BeTrue(), "the pod was not evicted")
		k := dt.RestartHold(ns, "Deployment", "web", "app")().Status.Canary
		Expect(k).NotTo(BeNil(), "the pod is evicted, its canary not yet in its RestartHold")
		Expect(k.Evicted).To(BeTrue())
		Expect(k.PodUID).To(Equal(a.UID))
	})
})
