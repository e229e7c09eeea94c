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

package decision

import (
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// The specs play the kubelet (pod status), the node daemon (NodePodProbeReport status and its Lease)
// and kube-controller-manager (ReplicaSets and pods of Deployments), which envtest lacks.

const opNS = "elo-system"

var uniq atomic.Int64

func name(prefix string) string { return fmt.Sprintf("%s-%d", prefix, uniq.Add(1)) }

// testConfig is a permissive configuration: no manager-wide rate limit, generous default buckets,
// so that each spec exercises exactly the rule it is about.
func testConfig() Config {
	return Config{
		RestartsEnabled: true,
		Defaults: rules.Defaults{MaxUnavailable: intstr.FromString("25%"), MaxFailing: intstr.FromString("50%"),
			RestartsPerMinute: 600, Burst: 100},
		NodeStorm:            rules.NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 3},
		OperatorNamespace:    opNS,
		HoldRecheckInterval:  5 * time.Second,
		StatusResyncInterval: 2 * time.Second,
		nodeConditionConfirm: 300 * time.Millisecond,
	}
}

// startManager starts a manager with the manager's own cache (internal/managercache): only
// enrolled pods, stripped, and the operator namespace's Leases; newClient, when given, makes its
// client.
func startManager(c Config, newClient ...client.NewClientFunc) func() {
	opts := ctrl.Options{Cache: managercache.Options(managercache.Config{OperatorNamespace: opNS, Strip: true})}
	for _, f := range newClient {
		opts.NewClient = f
	}
	stop, err := testutil.StartManager(ctx, cfg, opts, func(mgr ctrl.Manager) error {
		if err := managercache.AddIndexes(ctx, mgr); err != nil {
			return err
		}
		return SetupWithManager(mgr, c)
	})
	Expect(err).NotTo(HaveOccurred())
	return stop
}

var opNSCreated atomic.Bool

func newNamespace() string {
	if opNSCreated.CompareAndSwap(false, true) {
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opNS}}))).To(Succeed())
	}
	ns := name("ns")
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	return ns
}

// renewLease plays the daemon's heartbeat for node at renewTime.
func renewLease(node string, renewTime time.Time) {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: appsv1alpha1.DaemonLeasePrefix + node}}
	_, err := ctrl.CreateOrUpdate(ctx, k8sClient, l, func() error {
		l.Spec.HolderIdentity = ptr.To(node)
		l.Spec.LeaseDurationSeconds = ptr.To[int32](appsv1alpha1.DaemonLeaseDuration)
		l.Spec.RenewTime = &metav1.MicroTime{Time: renewTime}
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
}

// startDaemon plays a daemon process that started at started: its Lease's acquireTime.
func startDaemon(node string, started time.Time) {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: appsv1alpha1.DaemonLeasePrefix + node}}
	_, err := ctrl.CreateOrUpdate(ctx, k8sClient, l, func() error {
		l.Spec.AcquireTime = &metav1.MicroTime{Time: started}
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
}

// newNode returns a fresh node name with a current daemon Lease.
func newNode() string {
	n := name("node")
	renewLease(n, time.Now())
	return n
}

// deployment creates a Deployment and its ReplicaSet (what kube-controller-manager would do).
func deployment(ns, name string, replicas int32, podLabels map[string]string) *appsv1.ReplicaSet {
	sel := &metav1.LabelSelector{MatchLabels: podLabels}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: sel, Template: tmpl}}
	Expect(k8sClient.Create(ctx, d)).To(Succeed())
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-5d8f7c",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: sel, Template: tmpl}}
	Expect(k8sClient.Create(ctx, rs)).To(Succeed())
	return rs
}

// podOpts tune a test pod.
type podOpts struct {
	labels      map[string]string
	annotations map[string]string
	containers  []string // default: app
	owner       *appsv1.ReplicaSet
	notReady    bool
	mutate      func(*corev1.Pod)
}

// shadowLabels returns labels with the mode label of a pod admitted in Shadow mode.
func shadowLabels(labels map[string]string) map[string]string {
	out := map[string]string{appsv1alpha1.LabelMode: appsv1alpha1.ModeShadow}
	maps.Copy(out, labels)
	return out
}

// createPod creates an enrolled, scheduled pod and plays the kubelet: Ready, containers running
// with containerID "containerd://<pod>-<container>-1".
func createPod(ns, podName, node string, o podOpts) *corev1.Pod {
	b := testutil.NewPod(ns, podName).Enrolled().Labels(o.labels).Annotations(o.annotations).OnNode(node).Running("")
	if len(o.containers) > 0 {
		b.Containers(o.containers...)
	}
	if o.owner != nil {
		b.ControlledBy("apps/v1", "ReplicaSet", o.owner.Name, o.owner.UID)
	}
	if o.notReady {
		b.NotReady()
	}
	if o.mutate != nil {
		b.With(o.mutate)
	}
	return b.Create(ctx, k8sClient)
}

var containerID = testutil.ContainerIDOf

// setRunning plays the kubelet: every container running as instance generation.
func setRunning(pod *corev1.Pod, generation int, ready bool) {
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	pod.Status = testutil.RunningStatus(pod, pod.Status.PodIP, generation, ready, time.Now())
	Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
}

// probeState is one reported state: pod, container, the containerID it was reported for, state.
type probeState struct {
	pod         *corev1.Pod
	container   string
	containerID string
	state       appsv1alpha1.ProbeState
	failing     bool // failingSince set: started failing (below the threshold unless state is Failed)
}

// suspect: the probe has started failing on the container's instance generation, below its threshold.
func suspect(pod *corev1.Pod, container string, generation int) probeState {
	return probeState{pod, container, containerID(pod, container, generation), appsv1alpha1.ProbeSucceeded, true}
}

func failed(pod *corev1.Pod, container string, generation int) probeState {
	return probeState{pod, container, containerID(pod, container, generation), appsv1alpha1.ProbeFailed, true}
}

func succeeded(pod *corev1.Pod, container string, generation int) probeState {
	return probeState{pod, container, containerID(pod, container, generation), appsv1alpha1.ProbeSucceeded, false}
}

func probeName(pod *corev1.Pod, container string) string { return pod.Name + "-" + container }

// report plays the webhook and the daemon: every container of pods has a probe in the pod's probe
// context, the node's NodePodProbe names pods, and
// its NodePodProbeReport (created if missing, as the manager does) lists the states, in one status
// write, as the daemon writes them: no entry for a pod given no state nor for a Succeeded state
// without a run of failures, and status.probedGeneration marking the spec as covered (every probe
// it does not list passed). Probe grace period is 7s.
//
// The node's NodePodProbe is deleted when the spec ends, so that its failures are not decided
// again by the managers of later specs (which would move the shared Prometheus counters).
func report(node string, pods []*corev1.Pod, states ...probeState) {
	reportWith(node, pods, ptr.To[int64](7), states...)
}

// noProbeGrace reports probes without a terminationGracePeriodSeconds: the pod's applies.
var noProbeGrace *int64

// probePeriodSeconds is the periodSeconds of the probes the helpers write (0: the API's 10 s).
var probePeriodSeconds int32

// reportWith is report with the probes' terminationGracePeriodSeconds.
func reportWith(node string, pods []*corev1.Pod, probeGrace *int64, states ...probeState) {
	writeReport(node, pods, probeGrace, time.Now(), states...)
}

// reportAt is report with the probes run at at: a daemon refreshing its Failed results
// (FailedRefreshInterval) on a manager whose clock is fake.
func reportAt(node string, at time.Time, pods []*corev1.Pod, states ...probeState) {
	writeReport(node, pods, ptr.To[int64](7), at, states...)
}

// createEmptyReport creates the node's NodePodProbeReport as the manager does: no results yet.
func createEmptyReport(node string) {
	GinkgoHelper()
	rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: node}}
	Expect(k8sClient.Create(ctx, rep)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, rep))).To(Succeed()) })
}

// setProbeContext gives every container of pod a liveness probe in its probe context (as the pod
// webhook does), with the helpers' period and probeGrace: the decision reads a pod's probes there.
func setProbeContext(pod *corev1.Pod, probeGrace *int64) {
	GinkgoHelper()
	var entries []probecontext.ContainerProbe
	for _, c := range pod.Spec.Containers {
		entries = append(entries, probecontext.ContainerProbe{Name: c.Name, LivenessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}},
			PeriodSeconds: probePeriodSeconds, TerminationGracePeriodSeconds: probeGrace}})
	}
	value, err := probecontext.Encode(entries)
	Expect(err).NotTo(HaveOccurred())
	if pod.Annotations[appsv1alpha1.AnnotationProbeContext] == value {
		return
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, appsv1alpha1.AnnotationProbeContext, value)
	Expect(k8sClient.Patch(ctx, pod, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

func writeReport(node string, pods []*corev1.Pod, probeGrace *int64, at time.Time, states ...probeState) {
	npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}))).To(Succeed())
	})
	for _, p := range pods {
		setProbeContext(p, probeGrace)
	}
	_, err := ctrl.CreateOrUpdate(ctx, k8sClient, npp, func() error {
		npp.Spec.PodProbes = nil
		for _, p := range pods {
			npp.Spec.PodProbes = append(npp.Spec.PodProbes, appsv1alpha1.PodProbe{Name: p.Name, Namespace: p.Namespace, UID: p.UID})
		}
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
	results := appsv1alpha1.ProbeResults{ProbedGeneration: npp.Generation}
	byPod := map[types.UID]int{}
	now := metav1.NewTime(at)
	for _, s := range states {
		if s.state == appsv1alpha1.ProbeSucceeded && !s.failing {
			continue
		}
		i, ok := byPod[s.pod.UID]
		if !ok {
			i = len(results.PodProbeStatuses)
			byPod[s.pod.UID] = i
			results.PodProbeStatuses = append(results.PodProbeStatuses,
				appsv1alpha1.PodProbeStatus{Name: s.pod.Name, Namespace: s.pod.Namespace, UID: s.pod.UID})
		}
		st := appsv1alpha1.ContainerProbeState{Name: probeName(s.pod, s.container), ContainerID: s.containerID, State: s.state,
			Message: "probe " + string(s.state), LastProbeTime: now, LastTransitionTime: now}
		if s.failing || s.state == appsv1alpha1.ProbeFailed {
			st.FailingSince = &now
		}
		results.PodProbeStatuses[i].ProbeStates = append(results.PodProbeStatuses[i].ProbeStates, st)
	}
	rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: node}}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(rep), rep); apierrors.IsNotFound(err) {
		createEmptyReport(node)
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(rep), rep)).To(Succeed())
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	rep.Status = results
	Expect(k8sClient.Status().Update(ctx, rep)).To(Succeed())
}

// crrs lists the requests in ns.
func crrs(ns string) []appsv1alpha1.ContainerRecreateRequest {
	list := &appsv1alpha1.ContainerRecreateRequestList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	return list.Items
}

func crrCount(ns string) func() int { return func() int { return len(crrs(ns)) } }

// crrPods returns the names of the pods with a request in ns.
func crrPods(ns string) []string {
	var out []string
	for _, c := range crrs(ns) {
		out = append(out, c.Spec.PodName)
	}
	return out
}

// finish plays the kubelet, the daemon and the lifecycle controller: the containers run as
// generation, then every request of the pod is Succeeded and no longer active.
func finish(ns string, pod *corev1.Pod, generation int) {
	// The daemon reports success only once the new container runs.
	setRunning(pod, generation, true)
	for _, c := range crrs(ns) {
		if c.Spec.PodName != pod.Name {
			continue
		}
		c.Status.Phase = appsv1alpha1.RecreateSucceeded
		c.Status.CompletionTime = ptr.To(metav1.Now())
		Expect(k8sClient.Status().Update(ctx, &c)).To(Succeed())
	}
}

// events returns "reason: message" of the events about a pod.
func events(ns, podName string) []string {
	list := &corev1.EventList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Name == podName {
			out = append(out, e.Reason+": "+e.Message)
		}
	}
	return out
}

// heldEvents returns the pod's RestartHeld events with this hold reason.
func heldEvents(ns, podName string, reason policyv1alpha1.HoldReason) func() []string {
	return func() []string {
		var out []string
		for _, e := range events(ns, podName) {
			if strings.HasPrefix(e, EventRestartHeld+": "+string(reason)+":") {
				out = append(out, e)
			}
		}
		return out
	}
}

func createPolicy(ns, polName string, mutate func(*policyv1alpha1.EnhancedLivenessPolicySpec)) *policyv1alpha1.EnhancedLivenessPolicy {
	p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: polName}}
	p.Spec.RateLimit = policyv1alpha1.RateLimit{RestartsPerMinute: 600, Burst: 100}
	if mutate != nil {
		mutate(&p.Spec)
	}
	Expect(k8sClient.Create(ctx, p)).To(Succeed())
	return p
}

func policyStatus(p *policyv1alpha1.EnhancedLivenessPolicy) func() policyv1alpha1.EnhancedLivenessPolicyStatus {
	return func() policyv1alpha1.EnhancedLivenessPolicyStatus {
		got := &policyv1alpha1.EnhancedLivenessPolicy{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
		return got.Status
	}
}

func heldCount(st policyv1alpha1.EnhancedLivenessPolicyStatus, r policyv1alpha1.HoldReason) int64 {
	for _, h := range st.HeldByReason {
		if h.Reason == r {
			return h.Count
		}
	}
	return 0
}

// failingFleet creates a Deployment app of n pods on node, labelled app=<app>, whose container
// app is to be reported failing (allFailed).
func failingFleet(ns, node, app string, n int32) []*corev1.Pod {
	labels := map[string]string{"app": app}
	rs := deployment(ns, app, n, labels)
	pods := make([]*corev1.Pod, 0, n)
	for i := range n {
		pods = append(pods, createPod(ns, fmt.Sprintf("%s-%d", app, i), node, podOpts{owner: rs, labels: labels}))
	}
	return pods
}

// allFailed is a Failed state of container app, first failure, for each pod.
func allFailed(pods []*corev1.Pod) []probeState {
	out := make([]probeState, 0, len(pods))
	for _, p := range pods {
		out = append(out, failed(p, "app", 1))
	}
	return out
}
