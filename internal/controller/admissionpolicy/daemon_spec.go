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
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// DaemonNodeScopeName is the name of the node daemon's policy and of its binding (cluster-scoped).
const DaemonNodeScopeName = "enhanced-liveness-operator-daemon-node-scope"

// nodeNameExtra is where the API server puts the node of a Pod-bound ServiceAccount token.
const nodeNameExtra = "authentication.kubernetes.io/node-name"

// BuildDaemonNodeScope returns the policy that keeps every node daemon to its own node, and its
// binding. RBAC lets the daemon ServiceAccount patch the status of any NodePodProbeReport and
// ContainerRecreateRequest and write Leases; this policy admits those writes only for the node its
// token is bound to, which the API server puts into the user info of a Pod-bound token. A request
// without it (a token not bound to a pod on a node) is denied. It matches c.DaemonUsername only.
func BuildDaemonNodeScope(c Config) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	forbidden := metav1.StatusReasonForbidden
	validation := func(expression, message string) admissionregistrationv1.Validation {
		return admissionregistrationv1.Validation{Expression: expression, MessageExpression: message, Reason: &forbidden}
	}
	return policy{
		name: DaemonNodeScopeName,
		rules: []admissionregistrationv1.NamedRuleWithOperations{
			writes(appsv1alpha1.GroupVersion.Group, admissionregistrationv1.AllScopes, "nodepodprobereports", "nodepodprobereports/status",
				"containerrecreaterequests", "containerrecreaterequests/status"),
			writes("coordination.k8s.io", admissionregistrationv1.AllScopes, "leases"),
		},
		conditions: []admissionregistrationv1.MatchCondition{{
			Name: "is-node-daemon", Expression: "request.userInfo.username == " + celString(c.DaemonUsername),
		}},
		variables: []admissionregistrationv1.Variable{
			{Name: "node", Expression: "has(request.userInfo.extra) && " + celString(nodeNameExtra) + " in request.userInfo.extra && " +
				"size(request.userInfo.extra[" + celString(nodeNameExtra) + "]) == 1 ? request.userInfo.extra[" + celString(nodeNameExtra) + "][0] : ''"},
			// The object as it is after the request (before it, for a DELETE).
			{Name: "obj", Expression: "request.operation == 'DELETE' ? oldObject : object"},
			{Name: "crrNodes", Expression: "[variables.obj, request.operation == 'UPDATE' ? oldObject : variables.obj].map(o, " +
				"has(o.metadata.labels) && " + celString(appsv1alpha1.LabelCRRNodeName) + " in o.metadata.labels ? " +
				"o.metadata.labels[" + celString(appsv1alpha1.LabelCRRNodeName) + "] : '')"},
		},
		validations: []admissionregistrationv1.Validation{
			validation("variables.node != ''",
				"'the node daemon ' + request.userInfo.username + ' may write only with a token bound to a node (no ' + "+
					celString(nodeNameExtra)+" + ' in its user info)'"),
			validation("variables.node == '' || request.resource.resource != 'nodepodprobereports' || variables.obj.metadata.name == variables.node",
				"'the node daemon of node ' + variables.node + ' may write only NodePodProbeReport ' + variables.node + ', not ' + variables.obj.metadata.name"),
			validation("variables.node == '' || request.resource.resource != 'containerrecreaterequests' || variables.crrNodes.all(n, n == variables.node)",
				"'the node daemon of node ' + variables.node + ' may write only ContainerRecreateRequests labelled ' + "+
					celString(appsv1alpha1.LabelCRRNodeName+"=")+" + variables.node"),
			validation("variables.node == '' || request.resource.resource != 'leases' || variables.obj.metadata.name == "+
				celString(appsv1alpha1.DaemonLeasePrefix)+" + variables.node",
				"'the node daemon of node ' + variables.node + ' may write only Lease ' + "+celString(appsv1alpha1.DaemonLeasePrefix)+
					" + variables.node + ', not ' + variables.obj.metadata.name"),
		},
	}.build(c)
}
