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
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

func TestPDBAllowed(t *testing.T) {
	num := func(n int32) *intstr.IntOrString { return ptr.To(intstr.FromInt32(n)) }
	pct := func(s string) *intstr.IntOrString { return ptr.To(intstr.FromString(s)) }
	for _, c := range []struct {
		name    string
		pdb     PDB
		desired int32
		want    int32
	}{
		{"maxUnavailable 1", PDB{MaxUnavailable: num(1)}, 4, 1},
		{"maxUnavailable above desired", PDB{MaxUnavailable: num(9)}, 4, 4},
		{"maxUnavailable 30% of 4 rounds up", PDB{MaxUnavailable: pct("30%")}, 4, 2},
		{"maxUnavailable 0", PDB{MaxUnavailable: num(0)}, 4, 0},
		{"minAvailable 3 of 4", PDB{MinAvailable: num(3)}, 4, 1},
		{"minAvailable above desired", PDB{MinAvailable: num(6)}, 4, 0},
		{"minAvailable 80% of 4 rounds up to 4", PDB{MinAvailable: pct("80%")}, 4, 0},
		{"minAvailable 50% of 10", PDB{MinAvailable: pct("50%")}, 10, 5},
		{"minAvailable 100%", PDB{MinAvailable: pct("100%")}, 10, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.pdb.Allowed(c.desired); got != c.want {
				t.Fatalf("Allowed(%d) = %d, want %d", c.desired, got, c.want)
			}
		})
	}
}

func TestBudgetSource(t *testing.T) {
	one, half := ptr.To(intstr.FromInt32(1)), ptr.To(intstr.FromString("50%"))
	web := PDB{Name: "web", MinAvailable: ptr.To(intstr.FromInt32(8))}
	loose := PDB{Name: "loose", MaxUnavailable: half, AlwaysAllow: true}
	for _, c := range []struct {
		name     string
		policies Governing
		pdbs     []PDB
		fallback *intstr.IntOrString
		want     int32
		says     string
	}{
		{"an explicit maxUnavailable wins over a PDB", Governing{{Key: PolicyKey{"ns", "p"}, MaxUnavailable: half}}, []PDB{web}, nil, 5, "maxUnavailable is 5 (policy ns/p)"},
		{"the smallest explicit one", Governing{{Key: PolicyKey{"ns", "a"}, MaxUnavailable: half}, {Key: PolicyKey{"ns", "b"}, MaxUnavailable: one}}, nil, nil, 1, "(policy ns/b)"},
		{"a policy without the field: the PDB", Governing{{Key: PolicyKey{"ns", "p"}}, {Key: PolicyKey{"ns", "q"}}}, []PDB{web}, nil, 2, "the PodDisruptionBudget web allows 2 (minAvailable 8)"},
		{"several PDBs: the most restrictive", Governing{{Key: PolicyKey{"ns", "p"}}}, []PDB{loose, web}, nil, 2, "PodDisruptionBudget web"},
		{"the default policy follows the PDB", Governing{DefaultPolicy(Defaults{MaxUnavailable: intstr.FromInt32(7)})}, []PDB{loose}, one, 5, "PodDisruptionBudget loose allows 5 (maxUnavailable 50%)"},
		{"no PDB: --default-max-unavailable", Governing{{Key: PolicyKey{"ns", "p"}}}, nil, one, 1, "maxUnavailable is 1 (1, --default-max-unavailable: no policy or PodDisruptionBudget sets one)"},
		{"nothing set anywhere: 25%", Governing{{Key: PolicyKey{"ns", "p"}}}, nil, nil, 3, "(25%, --default-max-unavailable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &Facts{Policies: c.policies, PDBs: c.pdbs, Settings: Settings{MaxUnavailable: c.fallback}}
			b := f.Budget(10)
			if b.Max != c.want || !strings.Contains(b.String(), c.says) {
				t.Fatalf("budget %d %q, want %d and %q", b.Max, b, c.want, c.says)
			}
		})
	}
	tie := (&Facts{PDBs: []PDB{{Name: "always", MaxUnavailable: one, AlwaysAllow: true}, {Name: "healthy", MinAvailable: ptr.To(intstr.FromInt32(9))}}}).Budget(10)
	if tie.PDB.Name != "healthy" {
		t.Fatalf("on a tie the IfHealthyBudget PDB is the budget, got %s", tie.PDB.Name)
	}
}

func TestDecidePDBBudget(t *testing.T) {
	pdb := func(allways bool) []PDB {
		return []PDB{{Name: "web", MaxUnavailable: ptr.To(intstr.FromInt32(1)), AlwaysAllow: allways}}
	}
	notReady := func(f *Facts) { f.Self.Ready = false }
	for _, c := range []struct {
		name    string
		pdbs    []PDB
		pods    []PodState
		self    func(*Facts)
		outcome Outcome
		says    string
	}{
		{"available pod, nobody down: restart", pdb(false), pods(4, 4, 1, 0), nil, Restart, ""},
		{"available pod, one down: held, naming the PDB", pdb(false), pods(4, 3, 1, 0), nil, Hold,
			"1 of 4 pods of Deployment/web are unavailable, the PodDisruptionBudget web allows 1 (maxUnavailable 1)"},
		{"no PDB: the 25% fallback lets 1 of 4 down", nil, pods(4, 3, 1, 0), nil, Hold, "--default-max-unavailable"},
		{"not-ready pod within the budget: restart", pdb(false), pods(4, 3, 1, 0), notReady, Restart, ""},
		{"not-ready pod below the budget, IfHealthyBudget: held", pdb(false), pods(4, 2, 1, 0), notReady, Hold, "unhealthyPodEvictionPolicy IfHealthyBudget"},
		{"not-ready pod below the budget, AlwaysAllow: restart", pdb(true), pods(4, 2, 1, 0), notReady, Restart, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, x := baseFacts()
			f.Policies = Governing{{Key: PolicyKey{Namespace: "ns", Name: "p"}, MaxFailing: intstr.FromString("100%"), Rate: Rate{PerMinute: 6, Burst: 3}, Breaker: DefaultRestartBreaker}}
			f.PDBs = c.pdbs
			f.Workload.Desired, f.Workload.Pods = 4, c.pods
			if c.self != nil {
				c.self(f)
			}
			d := Decide(f, x, newFakeMemory())
			if d.Outcome != c.outcome || !strings.Contains(d.Message, c.says) {
				t.Fatalf("got %s %q, want %s with %q", d.Outcome, d.Message, c.outcome, c.says)
			}
			if d.Outcome == Hold && d.Reason != policyv1alpha1.HoldMaxUnavailable {
				t.Fatalf("held %s", d.Reason)
			}
		})
	}
}
