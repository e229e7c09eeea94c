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
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/latency"
)

// What needs two real nodes: a node's trouble stays the node's, and a workload's budget holds
// across nodes and across a change of leader.

// managerLeaderElectionID is the manager's leader-election Lease (cmd/setup.go).
const managerLeaderElectionID = "bcbe718c.enhancedliveness.io"

// budgetWatch samples a workload's pods and ContainerRecreateRequests every 100 ms until stopped.
type budgetWatch struct {
	mu sync.Mutex
	// maxUnavailable is the most pods seen unavailable at once: desired − pods Ready with no
	// unfinished request, as the decision counts (a lower bound at each sample, never more).
	maxUnavailable int
	// maxInFlight is the most unfinished requests seen at once.
	maxInFlight int
	// crrNodes counts the requests by the node they were for.
	crrNodes map[string]int
	crrs     map[string]bool
	stop     chan struct{}
	done     chan struct{}
}

// watchBudget starts sampling the pods of app in ns, of which desired are wanted.
func watchBudget(ns, name string, desired int) *budgetWatch {
	w := &budgetWatch{crrNodes: map[string]int{}, crrs: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	unfinished := func() (map[string]bool, []appsv1alpha1.ContainerRecreateRequest, error) {
		var list appsv1alpha1.ContainerRecreateRequestList
		if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
			return nil, nil, err
		}
		out := map[string]bool{}
		for _, c := range list.Items {
			if !c.Status.Phase.Finished() {
				out[c.Labels[appsv1alpha1.LabelCRRPodUID]] = true
			}
		}
		return out, list.Items, nil
	}
	go func() {
		defer GinkgoRecover()
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			// A request counts when it was unfinished both before and after the pods were read:
			// then it was unfinished when they were read.
			before, _, err1 := unfinished()
			var pods corev1.PodList
			err2 := k8s.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": name})
			after, all, err3 := unfinished()
			if err1 != nil || err2 != nil || err3 != nil {
				continue
			}
			available := 0
			for _, p := range pods.Items {
				uid := string(p.UID)
				if p.DeletionTimestamp == nil && isReady(p) && (!before[uid] || !after[uid]) {
					available++
				}
			}
			w.mu.Lock()
			w.maxUnavailable = max(w.maxUnavailable, desired-available)
			w.maxInFlight = max(w.maxInFlight, len(after))
			for _, c := range all {
				if !w.crrs[c.Name] {
					w.crrs[c.Name] = true
					w.crrNodes[c.Labels[appsv1alpha1.LabelCRRNodeName]]++
				}
			}
			w.mu.Unlock()
		}
	}()
	DeferCleanup(w.end)
	return w
}

// end stops the sampling (once).
func (w *budgetWatch) end() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

func (w *budgetWatch) snapshot() (maxUnavailable, maxInFlight int, crrNodes map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxUnavailable, w.maxInFlight, maps.Clone(w.crrNodes)
}

// downAtOnce is the most of the pods' app containers that were down at one instant, each from
// its SIGTERM to its successor's start by the application's own clock (test/e2e/app logs both):
// every pod must have been restarted once.
func downAtOnce(ns string, pods []corev1.Pod) int {
	GinkgoHelper()
	var down []latency.Interval
	for _, p := range pods {
		Eventually(func() error {
			prev, err := appLog(ns, p.Name, true)
			if err != nil {
				return err
			}
			cur, err := appLog(ns, p.Name, false)
			if err != nil {
				return err
			}
			term, err := latency.AppTerminated(prev)
			if err != nil {
				// What ended the previous container, for a failure that says more than "no line".
				s := containerStatus(getPod(ns, p.Name), appContainer)
				return fmt.Errorf("%w; restarts %d, last state %+v; the previous container's log ends: %q",
					err, s.RestartCount, s.LastTerminationState.Terminated, lastLines(prev, 5))
			}
			started, err := latency.AppStarted(cur)
			if err != nil {
				return err
			}
			down = append(down, latency.Interval{From: term, To: started})
			return nil
		}).WithTimeout(20*time.Second).Should(Succeed(), "the down time of %s/%s from its logs", ns, p.Name)
	}
	return latency.MaxConcurrent(down)
}

// lastLines is the log's last n lines.
func lastLines(log string, n int) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// podsOn are the app's running pods on the node.
func podsOn(ns, name, node string) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range appPods(ns, name) {
		if p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	return out
}

var _ = Describe("a node storm on node A (two namespaces) and a hang on node B", Serial, func() {
	It("holds node A's restarts NodeStorm while node B's hang is restarted as natively", func() {
		nodeA, nodeB := twoNodes()
		stormy := map[string][]string{newNamespace("storm-a1"): {"a", "b"}, newNamespace("storm-a2"): {"c", "d"}}
		nativeA, quiet := newNamespace("storm-a-native"), newNamespace("hang-b")
		workloadsOnA := 0
		for ns, names := range stormy {
			for _, name := range names {
				// A replica on each node: the one on B passes, so A's failure is the node's.
				deployApp(ns, app{name: name, replicas: 2, probe: httpProbe(), enrolled: true, stickySickness: true, spread: true})
				Expect(podsOn(ns, name, nodeA)).To(HaveLen(1), "%s/%s is spread over both nodes", ns, name)
				deployApp(nativeA, app{name: name, replicas: 1, probe: httpProbe(), stickySickness: true, node: nodeA})
				workloadsOnA++
			}
		}
		deployApp(quiet, app{name: "web", replicas: 1, probe: httpProbe(), enrolled: true, node: nodeB})
		deployApp(quiet, app{name: "native", replicas: 1, probe: httpProbe(), node: nodeB})

		By(fmt.Sprintf("every enrolled container on %s fails at once, for good (%d workloads in 2 namespaces), and the same not enrolled", nodeA, workloadsOnA))
		for ns, names := range stormy {
			for _, name := range names {
				setSick(podsOn(ns, name, nodeA)[0], true)
				setSick(onlyPod(nativeA, name), true)
			}
		}
		Eventually(func() int {
			n := 0
			for ns, names := range stormy {
				for _, name := range names {
					n += heldPods(ns, name, "NodeStorm")
				}
			}
			return n
		}).WithTimeout(90*time.Second).Should(Equal(workloadsOnA), "every enrolled pod on %s held NodeStorm", nodeA)
		By(fmt.Sprintf("%s gets the EnhancedLivenessNodeStorm condition, for node remediation; %s does not", nodeA, nodeB))
		Eventually(nodeStormCondition(nodeA)).WithTimeout(30 * time.Second).Should(Equal(corev1.ConditionTrue))
		Expect(nodeStormCondition(nodeB)()).To(BeEmpty())

		By(fmt.Sprintf("a hang on %s: restarted through a request within threshold × period + 10 s, as natively", nodeB))
		limit := time.Duration(httpProbe().FailureThreshold*httpProbe().PeriodSeconds)*time.Second + 10*time.Second
		web, native := onlyPod(quiet, "web"), onlyPod(quiet, "native")
		tn := timeToRestart(quiet, native, 90*time.Second)
		te := timeToRestart(quiet, web, limit)
		expectRestartedByOperator(quiet, web)
		Expect(hasEvent(quiet, web.Name, "RestartHeld", "", "NodeStorm:")()).To(BeFalse(), "node A's storm held a pod of node B")

		By(fmt.Sprintf("%s's enrolled restarts stay held: at most one canary per workload, while the kubelet restarts the same pods", nodeA))
		enrolledA := int32(0)
		for ns, names := range stormy {
			for _, name := range names {
				enrolledA += restartsOf(ns, name)
				Expect(restartsOf(ns, name)).To(BeNumerically("<=", 1), "%s/%s restarted more than once (a canary)", ns, name)
			}
		}
		nativeRestarts := int32(0)
		for _, names := range stormy {
			for _, name := range names {
				nativeRestarts += restartsOf(nativeA, name)
			}
		}
		appendStormReport("node storm on %s (%d workloads, 2 namespaces) and a hang on %s: enrolled on %s %d restarts, native %d; the hang on %s restarted after %s, native after %s",
			nodeA, workloadsOnA, nodeB, nodeA, enrolledA, nativeRestarts, nodeB, te.Round(100*time.Millisecond), tn.Round(100*time.Millisecond))
		Expect(nativeRestarts).To(BeNumerically(">=", workloadsOnA), "the kubelet restarted every native pod on %s", nodeA)
		Expect(nodeStormCondition(nodeA)()).To(Equal(corev1.ConditionTrue), "the condition lasts while the storm is held, canaries included")

		// The node storm would otherwise outlive this spec and hold the next spec's hang on node A.
		By("node A's pods recover and the node storm settles, before the next spec")
		for ns, names := range stormy {
			for _, name := range names {
				p := podsOn(ns, name, nodeA)[0]
				setSick(p, false)
				Eventually(probeFailed(p.Spec.NodeName, p.UID)).WithTimeout(60 * time.Second).Should(BeFalse())
			}
		}
		time.Sleep(stormSettlePeriod + 5*time.Second)
		By(fmt.Sprintf("the storm is over: %s's condition goes False", nodeA))
		Eventually(nodeStormCondition(nodeA)).WithTimeout(60 * time.Second).Should(Equal(corev1.ConditionFalse))
		Expect(nodeStormCondition(nodeB)()).To(BeEmpty())
	})
})

// nodeStormCondition returns the status of the node's EnhancedLivenessNodeStorm condition ("":
// none).
func nodeStormCondition(node string) func() corev1.ConditionStatus {
	return func() corev1.ConditionStatus {
		if c := nodeConditionOf(node); c != nil {
			return c.Status
		}
		return ""
	}
}

var _ = Describe("a 6-replica Deployment spread over both nodes, with hangs on both", func() {
	It("restarts every hang, never more than maxUnavailable pods unavailable at once, where the kubelet restarts them all together", func() {
		nodeA, nodeB := twoNodes()
		ns, nativeNS := newNamespace("spread"), newNamespace("spread-native")
		const replicas, maxUnavailable = 6, 1
		createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(maxUnavailable)),
			MaxFailing:     ptr.To(intstr.FromInt32(5)), // 4 failing is no storm
			RateLimit:      policyv1alpha1.RateLimit{RestartsPerMinute: 120, Burst: 20},
		})
		deployApp(ns, app{name: "web", replicas: replicas, probe: httpProbe(), enrolled: true, spread: true, ready: true})
		deployApp(nativeNS, app{name: "web", replicas: replicas, probe: httpProbe(), spread: true})
		var hung, nativeHung []corev1.Pod
		for _, node := range []string{nodeA, nodeB} {
			Expect(podsOn(ns, "web", node)).To(HaveLen(replicas/2), "the replicas are spread evenly")
			hung = append(hung, podsOn(ns, "web", node)[:2]...)
			nativeHung = append(nativeHung, podsOn(nativeNS, "web", node)[:2]...)
		}
		watch := watchBudget(ns, "web", replicas)

		By("two pods hang on each node")
		for i := range hung {
			setSick(hung[i], true)
			setSick(nativeHung[i], true)
		}
		for i := range hung {
			Eventually(restartCount(ns, hung[i].Name)).WithTimeout(2*time.Minute).Should(BeNumerically(">=", 1), "%s restarted", hung[i].Name)
			Eventually(restartCount(nativeNS, nativeHung[i].Name)).WithTimeout(time.Minute).Should(BeNumerically(">=", 1))
		}
		Eventually(func() int { return len(crrsIn(ns)) }).Should(Equal(len(hung)))
		for _, c := range crrsIn(ns) {
			Eventually(func() appsv1alpha1.ContainerRecreateRequestPhase {
				Expect(k8s.Get(context.Background(), clientKey(&c), &c)).To(Succeed())
				return c.Status.Phase
			}).WithTimeout(time.Minute).Should(Equal(appsv1alpha1.RecreateSucceeded), "request %s", c.Name)
		}
		time.Sleep(time.Second) // the last restart's pod Ready again, sampled
		watch.end()

		most, inFlight, byNode := watch.snapshot()
		ours, theirs := downAtOnce(ns, hung), downAtOnce(nativeNS, nativeHung)
		appendStormReport("6 replicas spread over %s and %s, 2 hangs on each, maxUnavailable %d: enrolled at most %d unavailable (%d requests in flight, %d containers down) at once, requests by node %v; native at most %d containers down at once",
			nodeA, nodeB, maxUnavailable, most, inFlight, ours, byNode, theirs)
		Expect(byNode).To(HaveKeyWithValue(nodeA, 2), "node A's hangs restarted through requests")
		Expect(byNode).To(HaveKeyWithValue(nodeB, 2), "node B's hangs restarted through requests")
		Expect(inFlight).To(BeNumerically("<=", maxUnavailable))
		Expect(most).To(BeNumerically("<=", maxUnavailable), "pods unavailable at once beyond maxUnavailable")
		Expect(ours).To(BeNumerically("<=", maxUnavailable), "containers down at once beyond maxUnavailable")
		for _, p := range hung {
			Expect(restartCount(ns, p.Name)()).To(BeEquivalentTo(1), "%s restarted once", p.Name)
		}
	})
})

// managerLeader is the manager pod that holds the leader-election Lease. Right after the manager
// was scaled or its pods deleted (the spec before may have done so) the Lease may still name a pod
// that is gone, or none, until a new leader takes it: wait for a holder that runs.
func managerLeader() corev1.Pod {
	GinkgoHelper()
	var leader corev1.Pod
	Eventually(func(g Gomega) {
		l := &coordinationv1.Lease{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: operatorNS, Name: managerLeaderElectionID}, l)).To(Succeed())
		g.Expect(l.Spec.HolderIdentity).NotTo(BeNil(), "the Lease has a holder")
		// the identity is "<pod name>_<uuid>"
		name, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
		g.Expect(name).NotTo(BeEmpty(), "the Lease has a holder")
		p := &corev1.Pod{}
		g.Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: operatorNS, Name: name}, p)).To(Succeed(),
			"the Lease's holder %s is a manager pod", name)
		g.Expect(p.DeletionTimestamp).To(BeNil(), "the leader %s is not being deleted", name)
		g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "the leader %s runs", name)
		leader = *p
	}).WithTimeout(2 * time.Minute).Should(Succeed())
	return leader
}

var _ = Describe("the leader manager killed while restarts are in flight on the other node", Serial, func() {
	It("keeps the workload's budget across the change of leader, and restarts every hang", func() {
		leader := managerLeader()
		nodes := realNodes()
		Expect(len(nodes)).To(BeNumerically(">=", 2))
		other := nodes[slices.IndexFunc(nodes, func(n string) bool { return n != leader.Spec.NodeName })]
		By(fmt.Sprintf("the leader is %s on %s; the workload runs on %s", leader.Name, leader.Spec.NodeName, other))

		ns, nativeNS := newNamespace("failover"), newNamespace("failover-native")
		const replicas, maxUnavailable = 6, 1
		createPolicy(ns, policyv1alpha1.EnhancedLivenessPolicySpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(maxUnavailable)),
			MaxFailing:     ptr.To(intstr.FromInt32(5)), // 5 failing is no storm
			RateLimit:      policyv1alpha1.RateLimit{RestartsPerMinute: 120, Burst: 20},
		})
		deployApp(ns, app{name: "web", replicas: replicas, probe: httpProbe(), enrolled: true, node: other, ready: true})
		deployApp(nativeNS, app{name: "web", replicas: replicas, probe: httpProbe(), node: other})
		hung, nativeHung := appPods(ns, "web")[:5], appPods(nativeNS, "web")[:5]
		watch := watchBudget(ns, "web", replicas)

		By("five of the six pods hang; the first restart goes through")
		for i := range hung {
			setSick(hung[i], true)
			setSick(nativeHung[i], true)
		}
		Eventually(func() bool {
			for _, c := range crrsIn(ns) {
				if !c.Status.Phase.Finished() {
					return true
				}
			}
			return false
		}).WithTimeout(60*time.Second).WithPolling(50*time.Millisecond).Should(BeTrue(), "a restart in flight")

		By(fmt.Sprintf("killing the leader's manager process on %s (SIGKILL: it cannot hand the lease over)", leader.Spec.NodeName))
		managerID := containerStatus(&leader, "manager").ContainerID
		if managerID == "" {
			managerID = leader.Status.ContainerStatuses[0].ContainerID
		}
		_, id, _ := strings.Cut(managerID, "://")
		out, err := nodeCtr(leader.Spec.NodeName, "tasks", "kill", "--signal", "SIGKILL", id)
		Expect(err).NotTo(HaveOccurred(), out)
		Eventually(func() int32 {
			return getPod(operatorNS, leader.Name).Status.ContainerStatuses[0].RestartCount
		}).WithTimeout(60*time.Second).Should(BeNumerically(">", leader.Status.ContainerStatuses[0].RestartCount),
			"the killed manager container was restarted")

		By("every hang is restarted, one at a time, under whichever manager leads")
		for _, p := range hung {
			Eventually(restartCount(ns, p.Name)).WithTimeout(3*time.Minute).Should(BeNumerically(">=", 1), "%s restarted", p.Name)
		}
		for _, p := range nativeHung {
			Eventually(restartCount(nativeNS, p.Name)).WithTimeout(time.Minute).Should(BeNumerically(">=", 1))
		}
		time.Sleep(2 * time.Second) // the last restart's pod Ready again, sampled
		watch.end()
		most, inFlight, byNode := watch.snapshot()
		ours, theirs := downAtOnce(ns, hung), downAtOnce(nativeNS, nativeHung)
		newLeader := managerLeader()
		appendStormReport("leader %s on %s killed with restarts in flight on %s (6 replicas, 5 hangs, maxUnavailable %d): enrolled at most %d unavailable (%d requests in flight, %d containers down) at once, requests by node %v, leader now %s; native at most %d containers down at once",
			leader.Name, leader.Spec.NodeName, other, maxUnavailable, most, inFlight, ours, byNode, newLeader.Name, theirs)
		Expect(inFlight).To(BeNumerically("<=", maxUnavailable))
		Expect(most).To(BeNumerically("<=", maxUnavailable), "pods unavailable at once beyond maxUnavailable")
		Expect(ours).To(BeNumerically("<=", maxUnavailable), "containers down at once beyond maxUnavailable")
		Expect(byNode).To(Equal(map[string]int{other: len(hung)}), "one request per hang, none twice")
	})
})
