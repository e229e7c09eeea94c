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

// Package decisiontest is what the envtest suites of the decision's controllers share
// (internal/controller/{restart,policystatus,nodestorm,unprobed}): the control plane they start,
// the manager with every controller of the decision (StartManager), and the specs' fixtures, which
// play the kubelet (pod status), the node daemon (NodePodProbeReport status and its Lease) and
// kube-controller-manager (ReplicaSets and pods of Deployments), which envtest lacks.
package decisiontest

import (
	"context"
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
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/decision"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restart"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/restarthold"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

var (
	suite     *testutil.Suite
	ctx       context.Context
	cfg       *rest.Config
	k8sClient client.Client
)

// StartSuite starts one real kube-apiserver and etcd with the CRDs installed (a suite's
// BeforeSuite); the fixtures use it. Each group of specs starts the manager it needs
// (StartManager).
func StartSuite() *testutil.Suite {
	suite = testutil.StartSuite(testutil.SuiteOptions{})
	ctx, cfg, k8sClient = suite.Ctx, suite.Config, suite.Client
	return suite
}

// OpNS is the operator namespace of the specs' managers: the daemons' Leases are there.
const OpNS = "elo-system"

// How long the specs wait for what must happen, how often they look, and how long they watch that
// nothing more happens.
const (
	Wait  = 20 * time.Second
	Poll  = 25 * time.Millisecond
	Quiet = 2 * time.Second
)

// Pct is a percentage as the policy's fields take it.
func Pct(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }

var uniq atomic.Int64

// Name is a name no other spec of the suite uses.
func Name(prefix string) string { return fmt.Sprintf("%s-%d", prefix, uniq.Add(1)) }

// TestConfig is a permissive configuration: no manager-wide rate limit, generous default buckets,
// so that each spec exercises exactly the rule it is about.
func TestConfig() decision.Config {
	return decision.Config{
		RestartsEnabled: true,
		Defaults: rules.Defaults{MaxUnavailable: intstr.FromString("25%"), MaxFailing: intstr.FromString("50%"),
			RestartsPerMinute: 600, Burst: 100},
		NodeStorm:            rules.NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 3},
		OperatorNamespace:    OpNS,
		HoldRecheckInterval:  5 * time.Second,
		StatusResyncInterval: 2 * time.Second,
		Testing:              decision.Testing{NodeConditionConfirm: 300 * time.Millisecond},
	}
}

// StartManager starts a manager with the manager's own cache (internal/manager/managercache): only
// enrolled pods, stripped, and the operator namespace's Leases; newClient, when given, makes its
// client.
func StartManager(c decision.Config, newClient ...client.NewClientFunc) func() {
	opts := ctrl.Options{Cache: managercache.Options(managercache.Config{OperatorNamespace: OpNS, Strip: true})}
	for _, f := range newClient {
		opts.NewClient = f
	}
	stop, err := testutil.StartManager(ctx, cfg, opts, func(mgr ctrl.Manager) error {
		if err := managercache.AddIndexes(ctx, mgr); err != nil {
			return err
		}
		return decision.SetupWithManager(mgr, c)
	})
	Expect(err).NotTo(HaveOccurred())
	return stop
}

var opNSCreated atomic.Bool

func NewNamespace() string {
	if opNSCreated.CompareAndSwap(false, true) {
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OpNS}}))).To(Succeed())
	}
	ns := Name("ns")
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	return ns
}

// RenewLease plays the daemon's heartbeat for node at renewTime.
func RenewLease(node string, renewTime time.Time) {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: OpNS, Name: appsv1alpha1.DaemonLeasePrefix + node}}
	_, err := ctrl.CreateOrUpdate(ctx, k8sClient, l, func() error {
		l.Spec.HolderIdentity = ptr.To(node)
		l.Spec.LeaseDurationSeconds = ptr.To[int32](appsv1alpha1.DaemonLeaseDuration)
		l.Spec.RenewTime = &metav1.MicroTime{Time: renewTime}
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
}

// StartDaemon plays a daemon process that started at started: its Lease's acquireTime.
func StartDaemon(node string, started time.Time) {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: OpNS, Name: appsv1alpha1.DaemonLeasePrefix + node}}
	_, err := ctrl.CreateOrUpdate(ctx, k8sClient, l, func() error {
		l.Spec.AcquireTime = &metav1.MicroTime{Time: started}
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
}

// NewNode returns a fresh node name with a current daemon Lease.
func NewNode() string {
	n := Name("node")
	RenewLease(n, time.Now())
	return n
}

// Deployment creates a Deployment and its ReplicaSet (what kube-controller-manager would do).
func Deployment(ns, name string, replicas int32, podLabels map[string]string) *appsv1.ReplicaSet {
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

// PodOpts tune a test pod.
type PodOpts struct {
	Labels      map[string]string
	Annotations map[string]string
	Containers  []string // default: app
	Owner       *appsv1.ReplicaSet
	NotReady    bool
	Mutate      func(*corev1.Pod)
}

// ShadowLabels returns labels with the mode label of a pod admitted in Shadow mode.
func ShadowLabels(labels map[string]string) map[string]string {
	out := map[string]string{appsv1alpha1.LabelMode: appsv1alpha1.ModeShadow}
	maps.Copy(out, labels)
	return out
}

// CreatePod creates an enrolled, scheduled pod and plays the kubelet: Ready, containers running
// with containerID "containerd://<pod>-<container>-1".
func CreatePod(ns, podName, node string, o PodOpts) *corev1.Pod {
	b := testutil.NewPod(ns, podName).Enrolled().Labels(o.Labels).Annotations(o.Annotations).OnNode(node).Running("")
	if len(o.Containers) > 0 {
		b.Containers(o.Containers...)
	}
	if o.Owner != nil {
		b.ControlledBy("apps/v1", "ReplicaSet", o.Owner.Name, o.Owner.UID)
	}
	if o.NotReady {
		b.NotReady()
	}
	if o.Mutate != nil {
		b.With(o.Mutate)
	}
	return b.Create(ctx, k8sClient)
}

// ContainerID is the containerID of a pod's container instance as the fixtures play it.
var ContainerID = testutil.ContainerIDOf

// SetRunning plays the kubelet: every container running as instance generation.
func SetRunning(pod *corev1.Pod, generation int, ready bool) {
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	pod.Status = testutil.RunningStatus(pod, pod.Status.PodIP, generation, ready, time.Now())
	Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
}

// ProbeState is one reported state: pod, container, the containerID it was reported for, state.
type ProbeState struct {
	Pod         *corev1.Pod
	Container   string
	ContainerID string
	State       appsv1alpha1.ProbeState
	Failing     bool // failingSince set: started failing (below the threshold unless state is Failed)
}

// Suspect: the probe has started failing on the container's instance generation, below its threshold.
func Suspect(pod *corev1.Pod, container string, generation int) ProbeState {
	return ProbeState{pod, container, ContainerID(pod, container, generation), appsv1alpha1.ProbeSucceeded, true}
}

func Failed(pod *corev1.Pod, container string, generation int) ProbeState {
	return ProbeState{pod, container, ContainerID(pod, container, generation), appsv1alpha1.ProbeFailed, true}
}

func Succeeded(pod *corev1.Pod, container string, generation int) ProbeState {
	return ProbeState{pod, container, ContainerID(pod, container, generation), appsv1alpha1.ProbeSucceeded, false}
}

func ProbeName(pod *corev1.Pod, container string) string { return pod.Name + "-" + container }

// ReportProbes plays the webhook and the daemon: every container of pods has a probe in the pod's probe
// context, the node's NodePodProbe names pods, and
// its NodePodProbeReport (created if missing, as the manager does) lists the states, in one status
// write, as the daemon writes them: no entry for a pod given no state nor for a Succeeded state
// without a run of failures, and status.probedGeneration marking the spec as covered (every probe
// it does not list passed). Probe grace period is 7s.
//
// The node's NodePodProbe is deleted when the spec ends, so that its failures are not decided
// again by the managers of later specs (which would move the shared Prometheus counters).
func ReportProbes(node string, pods []*corev1.Pod, states ...ProbeState) {
	ReportWith(node, pods, ptr.To[int64](7), states...)
}

// NoProbeGrace reports probes without a terminationGracePeriodSeconds: the pod's applies.
var NoProbeGrace *int64

// ProbePeriodSeconds is the periodSeconds of the probes the helpers write (0: the API's 10 s).
var ProbePeriodSeconds int32

// ReportWith is report with the probes' terminationGracePeriodSeconds.
func ReportWith(node string, pods []*corev1.Pod, probeGrace *int64, states ...ProbeState) {
	WriteReport(node, pods, probeGrace, time.Now(), states...)
}

// ReportAt is report with the probes run at at: a daemon refreshing its Failed results
// (FailedRefreshInterval) on a manager whose clock is fake.
func ReportAt(node string, at time.Time, pods []*corev1.Pod, states ...ProbeState) {
	WriteReport(node, pods, ptr.To[int64](7), at, states...)
}

// CreateEmptyReport creates the node's NodePodProbeReport as the manager does: no results yet.
func CreateEmptyReport(node string) {
	GinkgoHelper()
	rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: node}}
	Expect(k8sClient.Create(ctx, rep)).To(Succeed())
	DeferCleanup(func() { Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, rep))).To(Succeed()) })
}

// SetProbeContext gives every container of pod a liveness probe in its probe context (as the pod
// webhook does), with the helpers' period and probeGrace: the decision reads a pod's probes there.
func SetProbeContext(pod *corev1.Pod, probeGrace *int64) {
	GinkgoHelper()
	entries := make([]probecontext.ContainerProbe, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		entries = append(entries, probecontext.ContainerProbe{Name: c.Name, LivenessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}},
			PeriodSeconds: ProbePeriodSeconds, TerminationGracePeriodSeconds: probeGrace}})
	}
	value, err := probecontext.Encode(entries)
	Expect(err).NotTo(HaveOccurred())
	if pod.Annotations[appsv1alpha1.AnnotationProbeContext] == value {
		return
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, appsv1alpha1.AnnotationProbeContext, value)
	Expect(k8sClient.Patch(ctx, pod, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

func WriteReport(node string, pods []*corev1.Pod, probeGrace *int64, at time.Time, states ...ProbeState) {
	npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
	DeferCleanup(func() {
		Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}))).To(Succeed())
	})
	for _, p := range pods {
		SetProbeContext(p, probeGrace)
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
		if s.State == appsv1alpha1.ProbeSucceeded && !s.Failing {
			continue
		}
		i, ok := byPod[s.Pod.UID]
		if !ok {
			i = len(results.PodProbeStatuses)
			byPod[s.Pod.UID] = i
			results.PodProbeStatuses = append(results.PodProbeStatuses,
				appsv1alpha1.PodProbeStatus{Name: s.Pod.Name, Namespace: s.Pod.Namespace, UID: s.Pod.UID})
		}
		st := appsv1alpha1.ContainerProbeState{Name: ProbeName(s.Pod, s.Container), ContainerID: s.ContainerID, State: s.State,
			Message: "probe " + string(s.State), LastProbeTime: now, LastTransitionTime: now}
		if s.Failing || s.State == appsv1alpha1.ProbeFailed {
			st.FailingSince = &now
		}
		results.PodProbeStatuses[i].ProbeStates = append(results.PodProbeStatuses[i].ProbeStates, st)
	}
	rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: node}}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(rep), rep); apierrors.IsNotFound(err) {
		CreateEmptyReport(node)
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(rep), rep)).To(Succeed())
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	rep.Status = results
	Expect(k8sClient.Status().Update(ctx, rep)).To(Succeed())
}

// CRRs lists the requests in ns.
func CRRs(ns string) []appsv1alpha1.ContainerRecreateRequest {
	list := &appsv1alpha1.ContainerRecreateRequestList{}
	Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	return list.Items
}

func CRRCount(ns string) func() int { return func() int { return len(CRRs(ns)) } }

// CRRPods returns the names of the pods with a request in ns.
func CRRPods(ns string) []string {
	list := CRRs(ns)
	out := make([]string, 0, len(list))
	for _, c := range list {
		out = append(out, c.Spec.PodName)
	}
	return out
}

// Finish plays the kubelet, the daemon and the lifecycle controller: the containers run as
// generation, then every request of the pod is Succeeded and no longer active.
func Finish(ns string, pod *corev1.Pod, generation int) {
	// The daemon reports success only once the new container runs.
	SetRunning(pod, generation, true)
	for _, c := range CRRs(ns) {
		if c.Spec.PodName != pod.Name {
			continue
		}
		c.Status.Phase = appsv1alpha1.RecreateSucceeded
		c.Status.CompletionTime = ptr.To(metav1.Now())
		Expect(k8sClient.Status().Update(ctx, &c)).To(Succeed())
	}
}

// Events returns "reason: message" of the events about a pod.
func Events(ns, podName string) []string {
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

// HeldEvents returns the pod's RestartHeld events with this hold reason.
func HeldEvents(ns, podName string, reason policyv1alpha1.HoldReason) func() []string {
	return func() []string {
		var out []string
		for _, e := range Events(ns, podName) {
			if strings.HasPrefix(e, restart.EventRestartHeld+": "+string(reason)+":") {
				out = append(out, e)
			}
		}
		return out
	}
}

func CreatePolicy(ns, polName string, mutate func(*policyv1alpha1.EnhancedLivenessPolicySpec)) *policyv1alpha1.EnhancedLivenessPolicy {
	p := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: polName}}
	p.Spec.RateLimit = policyv1alpha1.RateLimit{RestartsPerMinute: 600, Burst: 100}
	if mutate != nil {
		mutate(&p.Spec)
	}
	Expect(k8sClient.Create(ctx, p)).To(Succeed())
	return p
}

func PolicyStatus(p *policyv1alpha1.EnhancedLivenessPolicy) func() policyv1alpha1.EnhancedLivenessPolicyStatus {
	return func() policyv1alpha1.EnhancedLivenessPolicyStatus {
		got := &policyv1alpha1.EnhancedLivenessPolicy{}
		Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(p), got)).To(Succeed())
		return got.Status
	}
}

func HeldCount(st policyv1alpha1.EnhancedLivenessPolicyStatus, r policyv1alpha1.HoldReason) int64 {
	for _, h := range st.HeldByReason {
		if h.Reason == r {
			return h.Count
		}
	}
	return 0
}

// FailingFleet creates a Deployment app of n pods on node, labelled app=<app>, whose container
// app is to be reported failing (allFailed).
func FailingFleet(ns, node, app string, n int32) []*corev1.Pod {
	labels := map[string]string{"app": app}
	rs := Deployment(ns, app, n, labels)
	pods := make([]*corev1.Pod, 0, n)
	for i := range n {
		pods = append(pods, CreatePod(ns, fmt.Sprintf("%s-%d", app, i), node, PodOpts{Owner: rs, Labels: labels}))
	}
	return pods
}

// AllFailed is a Failed state of container app, first failure, for each pod.
func AllFailed(pods []*corev1.Pod) []ProbeState {
	out := make([]ProbeState, 0, len(pods))
	for _, p := range pods {
		out = append(out, Failed(p, "app", 1))
	}
	return out
}

// RestartHold reads the RestartHold of a workload's container (an empty one while there is none).
func RestartHold(ns, kind, workload, container string) func() *policyv1alpha1.RestartHold {
	group := "apps"
	if kind == "Pod" {
		group = ""
	}
	key := rules.HoldKey{Workload: rules.WorkloadKey{Namespace: ns, Group: group, Kind: kind, Name: workload}, Container: container}
	return func() *policyv1alpha1.RestartHold {
		h := &policyv1alpha1.RestartHold{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: restarthold.HoldRecordName(key)}, h); err != nil {
			Expect(client.IgnoreNotFound(err)).To(Succeed())
		}
		return h
	}
}

// RestartHolds lists the RestartHolds of ns.
func RestartHolds(ns string) func() []policyv1alpha1.RestartHold {
	return func() []policyv1alpha1.RestartHold {
		list := &policyv1alpha1.RestartHoldList{}
		Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		return list.Items
	}
}

// MakePending plays a pod the scheduler cannot place any more (or whose image never pulls):
// Pending, no container running.
func MakePending(pod *corev1.Pod) {
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
}
