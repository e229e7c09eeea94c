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
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// aheadReader plays an API server that is ahead of the manager's cache: the pods in recovered
// already report their probes Succeeded there, while the cache still shows them Failed.
type aheadReader struct {
	client.Reader
	mu        sync.Mutex
	recovered map[types.UID]bool
}

func (a *aheadReader) set(uid types.UID, recovered bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recovered[uid] = recovered
}

func (a *aheadReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := a.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	rep, ok := obj.(*appsv1alpha1.NodePodProbeReport)
	if !ok {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range rep.Status.PodProbeStatuses {
		ps := &rep.Status.PodProbeStatuses[i]
		if !a.recovered[ps.UID] {
			continue
		}
		for j := range ps.ProbeStates {
			ps.ProbeStates[j].State = appsv1alpha1.ProbeSucceeded
		}
	}
	return nil
}

var _ = Describe("Held restarts confirmed against the API server", Ordered, func() {
	var (
		stop  func()
		ahead *aheadReader
	)
	BeforeAll(func() {
		ahead = &aheadReader{Reader: k8sClient, recovered: map[types.UID]bool{}}
		c := dt.TestConfig()
		c.Testing.LiveReader = ahead
		stop = dt.StartManager(c)
	})
	AfterAll(func() { stop() })

	It("does not restart a held pod whose failure cleared before the cache saw it", func() {
		ns, node := dt.NewNamespace(), dt.NewNode()
		one := intstr.FromInt32(1)
		dt.CreatePolicy(ns, "one", func(s *policyv1alpha1.EnhancedLivenessPolicySpec) {
			s.MaxUnavailable, s.MaxFailing = &one, dt.Pct("100%")
		})
		rs := dt.Deployment(ns, "web", 3, map[string]string{"app": "web"})
		var pods []*corev1.Pod
		for i := range 3 {
			pods = append(pods, dt.CreatePod(ns, fmt.Sprintf("web-%d", i), node,
				dt.PodOpts{Owner: rs, Labels: map[string]string{"app": "web"}}))
		}
		dt.ReportProbes(node, pods, dt.Failed(pods[0], "app", 1), dt.Failed(pods[1], "app", 1), dt.Succeeded(pods[2], "app", 1))
		Eventually(dt.CRRCount(ns), dt.Wait, dt.Poll).Should(Equal(1))
		restarted, held := pods[0], pods[1]
		if dt.CRRPods(ns)[0] != restarted.Name {
			restarted, held = held, restarted
		}
		Eventually(dt.HeldEvents(ns, held.Name, policyv1alpha1.HoldMaxUnavailable), dt.Wait, dt.Poll).ShouldNot(BeEmpty())

		By("the held pod recovers in the API server, the cache lags; the restart finishes and frees the budget")
		before := testutil.ToFloat64(restart.HeldNotConfirmed)
		ahead.set(held.UID, true)
		dt.Finish(ns, restarted, 2)
		Eventually(func() float64 { return testutil.ToFloat64(restart.HeldNotConfirmed) - before }, dt.Wait, dt.Poll).
			Should(BeNumerically(">=", 1))
		Consistently(dt.CRRCount(ns), dt.Quiet, dt.Poll).Should(Equal(1))

		By("once the API server shows it still failing, the held restart is requested")
		ahead.set(held.UID, false)
		Eventually(func() bool { return slices.Contains(dt.CRRPods(ns), held.Name) },
			dt.Wait+dt.TestConfig().HoldRecheckInterval, dt.Poll).Should(BeTrue())
		Expect(dt.CRRCount(ns)()).To(Equal(2))
	})
})
