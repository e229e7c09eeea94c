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

	"k8s.io/apimachinery/pkg/util/intstr"
)

// FallbackMaxUnavailable is the budget when no policy, PodDisruptionBudget or
// --default-max-unavailable sets one (objects built in memory).
var FallbackMaxUnavailable = intstr.FromString("25%")

// PDB is a PodDisruptionBudget that selects the pod, as the budget reads it. One that sets
// neither minAvailable nor maxUnavailable limits nothing and is not read.
type PDB struct {
	Name string
	// MinAvailable and MaxUnavailable are its spec; one of them is set.
	MinAvailable, MaxUnavailable *intstr.IntOrString
	// AlwaysAllow: its unhealthyPodEvictionPolicy is AlwaysAllow. Otherwise (IfHealthyBudget,
	// the API's default) a pod that is not healthy may be disrupted only while the workload is
	// within the budget.
	AlwaysAllow bool
}

// Allowed is how many of desired pods the PDB lets be unavailable, as the disruption controller
// reckons it: maxUnavailable, a percent of desired rounded up; or desired minus minAvailable, a
// percent of desired rounded up; never below zero.
func (p PDB) Allowed(desired int32) int32 {
	if p.MaxUnavailable != nil {
		return min(desired, Scaled(*p.MaxUnavailable, desired))
	}
	if p.MinAvailable != nil {
		return max(0, desired-Scaled(*p.MinAvailable, desired))
	}
	return desired
}

// spec is its budget as written: "minAvailable 3", "maxUnavailable 25%".
func (p PDB) spec() string {
	if p.MaxUnavailable != nil {
		return "maxUnavailable " + p.MaxUnavailable.String()
	}
	if p.MinAvailable != nil {
		return "minAvailable " + p.MinAvailable.String()
	}
	return "no budget"
}

// Budget is how many pods of a workload may be unavailable, and what sets it.
type Budget struct {
	Max int32
	// Policy is the governing policy whose spec.maxUnavailable sets it. When none does, PDB is
	// the most restrictive PodDisruptionBudget that selects the pod; when none does either,
	// Fallback (--default-max-unavailable) sets it.
	Policy   PolicyKey
	PDB      *PDB
	Fallback intstr.IntOrString
}

// String names what sets the budget, with its numbers, for a hold message.
func (b Budget) String() string {
	switch {
	case b.PDB != nil:
		return fmt.Sprintf("the PodDisruptionBudget %s allows %d (%s)", b.PDB.Name, b.Max, b.PDB.spec())
	case b.Policy != (PolicyKey{}):
		return fmt.Sprintf("maxUnavailable is %d (policy %s)", b.Max, b.Policy)
	}
	return fmt.Sprintf("maxUnavailable is %d (%s, --default-max-unavailable: no policy or PodDisruptionBudget sets one)", b.Max, b.Fallback.String())
}

// Budget is the budget of the pod's workload of desired replicas: an explicit spec.maxUnavailable
// of its policies wins (the smallest); else its PodDisruptionBudgets (the most restrictive, one
// with IfHealthyBudget before one with AlwaysAllow on a tie); else the manager's fallback.
func (f *Facts) Budget(desired int32) Budget {
	if n, by, ok := f.Policies.MaxUnavailable(desired); ok {
		return Budget{Max: n, Policy: by}
	}
	var b Budget
	for i := range f.PDBs {
		p := &f.PDBs[i]
		n := p.Allowed(desired)
		if b.PDB == nil || n < b.Max || (n == b.Max && b.PDB.AlwaysAllow && !p.AlwaysAllow) {
			b = Budget{Max: n, PDB: p}
		}
	}
	if b.PDB != nil {
		return b
	}
	v := FallbackMaxUnavailable
	if f.Settings.MaxUnavailable != nil {
		v = *f.Settings.MaxUnavailable
	}
	return Budget{Max: Scaled(v, desired), Fallback: v}
}
