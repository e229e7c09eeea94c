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
	"encoding/json"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// DefaultReportBudget is the most bytes the status of a node's report may take, JSON-encoded.
// The API server refuses an object over about 1.5 MiB (etcd's request limit), and then the node
// would lose every result; the rest is left to the object's metadata.
const DefaultReportBudget = 1 << 20

// ReasonReportOverBudget is the Warning event on the NodePodProbeReport when the daemon leaves
// namespaces' results out of it to keep it within its budget.
const ReasonReportOverBudget = "ReportOverBudget"

var (
	// ReportBytes is the JSON size of the report status the daemon last wrote.
	ReportBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "enhanced_liveness_daemon_report_bytes",
		Help: "JSON size in bytes of the NodePodProbeReport status the daemon last wrote.",
	})
	// OmittedNamespaces is the number of namespaces whose results the last write left out.
	OmittedNamespaces = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "enhanced_liveness_daemon_report_omitted_namespaces",
		Help: "Namespaces whose results the daemon left out of the NodePodProbeReport it last wrote, to keep it within its byte budget.",
	})
)

func init() { ctrlmetrics.Registry.MustRegister(ReportBytes, OmittedNamespaces) }

// fitBudget keeps st within budget bytes (its JSON encoding): while it is over, it leaves out the
// results of the namespace with the most probe states (a pod listed notProbed counts one; ties
// go to the larger encoding, then the name) and lists that namespace in OmittedNamespaces, so a
// namespace that fills the report never takes another's results. failingProbes then counts
// the listed states only. It returns the encoded size.
func fitBudget(st *appsv1alpha1.ProbeResults, budget int) int {
	st.OmittedNamespaces = nil
	size := encodedSize(st)
	if size <= budget {
		return size
	}
	type share struct{ states, bytes int }
	shares := map[string]*share{}
	for i := range st.PodProbeStatuses {
		ps := &st.PodProbeStatuses[i]
		sh := shares[ps.Namespace]
		if sh == nil {
			sh = &share{}
			shares[ps.Namespace] = sh
		}
		sh.states += max(len(ps.ProbeStates), 1)
		sh.bytes += encodedSize(ps) + len(",")
	}
	// Each step takes off what the namespace's pods encode to and adds its name to the list
	// (and, the first time, the list's key): never less than the encoding shrinks.
	size += len(`,"omittedNamespaces":[]`)
	for size > budget && len(shares) > 0 {
		var worst string
		for ns, sh := range shares {
			w := shares[worst]
			if worst == "" || cmp.Or(cmp.Compare(sh.states, w.states), cmp.Compare(sh.bytes, w.bytes), cmp.Compare(worst, ns)) > 0 {
				worst = ns
			}
		}
		size += len(worst) + len(`"",`) - shares[worst].bytes
		delete(shares, worst)
		st.OmittedNamespaces = append(st.OmittedNamespaces, worst)
	}
	slices.Sort(st.OmittedNamespaces)
	st.PodProbeStatuses = slices.DeleteFunc(st.PodProbeStatuses, func(ps appsv1alpha1.PodProbeStatus) bool {
		return slices.Contains(st.OmittedNamespaces, ps.Namespace)
	})
	st.FailingProbes = 0
	for i := range st.PodProbeStatuses {
		st.FailingProbes += int32(st.PodProbeStatuses[i].FailedProbes())
	}
	return encodedSize(st)
}

// encodedSize is the JSON size of v (0 if it does not encode, which these types always do).
func encodedSize(v any) int {
	data, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(data)
}
