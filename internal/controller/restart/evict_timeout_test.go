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
	"sync"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart"
	dt "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil/decisiontest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// evictionCalls watches the manager's eviction calls per namespace: how many were made and how
// many still wait for their answer. Once hung, no call is answered any more: each waits until its
// context ends, as a call to an API server that does not answer would.
type evictionCalls struct {
	mu      sync.Mutex
	made    map[string]int
	waiting map[string]int
	hung    bool
}

func newEvictionCalls() *evictionCalls {
	return &evictionCalls{made: map[string]int{}, waiting: map[string]int{}}
}

// newClient is the manager's client with its eviction calls watched.
func (e *evictionCalls) newClient(config *rest.Config, options client.Options) (client.Client, error) {
	c, err := client.NewWithWatch(config, options)
	if err != nil {
		return nil, err
	}
	return interceptor.NewClient(c, interceptor.Funcs{SubResourceCreate: e.create}), nil
}

func (e *evictionCalls) create(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
	if sub != "eviction" {
		return c.SubResource(sub).Create(ctx, obj, subObj, opts...)
	}
	ns := obj.GetNamespace()
	e.mu.Lock()
	e.made[ns]++
	e.waiting[ns]++
	hung := e.hung
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.waiting[ns]--
		e.mu.Unlock()
	}()
	if hung {
		<-ctx.Done()
		return ctx.Err()
	}
	return c.SubResource(sub).Create(ctx, obj, subObj, opts...)
}

func (e *evictionCalls) hang() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hung = true
}

func (e *evictionCalls) madeIn(ns string) func() int {
	return func() int {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.made[ns]
	}
}

func (e *evictionCalls) waitingIn(ns string) func() int {
	return func() int {
		e.mu.Lock()
		defer e.mu.Unlock()
		return e.waiting[ns]
	}
}

// An eviction call is bounded (Config.Testing.EvictTimeout): one that gets no answer in time is refused
// like any other, visibly, and holds no worker of the decision beyond its bound. The API server
// answers the eviction of a pod selected by a PodDisruptionBudget the disruption controller has
// not processed (envtest has none) with a 429 asking for a retry in 10 s, which the client obeys
// without returning: the decision sees no answer.
var _ = Describe("Decision controller, an eviction answered late or not at all", Ordered, func() {
	// timeout is several times what a restart of another pod takes while an eviction waits.
	const timeout = 5 * time.Second
	var (
		stop  func()
		calls = newEvictionCalls()
	)
	BeforeAll(func() {
		c := dt.TestConfig()
		c.Testing.EvictTimeout = timeout
		c.HoldRecheckInterval = time.Second // the held pod is decided again within quiet
		stop = dt.StartManager(c, calls.newClient)
	})
	AfterAll(func() { stop() })

	// refusedEvents returns the pod's or policy's EvictionRefused events naming no answer in time.
	refusedEvents := func(ns, obj string) func() []string {
		return withPrefix(ns, obj, restart.EventEvictionRefused+": ")
	}
	noAnswer := "was refused: no answer within " + timeout.String() +
		" (a PodDisruptionBudget not yet processed by the disruption controller is answered with a retry later)"

	It("refuses, visibly, the eviction a PodDisruptionBudget never processed keeps waiting, and restarts other pods meanwhile", func() {
		refused := promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))
		ns, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, unprocessedBudget)
		Eventually(calls.waitingIn(ns), dt.Wait, dt.Poll).Should(Equal(1), "no eviction was tried")

		By("another namespace's hang is restarted while the eviction waits for its answer")
		other, node := dt.NewNamespace(), dt.NewNode()
		dt.CreatePolicy(other, "all", nil)
		hang := dt.CreatePod(other, "hang", node, dt.PodOpts{})
		dt.ReportProbes(node, []*corev1.Pod{hang}, dt.Failed(hang, "app", 1))
		Eventually(dt.CRRPods, dt.Wait, dt.Poll).WithArguments(other).Should(ConsistOf("hang"))
		Expect(calls.waitingIn(ns)()).To(Equal(1), "the eviction was answered before the other pod's restart: nothing shows they overlapped")

		By("no answer within the bound is a refusal: event, hold, metric")
		Eventually(refusedEvents(ns, a.Name), dt.Wait, dt.Poll).Should(ContainElement(And(
			ContainSubstring("the eviction of pod "+ns+"/web-a (container app, node "), ContainSubstring(noAnswer))))
		Eventually(refusedEvents(ns, pol.Name), dt.Wait, dt.Poll).Should(ContainElement(ContainSubstring(noAnswer)))
		Expect(calls.waitingIn(ns)()).To(BeZero())
		Expect(promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))).To(Equal(refused + 1))
		Eventually(dt.HeldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective), dt.Wait, dt.Poll).Should(ContainElement(And(
			ContainSubstring("restarting it is not helping (policy "+ns+"/move); its eviction was refused at "),
			ContainSubstring(": no answer within "+timeout.String()), ContainSubstring("the next may be tried at "))))

		By("no second eviction within the breaker's window, through the held pod's rechecks")
		Consistently(calls.madeIn(ns), dt.Quiet, dt.Poll).Should(Equal(1))
		Expect(gone(a)()).To(BeFalse())
		Expect(promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))).To(Equal(refused+1), "refused again within the window")
		Expect(dt.CRRs(ns)).To(HaveLen(1), "restarted instead")

		By("what the API server answers: a 429 asking for a retry in 10 s, which the client obeys")
		raw := kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient().Post().
			Namespace(ns).Resource("pods").Name(a.Name).SubResource("eviction").
			Body(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: a.Name}}).
			MaxRetries(0).Do(ctx).Error()
		Expect(apierrors.IsTooManyRequests(raw)).To(BeTrue(), "%v", raw)
		retryAfter, _ := apierrors.SuggestsClientDelay(raw)
		Expect(retryAfter).To(BeEquivalentTo(10))
		Expect(restart.Refusal(raw)).To(ContainSubstring("The disruption budget web is still being processed by the server."))
	})

	It("refuses an eviction call that never returns once its bound is reached", func() {
		refused := promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))
		calls.hang()
		ns, pol, a := lemon(policyv1alpha1.IneffectiveEvict, false, noBudget)
		Eventually(refusedEvents(ns, a.Name), dt.Wait, dt.Poll).Should(ContainElement(ContainSubstring(noAnswer)))
		Eventually(refusedEvents(ns, pol.Name), dt.Wait, dt.Poll).Should(ContainElement(ContainSubstring(noAnswer)))
		Expect(calls.waitingIn(ns)()).To(BeZero())
		Expect(promtestutil.ToFloat64(restart.Evictions.WithLabelValues(restart.ResultRefused))).To(Equal(refused + 1))
		Eventually(dt.HeldEvents(ns, a.Name, policyv1alpha1.HoldRestartIneffective), dt.Wait, dt.Poll).Should(ContainElement(
			ContainSubstring("its eviction was refused at ")))
		Consistently(calls.madeIn(ns), dt.Quiet, dt.Poll).Should(Equal(1))
		Expect(gone(a)()).To(BeFalse())
	})
})
