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
	"fmt"
	"sync"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// No namespace can use up what the decision shares: the manager-wide token bucket, the decision
// queue. A fresh hang in one namespace is decided at once whatever another one holds.
var _ = Describe("Decision controller, fair sharing", Ordered, func() {
	var (
		stop func()
		mu   sync.Mutex
		log  []restart.DecisionRecord
		// gate, when set, is called (outside the lock) after each decision, in the worker.
		gate func(restart.DecisionRecord)
	)
	BeforeAll(func() {
		c := dt.TestConfig()
		// The manager-wide bucket: 6 a minute, 4 at once.
		c.GlobalRate = rules.Rate{PerMinute: 6, Burst: 4}
		// One decision at a time: the order of the queue is the order of the decisions.
		c.MaxConcurrentReconciles = 1
		c.OnDecision = func(r restart.DecisionRecord) {
			mu.Lock()
			log = append(log, r)
			g := gate
			mu.Unlock()
			if g != nil {
				g(r)
			}
		}
		stop = dt.StartManager(c)
	})
	AfterAll(func() { stop() })

	It("restarts a fresh hang at once while another namespace's stream of failures holds the manager-wide bucket", func() {
		stream, quiet := dt.NewNamespace(), dt.NewNamespace()
		// The stream's policy would allow everything: only the manager-wide bucket limits it.
		dt.CreatePolicy(stream, "fast", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = new(intstr.FromString("100%")), new(intstr.FromString("100%"))
			s.RateLimit = policyv1alpha1.RateLimit{RestartsPerMinute: 6000, Burst: 1000}
		})
		nodeA, nodeB := dt.NewNode(), dt.NewNode()
		var failing []*corev1.Pod
		var states []dt.ProbeState
		labels := map[string]string{"app": "s"}
		rs := dt.Deployment(stream, "s", 8, labels) // one workload: no node storm
		for i := range 8 {
			p := dt.CreatePod(stream, fmt.Sprintf("s-%d", i), nodeA, dt.PodOpts{Owner: rs, Labels: labels})
			failing, states = append(failing, p), append(states, dt.Failed(p, "app", 1))
		}
		dt.ReportProbes(nodeA, failing, states...)
		Eventually(dt.CRRCount(stream), dt.Wait, dt.Poll).Should(Equal(3)) // the fourth token is kept for the others
		Eventually(func() int {
			return len(dt.HeldEvents(stream, failing[7].Name, policyv1alpha1.HoldRateLimited)()) +
				len(dt.HeldEvents(stream, failing[3].Name, policyv1alpha1.HoldRateLimited)())
		}, dt.Wait, dt.Poll).Should(BeNumerically(">", 0))

		hung := dt.CreatePod(quiet, "hung", nodeB, dt.PodOpts{})
		dt.ReportProbes(nodeB, []*corev1.Pod{hung}, dt.Failed(hung, "app", 1))
		Eventually(dt.CRRCount(quiet), 3*time.Second, dt.Poll).Should(Equal(1))
		Expect(dt.HeldEvents(quiet, hung.Name, policyv1alpha1.HoldRateLimited)()).To(BeEmpty())
	})

	It("decides a fresh hang before another namespace's backlog of held pods", func() {
		fleet, shop := dt.NewNamespace(), dt.NewNamespace()
		dt.CreatePolicy(fleet, "try", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) { s.Mode = policyv1alpha1.ModeShadow })
		nodeA, nodeB := dt.NewNode(), dt.NewNode()
		var pods []*corev1.Pod
		var states []dt.ProbeState
		for i := range 150 {
			p := dt.CreatePod(fleet, fmt.Sprintf("f-%d", i), nodeA, dt.PodOpts{Labels: dt.ShadowLabels(nil)})
			pods, states = append(pods, p), append(states, dt.Failed(p, "app", 1))
		}
		hung := dt.CreatePod(shop, "hung", nodeB, dt.PodOpts{})
		// The worker stops after the fleet's first decision until the shop's hang is queued
		// behind the rest of the fleet's.
		first, resume := make(chan struct{}), make(chan struct{})
		var once sync.Once
		mu.Lock()
		log = nil
		gate = func(r restart.DecisionRecord) {
			if r.Pod.Namespace == fleet {
				once.Do(func() { close(first); <-resume })
			}
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			gate = nil
			mu.Unlock()
		}()
		dt.ReportProbes(nodeA, pods, states...)
		Eventually(first, dt.Wait).Should(BeClosed())
		dt.ReportProbes(nodeB, []*corev1.Pod{hung}, dt.Failed(hung, "app", 1))
		time.Sleep(time.Second) // the report's watch event reaches the queue
		close(resume)
		Eventually(dt.CRRCount(shop), dt.Wait, dt.Poll).Should(Equal(1))
		mu.Lock()
		defer mu.Unlock()
		shopAt, fleetBefore := -1, 0
		for i, r := range log {
			switch {
			case r.Pod.Namespace == shop && shopAt < 0:
				shopAt = i
			case r.Pod.Namespace == fleet && shopAt < 0:
				fleetBefore++
			}
		}
		GinkgoWriter.Printf("the shop's hang was decided after %d of the fleet's %d held pods\n", fleetBefore, len(pods))
		Expect(shopAt).To(BeNumerically(">=", 0))
		// The worker was stopped after the fleet's first decision: the shop's hang comes next but
		// for the one the fleet's turn may still take.
		Expect(fleetBefore).To(BeNumerically("<=", 2), "the shop's hang waited for the fleet's backlog")
	})
})
