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

package figures

import (
	"cmp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// The policy status keeps the figures per workload over a window (EnrollingFigures).
const (
	// Window is how long the status counts figures from its windowStart.
	Window = 24 * time.Hour
	// MaxWorkloads bounds status.figures.workloads (the API allows 20); MaxAdded the added times
	// kept per workload (20); MaxReasons its avoidedByReason (16).
	MaxWorkloads = 20
	MaxAdded     = 20
	maxReasons   = 16
)

// Record is one figure of a pod of a workload, for the status of the policies that govern it.
type Record struct {
	Workload policyv1alpha1.WorkloadReference
	Mode     string // Enforce or Shadow: the mode the pod was admitted in
	Figure
}

// AddToStatus returns the status figures with records added at now: nil when there are none in
// the window. A window older than Window is dropped first, and the records start a new one. The
// workloads with the most restarts are kept, at most MaxWorkloads.
func AddToStatus(cur *policyv1alpha1.EnrollingFigures, records []Record, now time.Time) *policyv1alpha1.EnrollingFigures {
	out := cur.DeepCopy()
	if out != nil && now.Sub(out.WindowStart.Time) >= Window {
		out = nil
	}
	if len(records) == 0 {
		return out
	}
	if out == nil {
		out = &policyv1alpha1.EnrollingFigures{WindowStart: metav1.NewTime(now.Truncate(time.Second))}
	}
	for _, r := range records {
		add(workload(out, r.Workload, r.Mode), r.Figure)
	}
	slices.SortStableFunc(out.Workloads, func(a, b policyv1alpha1.WorkloadFigures) int {
		return cmp.Compare(b.Avoided+b.Agreed, a.Avoided+a.Agreed)
	})
	out.Workloads = out.Workloads[:min(len(out.Workloads), MaxWorkloads)]
	return out
}

// workload returns the figures of the workload's pods of the mode, added if new.
func workload(f *policyv1alpha1.EnrollingFigures, ref policyv1alpha1.WorkloadReference, mode string) *policyv1alpha1.WorkloadFigures {
	for i := range f.Workloads {
		if f.Workloads[i].Workload == ref && f.Workloads[i].Mode == mode {
			return &f.Workloads[i]
		}
	}
	f.Workloads = append(f.Workloads, policyv1alpha1.WorkloadFigures{Workload: ref, Mode: mode})
	return &f.Workloads[len(f.Workloads)-1]
}

// add counts one figure into a workload's.
func add(w *policyv1alpha1.WorkloadFigures, f Figure) {
	switch f.Kind {
	case Avoided:
		w.Avoided++
		i := slices.IndexFunc(w.AvoidedByReason, func(c policyv1alpha1.HeldCount) bool { return c.Reason == f.Reason })
		if i < 0 && len(w.AvoidedByReason) < maxReasons {
			w.AvoidedByReason = append(w.AvoidedByReason, policyv1alpha1.HeldCount{Reason: f.Reason})
			i = len(w.AvoidedByReason) - 1
		}
		if i >= 0 {
			w.AvoidedByReason[i].Count++
		}
	case Agreed:
		w.Agreed++
		s := int32(min(f.Added.Round(time.Second).Seconds(), float64(1<<31-1)))
		w.AddedSeconds = append(w.AddedSeconds, s)
		w.AddedSeconds = w.AddedSeconds[max(0, len(w.AddedSeconds)-MaxAdded):]
		w.AddedMaxSeconds = max(w.AddedMaxSeconds, s)
		w.AddedP50Seconds = median(w.AddedSeconds)
	}
}

// median of the values: the lower middle one of an even count.
func median(v []int32) int32 {
	s := slices.Sorted(slices.Values(v))
	return s[(len(s)-1)/2]
}
