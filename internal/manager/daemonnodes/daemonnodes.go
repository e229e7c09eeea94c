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

// Package daemonnodes says which nodes the node daemon runs on, and whether a pod's own node
// selection tells that no daemon will serve it. The daemon DaemonSet selects nodes by Selector
// and tolerates every taint, so a node's labels alone say whether it runs a daemon.
package daemonnodes

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Selector returns the daemon DaemonSet's nodeSelector: the nodes a daemon runs on.
func Selector() map[string]string {
	return map[string]string{corev1.LabelOSStable: "linux"}
}

// Runs reports whether a daemon runs on a node with these labels.
func Runs(nodeLabels map[string]string) bool {
	for k, v := range Selector() {
		if nodeLabels[k] != v {
			return false
		}
	}
	return true
}

// Excluded says why the pod's required node selection (spec.os.name, spec.nodeSelector, and
// every term of its required node affinity) matches no node a daemon runs on, or "" when it may.
// Only what a label of Selector decides is judged: the operating system the pod names (the
// kubelet admits a pod only on a node of that system, which the node's kubernetes.io/os label
// states), a nodeSelector value, and the In, NotIn and DoesNotExist expressions on that label. A
// term that can match a daemon's node (or that other fields decide, such as matchFields) keeps
// the pod servable.
func Excluded(spec *corev1.PodSpec) string {
	if want, ok := Selector()[corev1.LabelOSStable]; ok && spec.OS != nil && spec.OS.Name != "" && string(spec.OS.Name) != want {
		return fmt.Sprintf("its spec.os.name %s excludes every node the operator's node daemon runs on (%s=%s)",
			spec.OS.Name, corev1.LabelOSStable, want)
	}
	for _, k := range slices.Sorted(maps.Keys(Selector())) {
		want := Selector()[k]
		if v, ok := spec.NodeSelector[k]; ok && v != want {
			return fmt.Sprintf("its nodeSelector %s=%s excludes every node the operator's node daemon runs on (%s=%s)", k, v, k, want)
		}
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return ""
	}
	var why []string
	for _, t := range terms {
		w := termExcludes(t)
		if w == "" {
			return ""
		}
		why = append(why, w)
	}
	return fmt.Sprintf("its required node affinity excludes every node the operator's node daemon runs on (%s): %s",
		SelectorString(), strings.Join(why, "; "))
}

// termExcludes says which expression of a node selector term no daemon's node satisfies, or "".
func termExcludes(t corev1.NodeSelectorTerm) string {
	sel := Selector()
	for _, e := range t.MatchExpressions {
		want, ok := sel[e.Key]
		if !ok {
			continue
		}
		has := slices.Contains(e.Values, want)
		switch {
		case e.Operator == corev1.NodeSelectorOpIn && !has,
			e.Operator == corev1.NodeSelectorOpNotIn && has,
			e.Operator == corev1.NodeSelectorOpDoesNotExist:
			return fmt.Sprintf("%s %s %v", e.Key, e.Operator, e.Values)
		}
	}
	return ""
}

// SelectorString is Selector as key=value pairs, for messages.
func SelectorString() string {
	sel := Selector()
	parts := make([]string, 0, len(sel))
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		parts = append(parts, k+"="+sel[k])
	}
	return strings.Join(parts, ",")
}
