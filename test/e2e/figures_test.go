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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// The figures of enrolling (docs/policy.md, "What enrolling avoids and what it costs") as the
// user reads them: the policy's status.figures, and the leader manager's counters.

// workloadFigures reads the figures of the Deployment's pods admitted in mode from the policy's
// status (zero while it has none).
func workloadFigures(pol *policyv1alpha1.EnhancedLivenessPolicy, deployment, mode string) policyv1alpha1.WorkloadFigures {
	GinkgoHelper()
	p := &policyv1alpha1.EnhancedLivenessPolicy{}
	Expect(k8s.Get(context.Background(), clientKey(pol), p)).To(Succeed())
	if p.Status.Figures == nil {
		return policyv1alpha1.WorkloadFigures{}
	}
	for _, w := range p.Status.Figures.Workloads {
		if w.Workload.Kind == "Deployment" && w.Workload.Name == deployment && w.Mode == mode {
			return w
		}
	}
	return policyv1alpha1.WorkloadFigures{}
}

// figureMetrics are the leader's counters of the figures of the pods of one namespace admitted
// in one mode.
type figureMetrics struct{ avoided, agreed, addedCount float64 }

func figureMetricsOf(text, ns, mode string) figureMetrics {
	return figureMetrics{
		avoided:    sampleSum(text, "enhanced_liveness_restarts_avoided_total", "pod_namespace", ns, "mode", mode),
		agreed:     sampleSum(text, "enhanced_liveness_restarts_agreed_total", "pod_namespace", ns, "mode", mode),
		addedCount: sampleSum(text, "enhanced_liveness_restart_added_seconds_count", "pod_namespace", ns, "mode", mode),
	}
}

// describeFigures is a workload's figures in one line of the storm report.
func describeFigures(w policyv1alpha1.WorkloadFigures) string {
	return fmt.Sprintf("avoided %d %v, agreed %d, added p50 %ds max %ds", w.Avoided, w.AvoidedByReason,
		w.Agreed, w.AddedP50Seconds, w.AddedMaxSeconds)
}
