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

package nodestorm

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The Node condition's gauges, on controller-runtime's registry (served on the manager's metrics
// endpoint).
var (
	nodeStormNodes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "enhanced_liveness_node_storm_nodes",
		Help: "Nodes whose EnhancedLivenessNodeStorm condition the manager holds True: a node storm of two or " +
			"more namespaces, or restarts that do not help for workloads of three or more, is held there while " +
			"their workloads pass on other nodes.",
	})
	nodeConditionWithheld = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "enhanced_liveness_node_condition_withheld_nodes",
		Help: "Nodes whose evidence would set the EnhancedLivenessNodeStorm condition but that do not get it: more " +
			"nodes have it at once than 10% of the nodes with a reporting daemon (at least 1).",
	})
)

func init() { metrics.Registry.MustRegister(nodeStormNodes, nodeConditionWithheld) }
