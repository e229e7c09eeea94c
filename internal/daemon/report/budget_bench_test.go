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
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/results"
)

// worstReport is the status of a node whose MaxPodProbesPerNode pods, with the longest names,
// each fail MaxProbesPerPod probes with messages of message bytes; namespaces is how many
// namespaces the pods are spread over.
func worstReport(message, namespaces int) appsv1alpha1.ProbeResults {
	at := metav1.NewTime(time.Date(2026, 12, 5, 23, 0, 0, 0, time.UTC))
	st := appsv1alpha1.ProbeResults{ObservedGeneration: 1 << 40, ProbedGeneration: 1 << 40}
	for i := range appsv1alpha1.MaxPodProbesPerNode {
		name := fmt.Sprintf("%0*d", appsv1alpha1.MaxPodNameLength, i)
		ns := fmt.Sprintf("%0*d", appsv1alpha1.MaxNamespaceLength, i%namespaces)
		ps := appsv1alpha1.PodProbeStatus{Name: name, Namespace: ns, UID: types.UID(fmt.Sprintf("6f1c9a52-2b7e-4c0e-9d55-%012d", i))}
		for c := range appsv1alpha1.MaxProbesPerPod {
			ps.ProbeStates = append(ps.ProbeStates, appsv1alpha1.ContainerProbeState{
				Name:        name + "-" + fmt.Sprintf("%0*d", appsv1alpha1.MaxContainerNameLength, c),
				ContainerID: "containerd://" + strings.Repeat("f", 64), State: appsv1alpha1.ProbeFailed,
				Message: strings.Repeat("m", message), LastProbeTime: at, LastTransitionTime: at, FailingSince: &at,
			})
			st.FailingProbes++
		}
		st.PodProbeStatuses = append(st.PodProbeStatuses, ps)
	}
	return st
}

// BenchmarkReportSize reports the JSON size of the worst NodePodProbeReport status (every probe
// of the most pods failing, the longest names): as written before the budget (1 KiB messages,
// nothing left out) and now (256-byte messages, fitBudget with DefaultReportBudget), with the
// pods in one namespace and spread over one namespace per pod; and how long fitBudget takes (ns/op). The
// API server refuses an object over 1.5 MiB.
//
//	go test ./internal/daemon/report -run '^$' -bench ReportSize -benchtime 3x
func BenchmarkReportSize(b *testing.B) {
	for _, namespaces := range []int{1, appsv1alpha1.MaxPodProbesPerNode} {
		b.Run(fmt.Sprintf("namespaces=%d", namespaces), func(b *testing.B) {
			before := worstReport(appsv1alpha1.MaxProbeMessageLength, namespaces)
			beforeBytes := encodedSize(&before)
			var after appsv1alpha1.ProbeResults
			var afterBytes int
			for b.Loop() {
				b.StopTimer()
				after = worstReport(results.MaxMessageBytes, namespaces)
				b.StartTimer()
				afterBytes = fitBudget(&after, DefaultReportBudget)
			}
			b.ReportMetric(float64(beforeBytes)/(1<<20), "MiB-before")
			b.ReportMetric(float64(afterBytes)/(1<<20), "MiB-after")
			b.ReportMetric(float64(len(after.OmittedNamespaces)), "omitted-namespaces")
			b.ReportMetric(float64(len(after.PodProbeStatuses)), "pods-listed")
		})
	}
}
