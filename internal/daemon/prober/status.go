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
package prober

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/patch"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/truncate"
)

// DefaultWriteWindow is the shortest time between two status writes of a node. The first change
// after a quiet window is written at once; what changes within the window after a write is
// gathered into one write at its end.
const DefaultWriteWindow = 300 * time.Millisecond

// DefaultFailureWindow is the shortest time between a status write and the next one when that
// one reports a probe that became Failed: the decision controller waits for it, so it does not
// wait out the whole write window. Such an early write still comes at least a write window after
// the write before the last, so a node never writes more than twice per window (the API server's
// CPU goes mostly to these writes in a large cluster, and most so in a failure storm).
const DefaultFailureWindow = 20 * time.Millisecond

// DefaultRefreshCheck is how often the writer looks for Failed results due a refresh.
const DefaultRefreshCheck = 5 * time.Second

// maxPatchAttempts bounds the judgements of one flush (the first and those after conflicts); a
// flush that still conflicts is retried after a back-off with a fresh read.
const maxPatchAttempts = 5

// StatusWriter reports the cache into the status of the node's NodePodProbeReport, the one home
// of the node's results. It patches only when the reported content (states, containers,
// messages, pod set, counters, generation) differs from what the report shows, gathers changes
// for Window, and recomputes from a fresh read on every conflict, so it never writes from a stale
// copy nor clobbers entries it does not own.
type StatusWriter struct {
	// Client reads the report (from the cache) and patches its status.
	Client client.Client
	// APIReader reads the report directly from the apiserver after a conflict.
	APIReader client.Reader
	NodeName  string
	Results   *Cache
	Window    time.Duration
	// FailureWindow replaces Window for a write that reports a new Failed state
	// (DefaultFailureWindow when zero; never longer than Window).
	FailureWindow time.Duration
	// Budget is the most bytes the report's status may take, JSON-encoded (DefaultReportBudget
	// when zero); over it, the namespaces over their fair share are cut to their Failed states
	// (fitBudget).
	Budget int
	// Recorder tells, on the report and on a pod of each namespace cut, when namespaces are cut
	// to their Failed states; nil tells nothing.
	Recorder events.EventRecorder
	Clock    clock.WithTicker

	plan   atomic.Pointer[Plan]
	writes atomic.Int64
}

// Plan is what the daemon makes of its node's NodePodProbe (the SpecReconciler): the spec's
// generation and, for each pod the spec names, in spec order, the probes the daemon derived from
// the pod. Probes it does not run are in it too (their pod's seal does not verify, ...): the
// report lists them as not probed.
type Plan struct {
	Generation int64
	Pods       []PlannedPod
}

// PlannedPod is one pod of a Plan.
type PlannedPod struct {
	Name, Namespace string
	UID             types.UID
	Probes          []Target
	// NotProbed says why the daemon runs none of the pod's probes when it cannot name them
	// (it has no such pod, its probe context does not decode): Probes is then empty, and the
	// report lists the pod as not probed.
	NotProbed string
}

// NeedLeaderElection is false: each node writes its own object.
func (s *StatusWriter) NeedLeaderElection() bool { return false }

// SetPlan records what the workers now run (nil: the node has no NodePodProbe), and asks for a
// write when it changed.
func (s *StatusWriter) SetPlan(p *Plan) {
	if old := s.plan.Swap(p); !equality.Semantic.DeepEqual(old, p) {
		s.Results.Signal()
	}
}

// Writes returns the number of successful status patches so far.
func (s *StatusWriter) Writes() int64 { return s.writes.Load() }

// Start writes after each burst of changes until ctx ends, then makes a last flush.
func (s *StatusWriter) Start(ctx context.Context) error {
	if s.Clock == nil {
		s.Clock = clock.RealClock{}
	}
	window := cmp.Or(max(s.Window, 0), DefaultWriteWindow)
	failureWindow := min(cmp.Or(max(s.FailureWindow, 0), DefaultFailureWindow), window)
	log := logf.FromContext(ctx).WithName("status-writer").WithValues("nodePodProbe", s.NodeName)
	backoff := window
	var lastWrite, prevWrite time.Time
	// Failed results must stay fresh in the status (appsv1alpha1.FailedRefreshInterval): look
	// for ones due a refresh now and then, besides writing every change.
	refresh := s.Clock.NewTicker(DefaultRefreshCheck)
	defer refresh.Stop()
	for {
		newFailure := false
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.Flush(fctx); err != nil {
				log.Error(err, "last status flush at shutdown")
			}
			return nil
		case <-s.Results.Changed():
		case <-s.Results.NewFailure():
			newFailure = true
		case <-refresh.C():
		}
		// A change after a quiet period is written at once (leading edge); changes within a
		// window of the last write share one trailing write, so a flapping probe still costs a
		// handful of writes. A new Failed state shortens the wait to FailureWindow, since the
		// decision to restart waits for it.
		if !s.waitWindow(ctx, prevWrite, lastWrite, window, failureWindow, newFailure) {
			continue
		}
		prevWrite, lastWrite = lastWrite, s.Clock.Now()
		// This flush carries every failure recorded so far.
		select {
		case <-s.Results.NewFailure():
		default:
		}
		if err := s.Flush(ctx); err != nil {
			if ctx.Err() != nil {
				continue
			}
			log.Error(err, "writing NodePodProbeReport status; will retry", "after", backoff)
			s.Results.Signal()
			select {
			case <-ctx.Done():
			case <-s.Clock.After(backoff):
			}
			backoff = min(backoff*2, 30*time.Second)
			continue
		}
		backoff = window
	}
}

// waitWindow waits until window has passed since the last write, or once a probe became Failed
// (or already had: failed) until failureWindow has passed since the last write and window since
// the one before (prev); false when ctx ended.
func (s *StatusWriter) waitWindow(ctx context.Context, prev, last time.Time, window, failureWindow time.Duration, failed bool) bool {
	newFailure := s.Results.NewFailure()
	if failed {
		newFailure = nil
	}
	for {
		wait := window - s.Clock.Since(last)
		if newFailure == nil {
			wait = max(failureWindow-s.Clock.Since(last), window-s.Clock.Since(prev))
		}
		if wait <= 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-s.Clock.After(wait):
			return true
		case <-newFailure:
			newFailure = nil // from now on the shorter window applies
		}
	}
}

// Flush writes the node's results to its NodePodProbeReport now if they differ from the cache.
// Without a plan (no NodePodProbe, or not reconciled yet) or a report it writes nothing: the
// manager creates the report with the NodePodProbe, and the next flush (at the latest the next
// refresh check) writes it. The patch carries the resourceVersion it was computed from
// (internal/patch); after a conflict the report is read again from the API server and the
// results computed anew.
func (s *StatusWriter) Flush(ctx context.Context) error {
	plan := s.plan.Load()
	if plan == nil {
		return nil
	}
	rep := &appsv1alpha1.NodePodProbeReport{}
	if err := s.Client.Get(ctx, client.ObjectKey{Name: s.NodeName}, rep); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading NodePodProbeReport %s: %w", s.NodeName, err)
	}
	budget := cmp.Or(max(s.Budget, 0), DefaultReportBudget)
	var size int
	var before, after []string
	res, err := patch.Status(ctx, s.Client, s.APIReader, rep, func(rep *appsv1alpha1.NodePodProbeReport) (bool, error) {
		before = rep.Status.OmittedNamespaces
		write, n := judge(plan, &rep.Status, s.Results, budget)
		size, after = n, rep.Status.OmittedNamespaces
		return write, nil
	}, patch.Attempts(maxPatchAttempts))
	if err := s.count(res, err); err != nil {
		return err
	}
	s.observeBudget(ctx, plan, res.Written, size, budget, before, after)
	return nil
}

// judge sets shown (the results the report shows) to the results BuildStatus computes for the
// plan, kept within budget bytes (fitBudget), and says whether they are worth a write; it
// returns their encoded size.
func judge(plan *Plan, shown *appsv1alpha1.ProbeResults, results *Cache, budget int) (bool, int) {
	desired := BuildStatus(plan, shown, results)
	size := fitBudget(&desired, budget)
	if sameReport(shown, &desired) && !refreshDue(plan, shown, &desired) {
		return false, size
	}
	*shown = desired
	return true, size
}

// observeBudget sets the report's size metrics and, when a write cuts other namespaces than the
// report showed, says so in the log, in a Warning event on the report (a cluster-scoped object:
// its events go to namespace default) and, for each namespace newly cut, in one on a pod of that
// namespace, where its users look.
func (s *StatusWriter) observeBudget(ctx context.Context, plan *Plan, written bool, size, budget int, before, after []string) {
	ReportBytes.Set(float64(size))
	OmittedNamespaces.Set(float64(len(after)))
	if !written || len(after) == 0 || slices.Equal(before, after) {
		return
	}
	logf.FromContext(ctx).Info("NodePodProbeReport over its byte budget: namespaces' results cut to their Failed probes",
		"nodePodProbeReport", s.NodeName, "budget", budget, "omittedNamespaces", after)
	if s.Recorder == nil {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "NodePodProbeReport", Name: s.NodeName}
	s.Recorder.Eventf(ref, nil, corev1.EventTypeWarning, ReasonReportOverBudget, "Write", "%s", truncate.String(fmt.Sprintf(
		"the results would take more than the report's %d bytes: those of namespaces %s on this node are cut to their "+
			"Failed probes that fit their share, and their other probes count as not probed", budget, strings.Join(after, ", ")), MaxEventNoteBytes))
	for _, ns := range after {
		if slices.Contains(before, ns) {
			continue
		}
		if pod := firstPodOf(plan, ns); pod != nil {
			s.Recorder.Eventf(pod, nil, corev1.EventTypeWarning, ReasonReportOverBudget, "Write", "%s", truncate.String(fmt.Sprintf(
				"the NodePodProbeReport of node %s would take more than its %d bytes, and namespace %s has more than its share "+
					"of it: only its Failed probes that fit its share are reported, so their containers can still be restarted; "+
					"its other probes on this node count as not probed until its results fit again", s.NodeName, budget, ns), MaxEventNoteBytes))
		}
	}
}

// firstPodOf is the first pod of namespace ns in the plan (the NodePodProbe's order): the one
// that tells the namespace its results on this node are cut. Only the namespace's own pod is
// named, never another's.
func firstPodOf(plan *Plan, ns string) *corev1.ObjectReference {
	for i := range plan.Pods {
		if pp := &plan.Pods[i]; pp.Namespace == ns {
			return &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: pp.Name, UID: pp.UID}
		}
	}
	return nil
}

// count records the outcome of a results write in the metrics and returns its error (a missing
// report is not one: the manager creates it again, and the next flush writes it).
func (s *StatusWriter) count(res patch.Result, err error) error {
	StatusWrites.WithLabelValues("conflict").Add(float64(res.Conflicts))
	switch {
	case res.Written:
		StatusWrites.WithLabelValues("success").Inc()
		s.writes.Add(1)
		return nil
	case err == nil || apierrors.IsNotFound(err):
		return nil
	case !apierrors.IsConflict(err):
		StatusWrites.WithLabelValues("error").Inc()
	}
	return fmt.Errorf("patching status of NodePodProbeReport %s: %w", s.NodeName, err)
}

// BuildStatus computes the report of the plan from the cache and the results the report shows.
// It lists only what a decision needs: the probes of the plan that are failing, suspect (a run of
// failures below the threshold), not probed yet (state Unknown) or held back by the trust gate
// (NotProbed, Target.NotRun: always listed, whatever result an earlier worker left), and the pods
// whose probes it cannot name at all (PlannedPod.NotProbed), and sets probedGeneration to
// the plan's spec generation, which says that every other probe of that spec passed its last probe. A
// write then costs the API server what is wrong on the node, not how many pods it runs. A probe
// without a result in the cache (its worker has not run since the daemon started, or it stopped
// for a terminating pod) keeps what the report shows: its listed state, or passing when the
// report omitted it for this very spec; otherwise it is reported not probed yet. So a daemon
// restart does not wipe the node's report. Pods and probes that left the spec disappear.
func BuildStatus(plan *Plan, shown *appsv1alpha1.ProbeResults, results *Cache) appsv1alpha1.ProbeResults {
	st := appsv1alpha1.ProbeResults{ObservedGeneration: plan.Generation, ProbedGeneration: plan.Generation}
	type probeRef struct {
		uid  types.UID
		name string
	}
	listed := map[probeRef]*appsv1alpha1.ContainerProbeState{}
	for i := range shown.PodProbeStatuses {
		ps := &shown.PodProbeStatuses[i]
		for j := range ps.ProbeStates {
			listed[probeRef{ps.UID, ps.ProbeStates[j].Name}] = &ps.ProbeStates[j]
		}
	}
	complete := shown.CompleteFor(plan.Generation)
	for i := range plan.Pods {
		pp := &plan.Pods[i]
		// A pod of a namespace the report left out (fitBudget) did not pass for being left out.
		omittedPassing := complete && !slices.Contains(shown.OmittedNamespaces, pp.Namespace)
		if pp.NotProbed != "" {
			// Never omitted: an omitted pod of a complete report reads as passing.
			st.PodProbeStatuses = append(st.PodProbeStatuses, appsv1alpha1.PodProbeStatus{Name: pp.Name, Namespace: pp.Namespace,
				UID: pp.UID, NotProbed: truncate.String(pp.NotProbed, appsv1alpha1.MaxPodNotProbedLength)})
			continue
		}
		var states []appsv1alpha1.ContainerProbeState
		probed := false
		for j := range pp.Probes {
			p := &pp.Probes[j].Key
			if why := pp.Probes[j].NotRun; why != "" {
				// Never omitted: an omitted probe reads as passing, and nothing runs this one.
				states = append(states, appsv1alpha1.ContainerProbeState{Name: p.Probe, State: appsv1alpha1.ProbeNotProbed,
					Message: truncate.String(why, MaxMessageBytes)})
				continue
			}
			var state appsv1alpha1.ContainerProbeState
			if e, ok := results.Get(*p); ok {
				state = appsv1alpha1.ContainerProbeState{
					Name: p.Probe, ContainerID: e.ContainerID, State: e.State, Message: e.Message,
					LastProbeTime: metav1.NewTime(e.LastProbeTime), LastTransitionTime: metav1.NewTime(e.LastTransitionTime),
				}
				if !e.FailingSince.IsZero() {
					state.FailingSince = &metav1.Time{Time: e.FailingSince}
				}
			} else if old := listed[probeRef{pp.UID, p.Probe}]; old != nil {
				state = *old
			} else if omittedPassing {
				probed = true
				continue
			} else {
				states = append(states, appsv1alpha1.ContainerProbeState{Name: p.Probe, State: appsv1alpha1.ProbeUnknown})
				continue
			}
			probed = probed || state.State != appsv1alpha1.ProbeUnknown
			if state.Failed() {
				st.FailingProbes++
			}
			if !state.Passing() {
				states = append(states, state)
			}
		}
		if probed {
			st.ProbedPods++
		}
		if len(states) > 0 {
			st.PodProbeStatuses = append(st.PodProbeStatuses, appsv1alpha1.PodProbeStatus{
				Name: pp.Name, Namespace: pp.Namespace, UID: pp.UID, ProbeStates: states,
			})
		}
	}
	return st
}

// sameReport compares what a write would change, ignoring lastProbeTime (which moves on every
// run and alone never justifies a write) and sub-second time precision lost in the API.
func sameReport(a, b *appsv1alpha1.ProbeResults) bool {
	if a.ObservedGeneration != b.ObservedGeneration || a.ProbedGeneration != b.ProbedGeneration || a.ProbedPods != b.ProbedPods ||
		a.FailingProbes != b.FailingProbes || len(a.PodProbeStatuses) != len(b.PodProbeStatuses) ||
		!slices.Equal(a.OmittedNamespaces, b.OmittedNamespaces) {
		return false
	}
	for i := range a.PodProbeStatuses {
		pa, pb := &a.PodProbeStatuses[i], &b.PodProbeStatuses[i]
		if pa.UID != pb.UID || pa.Name != pb.Name || pa.Namespace != pb.Namespace || pa.NotProbed != pb.NotProbed ||
			len(pa.ProbeStates) != len(pb.ProbeStates) {
			return false
		}
		for j := range pa.ProbeStates {
			sa, sb := &pa.ProbeStates[j], &pb.ProbeStates[j]
			if sa.Name != sb.Name || sa.ContainerID != sb.ContainerID || sa.State != sb.State || sa.Message != sb.Message ||
				!sa.LastTransitionTime.Truncate(time.Second).Equal(sb.LastTransitionTime.Truncate(time.Second)) ||
				(sa.FailingSince == nil) != (sb.FailingSince == nil) {
				return false
			}
		}
	}
	return true
}

// refreshDue reports whether a Failed state of desired is newer than the one the report shows by
// at least its probe's FailedRefreshInterval: a result that stays Failed is written again, so that
// the decision controller can tell it from one a stopped daemon left behind.
func refreshDue(plan *Plan, shown, desired *appsv1alpha1.ProbeResults) bool {
	type ref struct {
		uid   types.UID
		probe string
	}
	period := map[ref]int32{}
	for i := range plan.Pods {
		for j := range plan.Pods[i].Probes {
			t := &plan.Pods[i].Probes[j]
			p := withDefaults(t.Probe)
			period[ref{t.PodUID, t.Key.Probe}] = appsv1alpha1.ProbeInterval(p.PeriodSeconds, p.TimeoutSeconds)
		}
	}
	listed := map[ref]*appsv1alpha1.ContainerProbeState{}
	for i := range shown.PodProbeStatuses {
		ps := &shown.PodProbeStatuses[i]
		for j := range ps.ProbeStates {
			listed[ref{ps.UID, ps.ProbeStates[j].Name}] = &ps.ProbeStates[j]
		}
	}
	for i := range desired.PodProbeStatuses {
		ps := &desired.PodProbeStatuses[i]
		for j := range ps.ProbeStates {
			st := &ps.ProbeStates[j]
			old := listed[ref{ps.UID, st.Name}]
			if !st.Failed() || old == nil {
				continue
			}
			if st.LastProbeTime.Sub(old.LastProbeTime.Time) >= appsv1alpha1.FailedRefreshInterval(period[ref{ps.UID, st.Name}]) {
				return true
			}
		}
	}
	return false
}
