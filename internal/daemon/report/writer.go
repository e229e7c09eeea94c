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

package report

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
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
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

// Writer reports the node's results into the status of its NodePodProbeReport, the one home
// of the node's results. It patches only when the reported content (states, containers,
// messages, pod set, counters, generation) differs from what the report shows, gathers changes
// for Window, and recomputes from a fresh read on every conflict, so it never writes from a stale
// copy nor clobbers entries it does not own.
type Writer struct {
	// Client reads the report (from the cache) and patches its status.
	Client client.Client
	// APIReader reads the report directly from the apiserver after a conflict.
	APIReader client.Reader
	NodeName  string
	Results   *results.Cache
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
	// Failures times the writes that report new liveness failures (failures.go); nil times none.
	Failures *FailureTimes
	Clock    clock.WithTicker

	plan   atomic.Pointer[Plan]
	writes atomic.Int64
}

// NeedLeaderElection is false: each node writes its own object.
func (s *Writer) NeedLeaderElection() bool { return false }

// SetPlan records what the workers now run (nil: the node has no NodePodProbe), and asks for a
// write when it changed.
func (s *Writer) SetPlan(p *Plan) {
	if old := s.plan.Swap(p); !equality.Semantic.DeepEqual(old, p) {
		s.Results.Signal()
	}
}

// Writes returns the number of successful status patches so far.
func (s *Writer) Writes() int64 { return s.writes.Load() }

// Start writes after each burst of changes until ctx ends, then makes a last flush.
func (s *Writer) Start(ctx context.Context) error {
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
func (s *Writer) waitWindow(ctx context.Context, prev, last time.Time, window, failureWindow time.Duration, failed bool) bool {
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
func (s *Writer) Flush(ctx context.Context) error {
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
	var sending failureWrite
	res, err := patch.Status(ctx, s.Client, s.APIReader, rep, func(rep *appsv1alpha1.NodePodProbeReport) (bool, error) {
		before = rep.Status.OmittedNamespaces
		write, n := judge(plan, &rep.Status, s.Results, budget)
		size, after = n, rep.Status.OmittedNamespaces
		if write {
			// The last judgement is the one written: its new failures are timed from here, before
			// the apiserver's answer replaces the in-memory times with second-precision ones.
			sending = s.Failures.sending(&rep.Status)
		}
		return write, nil
	}, patch.Attempts(maxPatchAttempts))
	if err := s.count(res, err); err != nil {
		return err
	}
	if res.Written {
		s.Failures.acknowledged(sending)
	}
	s.observeBudget(ctx, plan, res.Written, size, budget, before, after)
	return nil
}

// judge sets shown (the results the report shows) to the results BuildStatus computes for the
// plan, kept within budget bytes (fitBudget), and says whether they are worth a write; it
// returns their encoded size.
func judge(plan *Plan, shown *appsv1alpha1.ProbeResults, cache *results.Cache, budget int) (bool, int) {
	desired := BuildStatus(plan, shown, cache)
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
func (s *Writer) observeBudget(ctx context.Context, plan *Plan, written bool, size, budget int, before, after []string) {
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
			"Failed probes that fit their share, and their other probes count as not probed", budget, strings.Join(after, ", ")), truncate.MaxEventNoteBytes))
	for _, ns := range after {
		if slices.Contains(before, ns) {
			continue
		}
		if pod := firstPodOf(plan, ns); pod != nil {
			s.Recorder.Eventf(pod, nil, corev1.EventTypeWarning, ReasonReportOverBudget, "Write", "%s", truncate.String(fmt.Sprintf(
				"the NodePodProbeReport of node %s would take more than its %d bytes, and namespace %s has more than its share "+
					"of it: only its Failed probes that fit its share are reported, so their containers can still be restarted; "+
					"its other probes on this node count as not probed until its results fit again", s.NodeName, budget, ns), truncate.MaxEventNoteBytes))
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
func (s *Writer) count(res patch.Result, err error) error {
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
