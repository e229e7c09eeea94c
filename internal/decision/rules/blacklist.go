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

package rules

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Step 3: the blacklist of any governing policy.

func blacklisted(c *judged) (Verdict, bool) {
	t := Target{Workload: c.f.Workload.Ref, PodLabels: c.f.Labels, Container: c.x.Container}
	if what, ok := c.f.Policies.Blacklisted(t); ok {
		return hold(policyv1alpha1.HoldBlacklisted, "not restarting container %s: %s", c.x.Container, what), true
	}
	return Verdict{}, false
}

// Target is what a blacklist is matched against.
type Target struct {
	Workload  WorkloadRef
	PodLabels map[string]string
	Container string
}

// Blacklist is a compiled policy blacklist.
type Blacklist struct {
	workloads  []WorkloadRef
	pods       labels.Selector
	containers map[string]struct{}
}

// CompileBlacklist parses the blacklist; errors name the field.
func CompileBlacklist(b *policyv1alpha1.Blacklist) (Blacklist, error) {
	var out Blacklist
	if b == nil {
		return out, nil
	}
	for i, w := range b.Workloads {
		gv, err := schema.ParseGroupVersion(w.APIVersion)
		if err != nil || gv.Version == "" {
			return out, fmt.Errorf("spec.blacklist.workloads[%d].apiVersion: %q is not group/version or version", i, w.APIVersion)
		}
		if w.Kind == "" || w.Name == "" {
			return out, fmt.Errorf("spec.blacklist.workloads[%d]: kind and name are required", i)
		}
		out.workloads = append(out.workloads, WorkloadRef{APIVersion: w.APIVersion, Kind: w.Kind, Name: w.Name})
	}
	if b.PodSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(b.PodSelector)
		if err != nil {
			return out, fmt.Errorf("spec.blacklist.podSelector: %w", err)
		}
		out.pods = sel
	}
	if len(b.Containers) > 0 {
		out.containers = make(map[string]struct{}, len(b.Containers))
		for _, c := range b.Containers {
			out.containers[c] = struct{}{}
		}
	}
	return out, nil
}

// Matches reports whether the blacklist covers the target, and which entry does. Workloads match
// on group (not version: apps/v1 and apps/v1beta2 name the same Deployment), kind and name. An
// unset podSelector matches no pod; an empty one matches all.
func (b *Blacklist) Matches(t Target) (string, bool) {
	for _, w := range b.workloads {
		if sameGroup(w.APIVersion, t.Workload.APIVersion) && w.Kind == t.Workload.Kind && w.Name == t.Workload.Name {
			return fmt.Sprintf("workload %s %s blacklisted", w.Kind, w.Name), true
		}
	}
	if b.pods != nil && b.pods.Matches(labels.Set(t.PodLabels)) {
		return fmt.Sprintf("pod matches blacklist.podSelector %q", b.pods.String()), true
	}
	if _, ok := b.containers[t.Container]; ok {
		return fmt.Sprintf("container %s blacklisted", t.Container), true
	}
	return "", false
}

func sameGroup(a, b string) bool {
	ga, _ := schema.ParseGroupVersion(a)
	gb, _ := schema.ParseGroupVersion(b)
	return ga.Group == gb.Group
}
