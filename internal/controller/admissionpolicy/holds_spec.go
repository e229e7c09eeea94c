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

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// RestartHoldsName is the name of the RestartHolds' policy and of its binding (cluster-scoped).
const RestartHoldsName = "enhanced-liveness-operator-restart-holds"

// HoldDeleters may delete a RestartHold besides the manager: the garbage collector (the hold's
// workload was deleted) and the namespace controller (its namespace was), under their own
// ServiceAccounts or as kube-controller-manager when it runs without them. They may also update
// one when only its ownerReferences and finalizers change: orphaning (the garbage collector takes
// the deleted workload's reference out of its dependents, and the workload stays Terminating
// until it has) and foreground deletion (the collector removes the finalizer it added) update
// the dependents rather than delete them.
var HoldDeleters = []string{
	"system:serviceaccount:kube-system:generic-garbage-collector",
	"system:serviceaccount:kube-system:namespace-controller",
	"system:kube-controller-manager",
}

// BuildRestartHolds returns the policy that keeps RestartHolds the manager's (c.OperatorUsername):
// a hold's record says when its next canary goes and what its last one showed, and a record
// forged or deleted by anyone else would end or reset a hold. Everyone else, cluster admins
// included, is refused every create, update and delete, but for the deletes of HoldDeleters and
// their updates that change nothing but ownerReferences and finalizers.
func BuildRestartHolds(c Config) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	deleters := make([]string, len(HoldDeleters))
	for i, u := range HoldDeleters {
		deleters[i] = celString(u)
	}
	forbidden := metav1.StatusReasonForbidden
	return policy{
		name: RestartHoldsName,
		rules: []admissionregistrationv1.NamedRuleWithOperations{
			writes(policyv1alpha1.GroupVersion.Group, admissionregistrationv1.NamespacedScope, "restartholds", "restartholds/status"),
		},
		conditions: notTheOperator(c),
		// oldObject is null but on UPDATE: the variable is read only then.
		variables: []admissionregistrationv1.Variable{{
			Name: "onlyOwnershipChanged",
			Expression: strings.Join([]string{unchangedField("spec"), unchangedField("status"),
				unchangedField("metadata.labels"), unchangedField("metadata.annotations")}, " && "),
		}},
		validations: []admissionregistrationv1.Validation{{
			Expression: "request.userInfo.username in [" + strings.Join(deleters, ", ") + "] && " +
				"(request.operation == 'DELETE' || request.operation == 'UPDATE' && variables.onlyOwnershipChanged)",
			MessageExpression: "'RestartHolds are the enhanced-liveness manager\\'s records of its held restarts: ' + " +
				"request.userInfo.username + ' may not ' + request.operation.lowerAscii() + ' one'",
			Reason: &forbidden,
		}},
	}.build(c)
}

// unchangedField is true when the field (a path under object) is absent from both the old and
// the new object, or present in both with equal values.
func unchangedField(path string) string {
	o, n := "oldObject."+path, "object."+path
	return "has(" + o + ") == has(" + n + ") && (!has(" + n + ") || " + o + " == " + n + ")"
}
