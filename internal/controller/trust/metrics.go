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

package trust

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// Sealed counts the probe contexts sealed, by the evidence checked (admission).
	Sealed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "enhanced_liveness_probe_contexts_sealed_total",
		Help: "Probe contexts the manager sealed to their pod, by the evidence it checked first " +
			"(admission: the pod webhook's signature).",
	}, []string{"evidence"})
	// Untrusted counts the pods whose probe context the manager refused to seal, by cause.
	Untrusted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "enhanced_liveness_probe_contexts_untrusted_total",
		Help: "Enrolled pods whose probe context the manager refused to seal (never probed), by cause " +
			"(not-admitted, unknown-key).",
	}, []string{"cause"})
	// TrustedKeys is the number of public keys in the trust ConfigMap, by state (current, retired).
	TrustedKeys = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "enhanced_liveness_trusted_keys",
		Help: "Public keys in the trust ConfigMap, by state (current: the one the manager signs with; " +
			"retired: kept while pods sealed with them remain).",
	}, []string{"state"})
)

func init() {
	metrics.Registry.MustRegister(Sealed, Untrusted, TrustedKeys)
}
