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

// Package facts reads the cluster for the restart decision: from the manager's cache it builds
// the Facts of one pod with failed liveness results (rules.Facts), and it resolves pods to their
// workloads (Workloads). What it reads, it only looks at.
package facts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// Options configure a Builder.
type Options struct {
	// Settings are the manager's flags the rules apply.
	Settings rules.Settings
	// Default is the default policy, for pods no EnhancedLivenessPolicy selects.
	Default rules.Policy
	// OperatorNamespace holds the daemons' Leases.
	OperatorNamespace string
	// Clock tells whether a Lease is current.
	Clock clock.PassiveClock
	// API reads what the cache does not keep, uncached: a pod's spec, its claims and their
	// volumes, for an eviction (placement.go). Nil: the cache (a cache that keeps whole pods).
	API client.Reader
	// Evictions returns a policy's status.recentEvictions, written on the API server's clock, on
	// Clock's (nil: as written).
	Evictions func(*policyv1alpha1.EnhancedLivenessPolicy) []policyv1alpha1.RecentEviction
}

// Builder reads the facts of the decision from the manager's cache.
type Builder struct {
	cache      client.Reader
	workloads  *Workloads
	opts       Options
	heartbeats *heartbeats
	onsets     *onsets
	decoded    *podProbes
	placements *placements
}

// NewBuilder returns a builder reading cache, resolving workloads with w.
func NewBuilder(cache client.Reader, w *Workloads, o Options) *Builder {
	if o.API == nil {
		o.API = cache
	}
	return &Builder{cache: cache, workloads: w, opts: o, heartbeats: newHeartbeats(o.Clock), onsets: newOnsets(o.Clock),
		decoded: newPodProbes(), placements: newPlacements()}
}

// Reader returns a reader for one refresh of a policy's status.
func (b *Builder) Reader() *Reader { return b.reader(false) }

func (b *Builder) reader(learn bool) *Reader {
	return &Reader{cache: b.cache, api: b.opts.API, placements: b.placements, workloads: b.workloads, leaseNS: b.opts.OperatorNamespace, now: b.opts.Clock.Now(),
		heartbeats: b.heartbeats, onsets: b.onsets, decoded: b.decoded, learn: learn, settings: b.opts.Settings, def: b.opts.Default,
		reports: map[string]nodeReport{}, leases: map[string]rules.Daemon{}, policies: map[string][]rules.Policy{}, budgets: map[string][]namespacePDB{},
		evictions: b.opts.Evictions}
}

// Facts reads the facts of the pod's failed liveness results, and returns the pod as the cache
// has it (nil when it is gone; only to be looked at). A pod that is gone, or not scheduled, has no
// failures. When every failure is Stale nothing more is read.
func (b *Builder) Facts(ctx context.Context, key types.NamespacedName) (*corev1.Pod, *rules.Facts, error) {
	f := &rules.Facts{Pod: key, Settings: b.opts.Settings}
	pod := &corev1.Pod{}
	if err := b.cache.Get(ctx, key, pod, unsafeGet); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, f, nil
		}
		return nil, nil, err
	}
	f.UID, f.Found, f.Terminating, f.Labels = pod.UID, true, pod.DeletionTimestamp != nil, pod.Labels
	f.RestartDisabled = pod.Annotations[appsv1alpha1.AnnotationRestartDisabled] == appsv1alpha1.TrueValue
	f.Shadow = appsv1alpha1.AdmittedInShadow(pod.Labels)
	f.Node.Name = pod.Spec.NodeName
	if pod.Spec.NodeName == "" {
		return pod, f, nil
	}
	r := b.reader(true)
	rep, err := r.nodeReport(ctx, pod.Spec.NodeName)
	if err != nil {
		return nil, nil, err
	}
	f.Failures = failures(rep, pod)
	if !slices.ContainsFunc(f.Failures, func(x rules.Failure) bool { _, stale := rules.Stale(f, x); return !stale }) {
		return pod, f, nil
	}
	if err := b.read(ctx, r, pod, f); err != nil {
		return nil, nil, err
	}
	return pod, f, nil
}

// read reads what the rules need past Stale.
func (b *Builder) read(ctx context.Context, r *Reader, pod *corev1.Pod, f *rules.Facts) error {
	var err error
	if f.Daemon, err = r.daemon(ctx, pod.Spec.NodeName); err != nil {
		return err
	}
	if f.Policies, err = r.governing(ctx, pod); err != nil {
		return err
	}
	if _, _, set := f.Policies.MaxUnavailable(0); !set {
		if f.PDBs, err = r.pdbs(ctx, pod); err != nil {
			return err
		}
	}
	w, err := r.Workload(ctx, pod)
	if err != nil {
		return err
	}
	var found bool
	if f.Workload, f.Self, found, err = r.workloadState(ctx, pod, w); err != nil {
		return err
	}
	if !found {
		if f.Self, err = r.podState(ctx, pod); err != nil {
			return err
		}
	}
	// Its siblings count toward its storms when their failures began with its own.
	f.Workload.Onset = f.Self.Onset
	self, err := r.Evidence(ctx, pod)
	if err != nil {
		return err
	}
	if f.Node, err = r.nodeState(ctx, pod.Spec.NodeName, b.opts.Settings.NodeStorm, self.Since); err != nil {
		return err
	}
	if f.Refailures, err = b.refailures(ctx, r, pod, w); err != nil {
		return err
	}
	if f.Elsewhere, err = r.elsewhere(ctx, pod, f); err != nil {
		return err
	}
	f.Placement, err = r.placement(ctx, pod, f)
	return err
}

// elsewhere counts, for each failed container, its workload's pods passing on other nodes; only
// when the governing policies evict (rules/evict.go), as it reads every pod of the workload.
func (r *Reader) elsewhere(ctx context.Context, pod *corev1.Pod, f *rules.Facts) (map[string]int, error) {
	if b, _ := f.Policies.RestartBreaker(); !b.Evict {
		return nil, nil
	}
	out := map[string]int{}
	for _, x := range f.Failures {
		if _, done := out[x.Container]; done {
			continue
		}
		n, err := r.passingElsewhere(ctx, pod, x.Container)
		if err != nil {
			return nil, err
		}
		out[x.Container] = n
	}
	return out, nil
}

// failures returns the pod's Failed states whose probe the daemon still runs (the NodePodProbe
// names the pod, whose probe context has the probe), ordered by probe name so several failed
// containers of one pod are handled in a stable order.
func failures(rep nodeReport, pod *corev1.Pod) []rules.Failure {
	pr := rep.pod(pod)
	ps := pr.status
	if ps == nil || !rep.named[pod.UID] {
		return nil
	}
	var out []rules.Failure
	probes := pr.probes
	for _, s := range ps.ProbeStates {
		if !s.Failed() {
			continue
		}
		for _, p := range probes {
			if p.Name != s.Name {
				continue
			}
			running, restarts := podutil.RunningContainerID(pod, p.Container)
			out = append(out, rules.Failure{Probe: s.Name, Container: p.Container, ContainerID: s.ContainerID,
				Running: running, RestartCount: restarts, ProbeTime: s.LastProbeTime.Time, Since: s.LastTransitionTime.Time,
				Period: p.Probe.PeriodSeconds, Timeout: p.Probe.TimeoutSeconds, Threshold: p.Probe.FailureThreshold, InitialDelay: p.Probe.InitialDelaySeconds,
				ProbeGrace: p.Probe.TerminationGracePeriodSeconds, Grace: appsv1alpha1.TerminationGracePeriodFor(p.Probe.TerminationGracePeriodSeconds, pod),
				Request: RequestName(pod, p.Container, s.ContainerID)})
		}
	}
	slices.SortFunc(out, func(a, b rules.Failure) int { return strings.Compare(a.Probe, b.Probe) })
	return out
}

// refailures returns the failed results of the container instances the workload's pods run now:
// whether a restart made before helped is judged from them (rules.Ineffective).
func (b *Builder) refailures(ctx context.Context, r *Reader, pod *corev1.Pod, w Workload) ([]rules.Refailure, error) {
	pods, err := b.workloads.Pods(ctx, pod, w)
	if err != nil {
		return nil, err
	}
	var out []rules.Refailure
	for _, p := range pods {
		rep, err := r.nodeReport(ctx, p.Spec.NodeName)
		if err != nil {
			return nil, err
		}
		for _, x := range failures(rep, p) {
			cs := podutil.ContainerStatus(p, x.Container)
			if cs == nil || cs.State.Running == nil || cs.ContainerID != x.ContainerID {
				continue
			}
			out = append(out, rules.Refailure{Pod: p.UID, Container: x.Container, ContainerID: x.ContainerID,
				Started: cs.State.Running.StartedAt.Time, FailedAt: x.Since})
		}
	}
	return out, nil
}

// RequestName names the request that restarts one container instance of a pod. It is
// deterministic in (pod UID, container, containerID), so a retried decision for the same
// instance can never create a second request, and a valid DNS subdomain:
// "<pod>-<container>-<hash>" with the readable part cut to fit.
func RequestName(pod *corev1.Pod, container, containerID string) string {
	sum := sha256.Sum256([]byte(string(pod.UID) + "/" + container + "/" + containerID))
	hash := hex.EncodeToString(sum[:])[:10]
	prefix := pod.Name + "-" + container
	const maxPrefix = 253 - 1 - 10
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	for len(prefix) > 0 && (prefix[len(prefix)-1] == '-' || prefix[len(prefix)-1] == '.') {
		prefix = prefix[:len(prefix)-1]
	}
	return prefix + "-" + hash
}
