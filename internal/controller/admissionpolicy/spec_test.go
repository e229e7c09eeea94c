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

package admissionpolicy

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

func TestBuild(t *testing.T) {
	policy, binding := Build(Config{OperatorUsername: `system:serviceaccount:ns:mgr`, OwnerUID: "uid-1"})
	if got, want := len(policy.Spec.Validations), len(probecontext.ProtectedAnnotations)+len(probecontext.ProtectedLabels)+1; got != want {
		t.Fatalf("%d validations, want one per protected key and the native probes' (%d)", got, want)
	}
	if last := policy.Spec.Validations[len(policy.Spec.Validations)-1]; !strings.Contains(last.MessageExpression, probecontext.EnrolledProbeRule) {
		t.Errorf("the last validation does not state the enrolled containers' probe rule: %+v", last)
	}
	for i, k := range append(append([]string{}, probecontext.ProtectedAnnotations...), probecontext.ProtectedLabels...) {
		v := policy.Spec.Validations[i]
		if !strings.Contains(v.Expression, `"`+k+`"`) || !strings.HasPrefix(v.Message, "metadata.") ||
			!strings.Contains(v.Message, "["+k+"]: Forbidden: "+probecontext.ImmutableRule) {
			t.Errorf("validation %d does not check and name %s: %+v", i, k, v)
		}
	}
	if mc := policy.Spec.MatchConditions; len(mc) != 1 || mc[0].Expression != `request.userInfo.username != "system:serviceaccount:ns:mgr"` {
		t.Errorf("match conditions = %+v", mc)
	}
	for _, refs := range [][]string{{policy.OwnerReferences[0].Name, string(policy.OwnerReferences[0].UID)},
		{binding.OwnerReferences[0].Name, string(binding.OwnerReferences[0].UID)}} {
		if refs[0] != OwnerCRD || refs[1] != "uid-1" {
			t.Errorf("owner = %v", refs)
		}
	}
	if binding.Spec.PolicyName != Name || policy.Name != Name || binding.Name != Name {
		t.Errorf("names: policy %s, binding %s -> %s", policy.Name, binding.Name, binding.Spec.PolicyName)
	}
	if !ManagedSelector().Matches(labels.Set(policy.Labels)) || !ManagedSelector().Matches(labels.Set(binding.Labels)) {
		t.Error("the controller's selector does not match what it builds")
	}

	// A username that needs escaping stays one CEL string literal; no username exempts nobody;
	// no UID, no owner.
	policy, _ = Build(Config{OperatorUsername: `a"b\c`})
	if got := policy.Spec.MatchConditions[0].Expression; got != `request.userInfo.username != "a\"b\\c"` {
		t.Errorf("escaped expression = %s", got)
	}
	policy, binding = Build(Config{})
	if len(policy.Spec.MatchConditions) != 0 || len(policy.OwnerReferences) != 0 || len(binding.OwnerReferences) != 0 {
		t.Errorf("empty config: conditions %v, owners %v %v", policy.Spec.MatchConditions, policy.OwnerReferences, binding.OwnerReferences)
	}
}

func TestBuildDaemonNodeScope(t *testing.T) {
	const daemon = "system:serviceaccount:ops:el-daemon"
	policy, binding := BuildDaemonNodeScope(Config{DaemonUsername: daemon, OwnerUID: "uid-1"})
	if policy.Name != DaemonNodeScopeName || binding.Name != DaemonNodeScopeName || binding.Spec.PolicyName != DaemonNodeScopeName {
		t.Errorf("names: policy %s, binding %s -> %s", policy.Name, binding.Name, binding.Spec.PolicyName)
	}
	if mc := policy.Spec.MatchConditions; len(mc) != 1 || mc[0].Expression != `request.userInfo.username == "`+daemon+`"` {
		t.Errorf("match conditions = %+v: the policy must hold exactly the daemon ServiceAccount the manager deploys", mc)
	}
	if len(binding.Spec.ValidationActions) != 1 || binding.Spec.ValidationActions[0] != admissionregistrationv1.Deny {
		t.Errorf("validation actions %v", binding.Spec.ValidationActions)
	}
	var resources []string
	for _, r := range policy.Spec.MatchConstraints.ResourceRules {
		resources = append(resources, r.Resources...)
	}
	if got := strings.Join(resources, ","); got != "nodepodprobereports,nodepodprobereports/status,"+
		"containerrecreaterequests,containerrecreaterequests/status,leases" {
		t.Errorf("resources %s", got)
	}
	if len(policy.Spec.Validations) != 4 || policy.OwnerReferences[0].UID != "uid-1" || !ManagedSelector().Matches(labels.Set(policy.Labels)) {
		t.Errorf("policy %+v", policy)
	}
}
