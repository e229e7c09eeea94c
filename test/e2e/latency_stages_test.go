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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/enhanced-liveness/enhanced-liveness-operator/test/latency"
)

// The operator's log lines that time one restart (docs/e2e.md, scenario 8).
const (
	msgFailureReported  = "liveness failure reported" // daemon, status writer
	msgRestartRequested = "restart requested"         // manager, decision controller
	msgStopping         = "stopping container"        // daemon, CRR executor
	msgStopReturned     = "StopContainer returned"    // daemon, CRR executor
)

// stages of the enrolled path, each from one time to the next: the app's own ("first", "term",
// "started") and the fields of the lines above. All are read from the one machine clock.
var stages = []struct{ name, from, to string }{
	{"first failure -> probe at the threshold (daemon)", "first", "failedAt"},
	{"status writer: -> write sent", "failedAt", "sentAt"},
	{"status write -> acknowledged", "sentAt", "acknowledgedAt"},
	{"-> manager reconcile started", "acknowledgedAt", "reconcileStartedAt"},
	{"reconcile -> decision", "reconcileStartedAt", "decidedAt"},
	{"decision -> CRR create acknowledged", "decidedAt", "createdAt"},
	{"-> executor step started (CRR watch)", "createdAt", "stepStartedAt"},
	{"executor step -> CRI StopContainer called", "stepStartedAt", "stopAt"},
	{"(status write before the stop, where made)", "stepStartedAt", "fencedAt"},
	{"StopContainer -> SIGTERM in the app", "stopAt", "term"},
	{"SIGTERM -> new container started", "term", "started"},
	{"(SIGTERM -> StopContainer returned)", "term", "returnedAt"},
}

// operatorLogs are the logs of every container of the operator's pods (manager and daemon).
func operatorLogs() string {
	ctx := context.Background()
	pods, err := cs.CoreV1().Pods(operatorNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			raw, err := cs.CoreV1().Pods(operatorNS).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name}).DoRaw(ctx)
			if err == nil {
				b.Write(raw)
			}
		}
	}
	return b.String()
}

// writeBreakdown prints the p50/p99 of each stage over the enrolled samples.
func writeBreakdown(b *strings.Builder, samples []sample, logs string) {
	stamps := latency.OperatorStamps(logs, msgFailureReported, msgRestartRequested, msgStopping, msgStopReturned)
	fmt.Fprintf(b, "enrolled path by stage (p50 / p99 over the samples that have both ends):\n")
	for _, st := range stages {
		var ds []time.Duration
		for _, s := range samples {
			t := map[string]time.Time{"first": s.first, "term": s.term, "started": s.started}
			maps.Copy(t, stamps[s.pod])
			from, to := t[st.from], t[st.to]
			if !from.IsZero() && !to.IsZero() {
				ds = append(ds, to.Sub(from))
			}
		}
		fmt.Fprintf(b, "  %-48s n=%-2d %8v / %v\n", st.name, len(ds),
			latency.Percentile(ds, 50).Round(time.Millisecond), latency.Percentile(ds, 99).Round(time.Millisecond))
	}
	if len(stamps) == 0 {
		GinkgoWriter.Println("no timing lines found in the operator's logs")
	}
}
