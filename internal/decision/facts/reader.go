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

package facts

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// unsafe reads skip the cache's deep copy. Everything read this way is only looked at, never
// modified or kept beyond the reconcile.
var unsafeGet = &client.GetOptions{UnsafeDisableDeepCopy: ptr.To(true)}

// Reader reads what one decision, or one refresh of a policy's status, needs from the manager's
// cache, each NodePodProbe and Lease once.
type Reader struct {
	cache     client.Reader
	workloads *Workloads
	leaseNS   string
	now       time.Time
	// heartbeats say when the manager saw each daemon's Lease renewed.
	heartbeats *heartbeats
	// onsets say when the manager first saw each pod's failures.
	onsets *onsets
	// decoded keeps the pods' probes decoded from their probe contexts.
	decoded *podProbes
	// learn: the decision's reader; the workloads it resolves are learned for the watches.
	learn bool

	// settings and def are the manager's flags and its default policy.
	settings rules.Settings
	def      rules.Policy
	// evictions converts a policy's status.recentEvictions to the manager's clock (Options).
	evictions func(*policyv1alpha1.EnhancedLivenessPolicy) []policyv1alpha1.RecentEviction

	reports  map[string]nodeReport
	leases   map[string]rules.Daemon
	policies map[string][]rules.Policy
	budgets  map[string][]namespacePDB

	// api reads what the cache does not keep; placements keeps what it read (placement.go).
	api        client.Reader
	placements *placements
}

// nodeReport reads what the node says of its pods: which its NodePodProbe names and its
// NodePodProbeReport's results (each once per reader).
func (r *Reader) nodeReport(ctx context.Context, node string) (nodeReport, error) {
	if rep, ok := r.reports[node]; ok {
		return rep, nil
	}
	npp := &appsv1alpha1.NodePodProbe{}
	if err := r.cache.Get(ctx, client.ObjectKey{Name: node}, npp, unsafeGet); err != nil {
		if !apierrors.IsNotFound(err) {
			return nodeReport{}, err
		}
		npp = nil
	}
	var rep *appsv1alpha1.NodePodProbeReport
	if npp != nil {
		rep = &appsv1alpha1.NodePodProbeReport{}
		if err := r.cache.Get(ctx, client.ObjectKey{Name: node}, rep, unsafeGet); err != nil {
			if !apierrors.IsNotFound(err) {
				return nodeReport{}, err
			}
			rep = nil
		}
	}
	reporting := false
	if rep != nil {
		d, err := r.daemon(ctx, node)
		if err != nil {
			return nodeReport{}, err
		}
		reporting = d.Reporting
	}
	nr := newNodeReport(npp, rep, reporting)
	nr.decoded = r.decoded
	r.reports[node] = nr
	return nr, nil
}

// probeReport returns what the node's report says of a pod's probes.
func (r *Reader) probeReport(ctx context.Context, pod *corev1.Pod) (podReport, error) {
	if pod.Spec.NodeName == "" {
		return podReport{}, nil
	}
	rep, err := r.nodeReport(ctx, pod.Spec.NodeName)
	if err != nil {
		return podReport{}, err
	}
	return rep.pod(pod), nil
}

// Evidence is what a pod's liveness states say about it.
type Evidence struct {
	Failed int // states that are Failed
	// Suspect: a probe has started failing below its threshold. A mark taken before the node's
	// daemon started (an earlier instance left it) is no evidence.
	Suspect bool
	// Passed: a probe has succeeded and none is failing: the probe can pass on this pod. Never
	// while the node's daemon is not reporting (what its report says may be long gone).
	Passed bool
	// Since is when its earliest current run of failures began (failingSince, on its node's
	// clock); zero when none is marked.
	Since time.Time
}

// Evidence reads a pod's liveness states from its node's NodePodProbeReport.
func (r *Reader) Evidence(ctx context.Context, pod *corev1.Pod) (Evidence, error) {
	var e Evidence
	rep, err := r.probeReport(ctx, pod)
	if err != nil {
		return e, err
	}
	succeeded := rep.anyPassed()
	ps := rep.status
	if ps == nil {
		e.Passed = succeeded
		return e, nil
	}
	for i := range ps.ProbeStates {
		s := &ps.ProbeStates[i]
		if s.FailingSince != nil && (e.Since.IsZero() || s.FailingSince.Time.Before(e.Since)) {
			e.Since = s.FailingSince.Time
		}
		if e.Suspect || !s.Suspect() {
			continue
		}
		d, err := r.daemon(ctx, pod.Spec.NodeName)
		if err != nil {
			return e, err
		}
		e.Suspect = d.Started.IsZero() || !s.FailingSince.Time.Before(d.Started)
	}
	e.Failed = ps.FailedProbes()
	e.Passed = succeeded && e.Failed == 0 && !e.Suspect
	return e, nil
}

// daemon reads the node's daemon Lease; it is reporting when renewed within its duration.
func (r *Reader) daemon(ctx context.Context, node string) (rules.Daemon, error) {
	if d, ok := r.leases[node]; ok {
		return d, nil
	}
	d, err := r.readLease(ctx, node)
	if err == nil {
		r.leases[node] = d
	}
	return d, err
}

func (r *Reader) readLease(ctx context.Context, node string) (rules.Daemon, error) {
	l := &coordinationv1.Lease{}
	err := r.cache.Get(ctx, client.ObjectKey{Namespace: r.leaseNS, Name: appsv1alpha1.DaemonLeasePrefix + node}, l, unsafeGet)
	if apierrors.IsNotFound(err) {
		return rules.Daemon{}, nil
	}
	if err != nil || l.Spec.RenewTime == nil {
		return rules.Daemon{}, err
	}
	out := rules.Daemon{Renewed: l.Spec.RenewTime.Time}
	if l.Spec.AcquireTime != nil {
		out.Started = l.Spec.AcquireTime.Time
	}
	d := int32(appsv1alpha1.DaemonLeaseDuration)
	if l.Spec.LeaseDurationSeconds != nil {
		d = *l.Spec.LeaseDurationSeconds
	}
	// When the manager saw this renewal, on its own clock: the node's clock may be minutes off.
	out.Reporting = r.heartbeats.seen(node, out.Renewed).Add(time.Duration(d) * time.Second).After(r.now)
	return out, nil
}

// requests reads the pod's ContainerRecreateRequests in the cache: whether one is active, whether
// a finished one has not given the pod back yet (see isRecovering), and the finished ones' names.
// A request whose stop is in flight counts as active whatever its phase: the container may be
// stopping right now, so the pod is unavailable and gets no second request.
func (r *Reader) requests(ctx context.Context, pod *corev1.Pod) (active, recovering bool, finished []string, err error) {
	list := &appsv1alpha1.ContainerRecreateRequestList{}
	if err := r.cache.List(ctx, list, client.InNamespace(pod.Namespace),
		client.MatchingFields{managercache.CRRByPod: string(pod.UID)}, client.UnsafeDisableDeepCopy); err != nil {
		return false, false, nil, err
	}
	for i := range list.Items {
		crr := &list.Items[i]
		if crr.Active() || crr.StopInFlight() {
			active = true
			continue
		}
		finished = append(finished, crr.Name)
		recovering = recovering || isRecovering(crr, pod)
	}
	return active, recovering, finished, nil
}

// isRecovering reports whether a finished request has not given its pod back: a container it
// stopped still runs the stopped instance (a long grace period outlived the request), or the
// replacement is not running and ready yet. A request that stopped nothing holds nothing.
func isRecovering(crr *appsv1alpha1.ContainerRecreateRequest, pod *corev1.Pod) bool {
	for _, st := range crr.Status.ContainerRecreateStates {
		if !st.IsKilled {
			continue
		}
		cs := podutil.ContainerStatus(pod, st.Name)
		if cs == nil || cs.ContainerID == st.ContainerID || cs.State.Running == nil || !cs.Ready {
			return true
		}
	}
	return false
}

// Workload resolves the pod's workload (and, for the decision, remembers it for the watches).
func (r *Reader) Workload(ctx context.Context, pod *corev1.Pod) (Workload, error) {
	w, err := r.workloads.Resolve(ctx, pod)
	if err == nil && r.learn {
		r.workloads.learn(pod, w.Ref.Key(pod.Namespace))
	}
	return w, err
}

// WorkloadState builds what the storm and budget rules need of the pod's workload w.
func (r *Reader) WorkloadState(ctx context.Context, pod *corev1.Pod, w Workload) (rules.WorkloadState, error) {
	st, _, _, err := r.workloadState(ctx, pod, w)
	return st, err
}

// workloadState is WorkloadState, with the state of pod itself when it is among the workload's
// pods; pods are the workload's pods.
func (r *Reader) workloadState(ctx context.Context, pod *corev1.Pod, w Workload) (
	st rules.WorkloadState, self rules.PodState, found bool, err error) {
	pods, err := r.workloads.Pods(ctx, pod, w)
	if err != nil {
		return st, self, false, err
	}
	st.Ref = w.Ref
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.UID != w.Ref.UID {
		// The pod's own controller below the workload: one revision of its pod template.
		st.Revision, st.RevisionUID = ref.Kind+"/"+ref.Name, ref.UID
	}
	live := 0
	for _, p := range pods {
		// A finished pod (a Job's completed pod) counts nowhere: not desired, not unavailable,
		// not failing.
		if podutil.IsFinished(p) {
			continue
		}
		live++
		ps, err := r.podState(ctx, p)
		if err != nil {
			return st, self, false, err
		}
		if p.UID == pod.UID {
			self, found = ps, true
		}
		st.Pods = append(st.Pods, ps)
	}
	switch {
	case w.Desired != nil && w.Bound:
		st.Desired = min(*w.Desired, int32(live))
	case w.Desired != nil:
		st.Desired = *w.Desired
	default:
		st.Desired = int32(live)
	}
	if !podutil.IsFinished(pod) {
		// The pod asked about exists: its workload wants at least it (a scale to 0 still
		// terminating it, a cache behind the pod's creation).
		st.Desired = max(st.Desired, 1)
	}
	return st, self, found, nil
}

// podState is what the storm and budget rules see of pod p.
func (r *Reader) podState(ctx context.Context, p *corev1.Pod) (rules.PodState, error) {
	active, recovering, finished, err := r.requests(ctx, p)
	if err != nil {
		return rules.PodState{}, err
	}
	e, err := r.Evidence(ctx, p)
	if err != nil {
		return rules.PodState{}, err
	}
	var onset time.Time
	if e.Failed > 0 || e.Suspect {
		rep, err := r.probeReport(ctx, p)
		if err != nil {
			return rules.PodState{}, err
		}
		onset = r.onsets.onset(p.Spec.NodeName, rep.status)
	}
	containers, err := r.containerStates(ctx, p)
	if err != nil {
		return rules.PodState{}, err
	}
	var controller types.UID
	if ref := metav1.GetControllerOf(p); ref != nil {
		controller = ref.UID
	}
	return rules.PodState{
		UID:         p.UID,
		Ready:       podutil.IsReady(p),
		ActiveCRR:   active,
		Finished:    finished,
		Recovering:  recovering,
		Failing:     e.Failed > 0,
		Suspect:     e.Failed == 0 && e.Suspect,
		Healthy:     e.Passed,
		Terminating: p.DeletionTimestamp != nil,
		Controller:  controller,
		Onset:       onset,
		Containers:  containers,
	}, nil
}

// nodeState counts the node's enrolled pods and failing pods, and the distinct failing workloads
// only when the failing pods could make a storm (resolving workloads costs lookups). A node storm
// is a correlated onset: a pod whose failures began more than rules.StormCorrelation before
// onset (when the decided pod's began; both on the node's clock) does not count, so another
// tenant's pods that fail for good cannot keep a node storm going.
func (r *Reader) nodeState(ctx context.Context, node string, rule rules.NodeStormRule, onset time.Time) (rules.NodeState, error) {
	st := rules.NodeState{Name: node}
	list := &corev1.PodList{}
	if err := r.cache.List(ctx, list, client.MatchingFields{managercache.PodByNode: node}, client.UnsafeDisableDeepCopy); err != nil {
		return st, err
	}
	var failing []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp != nil || podutil.IsFinished(p) {
			continue
		}
		st.Pods++
		e, err := r.Evidence(ctx, p)
		if err != nil {
			return st, err
		}
		if (e.Failed > 0 || e.Suspect) && !rules.Uncorrelated(e.Since, onset) {
			failing = append(failing, p)
		}
	}
	st.FailingPods = int32(len(failing))
	if st.FailingPods <= rules.Scaled(rule.MaxFailing, st.Pods) {
		return st, nil
	}
	seen := map[rules.WorkloadKey]bool{}
	for _, p := range failing {
		w, err := r.Workload(ctx, p)
		if err != nil {
			return st, err
		}
		seen[w.Ref.Key(p.Namespace)] = true
	}
	st.FailingWorkloads = int32(len(seen))
	return st, nil
}

// governing compiles the namespace's policies (once per reader) and selects those governing the
// pod. Policies that do not compile are skipped (their Ready condition says so).
func (r *Reader) governing(ctx context.Context, pod *corev1.Pod) (rules.Governing, error) {
	compiled, ok := r.policies[pod.Namespace]
	if !ok {
		list := &policyv1alpha1.EnhancedLivenessPolicyList{}
		if err := r.cache.List(ctx, list, client.InNamespace(pod.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		compiled = make([]rules.Policy, 0, len(list.Items))
		for i := range list.Items {
			p, err := rules.Compile(&list.Items[i])
			if err != nil {
				continue
			}
			if r.evictions != nil {
				p.Evictions = r.evictions(&list.Items[i])
			}
			compiled = append(compiled, p)
		}
		r.policies[pod.Namespace] = compiled
	}
	return rules.Select(compiled, r.def, pod.Namespace, pod.Labels), nil
}
